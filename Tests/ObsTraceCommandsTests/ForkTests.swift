import Foundation
import ObsTraceFormat
import Testing

/// A program that forks while recording (a fresh-clone try-out's F1, F2): its child has no flusher, so before the
/// recorder's fork handler a child that wrote more than its ring holds waited forever for room (and its parent for
/// it), and a child that wrote less wrote its events and a footer into the parent's trace at its exit, the parent's
/// own later events landing after that footer. The fixture Tests/Fixtures/Fork.
@Suite("Fork")
struct ForkTests {
  @Test(
    "a child of fork does not record, never waits for a flusher, never writes the parent's trace; the parent's says so",
    arguments: ["-Onone", "-O"], ["10", "100000"])
  func childOfForkDoesNotRecord(optimization: String, writes: String) throws {
    let source = Paths.root + "/Tests/Fixtures/Fork/main.swift"
    let traced = try FixtureBuild.compile([source], module: "Fork", optimization: optimization, flags: ["-DOBSTRACE"])
    let untraced = try FixtureBuild.compile([source], module: "Fork", optimization: optimization)
    // 100 000 writes are 300 000 events: far more than a ring of 1024 records holds (before: a hang); 10 fit in it
    // (before: the child's events and footer written into the parent's trace at its exit).
    let trace = Paths.temporary("fork\(optimization)-\(writes).trc")
    // A hang is a failure, not a stuck suite: timeout kills the process group (the child too) after 120 s.
    let run = try Run.program(
      "/usr/bin/timeout", ["-s", "KILL", "120", traced, writes],
      environment: ["OBSTRACE_OUTPUT": trace, "OBSTRACE_RING_CAPACITY": "1024"])
    #expect(run.status == 0, "\(run.standardError)")
    let alone = try Run.program(untraced, [writes])
    #expect(alone.standardOutput == "child wrote \(writes)\nparent: child status 0, fired 1, hits 2\n")
    #expect(run.standardOutput == alone.standardOutput, "traced and untraced print differently")
    // The trace is the parent's alone, whole: its footer last, counting the fork; the child's object is not in it.
    let reader = try TraceReader(path: trace)
    #expect(reader.footer?.forks == 1)
    #expect(reader.afterFooter == nil && !reader.truncated && reader.damage.isEmpty)
    var created = 0
    var writesSeen = 0
    reader.forEachEvent {
      if $0.kind == .objectCreated { created += 1 }
      if $0.kind == .willSet { writesSeen += 1 }
    }
    #expect(created == 1 && writesSeen == 2, "\(created) objects created, \(writesSeen) writes")
    let report = Run.command(["report", trace]).standardOutput
    #expect(
      report.contains(
        "info [forked] the process forked once while recording: a child of fork does not record, so nothing its "
          + "child did is in this trace (the parent's own events are)"), "\(report)")
    #expect(!report.contains("after the trace's footer") && report.contains("complete"), "\(report)")
    #expect(Run.command(["check", trace, "--max", "Counter.hits:writes<=2"]).status == 0)
  }

  @Test("dump and Mirror of a traced model show Observation's registrar, as untraced", arguments: ["-Onone", "-O"])
  func reflectionSeesObservationsRegistrar(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/Reflection"
    let (run, _, _) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "Reflection", optimization: optimization,
      trace: "reflection\(optimization).trc")
    // sideBySide expects the traced and untraced builds to print the same; what that is:
    #expect(run.standardOutput.contains("▿ _$observationRegistrar: Observation.ObservationRegistrar"), "\(run.standardOutput)")
    #expect(run.standardOutput.contains("registrar children: extent"), "\(run.standardOutput)")
  }
}
