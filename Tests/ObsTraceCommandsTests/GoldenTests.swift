import Foundation
import Testing

/// The output of every command on every committed trace, against the golden files. After a deliberate change,
/// regenerate them with `scripts/update-goldens` and review the diff.
@Suite("Golden output")
struct GoldenTests {
  static let traces = [
    "guide", "stale-read", "fan-out", "noop-modify", "threads", "observations", "observations-leaky",
  ]
  static let commands: [(arguments: [String], suffix: String)] = [
    (["report"], "report.txt"), (["report", "--format", "json"], "report.json"), (["timeline"], "timeline.txt"),
    (["graph", "--dot"], "graph.dot"), (["dump"], "dump.txt"),
  ]

  static var cases: [(String, [String], String)] {
    traces.flatMap { trace in commands.map { (trace, $0.arguments, $0.suffix) } }
  }

  @Test("each command's output on each sample trace matches its golden file", arguments: cases)
  func golden(trace: String, arguments: [String], suffix: String) throws {
    let path = Paths.root + "/traces/\(trace).trc"
    let result = Run.command(arguments + [path])
    #expect(result.status == 0)
    #expect(result.standardError.isEmpty)
    let actual = result.standardOutput.replacingOccurrences(of: Paths.root + "/traces/", with: "traces/")
    let golden = try String(
      contentsOfFile: Paths.root + "/Tests/ObsTraceCommandsTests/Goldens/\(trace).\(suffix)", encoding: .utf8)
    #expect(actual == golden, "regenerate with scripts/update-goldens if the change is intended")
  }
}
