import Foundation
import Testing

@testable import ObsTraceFormat

/// A trace whose names a user would copy from one command to another: `ProgressView.body` runs once (scope #4),
/// reading object 1 (a `Box<Int>`), and is fired by the first of three writes of `Box<Int>.value`; `Box<String>`'s
/// `value` is written once, each `Model.count` once (two types named `Model` in two modules). Symbols name the
/// properties as a recording's stop does: from the key path getters, which name the generic unspecialized
/// (`Box.value`).
enum NamedTrace {
  static func write(label: String = "ProgressView.body") throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { ["", "Fixture.Box<Swift.Int>", "Fixture.Box<Swift.String>", "Demo.Model", "Other.Model"][Int($0)] },
      property: SyntheticDefinitions.computedProperty(root: "Root"), label: { _ in label },
      scope: { _ in ScopeDefinition(kind: .tracking, label: 1, parent: 0) })
    var trace = try SyntheticTrace("names", definitions: definitions)
    var chunk = trace.chunk()
    func write(_ object: UInt32, fire: Bool = false) {
      trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: object, key: object, aux: object)
      if fire {
        trace.next(&chunk, .trackingFired, object: object, key: object, scope: 4)
        trace.next(&chunk, .trackingCancelled, flags: EventFlags.cancelledByFire, scope: 4)
      }
      trace.next(
        &chunk, .didSet, flags: EventFlags.changed | EventFlags.modify, object: object, key: object, aux: object)
    }
    trace.next(&chunk, .scopeBegin, flags: ScopeKind.tracking.rawValue, object: 1, key: 1, scope: 4)
    trace.next(&chunk, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: 4, aux: 1, depth: 1)
    trace.next(&chunk, .scopeEnd, scope: 4)
    trace.next(&chunk, .trackingInstalled, scope: 4, aux: 1)
    write(1, fire: true)
    write(1)
    write(1)
    write(2)
    write(3)
    write(4)
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.propertyNames = [
      1: PropertyName(module: "Fixture", type: "Box", property: "value"),
      2: PropertyName(module: "Fixture", type: "Box", property: "value"),
      3: PropertyName(module: "Demo", type: "Model", property: "count"),
      4: PropertyName(module: "Other", type: "Model", property: "count"),
    ]
    try trace.write(symbols)
    return try trace.finish()
  }
}

/// Names that more than one property would have: a generic's specializations get names of their own everywhere,
/// and a name that still stands for several properties is refused where a count is looked up by name.
@Suite("Names of properties")
struct PropertyNameTests {
  @Test("Box<Int>.value and Box<String>.value are two names in the report, its JSON, the timeline and the graph")
  func specializationsApart() throws {
    let path = try NamedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    let rows = report.standardOutput.split(separator: "\n").filter { $0.hasPrefix("  Box") && $0.contains(".value") }
    #expect(rows.map { $0.split(separator: " ").first ?? "" } == ["Box<Int>.value", "Box<String>.value"])
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.standardOutput.contains("\"Box<Int>.value\""), "\(json.standardOutput)")
    #expect(json.standardOutput.contains("\"Box<String>.value\""))
    #expect(!json.standardOutput.contains("\"Box.value\""))
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardOutput.contains("write Box<Int>#1.value by _modify"), "\(timeline.standardOutput)")
    #expect(timeline.standardOutput.contains("write Box<String>#2.value by _modify"))
    let graph = Run.command(["graph", "--dot", path])
    #expect(graph.standardOutput.contains("\"p:Box<Int>.value\""), "\(graph.standardOutput)")
  }

  @Test(
    "check judges each specialization by its own count; the unspecialized name is unknown, not one picked",
    arguments: [
      ("Box<Int>.value:writes<=1", Int32(1)), ("Box<Int>.value:writes<=3", Int32(0)),
      ("Box<String>.value:writes<=1", Int32(0)), ("Box.value:writes<=1", Int32(2)),
    ])
  func checkSpecializations(limit: String, status: Int32) throws {
    let path = try NamedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = Run.command(["check", path, "--max", limit])
    #expect(result.status == status, "\(result.standardOutput)\(result.standardError)")
    if status == 2 {
      #expect(result.standardError.contains("names no property or scope of"), "\(result.standardError)")
      #expect(result.standardError.contains("Box<Int>.value"))
      #expect(result.standardError.split(separator: "\n").count == 1)
    }
  }

  @Test(
    "a name that is a property's and a scope's is refused by check for a metric both have, taken for one only one has",
    arguments: [
      ("invalidations<=0", Int32(2)), ("wastedInvalidations<=0", Int32(2)), ("writes<=0", Int32(1)),
      ("runs<=1", Int32(0)), ("runs<=0", Int32(1)),
    ])
  func propertyAndScope(limit: String, status: Int32) throws {
    // The scope is labelled as the property Box<String>.value is named; it was invalidated once, the property never.
    let path = try NamedTrace.write(label: "Box<String>.value")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = Run.command(["check", path, "--max", "Box<String>.value:\(limit)"])
    #expect(result.status == status, "\(result.standardOutput)\(result.standardError)")
    if status == 2 {
      let metric = limit.prefix { $0 != "<" }
      #expect(
        result.standardError
          == "obstrace check: --max 'Box<String>.value:\(limit)' is ambiguous in \(path): it names the property "
          + "Box<String>.value and the scope Box<String>.value, and both have \(metric)\n")
    }
  }

  @Test(
    "a scope named with nothing, blanks or a newline is printed on one line and never as nothing, and check and timeline take that name",
    arguments: [
      ("", "\"\""), ("   ", "\"   \""), ("Say \"hi\"\nline2\tend", "Say \"hi\"\\nline2\\tend"),
      ("a\u{1B}b", "a\\u{1B}b"),
    ])
  func unprintableScopeNames(name: String, printed: String) throws {
    let path = try NamedTrace.write(label: name)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    let rows = report.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(rows.contains { $0.hasPrefix("  \(printed)  ") }, "\(report.standardOutput)")
    let json = Run.command(["report", path, "--format", "json"])
    let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
    let labels = (object?["scopes"] as? [[String: Any]])?.compactMap { $0["label"] as? String }
    #expect(labels == [printed])
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardOutput.contains("run \(printed) (tracking, #4)"), "\(timeline.standardOutput)")
    #expect(!timeline.standardOutput.contains("run  (tracking"))
    let check = Run.command(["check", path, "--max", "\(printed):runs<=1"])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    let failing = Run.command(["check", path, "--max", "\(printed):runs<=0"])
    #expect(failing.status == 1, "\(failing.standardOutput)\(failing.standardError)")
    let only = Run.command(["timeline", path, "--scope", printed])
    #expect(only.status == 0, "\(only.standardError)")
    #expect(only.standardOutput.contains("run \(printed) (tracking, #4)"))
  }

  @Test(
    "types of one name in two modules are named with their modules: check takes those names, refuses the name without them naming both, and baseline keys them apart"
  )
  func ambiguousRefused() throws {
    let path = try NamedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Before, both printed as Model.count: check refused the name, and baseline refused the trace.
    let check = Run.command(["check", path, "--max", "Model.count:writes<=5"])
    #expect(check.status == 2)
    #expect(
      check.standardError
        == "obstrace check: --max 'Model.count:writes<=5' is ambiguous in \(path): it names Demo.Model.count, "
        + "Other.Model.count, types of one name in several modules named with their module: "
        + "--max 'Demo.Model.count:writes<=5'\n")
    #expect(Run.command(["check", path, "--max", "Demo.Model.count:writes<=5"]).status == 0)
    // Another name of the same trace is checked as usual.
    #expect(Run.command(["check", path, "--max", "Box<String>.value:writes<=1"]).status == 0)
    let baseline = Run.command(["baseline", path])
    #expect(baseline.status == 0, "\(baseline.standardError)")
    #expect(baseline.standardOutput.contains("\"Demo.Model.count\": {"), "\(baseline.standardOutput)")
    #expect(baseline.standardOutput.contains("\"Other.Model.count\": {"), "\(baseline.standardOutput)")
    let saved = Paths.temporary("named-baseline.json")
    try baseline.standardOutput.write(toFile: saved, atomically: true, encoding: .utf8)
    let against = Run.command(["check", path, "--baseline", saved])
    #expect(against.status == 0, "\(against.standardOutput)\(against.standardError)")
  }

}

/// Every name a command prints for a scope, a property or an object is taken back where another command takes that
/// kind of name: taken from the timeline's lines and the report's JSON of each committed trace, and fed to the
/// timeline's, the graph's and the check's options.
@Suite("Names printed and taken back")
struct NameRoundTripTests {
  static let traces = ["guide", "threads", "stale-read", "observations", "noop-modify", "fan-out"]

  struct PrintedNames {
    /// Runs as the timeline prints them, with their labels: `ProgressView.body (#4)`, `… (tracking, #4)`.
    var runs: [(printed: String, label: String)] = []
    /// One object's property, with the property: `Progress#1.completed`.
    var objectProperties: [(printed: String, property: String)] = []
    /// Objects: `Progress#1`.
    var objects: [String] = []
  }

  static func timelineNames(_ timeline: String) throws -> PrintedNames {
    var names = PrintedNames()
    let run = try Regex(#"run (.+?) (\([a-z]+, #[0-9]+\)) read"#)
    let invalidated = try Regex(#"([^ ,][^,]*?) (\(#[0-9]+\))"#)
    let objectProperty = try Regex(#"([A-Za-z_<>]+)#([0-9]+)\.([A-Za-z_]+)"#)
    for line in timeline.split(separator: "\n") {
      if let match = line.firstMatch(of: run), let label = match[1].substring, let number = match[2].substring {
        names.runs.append(("\(label) \(number)", String(label)))
      }
      if let range = line.range(of: "→ invalidated ") {
        let list = String(line[range.upperBound...]).components(separatedBy: "  ")[0]
        for match in list.matches(of: invalidated) {
          if let label = match[1].substring, let number = match[2].substring {
            names.runs.append(("\(label) \(number)", String(label)))
          }
        }
      }
      for match in line.matches(of: objectProperty) {
        guard let type = match[1].substring, let object = match[2].substring, let member = match[3].substring else {
          continue
        }
        names.objectProperties.append(("\(type)#\(object).\(member)", "\(type).\(member)"))
        names.objects.append("\(type)#\(object)")
      }
    }
    // A few of each kind: each is fed to several commands.
    func firstDistinct<T>(_ items: [T], _ key: (T) -> String) -> [T] {
      var seen = Set<String>()
      return Array(items.filter { seen.insert(key($0)).inserted }.prefix(3))
    }
    names.runs = firstDistinct(names.runs) { $0.printed }
    names.objectProperties = firstDistinct(names.objectProperties) { $0.printed }
    names.objects = firstDistinct(names.objects) { $0 }
    return names
  }

  @Test(
    "runs, objects' properties and objects from the timeline are taken by timeline, graph and check", arguments: traces)
  func fromTimeline(trace name: String) throws {
    let trace = Paths.root + "/traces/\(name).trc"
    let timeline = Run.command(["timeline", trace])
    #expect(timeline.status == 0)
    let names = try Self.timelineNames(timeline.standardOutput)
    #expect(!names.runs.isEmpty && !names.objectProperties.isEmpty && !names.objects.isEmpty)
    for (printed, label) in names.runs {
      let filtered = Run.command(["timeline", trace, "--scope", printed])
      #expect(filtered.status == 0, "\(printed): \(filtered.standardError)")
      // That run: its one run line, and the lines that name it (its invalidation, its fire or end), nothing else.
      let number = printed[printed.range(of: "#", options: .backwards)!.upperBound...].dropLast()
      let lines = filtered.standardOutput.split(separator: "\n").dropFirst()
      let runLines = lines.filter { $0.contains(" run ") }
      #expect(runLines.count == 1 && runLines.allSatisfy { $0.contains(" run \(label) (") }, "\(printed): \(lines)")
      #expect(
        lines.allSatisfy {
          $0.contains("\(label) (#\(number)") || $0.contains("\(label) (") && $0.contains(", #\(number))")
        },
        "\(printed): \(lines)")
      // Its scope's lines hold them all.
      let scopeLines = Run.command(["timeline", trace, "--scope", label]).standardOutput.split(separator: "\n")
      #expect(Set(lines).isSubset(of: Set(scopeLines)), "\(printed)")
      let graph = Run.command(["graph", "--dot", trace, "--scope", printed])
      #expect(graph.status == 0, "\(printed): \(graph.standardError)")
      #expect(graph.standardOutput == Run.command(["graph", "--dot", trace, "--scope", label]).standardOutput)
      // A limit counts every run of a scope: the line names the run's scope, and the limit it gives is taken.
      let check = Run.command(["check", trace, "--max", "\(printed):runs<=100000"])
      #expect(check.status == 2)
      #expect(
        check.standardError.hasSuffix(
          "a limit counts every run of a scope: --max '\(label):runs<=100000'\n"), "\(check.standardError)")
      #expect(Run.command(["check", trace, "--max", "\(label):runs<=100000"]).status == 0)
    }
    for (printed, property) in names.objectProperties {
      let filtered = Run.command(["timeline", trace, "--property", printed])
      #expect(filtered.status == 0, "\(printed): \(filtered.standardError)")
      let lines = filtered.standardOutput.split(separator: "\n").dropFirst()
      #expect(!lines.isEmpty && lines.allSatisfy { $0.contains(printed) }, "\(printed): \(lines)")
      let graph = Run.command(["graph", "--dot", "--per-object", trace, "--property", printed])
      #expect(graph.status == 0, "\(printed): \(graph.standardError)")
      // Only that object's node (none when the property has no edge to draw: written, never read in a scope).
      let nodes = graph.standardOutput.split(separator: "\n").filter { $0.hasPrefix("  \"p:") && $0.contains("[") }
      #expect(nodes.allSatisfy { $0.hasPrefix("  \"p:\(printed)\" ") }, "\(graph.standardOutput)")
      let check = Run.command(["check", trace, "--max", "\(printed):writes<=100000"])
      #expect(check.status == 2)
      #expect(
        check.standardError.hasSuffix("a limit counts every object's: --max '\(property):writes<=100000'\n"),
        "\(check.standardError)")
      #expect(Run.command(["check", trace, "--max", "\(property):writes<=100000"]).status == 0)
    }
    for object in names.objects {
      let filtered = Run.command(["timeline", trace, "--object", object])
      #expect(filtered.status == 0, "\(object): \(filtered.standardError)")
      let lines = filtered.standardOutput.split(separator: "\n").dropFirst()
      // Its lines, and those of its creation and free.
      #expect(
        !lines.isEmpty
          && lines.allSatisfy {
            $0.contains("\(object).") || $0.hasSuffix("  created \(object)") || $0.hasSuffix("  freed \(object)")
          }, "\(object): \(lines)")
    }
  }

  @Test("properties and scopes from the report are taken by timeline, graph and check", arguments: traces)
  func fromReport(trace name: String) throws {
    let trace = Paths.root + "/traces/\(name).trc"
    let json = Run.command(["report", trace, "--format", "json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let properties = try #require(object["properties"] as? [[String: Any]]).compactMap { $0["property"] as? String }
    let scopes = try #require(object["scopes"] as? [[String: Any]]).compactMap { $0["label"] as? String }
    #expect(!properties.isEmpty && !scopes.isEmpty)
    for property in properties {
      #expect(Run.command(["timeline", trace, "--property", property]).status == 0, "\(property)")
      #expect(Run.command(["graph", trace, "--property", property]).status == 0, "\(property)")
      #expect(Run.command(["check", trace, "--max", "\(property):writes<=100000"]).status == 0, "\(property)")
    }
    for scope in scopes {
      #expect(Run.command(["timeline", trace, "--scope", scope]).status == 0, "\(scope)")
      #expect(Run.command(["graph", trace, "--scope", scope]).status == 0, "\(scope)")
      #expect(Run.command(["check", trace, "--max", "\(scope):runs<=100000"]).status == 0, "\(scope)")
    }
  }

  @Test("a printed name of something the trace does not have is one line naming it")
  func printedButUnknown() {
    let trace = Paths.root + "/traces/threads.trc"
    let timeline = Run.command(["timeline", trace, "--property", "Progress#99.completed"])
    #expect(timeline.status == 2)
    #expect(
      timeline.standardError
        == "obstrace timeline: --property 'Progress#99.completed' names object #99, which is not an object of \(trace)\n"
    )
    let graph = Run.command(["graph", trace, "--property", "Progress#99.completed"])
    #expect(graph.status == 2)
    #expect(
      graph.standardError
        == "obstrace graph: --property 'Progress#99.completed' names object #99, which is not an object of \(trace)\n")
    let scope = Run.command(["timeline", trace, "--scope", "NoView.body (#4)"])
    #expect(scope.status == 2)
    #expect(scope.standardError.hasPrefix("obstrace timeline: --scope 'NoView.body (#4)' names no scope of"))
    let run = Run.command(["timeline", trace, "--scope", "ProgressView.body (#99)"])
    #expect(run.status == 2)
    #expect(
      run.standardError == "obstrace timeline: --scope 'ProgressView.body (#99)': ProgressView.body has no run #99 in "
        + "\(trace)\n")
    #expect(Run.command(["timeline", trace, "--object", "Progress#x"]).status == 2)
    // A run of that number of another scope (guide.trc: NextView.body's #3) is not one of this one's: it said
    // "(nothing matches)", exit 0 (tryout16's P4).
    let guide = Paths.root + "/traces/guide.trc"
    for command in ["timeline", "export"] {
      let output = command == "export" ? ["-o", Paths.temporary("other-run.json")] : []
      let other = Run.command([command, guide, "--scope", "FirstView.body (#3)"] + output)
      #expect(other.status == 2, "\(command): \(other.standardOutput)")
      #expect(
        other.standardError
          == "obstrace \(command): --scope 'FirstView.body (#3)': FirstView.body has no run #3 in \(guide); run #3 is a "
          + "run of NextView.body\n")
    }
    #expect(Run.command(["timeline", guide, "--scope", "NextView.body (#3)"]).status == 0)
  }

  /// Serials are counted across types (observations.trc: Model#1, SavingModel#2): `Type#n` names object n only
  /// when it is of that type, not another type's object n.
  @Test("an object named with a type it does not have is one line naming that type's objects")
  func objectOfAnotherType() {
    let trace = Paths.root + "/traces/observations.trc"
    let wrong = Run.command(["timeline", trace, "--object", "SavingModel#1"])
    #expect(wrong.status == 2)
    #expect(wrong.standardOutput.isEmpty, "\(wrong.standardOutput)")
    #expect(
      wrong.standardError
        == "obstrace timeline: --object SavingModel#1 is not an object of \(trace) (SavingModel objects: SavingModel#2)\n"
    )
    let noType = Run.command(["timeline", trace, "--object", "Widget#2"])
    #expect(noType.status == 2)
    #expect(
      noType.standardError
        == "obstrace timeline: --object Widget#2 is not an object of \(trace) (no object is a Widget; known: Model, "
        + "SavingModel)\n")
    let right = Run.command(["timeline", trace, "--object", "SavingModel#2"])
    #expect(right.status == 0, "\(right.standardError)")
    let lines = right.standardOutput.split(separator: "\n").dropFirst()
    #expect(
      !lines.isEmpty
        && lines.allSatisfy {
          $0.contains("SavingModel#2.") || $0.hasSuffix("  created SavingModel#2")
            || $0.hasSuffix("  freed SavingModel#2")
        }, "\(lines)")
    #expect(Run.command(["timeline", trace, "--object", "#1"]).standardOutput.contains("Model#1.property"))
    for command in ["timeline", "graph"] {
      let property = Run.command([command, trace, "--property", "SavingModel#1.property"])
      #expect(property.status == 2)
      #expect(
        property.standardError
          == "obstrace \(command): --property 'SavingModel#1.property' names SavingModel#1, which is not an object of "
          + "\(trace) (SavingModel objects: SavingModel#2)\n")
      #expect(Run.command([command, trace, "--property", "SavingModel#2.property"]).status == 0)
    }
  }
}
