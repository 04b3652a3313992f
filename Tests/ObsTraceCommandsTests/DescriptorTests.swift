import Foundation
import Testing

/// What a recording takes from the program's process, against a program that manages it closely: descriptors
/// (a fresh-clone try-out's F0, F12) and stack (F13).
@Suite("Process resources")
struct DescriptorTests {
  /// The SmallStack fixture (a 32 KiB worker is the first to touch a model) built with `optimization`, run traced
  /// (OBSTRACE_OUTPUT `environmentTrace`) and untraced with `arguments`: sideBySide expects the traced run to exit 0
  /// (each case crashed with SIGSEGV, status 139, nothing printed, before its fix) and both to print the same. Returns
  /// the traced run's standard output and the report of `trace` (the environment's trace unless given).
  static func smallStack(
    _ optimization: String, _ arguments: [String] = [], environmentTrace: String, trace: String? = nil
  ) throws -> (output: String, report: ProcessResult) {
    let (run, _, written) = try FixtureBuild.sideBySide(
      [Paths.root + "/Tests/Fixtures/SmallStack/main.swift"], module: "SmallStack", optimization: optimization,
      arguments: arguments, trace: environmentTrace)
    return (run.standardOutput, Run.command(["report", trace ?? written]))
  }

  /// The report of a whole trace (its footer and symbols written: the stop finished) naming Shared's properties.
  static func expectWholeAndNamed(_ report: ProcessResult) {
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("Shared.hits") && report.standardOutput.contains("Shared.tag"))
    #expect(
      !report.standardOutput.contains("INCOMPLETE") && !report.standardOutput.contains("TRUNCATED"),
      "\(report.standardOutput)")
  }

  @Test(
    "a thread with a small stack that first touches a model runs as untraced (first-use naming on a roomy stack)",
    arguments: ["-Onone", "-O"])
  func smallStack(optimization: String) throws {
    let (output, report) = try Self.smallStack(optimization, environmentTrace: "small-stack\(optimization).trc")
    #expect(output == "hits 10, tag 10, fired 1\ndone\n")
    Self.expectWholeAndNamed(report)
  }

  @Test(
    "a thread with a small stack that ends the program: the recording's stop at exit (draining, naming) runs as untraced",
    arguments: ["-Onone", "-O"])
  func smallStackExits(optimization: String) throws {
    // The worker's exit ends the program: the stop at exit runs on its stack.
    let (output, report) = try Self.smallStack(
      optimization, ["exit"], environmentTrace: "small-stack-exit\(optimization).trc")
    #expect(output == "hits 10, tag 10, fired 1\n")
    Self.expectWholeAndNamed(report)
  }

  @Test(
    "a thread with a small stack that starts and stops a recording itself runs as untraced",
    arguments: ["-Onone", "-O"])
  func smallStackStartsAndStops(optimization: String) throws {
    let trace = Paths.temporary("small-stack-start\(optimization).trc")
    let (output, report) = try Self.smallStack(
      optimization, ["start", trace], environmentTrace: "small-stack-start-environment\(optimization).trc",
      trace: trace)
    #expect(output == "hits 10, tag 10, fired 1\ndone\n")
    Self.expectWholeAndNamed(report)
  }

  @Test(
    "a program that closes every descriptor and opens a file of its own: the trace is never written into that file",
    arguments: ["-Onone", "-O"])
  func closedAndReused(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/CloseAll/main.swift"
    let traced = try FixtureBuild.compile(
      [source], module: "CloseAll", optimization: optimization, flags: ["-DOBSTRACE"])
    let untraced = try FixtureBuild.compile([source], module: "CloseAll", optimization: optimization)
    let trace = Paths.temporary("close-all\(optimization).trc")
    let tracedFile = Paths.temporary("close-all-traced\(optimization).txt")
    let untracedFile = Paths.temporary("close-all-untraced\(optimization).txt")
    let run = try Run.program(traced, [tracedFile], environment: ["OBSTRACE_OUTPUT": trace])
    let alone = try Run.program(untraced, [untracedFile])
    #expect(run.status == 0 && alone.status == 0)
    #expect(alone.standardOutput == "opened true, wrote 10\nhits 200001\n")
    #expect(run.standardOutput == alone.standardOutput, "traced and untraced print differently")
    // Before, the flusher and the stop wrote ≈ 420 KB of trace chunks after the program's 10 bytes.
    #expect(try String(contentsOfFile: tracedFile, encoding: .utf8) == "USER DATA\n")
    #expect(try String(contentsOfFile: untracedFile, encoding: .utf8) == "USER DATA\n")
    // One line says why the recording stopped.
    #expect(
      run.errorLines.count == 1
        && run.standardError.contains("the program closed its descriptor, ")
        && run.standardError.contains("which now names another file: nothing is written to that one"),
      "\(run.standardError)")
  }

  @Test(
    "a program that execs while recording passes on only the descriptors the untraced one does",
    arguments: ["-Onone", "-O"])
  func execInheritsNothingOfTheRecording(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/Exec"
    let (run, _, _) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "Exec", optimization: optimization, trace: "exec\(optimization).trc")
    // sideBySide expects both to print the same: 'n 1', then the exec'd shell's count of its descriptors on the
    // program's binary or a shared library: none (before, the traced one passed on the symbol session's 1).
    #expect(run.standardOutput == "n 1\n0\n", "\(run.standardOutput)")
  }

  /// A fresh-clone try-out's P2: the flusher thread took the mask of the thread that started the recording, so a
  /// process-directed signal that every thread of the program blocked ran the program's handler on ObsTrace's
  /// thread (the traced run printed "handled by another thread"). It now starts with every signal blocked.
  @Test("a signal that every thread of the program blocks is not handled by ObsTrace's flusher thread")
  func flusherTakesNoSignal() throws {
    let folder = Paths.root + "/Tests/Fixtures/Signals"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "Signals", optimization: "-Onone", trace: "signals.trc")
    #expect(run.standardOutput == "pending\nhits 2\n", "\(run.standardOutput)")
    let report = Run.command(["report", trace])
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("Shared.hits"), "\(report.standardOutput)")
  }
}
