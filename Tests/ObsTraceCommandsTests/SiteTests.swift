import Foundation
import ObsTraceAnalysis
import ObsTraceFormat
import Testing

/// Sites are the user's file and line in debug and optimized builds: through the frames an optimized build
/// inlines (the `@Observable` accessors, the registrar), and through line-0 code: the set-up a debug build puts
/// before a `_modify` call and an optimized build before a call through a protocol witness, and the cleanup after a
/// statement where a key path's writeback runs the setter. The fixture `Tests/Fixtures/Sites/main.swift` is compiled here both ways against the
/// package's built modules, as a user's release build would inline them.
@Suite("Sites")
struct SiteTests {
  @Test(
    "every kind of write, and a read, is reported at its own line, with how it was made", arguments: ["-Onone", "-O"])
  func sitesOfEveryWrite(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/Sites/main.swift"
    let program = try FixtureBuild.compile(source, optimization: optimization)
    let trace = Paths.temporary("sites.trc")
    let run = try Run.program(program, [trace])
    #expect(run.status == 0, "\(run.standardError)")
    let reader = try TraceReader(path: trace)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    let marks = try FixtureBuild.siteMarks(source)
    func described(_ site: SymbolizedFrame?) -> String {
      guard let site else { return "no site" }
      return "\(site.file.split(separator: "/").last ?? ""):\(site.line) \(site.function.prefix { $0 != "(" })"
    }
    func sites(_ kind: EventKind, outside scopes: Set<UInt32> = []) -> [String] {
      events.filter { $0.kind == kind && !scopes.contains($0.scope) }.map {
        described(reader.definitions.site(ofStack: $0.stack))
      }
    }
    // The scopes of the tail-position observers (the five after track's two).
    let observers = Set(events.filter { $0.kind == .scopeBegin }.dropFirst(2).prefix(5).map(\.scope))
    func expected(_ names: [String], in function: String = "SitesFixture.writeEveryWay") -> [String] {
      names.map { "main.swift:\(marks[$0] ?? 0) \(function)" }
    }
    // A closure's name is cut at its first parenthesis: its line tells it.
    let closure = "closure #1 "
    // Writes through `_modify` right after a statement that ends in cleanup code: in a debug build, each of these
    // but the append was placed on the line before it.
    let afterCleanup = [
      "modify after print", "append after print", "first of three", "second of three", "third of three",
      "class modify after print", "existential modify after print",
    ]
    #expect(
      sites(.willSet)
        == expected(["set count", "modify count", "modify items", "withMutation count"])
        + expected(["modify in closure", "set in closure"], in: closure)
        + expected(["modify inlined", "set inlined"], in: "SitesFixture.bump")
        + expected(["modify in local function", "set in local function"], in: "write #1 ")
        + expected(["modify in nested closure", "modify in nested closure"], in: closure)
        + expected(["modify box", "set box"], in: "SitesFixture.writeBox")
        + expected(["modify key path", "set after key path"], in: "SitesFixture.writeThroughKeyPath")
        + expected(["modify in defer"], in: "$defer #1 ")
        + expected(["modify existential", "set after existential"], in: "main")
        + expected(afterCleanup, in: "SitesFixture.writeAfterCleanup"))
    // How each write was made: the flags tell _modify from withMutation, the stack the setter from an explicit one.
    let kinds = events.filter { $0.kind == .willSet }.map { reader.definitions.writeKind(of: $0) }
    #expect(
      kinds == [
        .set, .modify, .modify, .withMutation, .modify, .set, .modify, .set, .modify, .set, .modify, .modify, .modify,
        .set, .set, .set, .modify, .modify, .set,
      ] + Array(repeating: .modify, count: afterCleanup.count))
    // Reads (but those of the observers' closures, whose sites are what the optimizer made of them: a read that ends
    // a closure is a jump too): the writes through _modify read first; inside withObservationTracking (the label's
    // two runs); in the closure; in and after the inlined function.
    #expect(
      sites(.access, outside: observers)
        == expected(["modify count", "modify items", "read count"])
        + expected(["tracking body", "tracking body"], in: closure)
        + expected(["modify in closure", "read in closure"], in: closure)
        + expected(["modify inlined"], in: "SitesFixture.bump")
        + expected(["read after inlined"], in: "SitesFixture.callsInlined")
        + expected(["modify in local function"], in: "write #1 ")
        + expected(["modify in nested closure", "modify in nested closure"], in: closure)
        + expected(["modify box"], in: "SitesFixture.writeBox")
        + expected(["modify key path"], in: "SitesFixture.writeThroughKeyPath")
        + expected(["modify in defer"], in: "$defer #1 ")
        + expected(["tracking price body"], in: closure)
        + expected(["modify existential"], in: "main")
        + expected(afterCleanup, in: "SitesFixture.writeAfterCleanup"))
    // One call site of withObservationTracking reached from two functions: one label, the call site's. A Void one
    // as its function's last statement (a jump in an optimized build), called from two lines: one label, its own
    // line, not its callers' (and so the qualified `Observation.withObservationTracking`). One nested as the last
    // statement of the outer one's closure: its own line.
    let labels = events.filter { $0.kind == .scopeBegin }.map { reader.definitions.labelName($0.key) }
    #expect(
      labels
        == [
          "tracking", "tracking", "tail tracking", "tail tracking", "qualified tracking", "outer tracking",
          "nested tracking", "tracking price",
        ].map {
          "SitesFixture/main.swift:\(marks[$0] ?? 0)"
        })
    // Each scope's stack (backtraces are on) begins at its call site, in the user's function: no frame of ObsTrace
    // before it.
    let scopeStacks = events.filter { $0.kind == .scopeBegin }.map {
      described(reader.definitions.frames(ofStack: $0.stack).first)
    }
    #expect(
      scopeStacks
        == expected(["tracking", "tracking"], in: "SitesFixture.track")
        + expected(["tail tracking", "tail tracking"], in: "SitesFixture.watch")
        + expected(["qualified tracking"], in: "SitesFixture.watchQualified")
        + expected(["outer tracking"], in: "SitesFixture.watchNested") + expected(["nested tracking"], in: closure)
        + expected(["tracking price"], in: "SitesFixture.trackPrice"))
  }
}

extension SiteTests {
  @Test(
    "a write in the user's computed setter or subscript setter is sited there, and a withObservationTracking in a computed getter is labelled by its own line",
    arguments: ["-Onone", "-O"])
  func computedAccessorsAreTheUsers(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/SitesAccessors/main.swift"
    let program = try FixtureBuild.compile([source], module: "SitesAccessors", optimization: optimization)
    let trace = Paths.temporary("sites-accessors\(optimization).trc")
    let run = try Run.program(program, [trace])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput == "0.0\nlabel fired\n100.0\nlabel fired\n")
    let reader = try TraceReader(path: trace)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    let marks = try FixtureBuild.siteMarks(source)
    // Before, the user's setters were passed over as the macro's accessors: both writes were sited at the caller.
    let writes = events.filter { $0.kind == .willSet }.map { event -> String in
      guard let site = reader.definitions.site(ofStack: event.stack) else { return "no site" }
      return "\(site.file.split(separator: "/").last ?? ""):\(site.line)"
    }
    #expect(writes == ["computed setter", "subscript setter"].map { "main.swift:\(marks[$0] ?? 0)" })
    // One label, the tracking call's line in the getter, for both callers; before, the first caller's line (debug)
    // or each caller's (optimized: the getter is inlined into each).
    let labels = events.filter { $0.kind == .scopeBegin }.map { reader.definitions.labelName($0.key) }
    #expect(labels == Array(repeating: "SitesAccessors/main.swift:\(marks["computed tracking"] ?? 0)", count: 2))
  }
}

@Suite("Untraced Observations")
struct UntracedObservationsTests {
  @Test(
    "an Observations made in a file without the import is named by its closure's line, said as such, in report, timeline and graph",
    arguments: ["-Onone", "-O"])
  func namedByItsClosure(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/UntracedObservations"
    let program = try FixtureBuild.compile(
      [folder + "/main.swift", folder + "/Loop.swift"], module: "UntracedObservations", optimization: optimization)
    let trace = Paths.temporary("untraced-observations\(optimization).trc")
    let run = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput == "first value: 1, before: 0\n")
    let line = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    let label = "UntracedObservations/Loop.swift:\(line) (Observations closure)"
    let report = Run.command(["report", trace]).standardOutput
    #expect(report.contains("\(label)  untraced"), "\(report)")
    #expect(report.contains("1 scope at \(label) tracks with Observation directly"), "\(report)")
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains(label), "\(timeline)")
    let graph = Run.command(["graph", "--dot", trace]).standardOutput
    #expect(graph.contains("\"s:\(label)\""), "\(graph)")
    for output in [report, timeline, graph] { #expect(!output.contains("<call site of stack")) }
    // Loop.swift reads the model first: optimized, the key path the recorder meets has a getter that is a jump
    // thunk with no symbol (a fresh-clone try-out's `Progress.<Int #1>`, F6); the property is named through it.
    #expect(report.contains("  Model.value "), "\(report)")
    #expect(!report.contains("<Int #") && !report.contains("not named by the symbol table"), "\(report)")
  }

  /// A fresh-clone try-out's J8: a program built with `--static-swift-stdlib` has no libswiftObservation.so (Observation
  /// is linked into the executable), so the recorder could not find Observation's tracking getter: it said "cannot
  /// see tracking ObsTrace does not own (libswiftObservation.so is not loaded in this process)", recorded the
  /// untraced Observations' reads as outside any scope, and the report told the user to add an import the files had.
  /// The getter is now looked up in the executable's own symbol table, and Observation's code there is told apart
  /// by its functions' names: the same scope, label and counts as the dynamic build. Stripped, it is not found:
  /// one line says why, and the report's warning says what was not seen and what to keep.
  @Test("a program linked with a static standard library sees tracking ObsTrace does not own, as a dynamic one does")
  func staticStandardLibrary() throws {
    let folder = Paths.root + "/Tests/Fixtures/UntracedObservations"
    let sources = [folder + "/main.swift", folder + "/Loop.swift"]
    let program = try FixtureBuild.compile(
      sources, module: "UntracedObservations", optimization: "-Onone", flags: FixtureBuild.staticStandardLibrary)
    let dynamic = try FixtureBuild.compile(sources, module: "UntracedObservations", optimization: "-Onone")
    var reports: [String] = []
    for binary in [program, dynamic] {
      let trace = Paths.temporary("untraced-static-\(reports.count).trc")
      let run = try Run.program(binary, [], environment: ["OBSTRACE_OUTPUT": trace])
      #expect(run.status == 0, "\(run.standardError)")
      #expect(run.standardOutput == "first value: 1, before: 0\n")
      #expect(!run.standardError.contains("cannot see tracking"), "\(run.standardError)")
      let report = Run.command(["report", trace]).standardOutput
      // Everything after the header line (the file's name, the duration) is the same for both builds.
      reports.append(
        report.split(separator: "\n").dropFirst(2).filter { !$0.contains("running-at-stop") }
          .joined(separator: "\n"))
      if binary == program {
        let stacks = Run.command(["dump", "--stacks", trace]).standardOutput
        let name = "[libswiftObservation.a in \(program.split(separator: "/").last ?? "")]"
        #expect(stacks.contains("withObservationTracking<A>(_:onChange:)  \(name)"), "\(stacks)")
      }
    }
    let line = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    #expect(reports[0].contains("UntracedObservations/Loop.swift:\(line) (Observations closure)  untraced"))
    #expect(!reports[0].contains("could not see tracking"), "\(reports[0])")
    #expect(reports[0] == reports[1])
    // Stripped: no symbol to find. One line on standard error says why; the report says what was not seen.
    let stripped = program + "-stripped"
    let strip = try Run.program("/usr/bin/env", ["strip", "-o", stripped, program])
    #expect(strip.status == 0, "\(strip.standardError)")
    let trace = Paths.temporary("untraced-static-stripped.trc")
    let run = try Run.program(stripped, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0 && run.standardOutput == "first value: 1, before: 0\n", "\(run.standardError)")
    #expect(
      run.standardError.contains(
        "libswiftObservation.so is not loaded in this process, and the executable, which then links Observation "
          + "itself (a static standard library), has no _swift_observation_tls_get in its symbol table"),
      "\(run.standardError)")
    let report = Run.command(["report", trace]).standardOutput
    #expect(report.contains("warning [untraced-tracking] the recorder could not see tracking"), "\(report)")
    #expect(report.contains("--static-swift-stdlib: do not strip it"), "\(report)")
  }

  @Test(
    "each value of an untraced Observations loop is a run, and each write names the run it woke",
    arguments: ["-Onone", "-O"])
  func everyRunAndItsWake(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/UntracedObservationsLoop"
    let sources = [folder + "/main.swift", folder + "/Loop.swift"]
    let (run, alone, trace) = try FixtureBuild.sideBySide(
      sources, module: "UntracedLoop", optimization: optimization, trace: "untraced-loop\(optimization).trc")
    #expect(alone.status == 0, "\(alone.standardError)")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(run.standardOutput == "values: [0, 1, 2, 3]\n")
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let line = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    let label = "UntracedLoop/Loop.swift:\(line) (Observations closure)"
    let timeline = Run.command(["timeline", trace]).standardOutput
    let lines = timeline.split(separator: "\n")
    // The runs, in order, by their ids: one per value the loop got (the recorder's scopeBegin events).
    let runs = lines.compactMap { line in
      line.range(of: "run \(label) (untraced, #").map { String(line[$0.upperBound...].prefix { $0.isNumber }) }
    }
    let reader = try TraceReader(path: trace)
    var begins = 0
    reader.forEachEvent { if $0.kind == .scopeBegin { begins += 1 } }
    #expect(begins == 4)
    #expect(runs.count == 4, "\(timeline)")
    // Each write woke the run after the one before it: the writes of 1, 2 and 3 the runs of the first three
    // values, and the write after the loop ended the last value's tracking, still installed.
    let writes = lines.filter { $0.contains("write Model#") }
    #expect(writes.count == 4, "\(timeline)")
    let sites = [marks["write"]!, marks["write"]!, marks["write"]!, marks["after"]!]
    for (index, write) in writes.enumerated() where index < runs.count {
      #expect(write.contains("invalidated \(label) (#\(runs[index]), predicted)"), "\(write)")
      #expect(write.contains("at UntracedLoop/main.swift:\(sites[index])"), "\(write)")
    }
    // Each run after the first began after the write that woke it.
    let order = lines.filter { $0.contains("run \(label)") || $0.contains("write Model#") }.map {
      $0.contains("write Model#") ? "w" : "r"
    }
    #expect(order == ["r", "w", "r", "w", "r", "w", "r", "w"], "\(timeline)")
    let report = Run.command(["report", trace, "--format", "json"]).standardOutput
    let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
    let scope = (json?["scopes"] as? [[String: Any]])?.first { $0["label"] as? String == label }
    #expect(scope?["runs"] as? Int == 4, "\(report)")
    #expect(scope?["invalidations"] as? Int == 4)
    #expect(scope?["predictedInvalidations"] as? Int == 4)
    let graph = Run.command(["graph", "--dot", trace]).standardOutput
    #expect(graph.contains("4 runs"), "\(graph)")
    #expect(!report.contains("inconsistent"))
  }

  @Test(
    "an untraced run whose thread records nothing after it is counted and said, not left out: a loop still waiting at the end",
    arguments: ["-Onone", "-O"])
  func runWithoutARecordedEnd(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/UntracedObservationsLoop"
    let sources = [folder + "/main.swift", folder + "/Loop.swift"]
    let (run, _, trace) = try FixtureBuild.sideBySide(
      sources, module: "UntracedLoop", optimization: optimization, arguments: ["waiting"],
      trace: "untraced-waiting\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(run.standardOutput == "values: [0, 1, 2, 3]\n")
    let line = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    let label = "UntracedLoop/Loop.swift:\(line) (Observations closure)"
    let reader = try TraceReader(path: trace)
    var begins: [UInt32] = []
    var ends: Set<UInt32> = []
    reader.forEachEvent {
      if $0.kind == .scopeBegin { begins.append($0.scope) }
      if $0.kind == .scopeEnd { ends.insert($0.scope) }
    }
    // The last value's run began and read, and its thread recorded nothing more: its end is not in the trace.
    // (Earlier runs' ends are recorded at their thread's next event: not when the loop went on on another thread.)
    #expect(begins.count == 4 && !ends.contains(begins.last ?? 0), "\(begins) begun, \(ends) ended")
    let timeline = Run.command(["timeline", trace]).standardOutput
    let runs = timeline.split(separator: "\n").filter { $0.contains("run \(label) (untraced, #") }
    #expect(runs.count == 4, "\(timeline)")
    #expect(
      runs.last?.hasSuffix(
        "read Model#1.value  [its end is not in the trace: its thread recorded nothing after it; counted as a run]")
        == true, "\(timeline)")
    #expect(runs.dropLast().allSatisfy { !$0.contains("its end is not in the trace") }, "\(timeline)")
    let json = Run.command(["report", trace, "--format", "json"]).standardOutput
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    let scope = (object?["scopes"] as? [[String: Any]])?.first { $0["label"] as? String == label }
    #expect(scope?["runs"] as? Int == 4, "\(json)")
    let report = Run.command(["report", trace]).standardOutput
    #expect(
      report.contains(
        "; 1 of these runs has no recorded end (its thread recorded nothing after it, as for a loop still waiting for "
          + "its next value when the trace ended): counted up to the trace's end"), "\(report)")
    #expect(Run.command(["graph", "--dot", trace]).standardOutput.contains("4 runs"))
    let export = Paths.temporary("untraced-waiting\(optimization).json")
    #expect(Run.command(["export", trace, "--format", "chrome-json", "-o", export]).status == 0)
    let slices = try String(contentsOfFile: export, encoding: .utf8).components(separatedBy: "\"name\":\"\(label)\"")
    #expect(slices.count - 1 >= 4, "\(slices.count - 1) slices named \(label)")
  }
}

@Suite("Re-tracked instances")
struct RetrackTests {
  /// The scopes of a report in JSON: label → (instances, runs).
  func scopes(_ trace: String) throws -> [String: (instances: Int, runs: Int)] {
    try report(trace).scopes.mapValues { ($0["instances"] as? Int ?? -1, $0["runs"] as? Int ?? -1) }
  }

  /// A report in JSON: its scopes by label and its properties by name.
  func report(_ trace: String) throws -> (scopes: [String: [String: Any]], properties: [String: [String: Any]]) {
    let result = Run.command(["report", "--format", "json", trace])
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    var scopes: [String: [String: Any]] = [:]
    for scope in report["scopes"] as? [[String: Any]] ?? [] { scopes[scope["label"] as? String ?? ""] = scope }
    var properties: [String: [String: Any]] = [:]
    for property in report["properties"] as? [[String: Any]] ?? [] {
      properties[property["property"] as? String ?? ""] = property
    }
    return (scopes, properties)
  }

  /// Compiles `source` with and without the import, runs both (the traced one recording), checks that they print
  /// the same, and returns the trace.
  func tracedSideBySide(_ source: String, module: String, optimization: String) throws -> String {
    let program = try FixtureBuild.compile([source], module: module, optimization: optimization)
    let trace = Paths.temporary("\(module)\(optimization).trc")
    let traced = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 0, "\(traced.standardError)")
    #expect(traced.standardError.isEmpty, "\(traced.standardError)")
    // The same program with Observation's own withObservationTracking (without the import) prints the same.
    let text = try String(contentsOfFile: source, encoding: .utf8)
    let untracedSource = Paths.temporary("main.swift")
    try text.replacingOccurrences(of: "import ObsTrace\n", with: "").write(
      toFile: untracedSource, atomically: true, encoding: .utf8)
    let untraced = try Run.program(
      try FixtureBuild.compile([untracedSource], module: module + "Untraced", optimization: optimization), [])
    #expect(untraced.status == 0)
    #expect(untraced.standardOutput.contains("  invalidated\n"))
    #expect(traced.standardOutput == untraced.standardOutput)
    return trace
  }

  @Test(
    "a function re-tracked by calling it again after each fire is one instance in debug and release builds, and prints what it prints untraced",
    arguments: ["-Onone", "-O"])
  func oneInstanceInAnyBuild(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/Retrack/main.swift"
    let trace = try tracedSideBySide(source, module: "Retrack", optimization: optimization)
    // Three runs of render() (one continued twice), two of renderOther() and three of observe() (re-tracked from its
    // handler), each one instance: in an optimized build each call of an inlined function is its own call
    // instruction, and render()'s runs were three instances, observe()'s two (the handler's call is another, and
    // was named "(tracked closure)": a call from a change handler was named by the frames around Observation's).
    // late(), first called from that handler, is named by its line in both builds.
    let marks = try FixtureBuild.siteMarks(source)
    let scopes = try scopes(trace)
    func scope(_ mark: String) throws -> (instances: Int, runs: Int) {
      try #require(scopes["Retrack/main.swift:\(marks[mark] ?? 0)"], "\(mark): \(scopes)")
    }
    #expect(try scope("render") == (1, 3), "\(scopes)")
    #expect(try scope("other") == (1, 2), "\(scopes)")
    #expect(try scope("observe") == (1, 3), "\(scopes)")
    #expect(try scope("late") == (1, 1), "\(scopes)")
    #expect(scopes.count == 4, "\(scopes)")
  }

  @Test(
    "a @MainActor loop that re-tracks and awaits between writes is one instance, and only its writes after a fire are coalesced",
    arguments: ["-Onone", "-O"])
  func mainActorLoopAcrossAwaits(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/RetrackAsync/main.swift"
    let trace = try tracedSideBySide(source, module: "RetrackAsync", optimization: optimization)
    let marks = try FixtureBuild.siteMarks(source)
    let report = try report(trace)
    let loop = try #require(report.scopes["RetrackAsync/main.swift:\(marks["loop"] ?? 0)"], "\(report.scopes)")
    // Three runs, each fired by `+= step`; the `+= 0` after each fire is coalesced into the one waiting instance.
    // Before, the runs after the first await (on another thread) were a second instance, and every write after
    // the first run's fire was coalesced into the first too: instances 2, coalesced 7.
    #expect(loop["instances"] as? Int == 1 && loop["runs"] as? Int == 3, "\(loop)")
    #expect(loop["coalescedWrites"] as? Int == 3, "\(loop)")
    let property = try #require(report.properties["Box.value"], "\(report.properties)")
    #expect(property["writes"] as? Int == 7 && property["coalescedWrites"] as? Int == 3, "\(property)")
  }
}

@Suite("Top-level labels")
struct TopLevelLabelTests {
  @Test(
    "withObservationTracking in top-level code is labelled with its module, as one in a function, and a write there is sited with it",
    .timeLimit(.minutes(5)), arguments: [[], ["-DASYNC"]], ["-Onone", "-O"])
  func moduleOfTopLevelCode(flags: [String], optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/TopLevel/main.swift"
    let program = try FixtureBuild.compile([source], module: "TopLevel", optimization: optimization, flags: flags)
    let trace = Paths.temporary("top-level\(flags.joined())\(optimization).trc")
    let run = try Run.program(program, [trace])
    #expect(run.status == 0, "\(run.standardError)")
    let marks = try FixtureBuild.siteMarks(source)
    let reader = try TraceReader(path: trace)
    var labels: [String] = []
    var functions: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .scopeBegin else { return }
      labels.append(reader.definitions.labelName(event.key))
      functions.append(reader.definitions.site(ofStack: event.stack)?.function ?? "")
    }
    let expected = ["top level", "function", "top level later"].map { "TopLevel/main.swift:\(marks[$0] ?? 0)" }
    #expect(labels.sorted() == expected.sorted(), "\(functions)")
    // Top-level code's function names no module: `main`, or `async_Main` (and its pieces) once it awaits.
    #expect(
      functions.filter { $0 == "main" || $0.hasPrefix("async_Main") }.count == 2, "\(functions)")
    // Each label as the timeline prints it is one a command takes back.
    let timeline = Run.command(["timeline", trace]).standardOutput
    for label in expected {
      #expect(timeline.contains("run \(label) (tracking, #"), "\(timeline)")
      let scoped = Run.command(["timeline", trace, "--scope", label])
      #expect(scoped.status == 0, "\(scoped.standardError)")
      #expect(scoped.standardOutput.contains("run \(label) (tracking, #"))
      let checked = Run.command(["check", trace, "--max", "\(label):runs<=1"])
      #expect(checked.status == 0, "\(checked.standardOutput)\(checked.standardError)")
    }
    // The write's site names the module too: its frame's module is recorded (0x97), not guessed. Before, an async
    // main's write was `at main.swift:N (top-level code)` (tryout17's Q9), and so was any in a swiftc-built `main`.
    let write = "at TopLevel/main.swift:\(marks["write"] ?? 0) (top-level code)"
    #expect(timeline.contains(write), "\(timeline)")
    #expect(Run.command(["dump", "--stacks", trace]).standardOutput.contains(write))
  }
}

extension TopLevelLabelTests {
  @Test(
    "scopes a stripped program's stacks label are said: their instances and coalesced writes are not known (tryout18's R5)",
    .timeLimit(.minutes(5)))
  func stackLabelledScopesAreSaid() throws {
    let source = Paths.root + "/Tests/Fixtures/TopLevel/main.swift"
    let program = try FixtureBuild.compile([source], module: "TopLevel", optimization: "-Onone")
    let stripped = program + "-stripped"
    try? FileManager.default.removeItem(atPath: stripped)
    try FileManager.default.copyItem(atPath: program, toPath: stripped)
    #expect(try Run.program("/usr/bin/env", ["strip", stripped]).status == 0)
    var reports: [String] = []
    for binary in [program, stripped] {
      let trace = Paths.temporary("top-level-\(binary == program ? "whole" : "stripped").trc")
      let run = try Run.program(binary, [trace])
      #expect(run.status == 0, "\(run.standardError)")
      reports.append(Run.command(["report", trace]).standardOutput)
    }
    // The three call sites are scopes labelled by their stacks once stripped, and said so; named, nothing is said.
    #expect(reports[1].contains("<call site of stack #"), "\(reports[1])")
    #expect(reports[1].contains("\n  3 scopes are labelled by their stack (<call site of stack #N>), not a call site"), "\(reports[1])")
    #expect(reports[1].contains("the instances, coalesced writes and redundant runs of such scopes are not known"))
    #expect(!reports[0].contains("labelled by"), "\(reports[0])")
  }
}

/// Compiles a one-file program that imports ObsTrace against the modules and objects `swift build` made.
enum FixtureBuild {
  /// Builds `sources` with ObsTrace (`-DOBSTRACE`) and without it, with `flags`, each linked with its own build
  /// of `libraries` (in their order, each seeing the modules of those before it), runs both with `arguments`, the
  /// traced one recording to a new trace named `trace`, and expects the traced one to exit 0 and both to print the
  /// same (side by side); the caller checks what that is. The traced program records through `OBSTRACE_OUTPUT`,
  /// or, when it `recordsItself` (`Recorder.start(to:)` with options of its own), to the path it is given as its
  /// first argument.
  static func sideBySide(
    _ sources: [String], module: String, optimization: String, flags: [String] = [],
    libraries: [Library] = [], arguments: [String] = [], recordsItself: Bool = false, trace name: String
  ) throws -> (traced: ProcessResult, untraced: ProcessResult, trace: String) {
    var programs: [String] = []
    for variant in [["-DOBSTRACE"], []] {
      var built: [String] = []
      for library in libraries {
        built.append(
          try self.library(
            library.sources, module: library.module, optimization: optimization,
            flags: variant + built.flatMap { ["-I", $0] }))
      }
      // A library's archive before those it uses: the linker takes from an archive what earlier inputs need.
      programs.append(
        try compile(
          sources, module: module, optimization: optimization, flags: variant + flags, libraries: built.reversed()))
    }
    let trace = Paths.temporary(name)
    let run =
      recordsItself
      ? try Run.program(programs[0], [trace] + arguments)
      : try Run.program(programs[0], arguments, environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0, "\(run.standardError)")
    let alone = try Run.program(programs[1], recordsItself ? [trace + ".untraced"] + arguments : arguments)
    #expect(alone.standardOutput == run.standardOutput, "traced and untraced print differently")
    return (run, alone, trace)
  }

  /// A library module of a fixture (`library(_:module:optimization:flags:)`), built for `sideBySide`.
  struct Library {
    var sources: [String]
    var module: String
  }

  /// `swiftc`'s flags for a program that links the standard library, Foundation and the runtime into itself, as
  /// `swift build --static-swift-stdlib` does: `-static-stdlib` and the static libraries Foundation needs, which
  /// SwiftPM adds itself.
  static let staticStandardLibrary: [String] = {
    let foundation = [
      "Foundation", "CoreFoundation", "FoundationEssentials", "FoundationInternationalization", "_FoundationICU",
      "_FoundationCShims", "_FoundationCollections",
    ]
    return ["-static-stdlib", "-Xlinker", "--start-group"] + foundation.map { "-l" + $0 } + [
      "-Xlinker", "--end-group", "-lstdc++",
    ]
  }()

  /// `swiftc` with the built modules (and the C modules they import) on its search paths.
  static func swiftc(module: String) -> [String] {
    let built = Paths.binaries
    return [
      "swiftc", "-module-name", module, "-swift-version", "6", "-I", built + "/Modules",
      "-Xcc", "-fmodule-map-file=\(Paths.root)/Sources/CObsTraceZlib/module.modulemap",
      "-Xcc", "-fmodule-map-file=\(Paths.root)/Sources/CDw/module.modulemap",
      "-Xcc", "-fmodule-map-file=\(built)/CObsTraceRing.build/module.modulemap",
      "-Xcc", "-I", "-Xcc", Paths.root + "/Sources/CObsTraceRing/include",
    ]
  }

  static func compile(_ source: String, optimization: String) throws -> String {
    try compile([source], module: "SitesFixture", optimization: optimization)
  }

  /// Compiles `sources` as a library module `module`, as `swift build` builds a package's other target: a static
  /// library and its `.swiftmodule`, in a folder of their own that `compile(_:module:optimization:flags:libraries:)`
  /// takes.
  static func library(_ sources: [String], module: String, optimization: String, flags: [String] = []) throws
    -> String
  {
    let folder = Paths.temporary("\(module)\(optimization)\(flags.joined())")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let arguments =
      swiftc(module: module) + flags + [
        optimization, "-g", "-wmo", "-parse-as-library", "-Xcc", "-fno-omit-frame-pointer", "-emit-module",
        "-emit-module-path", folder + "/\(module).swiftmodule", "-emit-library", "-static",
      ] + sources + ["-o", folder + "/lib\(module).a"]
    let result = try Run.program("/usr/bin/env", arguments)
    guard result.status == 0 else { throw CompileFailure(output: result.standardError) }
    return folder
  }

  /// Compiles a program of several files (the first is its main.swift) as module `module`, linked with the modules
  /// of `libraries` (folders `library(_:module:optimization:flags:)` made). Optimized, it is built as `swift build -c
  /// release` builds: the whole module at once, its files' code made on several threads.
  static func compile(
    _ sources: [String], module: String, optimization: String, flags: [String] = [], libraries: [String] = []
  ) throws -> String {
    let output = Paths.temporary("\(module)\(optimization)\(flags.joined())")
    let built = Paths.binaries
    var arguments =
      swiftc(module: module) + flags + libraries.flatMap { ["-I", $0] } + [
        optimization, "-g",
      ] + (optimization == "-Onone" ? [] : ["-wmo", "-num-threads", "2"]) + [
        // As `swift build` does in debug and release: without frame pointers stacks lose frames.
        "-Xcc", "-fno-omit-frame-pointer",
      ] + sources
      + libraries.flatMap { folder in
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".a") }.sorted()
          .map { folder + "/" + $0 }
      } + ["-o", output, "-ldw", "-lelf", "-lz"]
    for target in ["ObsTrace", "ObsTraceRecorder", "ObsTraceFormat", "ObsTraceSymbols", "ObsTraceAnalysis"] {
      let folder = built + "/\(target).build"
      guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
      // Only objects of sources that still exist: an incremental build keeps those of files moved away.
      let objects = files.filter {
        $0.hasSuffix(".swift.o")
          && FileManager.default.fileExists(atPath: "\(Paths.root)/Sources/\(target)/\($0.dropLast(2))")
      }
      arguments += objects.sorted().map { folder + "/" + $0 }
    }
    let ring = built + "/CObsTraceRing.build"
    let cObjects = (try? FileManager.default.contentsOfDirectory(atPath: ring)) ?? []
    arguments += cObjects.filter { $0.hasSuffix(".c.o") }.sorted().map { ring + "/" + $0 }
    let result = try Run.program("/usr/bin/env", arguments)
    guard result.status == 0 else { throw CompileFailure(output: result.standardError) }
    return output
  }

  /// The `// site: name` comments of a fixture: name → line.
  static func siteMarks(_ source: String) throws -> [String: Int] {
    var marks: [String: Int] = [:]
    let text = try String(contentsOfFile: source, encoding: .utf8)
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      if let range = line.range(of: "// site: ") { marks[String(line[range.upperBound...])] = index + 1 }
    }
    return marks
  }

  struct CompileFailure: Error, CustomStringConvertible {
    var output: String
    var description: String { "the fixture did not compile:\n\(output)" }
  }
}

extension SiteTests {
  /// `@Observable` moves a property's observers into its peer buffer, their bodies under `#sourceLocation` of the
  /// user's file: an optimized build gave a write in `didSet { changes += 1 }` the buffer's file (a file in /tmp)
  /// with the user's line, and the macro's re-formatting of `didSet { if level > 10 { level = 10 } }` over three
  /// lines put its write one line late, in both builds, printed as certain (a fresh-clone try-out's T3, T10), then
  /// marked approximate, still a line late, and its function printed with the storage's private name,
  /// `Holder.(_level in _…).didset` (H6). The user's source, read at the stop, now places the one-line observer's
  /// write on its line, certain, and a longer body's write that the rows put past the body's last line on that line,
  /// approximate; the function is the property's observer, `Holder.level.didset`.
  @Test(
    "a write in a property's observer is sited in the user's file at the user's line, one in a re-formatted longer body marked approximate, and named by the property's own name",
    arguments: ["-Onone", "-O"])
  func observerBodies(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SitesObservers"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift", folder + "/Models.swift"], module: "SitesObservers", optimization: optimization,
      trace: "sites-observers\(optimization).trc")
    #expect(run.standardOutput == "1 10 30\n10 1 [\"z\": 1]\n6 2\n")
    let main = try FixtureBuild.siteMarks(folder + "/main.swift")
    let models = try FixtureBuild.siteMarks(folder + "/Models.swift")
    let reader = try TraceReader(path: trace)
    var writes: [String] = []
    var functions: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .willSet else { return }
      guard let site = reader.definitions.site(ofStack: event.stack) else { return writes.append("no site") }
      let file = site.file.split(separator: "/").last ?? ""
      writes.append("\(file):\(site.line)\(site.lineIsApproximate ? " approximate" : "")")
      if file == "Models.swift" { functions.append(SiteFormatting.shortFunction(site.function)) }
      #expect(!site.file.contains("@__swiftmacro_"), "\(site.file)")
    }
    let clamps = models["didSet clamps"] ?? 0
    #expect(
      writes == [
        "main.swift:\(main["count"] ?? 0)", "Models.swift:\(models["didSet one statement"] ?? 0)",
        "main.swift:\(main["level"] ?? 0)",
        // The whole observer is on one line of the user's: its write is there, whatever the buffer's rows say.
        "Models.swift:\(models["didSet re-formatted"] ?? 0)",
        // The rows say the buffer's third line of the body, past the user's two: put on the last, approximate.
        "main.swift:\(main["target"] ?? 0)", "Models.swift:\(clamps) approximate",
        "main.swift:\(main["existential set"] ?? 0)", "main.swift:\(main["loop"] ?? 0)",
        "main.swift:\(main["via protocol"] ?? 0)",
        "main.swift:\(main["existential after loop"] ?? 0)", "main.swift:\(main["after existential"] ?? 0)",
        // Through the setter and `_modify` the compiler made for an override's observer: at the caller, in both
        // builds (a fresh-clone try-out's H7: debug sited them at the override's declaration, release at the caller).
        "main.swift:\(main["override set"] ?? 0)", "main.swift:\(main["override modify"] ?? 0)",
      ])
    #expect(functions == ["Holder.count.didset", "Holder.level.didset", "Holder.target.didset"])
    // Every output that names the site says it is approximate.
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains(":\(clamps) (Holder.target.didset; line approximate)"), "\(timeline)")
    #expect(!timeline.contains(" in _"), "\(timeline)")
    let check = Run.command(["check", trace, "--max", "Holder.target:writes<=1", "--format", "github"])
    #expect(check.standardOutput.contains("Models.swift,line=\(clamps),"), "\(check.standardOutput)")
    #expect(check.standardOutput.contains("; the line is approximate)"), "\(check.standardOutput)")
    #expect(!check.standardOutput.contains("@__swiftmacro_"), "\(check.standardOutput)")
    let junit = Run.command(["check", trace, "--max", "Holder.target:writes<=1", "--format", "junit"])
    #expect(junit.standardOutput.contains("(Holder.target.didset; line approximate)"), "\(junit.standardOutput)")
  }
}

extension SiteTests {
  /// A fresh-clone try-out's G3 in a release build: in async code whose model is another module's, `print(…)` then
  /// `store.discount += 0` has no row of its own in the line table (the `_modify` call and its continuation share
  /// the print's cleanup row), and the write was sited on the print's line, as certain; with the callee's rule
  /// (45f07a4) it would be the next statement's line. Such a write is now marked approximate; every write whose
  /// statement has a row is at its line, certain. Side by side: traced and untraced print the same.
  @Test(
    "writes in async code (an async function, a Task, an async let, a for await body, an async main) are at their lines, or marked approximate where the binary gives the statement none",
    arguments: ["-Onone", "-O"])
  func asyncSites(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SitesAsync"
    let (run, alone, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SitesAsync", optimization: optimization,
      libraries: [.init(sources: [folder + "/Models.swift"], module: "AsyncModels")], recordsItself: true,
      trace: "sites-async\(optimization).trc")
    #expect(alone.status == 0, "\(alone.standardError)")
    #expect(
      run.standardOutput
        == "function: start\nfunction: after await\ntask\nasync let\nasync let: 3\nfor await: 1\nfor await: 2\n"
        + "top-level\ntop-level after await\n3 7 [1]\n")
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let reader = try TraceReader(path: trace)
    var writes: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .willSet else { return }
      guard let site = reader.definitions.site(ofStack: event.stack) else { return writes.append("no site") }
      writes.append(
        "\(site.file.split(separator: "/").last ?? ""):\(site.line)\(site.lineIsApproximate ? " approximate" : "")")
    }
    // Where the binary gives the statement a row, its line, certain. Where it gives none, approximate, near it: in
    // an optimized build, each `+= 0` (the `_modify` call and its continuation in one line-0 row) and the `append`
    // (inlined without rows); before, each was stated as certain on the line before or after.
    let rowless =
      optimization == "-Onone"
      ? []
      : [
        "function no-op after print", "function no-op after await", "function no-op after print after await",
        "function append", "task no-op after print", "async let no-op after print", "for await no-op after print",
        "for await no-op after print", "top-level no-op after print", "top-level no-op after print after await",
      ]
    let all = [
      "function no-op after print", "function add", "function no-op after await",
      "function no-op after print after await", "function set", "function append", "task no-op after print",
      "task add", "task set", "async let no-op after print", "async let add", "for await no-op after print",
      "for await add", "for await no-op after print", "for await add", "top-level no-op after print",
      "top-level no-op after print after await", "top-level add",
    ]
    var expected = all
    for name in rowless { expected.remove(at: expected.firstIndex(of: name)!) }
    #expect(
      writes.filter { !$0.hasSuffix(" approximate") }.sorted()
        == expected.map { "main.swift:\(marks[$0] ?? 0)" }.sorted(), "\(writes)")
    let approximate = writes.filter { $0.hasSuffix(" approximate") }
    #expect(approximate.count == rowless.count, "\(writes)")
    for write in approximate {
      let line = Int(write.dropFirst("main.swift:".count).prefix { $0.isNumber }) ?? 0
      #expect(rowless.contains { abs((marks[$0] ?? 0) - line) <= 1 }, "\(write) is not next to a write without a row")
    }
    // The report's no-op finding and the timeline say so.
    if !rowless.isEmpty {
      let report = Run.command(["report", trace]).standardOutput
      #expect(report.contains("(inFunction(_:); line approximate)\n"), "\(report)")
      let timeline = Run.command(["timeline", trace]).standardOutput
      #expect(timeline.contains("UNCHANGED → invalidated nothing  at SitesAsync/main.swift:"), "\(timeline)")
      // Every site names its module, the async main's too (tryout17's Q9).
      #expect(!timeline.contains("  at main.swift:"), "\(timeline)")
      #expect(timeline.contains(" (top-level code; line approximate)\n"), "\(timeline)")
      let json = Run.command(["report", trace, "--format", "json"]).standardOutput
      #expect(json.contains("\"siteApproximate\":true"), "\(json)")
    }
  }
}

extension SiteTests {
  /// A fresh-clone try-out's H13: in a release build, `a[keyPath: \Counter.value] += 1` (top-level code) was named
  /// in `watch(_:_:)`, the inlined function called on the line before, with a caller frame on that line, and
  /// `bump`'s write (inlined at its call) in `watch(_:_:)` too, `bump` left out: DWARF gives the key path accessors'
  /// inlined code the inlined `watch`'s scope. The user's source tells that the call's line is not in `watch`'s body.
  @Test(
    "a write through a key path beside an inlined function is named in its own function, with its caller, in debug and release",
    arguments: ["-Onone", "-O"])
  func inlinedNeighbours(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SitesInlined"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SitesInlined", optimization: optimization,
      libraries: [.init(sources: [folder + "/Models.swift"], module: "InlinedModels")],
      trace: "sites-inlined\(optimization).trc")
    #expect(run.standardOutput == "7 [\"a\", \"b\", \"c\"]\n")
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let reader = try TraceReader(path: trace)
    var writes: [String] = []
    var callers: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .willSet else { return }
      guard let site = reader.definitions.site(ofStack: event.stack) else { return writes.append("no site") }
      writes.append("\(site.line) \(SiteFormatting.shortFunction(site.function))")
      // The user's frames after the site: the callers a stack shows.
      let frames = reader.definitions.frames(ofStack: event.stack).filter {
        !SiteFilter.isMachinery($0) && !$0.file.isEmpty
      }
      callers.append(
        frames.dropFirst().map { "\($0.line) \(SiteFormatting.shortFunction($0.function))" }.joined(separator: ", "))
    }
    #expect(
      writes == [
        "\(marks["key path set"] ?? 0) top-level code", "\(marks["key path modify"] ?? 0) top-level code",
        "\(marks["bump"] ?? 0) bump<A where A: AnyObject>(_:_:)",
      ], "\(callers)")
    #expect(callers == ["", "", "\(marks["bump call"] ?? 0) top-level code"], "\(writes)")
  }
}

extension SiteTests {
  /// A fresh-clone try-out's J4 and K4, in an app of three modules (its package tryout/Shop): a release build
  /// inlines public functions of the helpers' module into the program (cross-module optimization) with no lines of
  /// their own, and sited their writes at `ModuleScreens/<compiler-generated>:0` (a generic function and a
  /// `@dynamicMemberLookup` lens's `nonmutating set`) and at the caller's line in the callee's module, a file that
  /// does not exist (`ModuleScreens/main.swift:26 (retitle(_:_:))`); an actor method's last statement, whose access
  /// the line table gives no row, was sited on the method's closing brace, as certain. Each write is now in the
  /// helper's own file at its line (the whole function is on it), in debug and release alike; the lens's setter is
  /// the user's accessor, sited at its statement in both (K4); the last statement at its line or marked approximate.
  @Test(
    "writes in functions and a lens's setter of another module, inlined into the program, are at their own lines; an actor method's last write is not on its closing brace as certain; debug and release",
    arguments: ["-Onone", "-O"])
  func inlinedFromOtherModules(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SitesModules"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SitesModules", optimization: optimization,
      libraries: [
        .init(sources: [folder + "/Models.swift"], module: "ModuleModels"),
        .init(sources: [folder + "/Screens.swift"], module: "ModuleScreens"),
      ], trace: "sites-modules\(optimization).trc")
    #expect(run.standardOutput == "[\"!\", \"?\", \"!\", \"?\"] [10, 10] [0, 1, 2, 3] 4 4\n")
    let main = try FixtureBuild.siteMarks(folder + "/main.swift")
    let screens = try FixtureBuild.siteMarks(folder + "/Screens.swift")
    let reader = try TraceReader(path: trace)
    var writes: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .willSet else { return }
      guard let site = reader.definitions.site(ofStack: event.stack) else { return writes.append("no site") }
      writes.append(
        "\(site.file.split(separator: "/").last ?? ""):\(site.line)\(site.lineIsApproximate ? " approximate" : "") "
          + SiteFormatting.shortFunction(site.function))
    }
    let inScreens = writes.filter { $0.hasPrefix("Screens.swift:") }
    #expect(
      inScreens.sorted()
        == ([
          "Screens.swift:\(screens["retitle"] ?? 0) retitle(_:_:)",
          "Screens.swift:\(screens["retitle"] ?? 0) retitle(_:_:)",
          "Screens.swift:\(screens["retitleGeneric"] ?? 0) retitleGeneric<A where A: ModuleModels.Model>(_:_:)",
          "Screens.swift:\(screens["retitleGeneric"] ?? 0) retitleGeneric<A where A: ModuleModels.Model>(_:_:)",
        ] + Array(repeating: "Screens.swift:\(screens["lens set"] ?? 0) Lens.subscript.setter", count: 4)).sorted(),
      "\(writes)")
    // The actor's writes: each at its line, or marked approximate next to it; never the closing brace's line as
    // certain.
    let inMain = writes.filter { !$0.hasPrefix("Screens.swift:") }
    #expect(inMain.count == 12, "\(writes)")
    let reserve = ["reserve insert", "reserve count", "reserve log"].map { main[$0] ?? 0 }
    for write in inMain {
      let line = Int(write.dropFirst("main.swift:".count).prefix { $0.isNumber }) ?? 0
      #expect(write.hasPrefix("main.swift:") && write.hasSuffix(" Warehouse.reserve(_:)"), "\(write)")
      if write.contains(" approximate ") {
        #expect(reserve.contains { abs($0 - line) <= 1 } && line <= reserve[2], "\(write)")
      } else {
        #expect(reserve.contains(line), "\(write)")
      }
    }
    // Every output says the helper's file, none the compiler's or a file the module does not have.
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(
      timeline.contains("at ModuleScreens/Screens.swift:\(screens["retitle"] ?? 0) (retitle(_:_:))"), "\(timeline)")
    #expect(
      timeline.contains("at ModuleScreens/Screens.swift:\(screens["lens set"] ?? 0) (Lens.subscript.setter)"),
      "\(timeline)")
    #expect(!timeline.contains("<compiler-generated>") && !timeline.contains("ModuleScreens/main.swift"), "\(timeline)")
    let stacks = Run.command(["dump", "--stacks", trace]).standardOutput
    #expect(!stacks.contains("ModuleScreens/main.swift") && !stacks.contains("ModuleScreens/<compiler-generated>"))
  }
}

extension SiteTests {
  /// 0e53b23's finding (J8, left then): in a program built with `--static-swift-stdlib` the Swift runtime,
  /// Concurrency and Dispatch are part of the executable, and their frames were named by it, so `SiteFilter`,
  /// which tells them by their libraries' names, took `swift::runJobInEstablishedExecutorContext`, a Dispatch
  /// function's `.cold` part and the like for the user's: `dump --stacks` marked them `▸`, and an untraced
  /// `Observations` loop's scope, whose stack after Observation's frames holds only the runtime's, was sited at
  /// one (`scopeBegin … at _ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE`). The recorder now reads from
  /// the executable's symbol table which of its code is which library's (`StaticMembers`) and names those frames
  /// `libswift_Concurrency.a in App`, `libdispatch.a in App`, machinery as a shared library's are. Writes in a
  /// detached Task and on Dispatch queues are at the user's lines, debug and release; side by side.
  @Test(
    "in a program linked with a static standard library, the runtime's, Concurrency's and Dispatch's frames are named by their library and are never the user's; writes in a Task and on Dispatch queues are at their lines, debug and release",
    arguments: ["-Onone", "-O"])
  func staticRuntimeFrames(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SitesStatic"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift", folder + "/Loop.swift"], module: "SitesStatic", optimization: optimization,
      flags: FixtureBuild.staticStandardLibrary, trace: "sites-static\(optimization).trc")
    #expect(run.standardOutput == "value: 111, seen: 111\n")
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let reader = try TraceReader(path: trace)
    var writes: [String] = []
    reader.forEachEvent { event in
      guard event.kind == .willSet else { return }
      guard let site = reader.definitions.site(ofStack: event.stack) else { return writes.append("no site") }
      writes.append("\(site.file.split(separator: "/").last ?? ""):\(site.line)")
    }
    #expect(writes.sorted() == ["task", "dispatch", "serial"].map { "main.swift:\(marks[$0] ?? 0)" }.sorted())
    let stacks = Run.command(["dump", "--stacks", trace]).standardOutput
    let frames = stacks.split(separator: "\n").filter { $0.hasPrefix("              ") }
    // The runtime's frames are their libraries', never marked as the user's.
    for (symbol, library) in [
      ("swift_job_run", "libswift_Concurrency.a"),
      ("_ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE", "libswift_Concurrency.a"),
      ("_dispatch_worker_thread", "libdispatch.a"),
    ] {
      let lines = frames.filter { $0.hasSuffix("]") && $0.contains(" \(symbol)  [") }
      #expect(!lines.isEmpty, "\(symbol) is on no stack:\n\(stacks)")
      #expect(lines.allSatisfy { $0.contains("  [\(library) in SitesStatic") && !$0.contains("▸") }, "\(lines)")
    }
    // Every frame marked as the user's is the fixture's code.
    let users = frames.filter { $0.contains("▸ ") }
    #expect(!users.isEmpty)
    #expect(
      users.allSatisfy { $0.contains("SitesStatic/") || $0.contains("main.swift:") || $0.contains("top-level code") },
      "\(users)")
    // The untraced loop's scope: named by its closure, and not sited at the runtime's frame it began under.
    let scopes = stacks.split(separator: "\n").filter { $0.contains("scopeBegin") && $0.contains(" untraced ") }
    let loop = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    #expect(scopes.count == 1, "\(stacks)")
    #expect(
      scopes.allSatisfy {
        $0.contains("untraced \"SitesStatic/Loop.swift:\(loop) (Observations closure)\"") && !$0.contains("\" at ")
      }, "\(scopes)")
  }
}
