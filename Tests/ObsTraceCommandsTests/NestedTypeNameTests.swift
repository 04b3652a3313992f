import Foundation
import Testing

@testable import ObsTraceFormat

/// Types as the recorder defines them (`String(reflecting:)`), and as its symbols chunk names them for display
/// (`String(describing:)`, which drops a nested type's outer types): two nested types of one simple name, a generic
/// over a nested type, a nested type of a generic, a private type.
private let reflected = [
  "", "Nest.ListView.Model", "Nest.DetailView.Model", "Nest.Box<Nest.Shelf.Item>", "Nest.Outer<Swift.Int>.Inner",
  "Nest.(unknown context at $5622f821f1f8).Hidden",
]
private let described = ["", "Model", "Model", "Box<Item>", "Inner", "Hidden"]

/// The try-out's Nest program, as a trace: objects 1-5 of types 1-5 are created and each property written once;
/// a tracking scope reads `ListView.Model#1.count` and is fired by its write. Every object is alive at the end. The
/// symbols name the properties as the key path getters do (`ListView.Model.count`, `Box.value`, `Outer.Inner.n`).
enum NestedTrace {
  static func write() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { reflected[Int($0)] }, property: SyntheticDefinitions.computedProperty(root: "Root"),
      label: { _ in "Nest/main.swift:11" }, scope: { _ in ScopeDefinition(kind: .tracking, label: 1, parent: 0) })
    var trace = try SyntheticTrace("nested", definitions: definitions, executable: "/bin/Nest")
    var chunk = trace.chunk()
    for object in UInt32(1)...5 { trace.next(&chunk, .objectCreated, object: object) }
    trace.next(&chunk, .scopeBegin, flags: ScopeKind.tracking.rawValue, object: 1, key: 1, scope: 4)
    trace.next(&chunk, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: 4, aux: 1, depth: 1)
    trace.next(&chunk, .scopeEnd, scope: 4)
    trace.next(&chunk, .trackingInstalled, scope: 4, aux: 1)
    for object in UInt32(1)...5 {
      trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: object, key: object, aux: object)
      if object == 1 {
        trace.next(&chunk, .trackingFired, object: 1, key: 1, scope: 4)
        trace.next(&chunk, .trackingCancelled, flags: EventFlags.cancelledByFire, scope: 4)
      }
      trace.next(
        &chunk, .didSet, flags: EventFlags.changed | EventFlags.modify, object: object, key: object, aux: object)
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    for (id, name) in described.enumerated().dropFirst() { symbols.typeNames[UInt32(id)] = name }
    symbols.propertyNames = [
      1: PropertyName(module: "Nest", type: "ListView.Model", property: "count"),
      2: PropertyName(module: "Nest", type: "DetailView.Model", property: "count"),
      3: PropertyName(module: "Nest", type: "Box", property: "value"),
      4: PropertyName(module: "Nest", type: "Outer.Inner", property: "n"),
      5: PropertyName(module: "Nest", type: "(Hidden in _3E0F)", property: "h"),
    ]
    try trace.write(symbols)
    return try trace.finish()
  }
}

/// A type is printed by what identifies it, qualified as its properties' names are, in every command and format.
@Suite("Names of nested types")
struct NestedTypeNameTests {
  @Test(
    "ListView.Model and DetailView.Model are two names in the report, JSON, findings, timeline, graph, export, HTML")
  func nestedTypesApart() throws {
    let path = try NestedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    let text = report.standardOutput
    let objectRows = text.split(separator: "\n").drop { !$0.contains("alive at end") }.dropFirst().prefix(5)
    #expect(
      objectRows.map { $0.split(separator: " ").first.map(String.init) ?? "" }.sorted()
        == ["Box<Shelf.Item>", "DetailView.Model", "Hidden", "ListView.Model", "Outer<Int>.Inner"], "\(text)")
    #expect(text.contains("Box<Shelf.Item>.value"), "\(text)")
    #expect(text.contains("Outer<Int>.Inner.n"), "\(text)")
    #expect(!text.contains("Box<Item>"), "\(text)")
    #expect(!text.contains("unknown context"), "\(text)")
    #expect(!text.contains(" Model objects"), "\(text)")
    let json = Run.command(["report", path, "--format", "json"]).standardOutput
    for name in ["ListView.Model", "DetailView.Model", "Box<Shelf.Item>", "Outer<Int>.Inner"] {
      #expect(json.contains("\"type\":\"\(name)\""), "\(name) in \(json)")
    }
    #expect(!json.contains("\"type\":\"Model\""))

    let timeline = Run.command(["timeline", path]).standardOutput
    #expect(timeline.contains("read ListView.Model#1.count"), "\(timeline)")
    #expect(timeline.contains("write DetailView.Model#2.count by _modify"), "\(timeline)")
    #expect(timeline.contains("write Box<Shelf.Item>#3.value by _modify"), "\(timeline)")

    // The graph draws what fired: ListView.Model's count, read by the scope; DetailView.Model fired nothing.
    let list = Run.command(["graph", "--dot", path, "--type", "ListView.Model", "--per-object"])
    #expect(list.status == 0, "\(list.standardError)")
    #expect(list.standardOutput.contains("ListView.Model#1.count"), "\(list.standardOutput)")
    let detail = Run.command(["graph", "--dot", path, "--type", "DetailView.Model", "--per-object"])
    #expect(detail.status == 0, "\(detail.standardError)")
    #expect(!detail.standardOutput.contains("Model#"), "\(detail.standardOutput)")
    let simple = Run.command(["graph", "--dot", path, "--type", "Model"])
    #expect(simple.status == 2)
    #expect(simple.standardError.contains("DetailView.Model"), "\(simple.standardError)")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-nested-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    for format in ["chrome-json", "perfetto"] {
      let out = directory.appendingPathComponent("export.\(format)").path
      #expect(Run.command(["export", path, "--format", format, "-o", out]).status == 0)
      let exported = String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self)
      #expect(exported.contains("ListView.Model#1.count"), "\(format)")
      #expect(!exported.contains("Model#1.Model.count"), "\(format)")
    }
    let html = directory.appendingPathComponent("report.html").path
    #expect(Run.command(["report", path, "--format", "html", "-o", html]).status == 0)
    let page = String(decoding: try Data(contentsOf: URL(fileURLWithPath: html)), as: UTF8.self)
    #expect(page.contains("ListView.Model#1.count"))
    #expect(!page.contains("Model#1.Model.count"))
  }

  @Test(
    "input names take the qualified type: --object, --property, --type; the simple name is refused naming both",
    arguments: [
      (["timeline", "--object", "ListView.Model#1"], Int32(0), "read ListView.Model#1.count"),
      (["timeline", "--object", "DetailView.Model#2"], Int32(0), "write DetailView.Model#2.count"),
      (["timeline", "--object", "ListView.Model#2"], Int32(2), "(ListView.Model objects: ListView.Model#1)"),
      (["timeline", "--object", "Model#1"], Int32(2), "DetailView.Model"),
      (["timeline", "--property", "DetailView.Model#2.count"], Int32(0), "write DetailView.Model#2.count"),
      (["timeline", "--object", "Box<Shelf.Item>#3"], Int32(0), "write Box<Shelf.Item>#3.value"),
      (["graph", "--type", "ListView.Model"], Int32(0), "ListView.Model.count"),
      (["graph", "--type", "Box<Item>"], Int32(2), "Box<Shelf.Item>"),
    ])
  func qualifiedNamesTaken(arguments: [String], status: Int32, printed: String) throws {
    let path = try NestedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = Run.command([arguments[0], path] + arguments.dropFirst() + (arguments[0] == "graph" ? ["--dot"] : []))
    #expect(result.status == status, "\(result.standardOutput)\(result.standardError)")
    #expect((status == 0 ? result.standardOutput : result.standardError).contains(printed), "\(result)")
  }

  @Test("a --max key or a baseline key as an earlier build named the property says its name now")
  func earlierNamesSaid() throws {
    let path = try NestedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(Run.command(["check", path, "--max", "Box<Shelf.Item>.value:writes<=1"]).status == 0)
    let limit = Run.command(["check", path, "--max", "Box<Item>.value:writes<=1"])
    #expect(limit.status == 2)
    #expect(
      limit.standardError
        == "obstrace check: --max 'Box<Item>.value:writes<=1' names no property or scope of \(path): "
        + "'Box<Item>.value' is what earlier builds of obstrace called Box<Shelf.Item>.value, naming a type without "
        + "its outer types: --max 'Box<Shelf.Item>.value:writes<=1'\n")
    let inner = Run.command(["check", path, "--max", "Outer.Inner.n:writes<=1"])
    #expect(inner.status == 2)
    #expect(inner.standardError.contains("called Outer<Int>.Inner.n"), "\(inner.standardError)")

    let baseline = path + ".baseline.json"
    defer { try? FileManager.default.removeItem(atPath: baseline) }
    #expect(Run.command(["baseline", path, "-o", baseline]).status == 0)
    let made = String(decoding: try Data(contentsOf: URL(fileURLWithPath: baseline)), as: UTF8.self)
    #expect(made.contains("\"Box<Shelf.Item>.value\""))
    #expect(Run.command(["check", path, "--baseline", baseline]).status == 0)
    // The same baseline as an earlier build wrote it.
    try Data(made.replacingOccurrences(of: "Box<Shelf.Item>", with: "Box<Item>").utf8).write(
      to: URL(fileURLWithPath: baseline))
    let old = Run.command(["check", path, "--baseline", baseline])
    #expect(old.status == 2)
    #expect(
      old.standardError
        == "obstrace check: \(baseline) names the property 'Box<Item>.value', which \(path) calls "
        + "Box<Shelf.Item>.value: the baseline was made by an earlier build of obstrace, which named a type without "
        + "its outer types; make a new baseline with 'obstrace baseline'\n")
  }

  @Test("a recorded type name loses its modules and a private type's run-specific context, nothing else")
  func recordedNamesWithoutModules() {
    #expect(TraceDefinitions.removingModules("Nest.ListView.Model") == "ListView.Model")
    #expect(TraceDefinitions.removingModules("Nest.Box<Nest.Shelf.Item>") == "Box<Shelf.Item>")
    #expect(TraceDefinitions.removingModules("Nest.Outer<Swift.Int>.Inner") == "Outer<Int>.Inner")
    #expect(TraceDefinitions.removingModules("Nest.(unknown context at $5622f821f1f8).Hidden") == "Hidden")
    #expect(TraceDefinitions.removingModules("Nest.(unknown context at $5622f821f244).FP.In") == "FP.In")
    #expect(
      TraceDefinitions.removingModules("Nest.(unknown context at $56).(unknown context at $57).Local") == "Local")
    #expect(
      TraceDefinitions.removingModules("Nest.Box<Swift.Dictionary<Swift.String, (Swift.Int, Nest.Shelf.Item)>>")
        == "Box<Dictionary<String, (Int, Shelf.Item)>>")
  }
}
