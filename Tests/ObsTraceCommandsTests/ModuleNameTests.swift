import Foundation
import ObsTraceFormat
import Testing

/// Two types of one name in two modules (tryout18's R9): `ModA.Model` and `ModB.Model`, each with a `count`. The
/// report, its JSON and the timeline printed both as `Model` (`Model.count`, `Model#1.count`, `Model#2.count`), so
/// the reader could not tell which was which module's, and `graph` drew both properties as one node `Model.count`
/// with their counts summed (read 2, where each was read once). Each is now named with its module wherever it is
/// printed, and taken back so (`check --max`, `timeline --property`); `Solo`, whose name is unique, prints as before.
/// The fixture Tests/Fixtures/SameNameModules.
@Suite("Types of one name in two modules")
struct ModuleNameTests {
  @Test(
    "two types of one name in two modules are named with their modules in every output, and taken back so",
    .timeLimit(.minutes(10)))
  func sameNameInTwoModules() throws {
    let folder = Paths.root + "/Tests/Fixtures/SameNameModules"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SameNameModules", optimization: "-Onone",
      libraries: [
        .init(sources: [folder + "/ModA.swift"], module: "ModA"),
        .init(sources: [folder + "/ModB.swift"], module: "ModB"),
      ], trace: "same-name-modules.trc")
    #expect(run.standardOutput == "fired\n1 2 1\n")

    // The report: a row per property, each named with its module; the unique name as it was.
    let report = Run.command(["report", trace]).standardOutput
    func row(_ name: String) -> [String] {
      let line = report.split(separator: "\n").first { $0.hasPrefix("  \(name) ") } ?? ""
      return Array(line.dropFirst(2 + name.count).split(separator: " ").map(String.init))
    }
    // Columns: reads (tracked, and printed), tracked, writes, no-op, invalidations, wasted, coalesced.
    #expect(row("ModA.Model.count") == ["2", "1", "1", "0", "1", "0", "0"], "\(report)")
    #expect(row("ModB.Model.count") == ["2", "1", "2", "0", "0", "0", "2"], "\(report)")
    #expect(row("Solo.value") == ["2", "1", "1", "0", "0", "0", "1"], "\(report)")
    #expect(!report.contains("  Model.count ") && !report.contains("ModA.Solo"), "\(report)")
    // The objects table: one row per type, by module.
    #expect(row("ModA.Model").first == "1" && row("ModB.Model").first == "1" && row("Solo").first == "1", "\(report)")

    // JSON: the same names, and the module of each name qualified with one; other names have none.
    let json = Run.command(["report", "--format", "json", trace]).standardOutput
    #expect(json.contains("{\"property\":\"ModA.Model.count\",\"module\":\"ModA\","), "\(json)")
    #expect(json.contains("{\"property\":\"ModB.Model.count\",\"module\":\"ModB\","), "\(json)")
    #expect(json.contains("{\"property\":\"Solo.value\",\"reads\""), "\(json)")
    #expect(json.contains("{\"type\":\"ModB.Model\",\"module\":\"ModB\","), "\(json)")
    #expect(json.contains("{\"type\":\"Solo\",\"created\""), "\(json)")

    // The timeline, and its filters taking the names back as it prints them.
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains("write ModA.Model#1.count"), "\(timeline)")
    #expect(timeline.contains("write ModB.Model#2.count"), "\(timeline)")
    #expect(timeline.contains("write Solo#3.value"), "\(timeline)")
    #expect(!timeline.contains(" Model#"), "\(timeline)")
    let byProperty = Run.command(["timeline", trace, "--property", "ModB.Model.count"])
    #expect(byProperty.status == 0, "\(byProperty.standardError)")
    #expect(byProperty.standardOutput.contains("ModB.Model#2.count"), "\(byProperty.standardOutput)")
    #expect(!byProperty.standardOutput.contains("write ModA.Model#"), "\(byProperty.standardOutput)")
    let byObject = Run.command(["timeline", trace, "--property", "ModA.Model#1.count"])
    #expect(byObject.status == 0, "\(byObject.standardError)")
    #expect(byObject.standardOutput.contains("write ModA.Model#1.count"), "\(byObject.standardOutput)")
    #expect(!byObject.standardOutput.contains("write ModB.Model#"), "\(byObject.standardOutput)")
    // The name without its module names no property: the closest are said.
    let unqualified = Run.command(["timeline", trace, "--property", "Model.count"])
    #expect(unqualified.status == 2)
    #expect(unqualified.standardError.contains("closest: ModA.Model.count, ModB.Model.count"), "\(unqualified)")

    // The graph: one node per property, each read once, never one node with both's counts.
    let graph = Run.command(["graph", "--dot", trace]).standardOutput
    #expect(graph.contains("\"p:ModA.Model.count\" [shape=box"), "\(graph)")
    #expect(graph.contains("\"p:ModB.Model.count\" [shape=box"), "\(graph)")
    #expect(!graph.contains("\"p:Model.count\"") && !graph.contains("read 2"), "\(graph)")
    let html = Run.command(["report", "--format", "html", trace]).standardOutput
    #expect(html.contains("ModA.Model.count") && html.contains("ModB.Model.count"), "html")

    // Export: the events named as the report names them.
    let exportPath = trace + ".json"
    let export = Run.command(["export", trace, "--format", "chrome-json", "-o", exportPath])
    #expect(export.status == 0, "\(export.standardError)")
    let exported = (try? String(contentsOfFile: exportPath, encoding: .utf8)) ?? ""
    #expect(exported.contains("\"write ModA.Model.count\"") && exported.contains("\"write ModB.Model.count\""))
    #expect(!exported.contains("\"write Model.count\""))

    // check: the qualified name is a limit; the name without its module is ambiguous, and the error says the names.
    let check = Run.command([
      "check", trace, "--max", "ModA.Model.count:writes<=1", "--max", "ModB.Model.count:writes<=1",
    ])
    #expect(check.status == 1, "\(check.standardError)")
    #expect(check.standardOutput.contains("limit ModA.Model.count:writes<=1: ok (1)"), "\(check.standardOutput)")
    #expect(check.standardOutput.contains("limit ModB.Model.count:writes<=1: EXCEEDED (2)"), "\(check.standardOutput)")
    let ambiguous = Run.command(["check", trace, "--max", "Model.count:writes<=1"])
    #expect(ambiguous.status == 2)
    #expect(
      ambiguous.standardError.contains(
        "--max 'Model.count:writes<=1' is ambiguous in \(trace): it names ModA.Model.count, ModB.Model.count, types "
          + "of one name in several modules named with their module: --max 'ModA.Model.count:writes<=1'"),
      "\(ambiguous.standardError)")
    // And a baseline keys them apart (it refused such a trace: "a baseline keyed by name cannot tell them apart").
    let baseline = Run.command(["baseline", trace])
    #expect(baseline.status == 0, "\(baseline.standardError)")
    #expect(baseline.standardOutput.contains("\"ModA.Model.count\": {\"writes\""), "\(baseline.standardOutput)")
    #expect(baseline.standardOutput.contains("\"ModB.Model.count\": {\"writes\""), "\(baseline.standardOutput)")
  }
}
