import Foundation
import Testing

/// One trace, one report: the same bytes on every run of `obstrace report`, whatever order the process's hashed
/// tables iterate in (Swift seeds them per process).
@Suite("Report determinism")
struct ReportDeterminismTests {
  /// traces/hostile/racing-write-thread-near-2-32.trc: three threads whose chunks all give the header's process id
  /// as their OS thread id, so each could be "the process's first thread". The report took the first such thread a
  /// dictionary gave, and its off-main-thread evidence named T1, T2 or T4294967294 as the main thread from run to
  /// run; it now names the lowest serial, T1, every time.
  @Test("the off-main-thread evidence names the same main thread on every run, when several threads could be it")
  func sameMainThreadEveryRun() throws {
    let path = Paths.root + "/traces/hostile/racing-write-thread-near-2-32.trc"
    var outputs: Set<String> = []
    for _ in 0..<8 {
      let json = Run.command(["report", path, "--format", "json"])
      #expect(json.status == 0, "\(json.standardError)")
      outputs.insert(json.standardOutput)
    }
    #expect(outputs.count == 1, "\(outputs.count) different reports")
    let report = try #require(outputs.first)
    #expect(report.contains("recorded on the main thread (T1) and on T2, T4294967294"), "\(report)")
  }
}
