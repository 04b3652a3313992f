import ObsTraceAnalysis
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// `obstrace record -o FILE -- COMMAND [ARGS…]`: runs a command with recording on, passes its exit code
/// through, and says in one paragraph what the trace holds.
enum RecordCommand: TraceCommand {
  static let name = "record"
  static let abstract = "Run a command with recording on (OBSTRACE_OUTPUT), then summarize the trace."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace record -o <file> [--backtraces off|writes|all] [--drop] [--ring-capacity <n>]
                           [--findings | --no-findings] -- <command> [<arg>...]

    The command's code must link ObsTrace and import it in the files that declare @Observable models. Its exit
    code is passed through; the summary goes to stderr. When the command runs several traced processes (swift test
    runs XCTest and Swift Testing one after the other, or processes at the same time), the first to record
    writes <file> and each later one writes beside it (run.trc -> run-PID.trc); the summary names every trace.
    A %p in <file> becomes each process's id.

    The summary counts the trace's objects, properties and findings by replaying it, as 'obstrace report' does,
    when the trace is at most 4 MiB (a few million events); a larger one is summed up from its footer's counts
    alone, said so, and not read back (--findings replays it all the same; --no-findings never does).

    Ctrl-C (SIGINT) and SIGQUIT reach the command, not record: record waits for the command to end, then says
    how it ended and what the trace holds. SIGTERM sent to record is passed on to the command, and the same
    follows. A trace cut short this way has no symbol table: 'obstrace symbolize <file>' adds it.

    OPTIONS:
      -o, --output <file>     The trace file to write.
      --backtraces <level>    Call stacks on: off, writes (default: writes, scope begins, object creations), all.
      --drop                  Drop (and count) events when a ring is full instead of waiting.
      --ring-capacity <n>     Records per thread ring, 64 to 4194304 (default 65536).
      --findings              Count the findings in the summary whatever the trace's size.
      --no-findings           Never replay the trace for the summary: its footer's counts only.
      -h, --help              Show this help.

    EXAMPLE:
      obstrace record -o run.trc -- swift test --filter ModelTests
      obstrace report run.trc

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: ["-o": "output", "--output": "output", "--backtraces": "backtraces", "--ring-capacity": "ring"],
      flags: ["--drop": "drop", "--findings": "findings", "--no-findings": "no-findings"], command: name
    ).parse(arguments)
    if parsed.has("findings") && parsed.has("no-findings") {
      throw CommandError("obstrace record: --findings and --no-findings exclude each other; give one")
    }
    let findings: Findings = parsed.has("findings") ? .always : parsed.has("no-findings") ? .never : .belowLimit
    guard let path = parsed.value("output") else {
      throw CommandError("obstrace record: missing -o <file>; see 'obstrace record --help'")
    }
    var command = parsed.rest
    if command.isEmpty { command = parsed.positionals }
    guard !command.isEmpty else {
      throw CommandError("obstrace record: missing the command to run after --; see 'obstrace record --help'")
    }
    var environment: [String: String] = ["OBSTRACE_OUTPUT": path]
    if let level = parsed.value("backtraces") {
      guard ["off", "writes", "all"].contains(level) else {
        throw CommandError("obstrace record: --backtraces must be off, writes or all, not '\(level)'")
      }
      environment["OBSTRACE_BACKTRACES"] = level
    }
    if parsed.has("drop") { environment["OBSTRACE_DROP"] = "1" }
    if let ring = parsed.value("ring") {
      let range = TraceFormat.ringCapacities
      guard let capacity = Int(ring), range.contains(capacity) else {
        throw CommandError(
          "obstrace record: --ring-capacity must be a number from \(range.lowerBound) to \(range.upperBound), not '\(ring)'"
        )
      }
      environment["OBSTRACE_RING_CAPACITY"] = String(capacity)
    }
    // The trace is created by the traced program, which only says on stderr that it could not and runs untraced:
    // make sure the file can be created before running anything (a directory, a missing folder, no permission).
    var existing = stat()
    if stat(path, &existing) == 0, existing.st_mode & S_IFMT == S_IFDIR {
      throw CommandError("obstrace record: -o \(path) is a directory; give the trace file's path")
    }
    // A FIFO blocked the probe below until a reader came; a device (/dev/null, /dev/full) ran the command untraced
    // and exited 0 (the recorder refuses both, TraceFileWriter).
    if stat(path, &existing) == 0, let kind = TraceFileWriter.notRegular(existing.st_mode) {
      throw CommandError("obstrace record: -o \(path) is \(kind), not a regular file; give the trace file's path")
    }
    let existed = access(path, F_OK) == 0
    let probe = open(path, O_WRONLY | O_CREAT | O_NONBLOCK, 0o644)
    guard probe >= 0 else {
      throw CommandError("obstrace record: cannot create -o \(path) (\(String(cString: strerror(errno))))")
    }
    // A file another process's recording is writing (it holds the file's lock, TraceFileWriter) is not stale: removed,
    // that recording would go on into a file no name reaches.
    let held = flock(probe, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    close(probe)
    if held {
      throw CommandError(
        "obstrace record: -o \(path) is being written by another process's recording; give another path")
    }
    // Remove a stale trace so the summary cannot describe it (only a regular file gets here, unless something put
    // another kind of file at the path since: that stays).
    var probed = stat()
    if !existed || (stat(path, &probed) == 0 && probed.st_mode & S_IFMT == S_IFREG), unlink(path) != 0, existed,
      errno != ENOENT
    {
      // A file in a folder this user cannot write to is not removed: emptied, the first process claims it as it
      // would a new one (a process of this command keeps a file that is not empty, as an earlier one's trace).
      let removeError = String(cString: strerror(errno))
      guard truncate(path, 0) == 0 else {
        throw CommandError(
          "obstrace record: cannot remove or empty the old -o \(path) (\(removeError); \(String(cString: strerror(errno)))); "
            + "give another path")
      }
    }
    // Each process of the command that records says here where its trace went, and none replaces another's
    // (Recorder.recordListVariable): the first to record claims `path`, a later one records beside it.
    var template = Array(
      ((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/obstrace-record-XXXXXX").utf8CString)
    let listDescriptor = mkstemp(&template)
    guard listDescriptor >= 0 else {
      throw CommandError(
        "obstrace record: cannot create its list of traces in \(text(template)) (\(String(cString: strerror(errno))))")
    }
    close(listDescriptor)
    let list = text(template)
    defer { unlink(list) }
    environment[RecordCommand.listVariable] = list
    let signals = CommandSignals.install()
    let ending: Ending
    do {
      ending = try spawnAndWait(command, adding: environment, signals: signals)
    } catch {
      signals.restore()
      throw error
    }
    signals.restore()
    if let forwarded = signals.forwardedSignal {
      output.writeError(
        "obstrace: record got \(CommandSignals.name(forwarded)) and passed it on to the command, which "
          + "\(ending.description)\n")
    } else if case .signalled = ending {
      output.writeError("obstrace: the command \(ending.description)\n")
    }
    let traces = recordedTraces(list: list, path: path)
    if traces.count <= 1 {
      // One process: its trace (`-o` with %p names it by the process). None: a process the command started may
      // still be running without having recorded yet (`sh -c 'prog &'`), which is not a missing import.
      let waiting = traces.isEmpty ? processesCarrying(list: list) : []
      output.writeError(
        summary(path: traces.first ?? path, ending: ending, findings: findings, notYetRecording: waiting) + "\n")
    } else {
      let execs = execedInto(traces)
      for trace in traces {
        output.writeError(summary(path: trace, ending: ending, findings: findings, execedInto: execs[trace]) + "\n")
      }
      output.writeError(
        "obstrace: \(traces.count) processes recorded, a trace each: \(traces.joined(separator: ", ")); report and "
          + "the other commands read one trace at a time\n")
    }
    return ending.status
  }

  /// For each trace of `traces` (in the order they began) whose process later traced into another of them with the
  /// same process id, that later trace: the process replaced itself by exec (`execv` keeps the pid) and its new
  /// program recorded anew. A truncated trace is then not a kill or a crash (tryout16's P9).
  static func execedInto(_ traces: [String]) -> [String: String] {
    let processes = traces.map { try? TraceReader(path: $0).header.processID }
    var later: [String: String] = [:]
    for (index, trace) in traces.enumerated() {
      guard let process = processes[index],
        let next = traces.indices.first(where: { $0 > index && processes[$0] == process })
      else { continue }
      later[trace] = traces[next]
    }
    return later
  }

  /// Whether the summary replays the trace to count its findings.
  enum Findings {
    case always, never
    /// When the trace is at most `findingsLimit` bytes.
    case belowLimit
  }

  /// The largest trace the summary replays unasked: a few million events, well under a second of a release build's
  /// replay (a long run's 37 MB trace of 70 M events took ≈ 8 s of CPU, a fresh-clone try-out's G12).
  static let findingsLimit: Int64 = 4 << 20

  /// How the command ended.
  enum Ending: Equatable {
    case exited(Int32)
    case signalled(Int32)

    /// What record exits with: the command's exit code, or 128 + the signal that ended it, as a shell's `$?`.
    var status: Int32 {
      switch self {
      case .exited(let code): code
      case .signalled(let signal): 128 + signal
      }
    }

    /// `exited 3`, `was interrupted (SIGINT)`, `was ended by SIGTERM`.
    var description: String {
      switch self {
      case .exited(let code): "exited \(code)"
      case .signalled(let signal) where signal == SIGINT || signal == SIGQUIT:
        "was interrupted (\(CommandSignals.name(signal)))"
      case .signalled(let signal): "was ended by \(CommandSignals.name(signal))"
      }
    }
  }

  /// `Recorder.recordListVariable`, which this module does not import.
  static let listVariable = "OBSTRACE_RECORD_LIST"

  /// The traces the command's processes wrote, in the order they began (each once), as the list holds them
  /// (absolute): `path` as given for the one it names, those under the current directory relative to it.
  static func recordedTraces(list: String, path: String) -> [String] {
    guard let contents = try? readWhole(list) else { return [] }
    var directory = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let current = getcwd(&directory, directory.count) != nil ? text(directory) : ""
    let absolutePath = path.hasPrefix("/") ? path : current + "/" + path
    var traces: [String] = []
    for line in contents.split(separator: "\n") {
      var trace = String(line)
      if trace == absolutePath {
        trace = path
      } else if !current.isEmpty, trace.hasPrefix(current + "/") {
        trace = String(trace.dropFirst(current.count + 1))
      }
      if !traces.contains(trace) { traces.append(trace) }
    }
    return traces
  }

  /// A C string in an array, up to its terminating zero.
  static func text(_ characters: [CChar]) -> String {
    String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  static func readWhole(_ path: String) throws -> String {
    String(decoding: try readWholeBytes(path), as: UTF8.self)
  }

  static func readWholeBytes(_ path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw CommandError("cannot read \(path)") }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      bytes.append(contentsOf: buffer[..<count])
    }
    return bytes
  }

  /// Runs `command` (searched on PATH) with `environment` added to ours, the signals record ignores or forwards at
  /// their defaults (`signals`); returns how it ended.
  static func spawnAndWait(
    _ command: [String], adding environment: [String: String], signals: CommandSignals
  ) throws(CommandError) -> Ending {
    var merged: [String: String] = [:]
    var index = 0
    while let entry = environ[index] {
      let text = String(cString: entry)
      if let equals = text.firstIndex(of: "=") {
        merged[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      index += 1
    }
    merged.merge(environment) { _, new in new }
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = signals.defaultsForCommand
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
    var processID: pid_t = 0
    let spawned = posix_spawnp(&processID, argv[0]!, nil, &attributes, argv, envp)
    guard spawned == 0 else {
      throw CommandError("obstrace record: cannot run '\(command[0])' (\(String(cString: strerror(spawned))))")
    }
    signals.started(processID)
    defer { signals.ended() }
    var status: Int32 = 0
    // A signal record forwards interrupts the wait (EINTR): it goes on waiting for the command to end.
    while waitpid(processID, &status, 0) < 0 {
      if errno != EINTR {
        throw CommandError("obstrace record: lost the command (\(String(cString: strerror(errno))))")
      }
    }
    let signal = status & 0x7f
    if signal == 0 { return .exited((status >> 8) & 0xff) }
    return .signalled(signal)
  }

  /// One paragraph: what the trace holds, or why there is none. Replays the trace (its objects, properties and
  /// findings, as the report counts them) as `findings` says; otherwise says what its footer counts.
  /// `notYetRecording`: processes the command started that still run (and may record later) when none recorded.
  /// `execedInto`: the trace its process recorded next after replacing itself by exec (`execedInto(_:)`).
  static func summary(
    path: String, ending: Ending, findings: Findings, limit: Int64 = findingsLimit, notYetRecording: [Int32] = [],
    execedInto: String? = nil
  ) -> String {
    var status = stat()
    let size: Int64? = stat(path, &status) == 0 ? Int64(status.st_size) : nil
    let replays =
      switch findings {
      case .always: true
      case .never: false
      case .belowLimit: (size ?? 0) <= limit
      }
    guard replays else {
      return footerSummary(
        path: path, size: size ?? 0, ending: ending, findings: findings, limit: limit, notYetRecording: notYetRecording,
        execedInto: execedInto)
    }
    let report: AnalysisReport
    do {
      report = try TraceAnalysis.analyze(path: path)
    } catch {
      return noTrace(error, path: path, ending: ending, notYetRecording: notYetRecording)
    }
    let trace = report.trace
    // A process of the command that outlives it (`sh -c 'prog &'`) still holds the trace's lock: what is counted is
    // what it wrote so far.
    let stillRecording = trace.truncated ? trace.recordingProcess : nil
    let soFar = stillRecording != nil ? " so far" : ""
    let objects = report.objects.reduce(0) { $0 + $1.statistics.created + $1.statistics.seenOnly }
    var text =
      "obstrace: recorded\(soFar) \(trace.events) events from \(trace.threads) thread\(trace.threads == 1 ? "" : "s") "
      + "over \(Formatting.duration(trace.durationNanoseconds)) into \(path) (\(Formatting.bytes(UInt64(size ?? 0)))): "
      + "\(objects) object\(objects == 1 ? "" : "s") of \(report.objects.count) type\(report.objects.count == 1 ? "" : "s"), "
      + registrarsWithoutEvents(report)
      + "\(report.properties.count) propert\(report.properties.count == 1 ? "y" : "ies"), "
      + "\(report.scopes.count) scope label\(report.scopes.count == 1 ? "" : "s"); "
      + "\(trace.droppedEvents) dropped"
    if let holder = stillRecording {
      // Nothing is lost yet: its footer is not written yet.
      text +=
        "; the trace is not complete yet: process \(holder) is still running and recording into it (the command "
        + "exited before it); its footer is written when that process stops recording"
    } else if trace.truncated {
      text += truncatedClause(path: path, symbolized: trace.symbolized, execedInto: execedInto)
    }
    // The report's own count, in the report's own words.
    text += ". Findings\(soFar): \(TraceInput.findingCounts(report)): see 'obstrace report \(path)'."
    return text
  }

  /// What the trace's footer counts, without reading its events: its events, threads, duration and drops; or, with
  /// no footer, that it has none.
  static func footerSummary(
    path: String, size: Int64, ending: Ending, findings: Findings, limit: Int64, notYetRecording: [Int32] = [],
    execedInto: String? = nil
  ) -> String {
    let reader: TraceReader
    do {
      reader = try TraceReader(path: path)
    } catch {
      return noTrace(error, path: path, ending: ending, notYetRecording: notYetRecording)
    }
    let why =
      findings == .never
      ? "--no-findings" : "a trace over \(Formatting.bytes(UInt64(limit))), which takes a while to replay"
    let notRead =
      ". Not read back (\(why)): 'obstrace report \(path)' says its objects, properties and findings"
      + (findings == .never ? "." : ", as 'record --findings' would here.")
    let bytes = Formatting.bytes(UInt64(size))
    guard let footer = reader.footer else {
      if let holder = reader.recordingProcess {
        return "obstrace: \(path) (\(bytes) so far) is not complete yet: process \(holder) is still running and "
          + "recording into it (the command exited before it); its footer, which counts its events, is written when "
          + "that process stops recording" + notRead
      }
      return "obstrace: \(path) (\(bytes)) has no footer to count its events"
        + truncatedClause(path: path, symbolized: !reader.definitions.symbols.isEmpty, execedInto: execedInto)
        + notRead
    }
    // The reserved serial is "no thread" (a chunk naming it is damage), as the report counts threads.
    let threads = footer.threads.filter { $0.thread != TraceFormat.reservedThread }
    // Saturating: a damaged footer's counts may add up past 2^64.
    let events = threads.reduce(UInt64(0)) {
      $0.addingReportingOverflow($1.recorded).overflow ? .max : $0 + $1.recorded
    }
    let dropped = threads.reduce(UInt64(0)) { $0.addingReportingOverflow($1.dropped).overflow ? .max : $0 + $1.dropped }
    return "obstrace: recorded \(events) events from \(threads.count) thread\(threads.count == 1 ? "" : "s") over "
      + "\(Formatting.duration(footer.durationNanoseconds)) into \(path) (\(bytes)), as its footer counts them; "
      + "\(dropped) dropped" + notRead
  }

  /// `; the trace is truncated: …`, and how to name it when it has no symbol table.
  /// `execedInto`: the later trace of the same process, which replaced itself by exec.
  static func truncatedClause(path: String, symbolized: Bool, execedInto: String? = nil) -> String {
    // No footer and no process recording into it: the recording never stopped, whatever the command's status.
    let ended =
      if let execedInto {
        "; the trace is truncated: the process that recorded it replaced itself by exec without stopping the "
          + "recording (\(execedInto), recorded next, has its process id), so the events it had not yet written are "
          + "not in it (call Recorder.stop() before exec to keep them)"
      } else {
        "; the trace is truncated: the process that recorded it ended without stopping the recording (killed or "
          + "crashed), so the events it had not yet written are not in it"
      }
    return ended
      + (symbolized
        ? ""
        : ", nor its symbol table (names of properties and call sites): 'obstrace symbolize \(path)' adds it from "
          + "the binaries while they are unchanged")
  }

  /// Why there is no summary: no trace at `path`, or one that cannot be read.
  static func noTrace(_ error: TraceFileError, path: String, ending: Ending, notYetRecording: [Int32] = []) -> String {
    if error.code == .cannotOpen, let first = notYetRecording.first {
      // A traced process begins recording at its first traced object or scope: one still running may yet.
      let who =
        notYetRecording.count == 1
        ? "process \(first), which it started, is still running"
        : "processes \(notYetRecording.prefix(5).map(String.init).joined(separator: ", "))"
          + (notYetRecording.count > 5 ? " (\(notYetRecording.count) in all)" : "")
          + ", which it started, are still running"
      return "obstrace: the command \(ending.description) and no trace was written to \(path) by then: \(who) and "
        + "had not begun recording (a traced process begins at its first @Observable object or tracking); if it "
        + "records, its trace goes to \(path): 'obstrace report \(path)' once it has stopped"
    }
    if error.code == .cannotOpen {
      return "obstrace: the command \(ending.description) and wrote no trace to \(path): did it import ObsTrace "
        + "in the files that declare its @Observable models, and create one?"
    }
    return "obstrace: \(error.description)"
  }

  /// The processes other than this one whose environment names record's list of traces `list`: the command's own
  /// processes and their children, still running after the command ended (`sh -c 'prog &'`). Read from /proc (the
  /// environment each process was started with); a process whose environment this user cannot read is not seen.
  static func processesCarrying(list: String) -> [Int32] {
    guard let directory = opendir("/proc") else { return [] }
    defer { closedir(directory) }
    let wanted = Array("\(listVariable)=\(list)".utf8)
    let own = getpid()
    var found: [Int32] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard let process = Int32(name), process != own,
        let environment = try? readWholeBytes("/proc/\(name)/environ")
      else { continue }
      // Entries are NUL-terminated: the wanted one begins the block or follows a NUL.
      var start = 0
      while start < environment.count {
        let end = environment[start...].firstIndex(of: 0) ?? environment.count
        if end - start == wanted.count, environment[start..<end].elementsEqual(wanted) {
          found.append(process)
          break
        }
        start = end + 1
      }
    }
    return found.sorted()
  }

  /// The registrars that recorded no event, which are not objects (empty when there are none).
  static func registrarsWithoutEvents(_ report: AnalysisReport) -> String {
    let count = report.registrarsWithoutEvents.total.created
    guard count > 0 else { return "" }
    return "\(count) @Observable registrar\(count == 1 ? "" : "s") of objects not read or written while recording, "
  }
}
