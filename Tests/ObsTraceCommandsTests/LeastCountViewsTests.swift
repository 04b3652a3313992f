import Foundation
import Testing

/// A count that rests on writes through `_modify` not compared is a least count in every view, not only in the
/// report's text and JSON (scopeq7): the graph drew `3 runs` and no no-op label for a scope and a property whose
/// redundant runs and no-op writes were not known (read as none), export wrote `"redundant": false` and
/// `"wasted": false` for them, and the HTML page's tables printed a plain 0. `obstrace-scenarios noop-modify` writes
/// `TodoStore.items` (an array) twice through `_modify`, once changing nothing: recorded with the default
/// comparison (`trivial`) the two writes are not compared; with `equatable` they are, and the counts are known.
@Suite("Least counts in the graph, export and HTML")
struct LeastCountViewsTests {
  @Test("graph --sites: least counts carry ≥ with how many writes were not compared; known counts stay plain")
  func graph() throws {
    let unknown = try UncomparedCheckTests.record("trivial", "least-graph-unknown.trc")
    let compared = try UncomparedCheckTests.record("equatable", "least-graph-compared.trc")
    let dot = Run.command(["graph", "--sites", unknown])
    #expect(dot.status == 0, "\(dot.standardError)")
    let lines = dot.standardOutput.split(separator: "\n").map(String.init)
    #expect(
      lines.contains(
        "  \"p:TodoStore.items\" [shape=box, label=\"TodoStore.items\\n≥0 no-op writes (2 not compared)\"];"),
      "\(dot.standardOutput)")
    #expect(
      lines.contains("  \"s:TodoList.body\" [shape=ellipse, label=\"TodoList.body\\n3 runs (≥0 redundant)\"];"),
      "\(dot.standardOutput)")
    #expect(
      lines.contains {
        $0.hasPrefix("  \"p:TodoStore.items\" -> \"s:TodoList.body\" [color=black, label=\"invalidated 2 (≥0 wasted)\"")
      }, "\(dot.standardOutput)")
    #expect(lines.filter { $0.contains("label=\"wrote 1 (≥0 no-op)\"") }.count == 2, "\(dot.standardOutput)")

    let known = Run.command(["graph", "--sites", compared]).standardOutput
    #expect(!known.contains("≥"), "\(known)")
    #expect(known.contains("label=\"TodoStore.items\\n1 no-op write\"];"), "\(known)")
    #expect(known.contains("label=\"TodoList.body\\n3 runs (1 redundant)\"];"), "\(known)")
    #expect(known.contains("label=\"invalidated 2 (1 wasted)\""), "\(known)")
  }

  /// The runs' `redundant` and the writes' `outcome` and `wasted`, in order, from a chrome-json export.
  static func exported(_ trace: String) throws -> (runs: [String], writes: [String]) {
    let output = Paths.temporary((trace as NSString).lastPathComponent + ".json")
    let run = Run.command(["export", trace, "--format", "chrome-json", "-o", output])
    #expect(run.status == 0, "\(run.standardError)")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))
    let events = try #require((object as? [String: Any])?["traceEvents"] as? [[String: Any]])
    func text(_ value: Any?) -> String {
      if let flag = value as? Bool { return flag ? "true" : "false" }
      return value.map { "\($0)" } ?? "-"
    }
    var runs: [String] = []
    var writes: [String] = []
    for event in events where event["ph"] as? String == "E" {
      let arguments = event["args"] as? [String: Any] ?? [:]
      if arguments["redundant"] != nil { runs.append(text(arguments["redundant"])) }
      if arguments["outcome"] != nil {
        writes.append(text(arguments["outcome"]) + " / " + text(arguments["wasted"]))
      }
    }
    return (runs, writes)
  }

  @Test("export: a run or write that rests on writes not compared says 'not known', never false")
  func export() throws {
    let unknown = try Self.exported(try UncomparedCheckTests.record("trivial", "least-export-unknown.trc"))
    let possibly = "not known: redundant if the writes not compared since its previous run changed nothing"
    #expect(unknown.runs == ["false", possibly, possibly], "\(unknown)")
    #expect(
      unknown.writes == ["not compared / not known: not compared", "not compared / not known: not compared"],
      "\(unknown)")
    // Perfetto's protobuf carries the same arguments, read back by Perfetto's own trace processor.
    let trace = try UncomparedCheckTests.record("trivial", "least-export-perfetto.trc")
    let output = Paths.temporary("least-export.pftrace")
    #expect(Run.command(["export", trace, "--format", "perfetto", "-o", output]).status == 0)
    let parsed = try Run.program(
      Paths.root + "/.build/python/bin/python", [Paths.root + "/scripts/perfetto-summary", output])
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as? [String: Any])
    let slices = try #require(summary["sliceArguments"] as? [String: [[String: Any]]])
    let runs = slices["TodoList.body"] ?? []
    #expect(runs.count == 3 && runs.first?["redundant"] as? Bool == false, "\(runs)")
    #expect(runs.dropFirst().map { $0["redundant"] as? String } == [possibly, possibly], "\(runs)")
    #expect(
      slices["write TodoStore.items"]?.map { "\($0["wasted"] ?? "-")" }
        == Array(repeating: "not known: not compared", count: 2))
    let compared = try Self.exported(try UncomparedCheckTests.record("equatable", "least-export-compared.trc"))
    #expect(compared.runs == ["false", "true", "false"], "\(compared)")
    #expect(compared.writes == ["unchanged / true", "changed / false"], "\(compared)")
  }

  @Test("report --format html: least counts in its tables and scope details carry ≥; known counts stay plain")
  func html() throws {
    let unknown = try UncomparedCheckTests.record("trivial", "least-html-unknown.trc")
    let compared = try UncomparedCheckTests.record("equatable", "least-html-compared.trc")
    let page = Run.command(["report", unknown, "--format", "html"])
    #expect(page.status == 0, "\(page.standardError)")
    // The property's no-op and wasted, the scope's wasted and redundant.
    #expect(page.standardOutput.components(separatedBy: "<td class=\"n\">≥0").count - 1 == 4, "\(page.standardOutput)")
    #expect(page.standardOutput.contains("3 runs, ≥0 redundant, ≥0 wasted</span>"), "\(page.standardOutput)")
    // Who read what: each of the two sites' writes invalidated the scope once, not compared.
    #expect(
      page.standardOutput.components(
        separatedBy: ": 1 <span class=\"warn\">(1 not compared: may have changed nothing)</span>"
      )
      .count - 1 == 2, "\(page.standardOutput)")
    #expect(
      page.standardOutput.components(separatedBy: "redundant if the writes not compared changed nothing</span>").count
        - 1 == 2, "\(page.standardOutput)")
    let known = Run.command(["report", compared, "--format", "html"]).standardOutput
    #expect(!known.contains("<td class=\"n\">≥"), "\(known)")
    #expect(!known.contains("not compared: may"), "\(known)")
    #expect(
      known.contains("3 runs, <b class=\"bad\">1 redundant</b>, <b class=\"bad\">1 wasted</b></span>"), "\(known)")
  }
}
