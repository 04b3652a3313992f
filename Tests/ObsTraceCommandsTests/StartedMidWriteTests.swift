import Foundation
import Testing

/// A recording started by code (`Recorder.start`) while another thread was inside a write: the trace begins, on that
/// thread, with the write's didSet (tryout16's P8; traces/started-mid-write.trc is its restart-2.trc, the program
/// /work/tryout16/tryout/SwiftObs/Sources/Restart: a thread writes `bgModel.w += 1` flat out while the main thread
/// starts and stops recording).
@Suite("A recording started mid-write")
struct StartedMidWriteTests {
  let trace = Paths.root + "/traces/started-mid-write.trc"

  @Test("the write in progress at the start is said as such next to started-while-running, not as an inconsistency to report as a bug")
  func writeInProgressAtTheStart() {
    let dump = Run.command(["dump", trace])
    // The evidence: started by code, and T2's first event a didSet.
    #expect(dump.standardOutput.contains("started while the program ran (Recorder.start)"))
    #expect(dump.standardOutput.contains("T2  didSet M#2 M.w changed\n     0.000  T2  access M#2 M.w"))
    let report = Run.command(["report", trace])
    #expect(report.status == 0)
    #expect(!report.standardOutput.contains("inconsistent"), "\(report.standardOutput)")
    #expect(!report.standardOutput.contains("report it"))
    #expect(
      report.standardOutput.contains(
        "; 1 write was in progress at the start (T2): its didSet is in the trace, its willSet before it, so it is "
          + "not counted among the writes"), "\(report.standardOutput)")
    #expect(report.standardOutput.contains("Findings: 0 warnings, 3 informational"), "\(report.standardOutput)")
    let timeline = Run.command(["timeline", trace])
    #expect(timeline.status == 0)
    #expect(!timeline.standardOutput.contains("INCONSISTENT"))
    #expect(
      timeline.standardOutput.contains(
        "; 1 write was in progress at the start (T2): its willSet came before it, and no line shows it"))
    // check passes on it, as before, and says nothing of an inconsistency.
    let check = Run.command(["check", trace, "--max", "M.w:writes<=7080"])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
  }
}
