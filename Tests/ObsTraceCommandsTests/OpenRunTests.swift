import Foundation
import Testing

@testable import ObsTraceFormat

/// The try-out's Obs2 program as it was recorded: thread 2 begins a tracking scope (#5) and reads
/// `Parent#1.pending`, then blocks inside the closure; thread 1 writes `Parent#1.pending` (which fires nothing:
/// Observation installs the observers as the closure returns) and exits. The footer says thread 2 was still running
/// at the stop; the trace has no `scopeEnd` of #5.
enum OpenRunTrace {
  static func write() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "Obs2.Parent" }, property: SyntheticDefinitions.computedProperty(root: "Parent", rootType: 1),
      label: { _ in "Obs2/main.swift:33" }, scope: { _ in ScopeDefinition(kind: .tracking, label: 1, parent: 0) })
    var trace = try SyntheticTrace("open-run", definitions: definitions, executable: "/bin/Obs2")
    var main = trace.chunk(thread: 1, osThreadID: 42, firstTime: 1000)
    var worker = trace.chunk(thread: 2, osThreadID: 43, firstTime: 3000)
    trace.append(&main, .objectCreated, at: 1000, object: 1)
    trace.append(&main, .access, at: 2000, object: 1, key: 1, aux: 1)
    trace.append(&worker, .scopeBegin, at: 3000, flags: ScopeKind.tracking.rawValue, object: 5, key: 1, scope: 5)
    trace.append(
      &worker, .access, at: 4000, flags: EventFlags.accessInScope, object: 1, key: 1, scope: 5, aux: 1, depth: 1)
    trace.append(&main, .willSet, at: 5000, flags: EventFlags.willSetInWithMutation, object: 1, key: 1, aux: 1)
    trace.append(&main, .didSet, at: 6000, object: 1, key: 1, aux: 1)
    try trace.write(main)
    try trace.write(worker, threadEnded: false)
    var symbols = SymbolTable()
    symbols.propertyNames = [1: PropertyName(module: "Obs2", type: "Parent", property: "pending")]
    try trace.write(symbols)
    return try trace.finish(duration: 7000, runningAtStop: [2])
  }
}

/// A traced run still inside its closure when the recording stopped is a run: counted, printed and said.
@Suite("Runs open at the stop")
struct OpenRunTests {
  @Test("a tracking run whose closure had not returned is counted, printed with its mark, and said in the finding")
  func runOpenAtTheStop() throws {
    let path = try OpenRunTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let mark = "  [its end is not in the trace: its closure had not returned when the trace ended; counted as a run]"
    let line = "run Obs2/main.swift:33 (tracking, #5) read Parent#1.pending" + mark
    let timeline = Run.command(["timeline", path])
    #expect(timeline.status == 0)
    #expect(timeline.standardOutput.split(separator: "\n").filter { $0.hasSuffix(line) }.count == 1, "\(timeline)")
    for filter in [["--thread", "T2"], ["--scope", "Obs2/main.swift:33"]] {
      let filtered = Run.command(["timeline", path] + filter).standardOutput
      #expect(filtered.split(separator: "\n").filter { $0.contains("run ") }.count == 1, "\(filter): \(filtered)")
      #expect(filtered.contains(line), "\(filter): \(filtered)")
    }
    let json = Run.command(["report", path, "--format", "json"]).standardOutput
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    let scope = try #require((object?["scopes"] as? [[String: Any]])?.first)
    #expect(scope["runs"] as? Int == 1, "\(json)")
    #expect(scope["instances"] as? Int == 1, "\(json)")
    #expect(scope["threads"] as? Int == 1, "\(json)")
    let report = Run.command(["report", path]).standardOutput
    #expect(
      report.contains(
        "; 1 run (Obs2/main.swift:33) had not returned from its closure: counted as a run up to the trace's end, "
          + "its end not in the trace"), "\(report)")
    #expect(Run.command(["graph", "--dot", path]).standardOutput.contains("1 run"))
    let export = path + ".json"
    defer { try? FileManager.default.removeItem(atPath: export) }
    #expect(Run.command(["export", path, "--format", "chrome-json", "-o", export]).status == 0)
    let slices = try String(contentsOfFile: export, encoding: .utf8).components(
      separatedBy: "\"name\":\"Obs2/main.swift:33\"")
    #expect(slices.count - 1 == 1, "\(slices.count - 1) slices")
  }

  @Test(
    "recorded, -Onone and -O: nested types by their qualified names, the run open at exit counted and marked",
    arguments: ["-Onone", "-O"])
  func recordedNestedAndOpen(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/NestedOpen/main.swift"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [source], module: "NestedOpen", optimization: optimization, trace: "nested-open\(optimization).trc")
    #expect(run.standardOutput == "list fired\ndetail fired\n1 2 3\nexit while tracking\n")
    let report = Run.command(["report", trace, "--format", "json"]).standardOutput
    let object = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
    let types = (object?["objects"] as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []
    #expect(types.sorted() == ["Box<Shelf.Item>", "DetailView.Model", "ListView.Model"], "\(report)")
    let properties = (object?["properties"] as? [[String: Any]])?.compactMap { $0["property"] as? String } ?? []
    #expect(
      properties.sorted() == ["Box<Shelf.Item>.value", "DetailView.Model.count", "ListView.Model.count"],
      "\(report)")
    let line = try #require(try FixtureBuild.siteMarks(source)["open"])
    let label = "NestedOpen/main.swift:\(line)"
    let scope = (object?["scopes"] as? [[String: Any]])?.first { $0["label"] as? String == label }
    #expect(scope?["runs"] as? Int == 1, "\(report)")
    #expect(scope?["instances"] as? Int == 1, "\(report)")
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains("write ListView.Model#1.count"), "\(timeline)")
    #expect(
      timeline.contains(
        "run \(label) (tracking, #")
        && timeline.contains(
          "read DetailView.Model#2.count  [its end is not in the trace: its closure had not returned when the trace "
            + "ended; counted as a run]"),
      "\(timeline)")
  }
}
