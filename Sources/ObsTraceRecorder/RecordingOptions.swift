/// How a recording is made.
public struct RecordingOptions: Sendable, Equatable {
  /// Which events carry a call stack.
  public enum Backtraces: String, Sendable, CaseIterable {
    /// No stacks at all.
    case off
    /// Writes (willSet) and scope begins, and stale reads: the default.
    case writes
    /// Every event: the most detail, at the highest cost.
    case all

    var level: UInt32 {
      switch self {
      case .off: 0
      case .writes: 1
      case .all: 2
      }
    }
  }

  /// Records per thread ring (rounded up to a power of two). Each record is 32 bytes: the default, 64K records,
  /// is 2 MiB per recording thread, prefaulted when the thread first records.
  public var ringCapacity: Int = 1 << 16
  /// When a ring is full: false (default) waits for the flusher, losing nothing; true drops the event and
  /// counts it, and the count is in the trace and in every report.
  public var dropWhenFull = false
  /// Which events carry a call stack.
  public var backtraces: Backtraces = .writes
  /// Frames kept per stack (at most 64).
  public var backtraceDepth = 16
  /// Whether a write through `_modify` of an Equatable member is compared with the value before it, so that
  /// a write that changed nothing is marked. The comparison keeps a copy of the old value until didSet, which
  /// makes an in-place mutation of a large copy-on-write value (an array) copy it.
  public var detectUnchangedModify = true

  public init(
    ringCapacity: Int = 1 << 16, dropWhenFull: Bool = false, backtraces: Backtraces = .writes,
    backtraceDepth: Int = 16, detectUnchangedModify: Bool = true
  ) {
    self.ringCapacity = ringCapacity
    self.dropWhenFull = dropWhenFull
    self.backtraces = backtraces
    self.backtraceDepth = backtraceDepth
    self.detectUnchangedModify = detectUnchangedModify
  }

  /// Options from the environment: `OBSTRACE_BACKTRACES=off|writes|all`, `OBSTRACE_DROP=1`,
  /// `OBSTRACE_RING_CAPACITY=N`. Invalid values are reported in `problems` and ignored.
  public static func fromEnvironment(_ environment: [String: String]) -> (options: RecordingOptions, problems: [String])
  {
    var options = RecordingOptions()
    var problems: [String] = []
    if let value = environment["OBSTRACE_BACKTRACES"] {
      if let backtraces = Backtraces(rawValue: value) {
        options.backtraces = backtraces
      } else {
        problems.append("OBSTRACE_BACKTRACES=\(value) is not one of off, writes, all; using writes")
      }
    }
    if let value = environment["OBSTRACE_DROP"] {
      options.dropWhenFull = value == "1" || value == "true"
    }
    if let value = environment["OBSTRACE_RING_CAPACITY"] {
      if let capacity = Int(value), capacity >= 64 {
        options.ringCapacity = capacity
      } else {
        problems.append("OBSTRACE_RING_CAPACITY=\(value) is not a number of at least 64; using \(options.ringCapacity)")
      }
    }
    return (options, problems)
  }
}

/// What a finished recording wrote.
public struct RecordingSummary: Sendable, Equatable {
  public var path: String
  public var events: UInt64
  public var droppedEvents: UInt64
  public var threads: Int
  public var chunks: UInt64
  public var bytes: UInt64
  /// Set when writing failed part-way: the file holds what was written before.
  public var writeError: String?
}

/// Why a recording could not start.
public struct RecordingError: Error, CustomStringConvertible, Sendable {
  public enum Code: Sendable { case alreadyRecording, cannotWrite }
  public var code: Code
  public var message: String

  public var description: String { message }
}
