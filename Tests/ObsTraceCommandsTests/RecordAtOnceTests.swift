import Foundation
import ObsTraceFormat
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `obstrace record` of a command whose traced processes record at the same time (with and without `%p` in `-o`),
/// and over an old trace it cannot remove: every
/// recording kept, every trace named in the summary, one clear line for each.
@Suite("record: processes recording at once")
struct RecordAtOnceTests {
  /// Runs `obstrace-scenarios hold-trace` ($0) reading a FIFO in $1, waits until it says it records (it holds its
  /// trace from then on), runs the demo ($2) while it does, then closes the FIFO: hold-trace records its second
  /// write and exits. So the two record at the same time, the first to start claiming the file. (`grep -s`: the
  /// background job opens held.out only once the FIFO has a writer, so the first grep may find no file, and its
  /// complaint would be one more line on record's standard error: seen once at load 15.)
  static let atOnce = """
    mkfifo "$1/in" || exit 9
    "$0" hold-trace < "$1/in" > "$1/held.out" 2> "$1/held.err" &
    exec 3> "$1/in"
    until grep -qs recording "$1/held.out"; do sleep 0.01; done
    "$2"
    exec 3>&-
    wait
    """

  static func run(output: String) throws -> (result: ProcessResult, folder: String, untraced: ProcessResult) {
    let folder = (output as NSString).deletingLastPathComponent
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let result = try Run.program(
      "obstrace",
      [
        "record", "-o", output, "--", "/bin/sh", "-c", atOnce, Paths.binary("obstrace-scenarios"), folder,
        Paths.binary("obstrace-demo"),
      ])
    // Both programs printed what they print untraced: the demo on record's standard output, hold-trace to its file.
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput == untraced.standardOutput)
    #expect(try String(contentsOfFile: folder + "/held.out", encoding: .utf8) == "recording\ndone: count 2\n")
    return (result, folder, untraced)
  }

  /// The traces in `folder`, by name.
  static func traces(_ folder: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".trc") }.sorted()
  }

  @Test("two processes recording at once into one -o: the later records beside it, says why in one line, both summarized")
  func atTheSameTime() throws {
    let trace = Paths.temporary("run.trc")
    let (result, folder, _) = try Self.run(output: trace)
    let names = try Self.traces(folder)
    let beside = try #require(names.first { $0.hasPrefix("run-") }, "\(names)")
    #expect(names == [beside, "run.trc"].sorted())
    let processID = String(beside.dropFirst("run-".count).dropLast(".trc".count))
    #expect(Int(processID) != nil)
    // hold-trace (first to record) has the file, the demo the one beside it: both whole.
    let held = try SharedOutputTests.wholeWrites(trace)
    #expect(held.whole && held.writes == 2)
    let demo = try SharedOutputTests.wholeWrites(folder + "/" + beside)
    #expect(demo.whole && demo.writes > 0)
    #expect(try String(contentsOfFile: folder + "/held.err", encoding: .utf8).isEmpty)
    let lines = result.errorLines
    #expect(lines.count == 4, "\(result.standardError)")
    #expect(
      lines.first
        == "obstrace: \(trace) is being written by another process of this 'obstrace record', recording at the same "
        + "time; this process (\(processID)) records to \(folder)/\(beside)")
    #expect(lines.dropFirst().first?.contains(" into \(trace) (") == true, "\(result.standardError)")
    #expect(lines.dropFirst(2).first?.contains(" into \(folder)/\(beside) (") == true, "\(result.standardError)")
    #expect(
      lines.last
        == "obstrace: 2 processes recorded, a trace each: \(trace), \(folder)/\(beside); report and the other commands "
        + "read one trace at a time")
  }

  @Test("%p in record -o: a trace per process, named by its id, each summarized; none named with %p")
  func percentP() throws {
    let output = Paths.temporary("run-%p.trc")
    let (result, folder, _) = try Self.run(output: output)
    let names = try Self.traces(folder)
    #expect(names.count == 2, "\(names)")
    #expect(!names.contains("run-%p.trc"))
    for name in names {
      #expect(name.hasPrefix("run-") && Int(name.dropFirst(4).dropLast(4)) != nil, "\(name)")
      #expect(try SharedOutputTests.wholeWrites(folder + "/" + name).whole)
    }
    // Nothing was held, so no process said anything; the summary names both, in the order they began.
    let lines = result.errorLines
    #expect(lines.count == 3, "\(result.standardError)")
    let paths = lines.dropLast().compactMap { line in names.first { line.contains(" into \(folder)/\($0) (") } }
    #expect(Set(paths) == Set(names), "\(result.standardError)")
    #expect(
      lines.last
        == "obstrace: 2 processes recorded, a trace each: \(folder)/\(paths[0]), \(folder)/\(paths[1]); report and "
        + "the other commands read one trace at a time")

    // One process: one paragraph, of the file it wrote.
    let one = Paths.temporary("one-%p.trc")
    let single = try Run.program("obstrace", ["record", "-o", one, "--", Paths.binary("obstrace-demo")])
    #expect(single.status == 0)
    let oneFolder = (one as NSString).deletingLastPathComponent
    let written = try Self.traces(oneFolder)
    #expect(written.count == 1 && written[0] != "one-%p.trc", "\(written)")
    #expect(single.errorLines.count == 1, "\(single.standardError)")
    #expect(single.standardError.hasPrefix("obstrace: recorded "), "\(single.standardError)")
    #expect(single.standardError.contains(" into \(oneFolder)/\(written[0]) ("), "\(single.standardError)")
  }

  /// Starts `obstrace-scenarios outlive` ($0) in the background, its input a FIFO in $1 that the test holds open
  /// and its output to files, and exits once it says it records: record's command ends, the traced process goes on.
  static let outlives = """
    "$0" outlive < "$1/in" > "$1/held.out" 2> "$1/held.err" &
    until grep -qs recording "$1/held.out"; do sleep 0.01; done
    """

  @Test(
    "a traced process that outlives record's command: the summary says it is still recording and its trace not complete yet, not that the command failed"
  )
  func outlivesTheCommand() throws {
    let trace = Paths.temporary("run.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    #expect(mkfifo(folder + "/in", 0o600) == 0)
    // Only this test may end the outliving process's input: opened read-write (no reader needed to open it) and
    // close-on-exec, so no child of the test holds it open. The process itself drops every descriptor it inherited
    // past standard error, and ends after 300 s whatever happens; timeout ends the command's shell.
    let writer = open(folder + "/in", O_RDWR | O_CLOEXEC)
    try #require(writer >= 0)
    var held = true
    defer { if held { close(writer) } }
    let result = try Run.program(
      "obstrace",
      [
        "record", "-o", trace, "--", "/usr/bin/timeout", "-s", "KILL", "120", "/bin/sh", "-c", Self.outlives,
        Paths.binary("obstrace-scenarios"), folder,
      ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.errorLines.count == 1, "\(result.standardError)")
    // What it counts is what the process wrote so far, and said so.
    #expect(result.standardError.hasPrefix("obstrace: recorded so far "), "\(result.standardError)")
    #expect(result.standardError.contains(". Findings so far: "), "\(result.standardError)")
    #expect(!result.standardError.contains("did not exit cleanly"), "\(result.standardError)")
    let clause = "; the trace is not complete yet: process "
    let holder = result.standardError.components(separatedBy: clause).dropFirst().first?.prefix { $0.isNumber }
    #expect(holder.flatMap { Int32($0) }.map { $0 > 0 && $0 != getpid() } == true, "\(result.standardError)")
    #expect(
      result.standardError.contains(
        " is still running and recording into it (the command exited before it); its footer is written when that "
          + "process stops recording"), "\(result.standardError)")
    // Its input closed, the process records its second write and exits: the trace is then whole.
    close(writer)
    held = false
    var whole = (whole: false, writes: 0)
    for _ in 0..<600 where !whole.whole {
      usleep(100_000)
      whole = (try? SharedOutputTests.wholeWrites(trace)) ?? whole
    }
    #expect(whole.whole && whole.writes == 2)
    #expect(try String(contentsOfFile: folder + "/held.out", encoding: .utf8) == "recording\ndone: count 2\n")
  }

  @Test(
    "a process the command started that outlives it and has not begun recording yet: the summary says it is still running and may record, not that the program lacks the import (tryout14's H8)"
  )
  func outlivesTheCommandBeforeRecording() throws {
    let trace = Paths.temporary("late.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    #expect(mkfifo(folder + "/in", 0o600) == 0)
    // `outlive-late` drops the descriptors it inherited and waits for a line on its input before anything traced,
    // so the command's shell has surely exited before it records; the FIFO is the test's alone (as above).
    let writer = open(folder + "/in", O_RDWR | O_CLOEXEC)
    try #require(writer >= 0)
    var held = true
    defer { if held { close(writer) } }
    let script = #""$0" outlive-late < "$1/in" > "$1/held.out" 2> "$1/held.err" &"#
    let result = try Run.program(
      "obstrace",
      [
        "record", "-o", trace, "--", "/usr/bin/timeout", "-s", "KILL", "120", "/bin/sh", "-c", script,
        Paths.binary("obstrace-scenarios"), folder,
      ])
    #expect(result.status == 0, "\(result.standardError)")
    let prefix = "obstrace: the command exited 0 and no trace was written to \(trace) by then: process "
    let waiting = result.standardError.components(separatedBy: prefix).dropFirst().first?.prefix { $0.isNumber }
    #expect(waiting.flatMap { Int32($0) }.map { $0 > 0 && $0 != getpid() } == true, "\(result.standardError)")
    #expect(
      result.errorLines.count == 1
        && result.standardError.contains(
          ", which it started, is still running and had not begun recording (a traced process begins at its first "
            + "@Observable object or tracking); if it records, its trace goes to \(trace): 'obstrace report "
            + "\(trace)' once it has stopped"), "\(result.standardError)")
    #expect(!result.standardError.contains("import ObsTrace"), "\(result.standardError)")
    // And so it does: it begins, then its input ends and so does it; its trace is whole, at the path record named.
    #expect(write(writer, "go\n", 3) == 3)
    var started = false
    for _ in 0..<600 where !started {
      usleep(50_000)
      started = (try? String(contentsOfFile: folder + "/held.out", encoding: .utf8))?.contains("recording") == true
    }
    close(writer)
    held = false
    var whole = (whole: false, writes: 0)
    for _ in 0..<600 where !whole.whole {
      usleep(100_000)
      whole = (try? SharedOutputTests.wholeWrites(trace)) ?? whole
    }
    #expect(started && whole.whole && whole.writes == 2)
  }

  @Test("an old trace record cannot remove (its folder is not writable) is emptied and recorded into")
  func oldTraceNotRemovable() throws {
    let trace = Paths.temporary("old.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    // An old trace: the guide's bytes, writable by all; the folder writable by its owner alone.
    try FileManager.default.copyItem(atPath: GuideTrace.path, toPath: trace)
    #expect(chmod(trace, 0o666) == 0)
    #expect(chmod(folder, 0o755) == 0)
    // Root may remove a file from any folder: then record runs as nobody.
    let asOther = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    if getuid() != 0 { #expect(chmod(folder, 0o555) == 0) }
    defer { _ = chmod(folder, 0o755) }
    let result = try Run.program(
      asOther.first ?? Paths.binary("obstrace"),
      Array(asOther.dropFirst()) + (asOther.isEmpty ? [] : [Paths.binary("obstrace")])
        + ["record", "-o", trace, "--", Paths.binary("obstrace-demo")])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(try Self.traces(folder) == ["old.trc"])
    #expect(result.errorLines.count == 1, "\(result.standardError)")
    #expect(result.standardError.contains(" into \(trace) ("), "\(result.standardError)")
    // The demo's trace, not the guide's.
    let alone = Paths.temporary("alone.trc")
    _ = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": alone])
    let recorded = try SharedOutputTests.wholeWrites(trace)
    let expected = try SharedOutputTests.wholeWrites(alone)
    #expect(recorded.whole && recorded.writes == expected.writes)
    let started = try TraceReader(path: trace).header.startWallClockNanoseconds
    let guideStarted = try TraceReader(path: GuideTrace.path).header.startWallClockNanoseconds
    #expect(started != guideStarted)
  }
}
