import CObsTraceRing
import ObsTraceFormat
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Starts and stops recording. One recording at a time per process.
///
/// From the environment: `OBSTRACE_OUTPUT=run.trc` starts a recording at the first traced object or scope,
/// and process exit stops it. From code: `try Recorder.start(to:options:)` and `Recorder.stop()`.
public enum Recorder {
  struct State {
    var flusher: Flusher?
    var exitHandlerInstalled = false
    /// In-test recordings running, and the temporary trace started for them (stopped when the last one ends).
    var tapSessions = 0
    var temporaryPath: String?
  }

  static let state = LockedValue(State())

  /// Whether a recording is running.
  public static var isRecording: Bool { obstrace_is_enabled() }

  /// Starts recording to `path` (created or truncated). Throws when a recording is already running or the file
  /// cannot be created; the program goes on untraced either way.
  ///
  /// When another process's recording is writing `path` (it holds the file's lock), this one records beside it,
  /// with its process id before the extension (`run.trc` → `run-4242.trc`; `RecordingSummary.path` says where), and
  /// says so once on standard error: neither trace is damaged, neither is lost in silence.
  public static func start(to path: String, options: RecordingOptions = RecordingOptions()) throws(RecordingError) {
    // On a roomy stack (RoomyStack), as the stop: the start lists the loaded modules and compresses its first chunk,
    // and a debug build's frames for that overflowed a worker's 32 KiB stack (SIGSEGV) where the program did not.
    let started = RoomyStack.run {
      Result { () throws(RecordingError) in try start(to: path, options: options, whileRunning: true) }
    }
    try started.get()
  }

  /// The variable `obstrace record` sets for its command: the path of a file each process of it that records from
  /// `OBSTRACE_OUTPUT` appends its trace's absolute path to, one line. Its presence also says the command's
  /// recordings must not replace one another: a trace file already written (by an earlier process of the command:
  /// `record` removed the file before it ran) is kept, and the later process records beside it.
  public static let recordListVariable = "OBSTRACE_RECORD_LIST"

  /// `start(to:options:)`; `whileRunning` false only for `OBSTRACE_OUTPUT`'s start, at the program's first traced
  /// object or scope, before which no traced tracking can have begun. The trace's header says which it was.
  static func start(
    to path: String, options: RecordingOptions, whileRunning: Bool, keepingWrittenFile: Bool = false
  ) throws(RecordingError) {
    if obstrace_is_forked_child() { throw forkedChildError(notRecordingTo: path) }
    var notice: String?
    let failure: RecordingError? = state.withLock { state in
      if let running = state.flusher {
        return RecordingError(
          code: .alreadyRecording,
          message: "obstrace: already recording to \(running.path); not recording to \(path) as well")
      }
      do {
        let flusher = try Flusher(
          path: path, options: options, startedWhileRunning: whileRunning, keepingWrittenFile: keepingWrittenFile)
        state.flusher = flusher
        if let held = flusher.heldPath, flusher.besideReason == .written {
          notice =
            "obstrace: \(held) holds the trace of an earlier process of this 'obstrace record'; this process "
            + "(\(getpid())) records to \(flusher.path)"
        } else if let held = flusher.heldPath, keepingWrittenFile {
          // Under `obstrace record` (its list set): another process of the same command records at the same time.
          notice =
            "obstrace: \(held) is being written by another process of this 'obstrace record', recording at the same "
            + "time; this process (\(getpid())) records to \(flusher.path)"
        } else if let held = flusher.heldPath {
          notice =
            "obstrace: \(held) is being written by another process's recording; this process (\(getpid())) records "
            + "to \(flusher.path) (put %p in OBSTRACE_OUTPUT for a file per process)"
        }
      } catch let error as TraceFileError {
        return RecordingError(code: .cannotWrite, message: "obstrace: \(error.description); the program runs untraced")
      } catch {
        return RecordingError(code: .cannotWrite, message: "obstrace: \(error); the program runs untraced")
      }
      if !state.exitHandlerInstalled {
        state.exitHandlerInstalled = true
        atexit { _ = Recorder.stop() }
        obstrace_install_fork_handlers()
      }
      return nil
    }
    if let notice { reportProblem(notice) }
    if let failure { throw failure }
  }

  /// Stops recording: drains every thread's ring, writes the symbol table and the footer, closes the file.
  /// Returns nil when nothing was recording.
  ///
  /// In a child of `fork` made while recording, does nothing and returns nil: the recording is the parent's (its
  /// file, its flusher thread, which the child does not have), and the parent's trace counts the fork.
  @discardableResult
  public static func stop() -> RecordingSummary? {
    if obstrace_is_forked_child() { return nil }
    obstrace_sync_foreign()  // untraced scopes that ended on this thread end in the trace
    let flusher = state.withLock { state -> Flusher? in
      defer { state.flusher = nil }
      return state.flusher
    }
    guard let flusher else { return nil }
    // On a roomy stack (RoomyStack): the stop drains every ring, compresses and names what the trace used (the
    // runtime's printing, libdw), and it runs on whichever thread stops, the one that calls `exit` included: a
    // worker with a 32 KiB stack that ended the program crashed in it (SIGSEGV, its output lost). The thread that
    // stops is this one, wherever the work runs.
    let stopping = obstrace_current_thread_serial()
    return RoomyStack.run { flusher.stop(stoppingThread: stopping) }
  }

  /// Waits until every event recorded before the call has been drained by the flusher (and reaches the file
  /// within the chunk age). Does nothing when not recording.
  public static func flush() {
    if obstrace_is_forked_child() { return }
    state.withLock { $0.flusher }?.flush()
  }

  /// Why a child of `fork` made while recording does not record.
  static func forkedChildError(notRecordingTo path: String) -> RecordingError {
    RecordingError(
      code: .alreadyRecording,
      message: "obstrace: this process (\(getpid())) is a fork of a process that was recording; a forked child does "
        + "not record (its parent's trace counts the fork); not recording to \(path)")
  }

  /// Starts from `OBSTRACE_OUTPUT` once per process, at the first traced object or scope.
  @usableFromInline
  static func startFromEnvironmentIfNeeded() {
    _ = environmentStart
  }

  /// Starts from `OBSTRACE_OUTPUT` on a roomy stack (RoomyStack): the first traced object may be made on a thread
  /// with a small one.
  private static let environmentStart: Void = RoomyStack.run { startFromEnvironment() }

  private static func startFromEnvironment() {
    guard let raw = getenv("OBSTRACE_OUTPUT") else { return }
    // `%p` becomes the process id: `swift test` runs XCTest and Swift Testing in two processes.
    let path = String(cString: raw).replacing("%p", with: String(getpid()))
    guard !path.isEmpty else { return }
    var environment: [String: String] = [:]
    for name in ["OBSTRACE_BACKTRACES", "OBSTRACE_DROP", "OBSTRACE_RING_CAPACITY", "OBSTRACE_COMPARE"] {
      if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    let (options, problems) = RecordingOptions.fromEnvironment(environment)
    for problem in problems { reportProblem("obstrace: \(problem)") }
    var list = getenv(recordListVariable).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    var status = stat()
    if let named = list, lstat(named, &status) == 0, !isRecordList(named, descriptor: nil) {
      // Only `obstrace record`'s own list is written to: the variable may name any file (tryout16's P5: a path was
      // appended to /etc/passwd). One that is gone (its `record` ended) is left so, as before.
      reportProblem(
        "obstrace: \(recordListVariable) names \(named), which is not a list 'obstrace record' made (a file of its own, "
          + "mode 0600, named obstrace-record-…); it is not written to, and this process records as if it were unset")
      list = nil
    }
    do {
      try start(to: path, options: options, whileRunning: false, keepingWrittenFile: list != nil)
      if let list, let written = state.withLock({ $0.flusher?.path }) { addToRecordList(list, trace: written) }
    } catch {
      // Typed: `start` throws RecordingError only.
      if error.code != .alreadyRecording { reportProblem(error.message) }
    }
  }

  /// Appends `trace`, made absolute, to `obstrace record`'s list (one `write` of one line, O_APPEND: processes
  /// recording at once do not mix their lines). A list that is gone (its `record` ended) is left so.
  static func addToRecordList(_ list: String, trace: String) {
    var absolute = trace
    if !trace.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      guard getcwd(&buffer, buffer.count) != nil else { return }
      absolute = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + trace
    }
    let descriptor = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    guard isRecordList(list, descriptor: descriptor) else { return }
    var line = absolute + "\n"
    line.withUTF8 { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count) }
  }

  /// Whether `path` is a list `obstrace record` made (`RecordCommand`: mkstemp's `obstrace-record-XXXXXX`): a
  /// regular file, not a link, of this user's, mode 0600, named so. With `descriptor`, the file it has open is
  /// checked (what is written to), else the path.
  static func isRecordList(_ path: String, descriptor: Int32?) -> Bool {
    guard path.split(separator: "/").last?.hasPrefix("obstrace-record-") == true else { return false }
    var status = stat()
    let read = descriptor.map { fstat($0, &status) } ?? lstat(path, &status)
    guard read == 0 else { return false }
    return status.st_mode & S_IFMT == S_IFREG && status.st_uid == geteuid() && status.st_mode & 0o777 == 0o600
  }

  /// One line on stderr, never more: the traced program's own output stays readable.
  static func reportProblem(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  }
}

extension Recorder {
  /// The events and definitions of one in-test recording.
  public struct TappedEvents: Sendable {
    public var events: [TraceEvent]
    public var definitions: TraceDefinitions
    /// Events dropped (drop mode, full ring) by any thread while the block ran: they may or may not have been
    /// the block's, so its counts are exact only when this is 0.
    public var droppedEvents: UInt64
    /// Whether the recorder could see tracking ObsTrace does not own (Observation's getter was found).
    public var seesUntracedTracking = UntracedTracking.isAvailable
    /// What the process did while the block ran that the block does not count (`RecordingTaps.OutsideWork`).
    public var outside = RecordingTaps.OutsideWork()
  }

  /// Runs `body` as an in-test recording: its events are those of the objects created and scopes begun inside
  /// it (on any thread, through the task-local tag), so parallel tests do not see each other's. Records to a
  /// temporary file when no recording is running.
  /// `comparison`, when given, is how objects created in `body` compare writes through `_modify`, whatever the
  /// recording's options say.
  public static func tap<T>(comparison: WriteComparison? = nil, _ body: () throws -> T) throws -> (T, TappedEvents) {
    let (tag, startedHere) = try openTap()
    let result = Result {
      try RecordingTaps.$currentComparison.withValue(comparison) {
        try RecordingTaps.$currentTag.withValue(tag) { try body() }
      }
    }
    return try closeTap(tag, startedHere, result)
  }

  /// The async form of `tap(_:)`.
  public static func tap<T>(
    comparison: WriteComparison? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
  ) async throws -> (T, TappedEvents) {
    let (tag, startedHere) = try openTap()
    let result: Result<T, any Error>
    do {
      result = .success(
        try await RecordingTaps.$currentComparison.withValue(comparison) {
          try await RecordingTaps.$currentTag.withValue(tag) { try await body() }
        })
    } catch {
      result = .failure(error)
    }
    return try closeTap(tag, startedHere, result)
  }

  private static func openTap() throws(RecordingError) -> (tag: UInt32, startedHere: Bool) {
    let startedHere = try joinForTap()
    return (RecordingTaps.open(droppedBefore: obstrace_total_dropped()), startedHere)
  }

  /// Ends a tap: its events when the body returned, nothing (and the body's error) when it threw.
  private static func closeTap<T>(_ tag: UInt32, _ startedHere: Bool, _ result: Result<T, any Error>) throws -> (
    T, TappedEvents
  ) {
    defer { leaveTap(startedHere) }
    switch result {
    case .success(let value):
      return (value, finishTap(tag))
    case .failure(let error):
      _ = RecordingTaps.close(tag)
      throw error
    }
  }

  /// Makes sure a recording runs; true when this call started it (to a temporary file) for in-test recordings.
  private static func joinForTap() throws(RecordingError) -> Bool {
    startFromEnvironmentIfNeeded()
    let needsStart: Bool = state.withLock { state in
      state.tapSessions += 1
      return state.flusher == nil
    }
    guard needsStart else { return false }
    let path = "/tmp/obstrace-tests-\(getpid()).trc"
    do {
      try start(to: path)
      state.withLock { $0.temporaryPath = path }
      return true
    } catch {
      // Another test started it between the check and here: join that one.
      if error.code == .alreadyRecording { return false }
      state.withLock { $0.tapSessions -= 1 }
      throw error
    }
  }

  private static func leaveTap(_ startedHere: Bool) {
    let stopPath: String? = state.withLock { state in
      state.tapSessions -= 1
      guard state.tapSessions == 0, let path = state.temporaryPath else { return nil }
      state.temporaryPath = nil
      return path
    }
    if let stopPath {
      stop()
      unlink(stopPath)
    }
  }

  private static func finishTap(_ tag: UInt32) -> TappedEvents {
    // The block's untraced scopes on this thread have ended with it (those of other threads end at their next event).
    obstrace_sync_foreign()
    state.withLock { $0.flusher }?.flush()
    let dropped = obstrace_total_dropped()
    let (unsorted, droppedBefore, outside) = RecordingTaps.close(tag)
    let events = unsorted.sorted { ($0.time, $0.thread) < ($1.time, $1.thread) }
    return TappedEvents(
      events: events, definitions: Interner.shared.definitions(for: events),
      droppedEvents: dropped &- min(dropped, droppedBefore), outside: outside)
  }
}
