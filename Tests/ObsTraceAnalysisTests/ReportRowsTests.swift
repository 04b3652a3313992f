import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

@Suite("Report rows")
struct ReportRowsTests {
  @Test("labels printed alike are one row (counts summed, the first label's kind), rows by runs then by text")
  func labelsOfOneText() {
    var script = EventScript()
    script.created(1)
    var scope: UInt32 = 0
    // Label 3 prints as label 1 does, and is a named scope: its row is label 1's, of label 1's kind.
    for (label, runs) in [(5, 3), (1, 1), (2, 2), (4, 2), (6, 1)] as [(UInt32, Int)] {
      for _ in 0..<runs {
        scope += 1
        script.run(scope, label: label, reads: [(1, label)])
      }
    }
    scope += 1
    script.begin(scope, label: 3, kind: .named)
    script.read(1, 3, in: scope)
    script.end(scope)
    let (replay, _) = script.replay()
    var definitions = TraceDefinitions()
    definitions.labels = [1: "B.body", 2: "A.body", 3: "B.body", 4: "C.body", 5: "D.body", 6: "E.body"]
    let trace = AnalysisReport.Trace(
      path: "t.trc", events: replay.events, threads: 1, droppedEvents: 0, truncated: false, damage: [],
      durationNanoseconds: 1, backtraces: "off", symbolized: true)
    let report = TraceAnalysis.report(replay, definitions: definitions, trace: trace)
    #expect(report.scopes.map(\.label) == ["D.body", "A.body", "B.body", "C.body", "E.body"])
    #expect(report.scopes.map(\.statistics.runs) == [3, 2, 2, 2, 1])
    let merged = report.scopes[2]
    #expect(merged.statistics.kind == .tracking)
    #expect(merged.statistics.instances == 2)
    #expect(merged.reads.count == 2)
  }
}
