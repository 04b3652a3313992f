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
    let first = Process()
    first.executableURL = URL(fileURLWithPath: Paths.binary("obstrace-scenarios"))
    first.arguments = ["hold-trace"]
    first.environment = ProcessInfo.processInfo.environment.merging(["OBSTRACE_OUTPUT": trace]) { $1 }
    let input = Pipe()
    let output = Pipe()
    first.standardInput = input
    first.standardOutput = output
    try first.run()
    var started = Data()
    while !started.contains(UInt8(ascii: "\n")) {
      let piece = output.fileHandleForReading.availableData
      if piece.isEmpty { break }
      started.append(piece)
    }
    #expect(String(decoding: started, as: UTF8.self) == "recording\n")
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

  @Test("the path beside: the process id before the extension")
  func pathBeside() {
    #expect(TraceFileWriter.pathBeside("/tmp/run.trc", processID: 42) == "/tmp/run-42.trc")
    #expect(TraceFileWriter.pathBeside("run", processID: 42) == "run-42")
    #expect(TraceFileWriter.pathBeside("/a.b/run", processID: 42) == "/a.b/run-42")
    #expect(TraceFileWriter.pathBeside("/tmp/.trace", processID: 42) == "/tmp/.trace-42")
    #expect(TraceFileWriter.pathBeside("/tmp/x.tar.trc", processID: 7) == "/tmp/x.tar-7.trc")
  }
}
