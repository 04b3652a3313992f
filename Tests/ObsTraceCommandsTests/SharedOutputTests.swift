import Foundation
import ObsTraceFormat
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Two processes given one OBSTRACE_OUTPUT (a test runner's two processes): the file is held by the recording that
/// has it, and the other records beside it, with its process id, and says so once. Before, both wrote into one file
/// and damaged it, silently.
@Suite("Two recorders, one output file")
struct SharedOutputTests {
  /// The whole-trace facts of `path`: whether it read whole (a footer, no cut, no damage) and its `didSet` events.
  static func wholeWrites(_ path: String) throws -> (whole: Bool, writes: Int) {
    let reader = try TraceReader(path: path)
    var writes = 0
    reader.forEachEvent { event in if event.kind == .didSet { writes += 1 } }
    return (reader.footer != nil && !reader.truncated && reader.damage.isEmpty, writes)
  }

  @Test(
    "a recorder finding the file held by another process's recording records beside it and says so once; both programs print what they print untraced, both traces are whole"
  )
  func secondRecorderWritesBeside() throws {
    let trace = Paths.temporary("shared.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    // The first recorder records a write, prints 'recording' (the file is held from then on), and keeps the file
    // until its standard input closes.
    let first = Process()
    first.executableURL = URL(fileURLWithPath: Paths.binary("obstrace-scenarios"))
    first.arguments = ["hold-trace"]
    first.environment = ProcessInfo.processInfo.environment.merging(["OBSTRACE_OUTPUT": trace]) { $1 }
    let input = Pipe()
    let output = Pipe()
    let error = Pipe()
    first.standardInput = input
    first.standardOutput = output
    first.standardError = error
    try first.run()
    var started = Data()
    while !started.contains(UInt8(ascii: "\n")) {
      let piece = output.fileHandleForReading.availableData
      if piece.isEmpty { break }
      started.append(piece)
    }
    #expect(String(decoding: started, as: UTF8.self) == "recording\n")

    // The second, while the first holds the file.
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let second = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": trace])

    try input.fileHandleForWriting.write(contentsOf: Data("go on\n".utf8))
    try input.fileHandleForWriting.close()
    let rest = Run.readAll(output.fileHandleForReading)
    let firstErrors = Run.readAll(error.fileHandleForReading)
    first.waitUntilExit()

    // The first ran as it does untraced, and said nothing.
    #expect(first.terminationStatus == 0)
    #expect(String(decoding: rest, as: UTF8.self) == "read go on\ndone: count 2\n")
    #expect(firstErrors.isEmpty)
    // The second printed what its untraced twin prints, and one line saying where its trace went.
    #expect(second.status == 0)
    #expect(second.standardOutput == untraced.standardOutput)
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    let beside = names.first { $0.hasPrefix("shared-") && $0.hasSuffix(".trc") }
    #expect(names.count == 2 && names.contains("shared.trc") && beside != nil)
    let processID = beside.map { $0.dropFirst("shared-".count).dropLast(".trc".count) } ?? ""
    #expect(Int(processID) != nil)
    #expect(
      second.errorLines == [
        "obstrace: \(trace) is being written by another process's recording; this process (\(processID)) records "
          + "to \(folder)/shared-\(processID).trc (put %p in OBSTRACE_OUTPUT for a file per process)"
      ])

    // Both traces whole: the first's two writes, the second's as many as the demo records alone.
    let held = try Self.wholeWrites(trace)
    #expect(held.whole && held.writes == 2)
    let alone = Paths.temporary("alone.trc")
    _ = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": alone])
    let expected = try Self.wholeWrites(alone)
    let written = try Self.wholeWrites(folder + "/" + (beside ?? "missing"))
    #expect(written.whole && expected.whole && written.writes == expected.writes && written.writes > 0)
  }

  @Test("record -o a file another process's recording holds: one line, exit 2, the file and its recording untouched")
  func recordRefusesHeldFile() throws {
    let trace = Paths.temporary("held.trc")
    let (first, input, output) = try Self.startHolding(trace)
    let result = Run.command(["record", "-o", trace, "--", Paths.binary("obstrace-demo")])
    try input.fileHandleForWriting.close()
    _ = Run.readAll(output.fileHandleForReading)
    first.waitUntilExit()
    #expect(result.status == 2)
    #expect(
      result.errorLines == [
        "obstrace record: -o \(trace) is being written by another process's recording; give another path"
      ])
    let held = try Self.wholeWrites(trace)
    #expect(held.whole && held.writes == 2)
  }

  /// Starts `obstrace-scenarios hold-trace` recording into `trace`; returns once it said it records (it holds the
  /// file from then on, until its standard input closes).
  static func startHolding(_ trace: String) throws -> (process: Process, input: Pipe, output: Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Paths.binary("obstrace-scenarios"))
    process.arguments = ["hold-trace"]
    process.environment = ProcessInfo.processInfo.environment.merging(["OBSTRACE_OUTPUT": trace]) { $1 }
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    var started = Data()
    while !started.contains(UInt8(ascii: "\n")) {
      let piece = output.fileHandleForReading.availableData
      if piece.isEmpty { break }
      started.append(piece)
    }
    #expect(String(decoding: started, as: UTF8.self) == "recording\n")
    return (process, input, output)
  }

  @Test(
    "a trace still being recorded is said as such, naming the recording process, not as killed or crashed; once that process is killed it is"
  )
  func liveTrace() throws {
    let trace = Paths.temporary("live.trc")
    let live = try Self.startHolding(trace)
    let holder = live.process.processIdentifier
    let report = Run.command(["report", trace])
    let timeline = Run.command(["timeline", trace])
    let dump = Run.command(["dump", trace])
    let baseline = Run.command(["baseline", trace, "-o", Paths.temporary("live.json")])
    let symbolize = Run.command(["symbolize", trace])
    // Once its first chunk is in the file (the flusher writes it within a second), so the limit has names to miss.
    var check = Run.command(["check", trace, "--max", "Counter.count:writes<=1"])
    for _ in 0..<100 where check.standardError.contains("the trace has none") {
      usleep(100_000)
      check = Run.command(["check", trace, "--max", "Counter.count:writes<=1"])
    }
    // Reading it did not disturb the recording, nor did symbolize replace the file: it goes on and ends whole, with
    // both writes.
    try live.input.fileHandleForWriting.close()
    #expect(String(decoding: Run.readAll(live.output.fileHandleForReading), as: UTF8.self) == "done: count 2\n")
    live.process.waitUntilExit()
    #expect(live.process.terminationStatus == 0)
    let held = try Self.wholeWrites(trace)
    #expect(held.whole && held.writes == 2)

    #expect(report.status == 0)
    #expect(
      report.standardOutput.contains(
        "TRUNCATED: still being recorded by process \(holder) (read up to the last whole chunk so far)"),
      "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains("[truncated] the trace is still being recorded by process \(holder)"),
      "\(report.standardOutput)")
    #expect((timeline.standardOutput + timeline.standardError).contains("still being recorded by process \(holder) (it holds the file's lock)"))
    #expect(dump.standardOutput.contains("# truncated: no footer yet: still being recorded by process \(holder);"))
    #expect(
      baseline.status == 2
        && baseline.errorLines == [
          "obstrace baseline: \(trace): the trace is still being recorded (by process \(holder)): any count may be off, "
            + "so no baseline is written (--allow-incomplete writes it anyway)"
        ], "\(baseline.standardError)")
    #expect(
      symbolize.status == 2
        && symbolize.errorLines == [
          "obstrace symbolize: \(trace) is still being recorded by process \(holder), which writes its symbol table "
            + "when it stops; symbolize it after that, if it did not"
        ], "\(symbolize.standardError)")
    // A limit's name cannot be matched before the symbol table is written: check says to wait for the recording,
    // not that it did not stop cleanly, nor to symbolize a file symbolize refuses (tryout14's H15).
    #expect(
      check.status == 2
        && check.errorLines == [
          "obstrace check: --max 'Counter.count:writes<=1' names no property or scope of \(trace), whose property "
            + "names are not known: it has no symbol table yet (it is still being recorded by process \(holder), "
            + "which writes the table when it stops), so they are named by type and number (known: Counter.<Int #1>); "
            + "check it once that process has stopped"
        ], "\(check.standardError)")
    for output in [
      report.standardOutput, timeline.standardOutput, dump.standardOutput, baseline.standardError, check.standardError,
    ] {
      #expect(!output.contains("killed or crashed") && !output.contains("did not stop cleanly"))
    }
    // The finished trace says nothing of it.
    #expect(!Run.command(["report", trace]).standardOutput.contains("still being recorded"))

    // Killed while it records: no process holds the file, and the trace is one that did not stop cleanly.
    let killedTrace = Paths.temporary("killed.trc")
    let killed = try Self.startHolding(killedTrace)
    kill(killed.process.processIdentifier, SIGKILL)
    killed.process.waitUntilExit()
    let after = Run.command(["report", killedTrace]).standardOutput
    #expect(after.contains("TRUNCATED (read up to the last whole chunk)"), "\(after)")
    #expect(after.contains("the process was killed or crashed"), "\(after)")
    #expect(!after.contains("still being recorded"))
  }

  @Test("a file no live recording holds is taken and replaced, as before (a trace left by an earlier run)")
  func staleFileIsReplaced() throws {
    let trace = Paths.temporary("stale.trc")
    try String(repeating: "stale", count: 1000).write(toFile: trace, atomically: false, encoding: .utf8)
    let result = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(result.status == 0)
    #expect(result.errorLines.isEmpty)
    #expect(try Self.wholeWrites(trace).whole)
    let folder = (trace as NSString).deletingLastPathComponent
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["stale.trc"])
  }

  @Test(
    "record of a command that runs two traced processes one after the other keeps both traces: the first claims the file, the second records beside it; the summary names both; each program prints what it prints untraced"
  )
  func recordKeepsEveryProcess() throws {
    let trace = Paths.temporary("seq.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    let demo = Paths.binary("obstrace-demo")
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let result = try Run.program("obstrace", ["record", "-o", trace, "--", "/bin/sh", "-c", "\"$0\"; \"$0\"", demo])
    #expect(result.status == 0)
    #expect(result.standardOutput == untraced.standardOutput + untraced.standardOutput)

    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    let beside = try #require(names.first { $0.hasPrefix("seq-") && $0.hasSuffix(".trc") }, "\(names)")
    #expect(names == ["seq-" + beside.dropFirst(4), "seq.trc"].sorted())
    let processID = String(beside.dropFirst("seq-".count).dropLast(".trc".count))
    #expect(Int(processID) != nil)

    // Both traces whole, each with the writes the demo records alone.
    let alone = Paths.temporary("alone.trc")
    _ = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": alone])
    let expected = try Self.wholeWrites(alone)
    let first = try Self.wholeWrites(trace)
    let second = try Self.wholeWrites(folder + "/" + beside)
    #expect(expected.whole && expected.writes > 0)
    #expect(first.whole && first.writes == expected.writes)
    #expect(second.whole && second.writes == expected.writes)

    // The second process said where it went; record summarized each trace and named both.
    let lines = result.errorLines
    #expect(lines.count == 4, "\(result.standardError)")
    #expect(
      lines.first
        == "obstrace: \(trace) holds the trace of an earlier process of this 'obstrace record'; this process "
        + "(\(processID)) records to \(folder)/\(beside)")
    #expect(lines.dropFirst().first?.contains(" into \(trace) (") == true, "\(result.standardError)")
    #expect(lines.dropFirst(2).first?.contains(" into \(folder)/\(beside) (") == true, "\(result.standardError)")
    #expect(
      lines.last
        == "obstrace: 2 processes recorded, a trace each: \(trace), \(folder)/\(beside); report and the other commands "
        + "read one trace at a time")
  }

  @Test(
    "asked to keep a written file, the writer refuses one that is not empty and leaves it as it was; an empty or new one it takes"
  )
  func keepingWrittenFile() throws {
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 1, executable: "x", dropWhenFull: false, ringCapacity: 64, stackLevel: 0)
    let written = Paths.temporary("written.trc")
    try "an earlier trace".write(toFile: written, atomically: false, encoding: .utf8)
    do {
      _ = try TraceFileWriter(path: written, header: header, keepingWrittenFile: true)
      Issue.record("a written file was taken")
    } catch {
      #expect(error.code == .written)
    }
    #expect(try String(contentsOfFile: written, encoding: .utf8) == "an earlier trace")
    let empty = Paths.temporary("empty.trc")
    #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
    _ = try TraceFileWriter(path: empty, header: header, keepingWrittenFile: true)
    _ = try TraceFileWriter(path: Paths.temporary("new.trc"), header: header, keepingWrittenFile: true)
    #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).count > 0)
  }

  @Test("the path beside: the process id before the extension")
  func pathBeside() {
    #expect(TraceFileWriter.pathBeside("/tmp/run.trc", processID: 42) == "/tmp/run-42.trc")
    #expect(TraceFileWriter.pathBeside("run", processID: 42) == "run-42")
    #expect(TraceFileWriter.pathBeside("/a.b/run", processID: 42) == "/a.b/run-42")
    #expect(TraceFileWriter.pathBeside("/tmp/.trace", processID: 42) == "/tmp/.trace-42")
    #expect(TraceFileWriter.pathBeside("/tmp/x.tar.trc", processID: 7) == "/tmp/x.tar-7.trc")
  }
}
