import Foundation
import Testing

/// A recording process that replaces itself by exec (tryout16's P9): the first program's trace has no footer, and
/// record said its process was "killed or crashed", when that very process (the same pid) went on to record the
/// second program's trace.
@Suite("A recording process that execs itself")
struct ExecSelfTests {
  @Test("record says the first trace's process replaced itself by exec, naming the trace it recorded next, not a kill or a crash")
  func execSaidAsSuch() throws {
    let source = Paths.root + "/Tests/Fixtures/ExecSelf/main.swift"
    let traced = try FixtureBuild.compile([source], module: "ExecSelf", optimization: "-Onone", flags: ["-DOBSTRACE"])
    let untraced = try FixtureBuild.compile([source], module: "ExecSelf", optimization: "-Onone")
    let alone = try Run.program(untraced, [])
    #expect(alone.standardOutput == "first image: value 10, fires 1\nsecond image: value 20, fires 1\n")
    let trace = Paths.temporary("execself.trc")
    let recorded = try Run.program("obstrace", ["record", "-o", trace, "--", traced])
    #expect(recorded.status == 0, "\(recorded.standardError)")
    #expect(recorded.standardOutput == alone.standardOutput, "traced and untraced print differently")
    // The second program found the first one's trace and recorded beside it, under its pid.
    let lines = recorded.errorLines
    let next = try #require(
      lines.first { $0.contains("this process (") }?.components(separatedBy: " records to ").last,
      "\(recorded.standardError)")
    let first = try #require(lines.first { $0.hasPrefix("obstrace: recorded ") && $0.contains(" into \(trace) (") })
    #expect(
      first.contains(
        "; the trace is truncated: the process that recorded it replaced itself by exec without stopping the "
          + "recording (\(next), recorded next, has its process id), so the events it had not yet written are not in "
          + "it (call Recorder.stop() before exec to keep them)"), "\(recorded.standardError)")
    #expect(!recorded.standardError.contains("killed or crashed"), "\(recorded.standardError)")
    let second = try #require(lines.first { $0.hasPrefix("obstrace: recorded ") && $0.contains(" into \(next) (") })
    #expect(!second.contains("truncated"), "\(second)")
  }
}
