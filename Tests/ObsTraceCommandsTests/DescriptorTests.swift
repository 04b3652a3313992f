import Foundation
import Testing

/// What a recording takes from the program's process, against a program that manages it closely: descriptors
/// (a fresh-clone try-out's F0, F12) and stack (F13).
@Suite("Process resources")
struct DescriptorTests {
  @Test(
    "a thread with a small stack that first touches a model runs as untraced (first-use naming on a roomy stack)",
    arguments: ["-Onone", "-O"])
  func smallStack(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SmallStack"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SmallStack", optimization: optimization,
      trace: "small-stack\(optimization).trc")
    // sideBySide expects the traced run to exit 0 (before: SIGSEGV, 139, nothing printed) and both to print the same.
    #expect(run.standardOutput == "hits 10, tag 10, fired 1\ndone\n")
    let report = Run.command(["report", trace]).standardOutput
    #expect(report.contains("Shared.hits") && report.contains("Shared.tag"), "\(report)")
  }

  @Test(
    "a thread with a small stack that ends the program: the recording's stop at exit (draining, naming) runs as untraced",
    arguments: ["-Onone", "-O"])
  func smallStackExits(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SmallStack"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SmallStack", optimization: optimization, arguments: ["exit"],
      trace: "small-stack-exit\(optimization).trc")
    // sideBySide expects the traced run to exit 0 and both to print the same; the worker's exit ends the program.
    #expect(run.standardOutput == "hits 10, tag 10, fired 1\n")
    // The stop finished: the trace has its footer and symbols, so it is complete and its properties are named.
    let report = Run.command(["report", trace])
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("Shared.hits") && report.standardOutput.contains("Shared.tag"))
    #expect(
      !report.standardOutput.contains("INCOMPLETE") && !report.standardOutput.contains("TRUNCATED"),
      "\(report.standardOutput)")
  }

  @Test(
    "a thread with a small stack that starts and stops a recording itself runs as untraced",
    arguments: ["-Onone", "-O"])
  func smallStackStartsAndStops(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/SmallStack"
    let trace = Paths.temporary("small-stack-start\(optimization).trc")
    let (run, _, _) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "SmallStack", optimization: optimization, arguments: ["start", trace],
      trace: "small-stack-start-environment\(optimization).trc")
    #expect(run.standardOutput == "hits 10, tag 10, fired 1\ndone\n")
    let report = Run.command(["report", trace])
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("Shared.hits") && report.standardOutput.contains("Shared.tag"))
    #expect(
      !report.standardOutput.contains("INCOMPLETE") && !report.standardOutput.contains("TRUNCATED"),
      "\(report.standardOutput)")
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
}
