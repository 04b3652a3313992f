import ObsTraceFormat

/// How a write through `_modify` (`model.count += 1`, `model.items.append(x)`, `model.items[i].done = true`) is
/// compared with the value before it, to find writes that changed nothing. The setter (`model.count = 1`) needs
/// no comparison: the `@Observable` macro itself skips the notification when an Equatable value is unchanged.
public enum WriteComparison: String, Sendable, CaseIterable {
  /// Nothing is compared: every `_modify` write is counted as not compared.
  case off
  /// The default: a trivially copyable member (`Int`, `Bool`, `Double`, an enum without payloads, a struct of
  /// such) is compared bit for bit, read in place from the object's stored field, without its getter, without
  /// `==`, in O(1). Any other member (an array, a string, a struct holding references) is not compared, and
  /// the report counts it. Recording then calls no code of the program and keeps no copy of any value.
  case trivial
  /// Any Equatable member is compared with `==`, as a hunt for no-op writes of arrays and strings needs. It
  /// costs what comparing costs: the old value is copied before the mutation (so an in-place mutation of an
  /// array or string copies it, O(n) per write, and `isKnownUniquelyReferenced` sees one more reference), the
  /// value is read twice through its getter (a class's own `access(keyPath:)` runs for each read) and `==` runs
  /// once per write. Trivially copyable members that are not Equatable are still compared bit for bit.
  case equatable

  var mode: UInt32 {
    switch self {
    case .off: 0
    case .trivial: 1
    case .equatable: 2
    }
  }
}

/// How a recording is made.
public struct RecordingOptions: Sendable, Equatable {
  /// Which events carry a call stack.
  public enum Backtraces: String, Sendable, CaseIterable {
    /// No stacks at all.
    case off
    /// Writes (willSet), scope begins and object creations, and stale reads: the default.
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

  /// Records per thread ring (rounded up to a power of two, and kept within `TraceFormat.ringCapacities`: 64 to
  /// 4,194,304). Each record is 32 bytes: the default, 64K records, is 2 MiB per recording thread, prefaulted when
  /// the thread first records.
  public var ringCapacity: Int = 1 << 16

  /// The ring capacity a recording uses: `ringCapacity` within the bounds, rounded up to a power of two.
  var effectiveRingCapacity: Int {
    let bounded = min(max(ringCapacity, TraceFormat.ringCapacities.lowerBound), TraceFormat.ringCapacities.upperBound)
    var capacity = TraceFormat.ringCapacities.lowerBound
    while capacity < bounded { capacity <<= 1 }
    return capacity
  }
  /// When a ring is full: false (default) waits for the flusher, losing nothing; true drops the event and
  /// counts it, and the count is in the trace and in every report.
  public var dropWhenFull = false
  /// Which events carry a call stack.
  public var backtraces: Backtraces = .writes
  /// Frames kept per stack (at most 64).
  public var backtraceDepth = 16
  /// How a write through `_modify` is compared with the value before it (default `.trivial`: only trivially
  /// copyable members, bit for bit, calling no code of the program).
  public var comparison: WriteComparison = .trivial

  public init(
    ringCapacity: Int = 1 << 16, dropWhenFull: Bool = false, backtraces: Backtraces = .writes,
    backtraceDepth: Int = 16, comparison: WriteComparison = .trivial
  ) {
    self.ringCapacity = ringCapacity
    self.dropWhenFull = dropWhenFull
    self.backtraces = backtraces
    self.backtraceDepth = backtraceDepth
    self.comparison = comparison
  }

  /// Options from the environment: `OBSTRACE_BACKTRACES=off|writes|all`, `OBSTRACE_DROP=1`,
  /// `OBSTRACE_RING_CAPACITY=N`, `OBSTRACE_COMPARE=off|trivial|equatable`. Invalid values are reported in
  /// `problems` and ignored.
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
    if let value = environment["OBSTRACE_COMPARE"] {
      if let comparison = WriteComparison(rawValue: value) {
        options.comparison = comparison
      } else {
        problems.append("OBSTRACE_COMPARE=\(value) is not one of off, trivial, equatable; using trivial")
      }
    }
    if let value = environment["OBSTRACE_DROP"] {
      switch value {
      case "1", "true": options.dropWhenFull = true
      case "0", "false", "": options.dropWhenFull = false
      default: problems.append("OBSTRACE_DROP=\(value) is not one of 1, true, 0, false; using 0 (lossless)")
      }
    }
    if let value = environment["OBSTRACE_RING_CAPACITY"] {
      let range = TraceFormat.ringCapacities
      // Digits too many for an Int are a number out of range, not "not a number".
      let digits = !value.isEmpty && value.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
      if let capacity = Int(value) ?? (digits ? Int.max : nil) {
        options.ringCapacity = min(max(capacity, range.lowerBound), range.upperBound)
        if !range.contains(capacity) {
          problems.append(
            "OBSTRACE_RING_CAPACITY=\(value) is out of range (\(range.lowerBound) to \(range.upperBound) records a "
              + "thread's ring); using \(options.ringCapacity)")
        }
      } else {
        problems.append(
          "OBSTRACE_RING_CAPACITY=\(value) is not a number (\(range.lowerBound) to \(range.upperBound) records a "
            + "thread's ring); using \(options.ringCapacity)")
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
  /// Set when writing failed part-way (the file holds what was written before), or closing the file failed.
  public var writeError: String?
  /// How the flusher read the rings (`obstrace-bench --profile` prints it).
  public internal(set) var drains = DrainCounts()
}

/// How the flusher read the rings: `passes` over a ring that held records, the `batches` read (a batch is at most
/// `Flusher.drainBatch` records, one side of a ring's wrap), and how many of them held fewer than a quarter ring (or
/// a batch): a flusher that chased a thread's head would read mostly those.
public struct DrainCounts: Sendable, Equatable {
  public internal(set) var passes = 0
  public internal(set) var batches = 0
  public internal(set) var smallBatches = 0
}

/// Why a recording could not start.
public struct RecordingError: Error, CustomStringConvertible, Sendable {
  public enum Code: Sendable { case alreadyRecording, cannotWrite }
  public var code: Code
  public var message: String

  public var description: String { message }
}
