import ObsTraceFormat

/// Merges the per-thread chunks of a trace into one stream in time order, with bounded memory.
///
/// Each thread's events arrive in order, chunk after chunk, but chunks of different threads interleave as the
/// flusher wrote them (a thread's chunk is written when full or a quarter second old, so an idle thread's early
/// events can come after a busy thread's later ones). An event is released once no thread can still deliver an
/// earlier one: the watermark is the oldest "latest time seen" among threads that have not ended. With the
/// footer's thread list, a thread not seen yet holds the watermark at 0; without it (a truncated trace), a
/// thread may appear at any time, so an event is also held until the trace has moved `window` past it. Idle
/// threads hold the watermark back, so the buffer is capped: past `capacity` events the oldest are released.
public struct TimeOrderedEvents {
  public static let defaultCapacity = 1 << 20

  private var heap = TimeOrderedHeap<TraceEvent>()  // by time, then arrival
  private var latestTime: [UInt32: UInt64] = [:]
  private var ended: Set<UInt32> = []
  private let capacity: Int
  private let knownThreads: Set<UInt32>?
  private let window: UInt64
  private var newestTime: UInt64 = 0

  /// `threads`: every thread of the trace (the footer's), or nil when the trace has no footer.
  public init(
    threads: Set<UInt32>? = nil, capacity: Int = TimeOrderedEvents.defaultCapacity, window: UInt64 = 1_000_000_000
  ) {
    self.capacity = capacity
    self.knownThreads = threads
    self.window = window
    for thread in threads ?? [] { latestTime[thread] = 0 }
  }

  /// Adds a chunk and passes on every event that is now safe to release, in time order.
  public mutating func add(_ chunk: EventChunk, _ body: (TraceEvent) throws -> Void) rethrows {
    let previousLatest = latestTime[chunk.thread]
    if let last = chunk.events.last {
      latestTime[chunk.thread] = max(latestTime[chunk.thread] ?? 0, last.time)
    } else if latestTime[chunk.thread] == nil {
      latestTime[chunk.thread] = chunk.firstTime
    }
    if chunk.threadEnded { ended.insert(chunk.thread) }
    newestTime = max(newestTime, latestTime[chunk.thread] ?? 0)
    var watermark = latestTime.filter { !ended.contains($0.key) }.values.min() ?? UInt64.max
    if knownThreads == nil { watermark = min(watermark, newestTime > window ? newestTime - window : 0) }
    // The common case, one busy thread: nothing is waiting and the whole chunk is below the watermark, so it
    // passes through in its own (time) order without touching the heap.
    if heap.isEmpty, let last = chunk.events.last, last.time <= watermark,
      (previousLatest ?? 0) <= (chunk.events.first?.time ?? 0)
    {
      for event in chunk.events { try body(event) }
      return
    }
    for event in chunk.events { heap.push(event, time: event.time) }
    while let first = heap.firstTime, first <= watermark || heap.count > capacity {
      try body(heap.pop())
    }
  }

  /// Releases everything left, at the end of the trace.
  public mutating func finish(_ body: (TraceEvent) throws -> Void) rethrows {
    while !heap.isEmpty { try body(heap.pop()) }
  }
}
