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
    var environmentChecked = false
    var exitHandlerInstalled = false
  }

  static let state = Mutex(State())

  /// Whether a recording is running.
  public static var isRecording: Bool { obstrace_is_enabled() }

  /// Starts recording to `path` (created or truncated). Throws when a recording is already running or the file
  /// cannot be created; the program goes on untraced either way.
  public static func start(to path: String, options: RecordingOptions = RecordingOptions()) throws(RecordingError) {
    let failure: RecordingError? = state.withLock { state in
      if let running = state.flusher {
        return RecordingError(
          code: .alreadyRecording,
          message: "obstrace: already recording to \(running.path); not recording to \(path) as well")
      }
      do {
        state.flusher = try Flusher(path: path, options: options)
      } catch let error as TraceFileError {
        return RecordingError(code: .cannotWrite, message: "obstrace: \(error.description); the program runs untraced")
      } catch {
        return RecordingError(code: .cannotWrite, message: "obstrace: \(error); the program runs untraced")
      }
      if !state.exitHandlerInstalled {
        state.exitHandlerInstalled = true
        atexit { _ = Recorder.stop() }
      }
      return nil
    }
    if let failure { throw failure }
  }

  /// Stops recording: drains every thread's ring, writes the symbol table and the footer, closes the file.
  /// Returns nil when nothing was recording.
  @discardableResult
  public static func stop() -> RecordingSummary? {
    let flusher = state.withLock { state -> Flusher? in
      defer { state.flusher = nil }
      return state.flusher
    }
    return flusher?.stop()
  }

  /// Starts from `OBSTRACE_OUTPUT` once per process, at the first traced object or scope.
  @usableFromInline
  static func startFromEnvironmentIfNeeded() {
    _ = environmentStart
  }

  private static let environmentStart: Void = {
    guard let raw = getenv("OBSTRACE_OUTPUT") else { return }
    let path = String(cString: raw)
    guard !path.isEmpty else { return }
    var environment: [String: String] = [:]
    for name in ["OBSTRACE_BACKTRACES", "OBSTRACE_DROP", "OBSTRACE_RING_CAPACITY"] {
      if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    let (options, problems) = RecordingOptions.fromEnvironment(environment)
    for problem in problems { reportProblem("obstrace: \(problem)") }
    do {
      try start(to: path, options: options)
    } catch let error as RecordingError {
      if error.code != .alreadyRecording { reportProblem(error.message) }
    } catch {
      reportProblem("obstrace: \(error)")
    }
  }()

  /// One line on stderr, never more: the traced program's own output stays readable.
  static func reportProblem(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  }
}
