import Foundation
import ObsTraceCommands
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// Where the repository and the built programs are.
enum Paths {
  /// The repository's root, from this file's place in it.
  static let root: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
  }()

  /// The folder of the test binary, which `swift build` fills with every product.
  static let binaries: String = {
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
    if url.lastPathComponent.hasSuffix(".xctest") { url.deleteLastPathComponent() }
    return url.path
  }()

  static func binary(_ name: String) -> String { binaries + "/" + name }

  static func temporary(_ name: String) -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
  }
}

/// A finished process: its exit code and what it printed.
struct ProcessResult {
  var status: Int32
  var standardOutput: String
  var standardError: String

  var errorLines: [String] { standardError.split(separator: "\n").map(String.init) }
}

enum Run {
  /// Runs a built program (from `Paths.binaries`, or an absolute path) with extra environment variables.
  /// `standardOutput`, when given, is where the program's standard output goes instead of a pipe (its
  /// `standardOutput` is then empty).
  static func program(
    _ name: String, _ arguments: [String], environment: [String: String] = [:], standardOutput: FileHandle? = nil,
    directory: String = Paths.root
  ) throws -> ProcessResult {
    let process = Process()
    let path = name.hasPrefix("/") ? name : Paths.binary(name)
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw MissingBinary(path: path)
    }
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = standardOutput ?? output
    process.standardError = error
    try process.run()
    if standardOutput != nil { try output.fileHandleForWriting.close() }
    // Read both pipes before waiting, so that a large output cannot block the child.
    let outputData = readAll(output.fileHandleForReading)
    let errorData = readAll(error.fileHandleForReading)
    process.waitUntilExit()
    let status =
      process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    return ProcessResult(
      status: status, standardOutput: String(decoding: outputData, as: UTF8.self),
      standardError: String(decoding: errorData, as: UTF8.self))
  }

  /// Everything a pipe gives until it closes. Foundation's `readDataToEndOfFile` traps when a signal interrupts
  /// its read (EINTR), which the tests' many child processes make happen; this retries instead.
  static func readAll(_ handle: FileHandle) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
      if count > 0 {
        data.append(contentsOf: buffer[0..<count])
      } else if count < 0 && errno == EINTR {
        continue
      } else {
        return data
      }
    }
  }

  /// Runs `obstrace` in-process.
  static func command(_ arguments: [String]) -> ProcessResult {
    let output = CapturedOutput()
    let status = CommandLineInterface.run(arguments, output: output)
    return ProcessResult(status: status, standardOutput: output.standardOutput, standardError: output.standardError)
  }
}

extension Run {
  /// Starts `arguments` as a shell starts a job, and returns its process id without waiting: in a process group of its
  /// own (so that a signal can go to the group, as a terminal's Ctrl-C or `timeout` sends it), SIGINT and SIGTERM at
  /// their defaults and no signal blocked (the test's thread, a pool thread of Swift concurrency, blocks nearly all,
  /// and may ignore SIGINT; a child inherits both), its input `input` opened with `inputFlags`, its output and errors
  /// written to `output` and `errors`. `environment`: "NAME=value" entries, by default this process's.
  static func job(
    _ arguments: [String], input: String, inputFlags: Int32, output: String, errors: String,
    environment: [String]? = nil
  ) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, input, inputFlags, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setpgroup(&attributes, 0)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGTERM)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
    defer { for pointer in argv + (envp ?? []) { free(pointer) } }
    var process: pid_t = 0
    let spawned = envp.map { posix_spawn(&process, argv[0]!, &actions, &attributes, argv, $0) }
      ?? posix_spawn(&process, argv[0]!, &actions, &attributes, argv, environ)
    guard spawned == 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO, userInfo: [NSLocalizedDescriptionKey: arguments[0]])
    }
    return process
  }
}

struct MissingBinary: Error, CustomStringConvertible {
  var path: String
  var description: String { "\(path) is not built: run `swift build` (scripts/test does) before `swift test`" }
}

/// Lines of Examples/obstrace-scenarios/main.swift found by their text, so that a scenario added above does not
/// break the tests that name a site of the sample traces (re-record them with scripts/make-traces).
enum ScenarioSource {
  static let lines: [Substring] = {
    let text =
      (try? String(contentsOfFile: Paths.root + "/Examples/obstrace-scenarios/main.swift", encoding: .utf8)) ?? ""
    return text.split(separator: "\n", omittingEmptySubsequences: false)
  }()

  /// The 1-based number of the first line that is `text` once trimmed, or 0.
  static func line(_ text: String) -> Int {
    (lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == text } ?? -1) + 1
  }

  /// The no-op write of `noop-modify` (`store.items[1].done = true`, it already is).
  static var noopWrite: Int { line("store.items[1].done = true") }
  /// The real change of `noop-modify` (`store.items[0].done = true`).
  static var changingWrite: Int { line("store.items[0].done = true") }
}

/// `traces/guide.trc` (the demo's trace) taken apart and put back with other bytes: the suites of damaged ends.
enum GuideTrace {
  static let path = Paths.root + "/traces/guide.trc"

  /// Its bytes and its whole chunks' ranges and types.
  static func read() throws -> (bytes: Data, chunks: [(type: ChunkType, range: Range<UInt64>)]) {
    var chunks: [(type: ChunkType, range: Range<UInt64>)] = []
    try TraceReader(path: path).forEachWholeChunkRange { type, range in chunks.append((type, range)) }
    return (try Data(contentsOf: URL(fileURLWithPath: path)), chunks)
  }

  /// Writes `bytes` to a new temporary file named `name`; returns its path.
  static func write(_ bytes: Data, _ name: String) throws -> String {
    let path = Paths.temporary(name)
    try bytes.write(to: URL(fileURLWithPath: path))
    return path
  }

  /// A reader of the trace at `path` and how many events it reads.
  static func events(_ path: String) throws -> (reader: TraceReader, count: Int) {
    let reader = try TraceReader(path: path)
    var count = 0
    reader.forEachEvent { _ in count += 1 }
    return (reader, count)
  }
}
