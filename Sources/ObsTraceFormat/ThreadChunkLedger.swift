/// What each thread's chunks, as read, say about the chunks that were not: a thread numbers its chunks from 0, so
/// a number skipped is a chunk of that thread the reader could not read (damaged), and the times of its neighbours
/// bound when its events happened. With a footer, a thread's recorded count against the events read also shows a
/// loss at its end (its last chunks damaged), which no later chunk reveals.
public struct ThreadChunkLedger: Sendable, Equatable {
  /// Chunks of one thread missing between two it has: `count` chunks from number `first`, whose events happened
  /// after `after` (the thread's last event read before them) and before `before` (the next chunk's first time).
  public struct Gap: Sendable, Equatable {
    public var thread: UInt32
    public var first: UInt64
    public var count: UInt64
    public var after: UInt64?
    public var before: UInt64
  }

  struct ThreadState: Sendable, Equatable {
    var nextSequence: UInt64 = 0
    var lastTime: UInt64?
    var events: UInt64 = 0
  }

  /// Gaps in file order.
  public private(set) var gaps: [Gap] = []
  private var threads: [UInt32: ThreadState] = [:]

  public init() {}

  /// Notes a chunk read whole (chunks of a thread arrive in its order) of `eventCount` events, the last at
  /// `lastTime` (given apart: an ordering may hold the chunk's events by then).
  mutating func note(_ chunk: EventChunk, eventCount: Int, lastTime: UInt64?) {
    threads[chunk.thread, default: ThreadState()].note(chunk, eventCount: eventCount, lastTime: lastTime, gaps: &gaps)
  }

  /// Events read of `thread`'s chunks.
  public func eventsRead(_ thread: UInt32) -> UInt64 { threads[thread]?.events ?? 0 }

  /// The time of the last event read of `thread`, if any.
  public func lastTime(_ thread: UInt32) -> UInt64? { threads[thread]?.lastTime }

  /// Whether exactly the events `footer` counts as recorded were read: no thread's chunk numbers skip one, and each
  /// thread's events read equal its recorded count. A damaged chunk of such a trace held no recorded event: it held
  /// definitions (names, sites, the symbol table), and those are what is lost.
  public func readsEveryEvent(of footer: TraceFooter) -> Bool {
    guard gaps.isEmpty else { return false }
    var recorded: [UInt32: UInt64] = [:]
    // The reserved serial is "no thread" (a chunk naming it is damage).
    for totals in footer.threads where totals.thread != TraceFormat.reservedThread {
      recorded[totals.thread] = recorded[totals.thread, default: 0].addingSaturating(totals.recorded)
    }
    let serials = Set(recorded.keys).union(threads.keys)
    return serials.allSatisfy { (recorded[$0] ?? 0) == (threads[$0]?.events ?? 0) }
  }
}

extension ThreadChunkLedger.ThreadState {
  mutating func note(
    _ chunk: EventChunk, eventCount: Int, lastTime chunkLastTime: UInt64?, gaps: inout [ThreadChunkLedger.Gap]
  ) {
    if chunk.sequence > nextSequence {
      gaps.append(
        ThreadChunkLedger.Gap(
          thread: chunk.thread, first: nextSequence, count: chunk.sequence - nextSequence, after: lastTime,
          before: chunk.firstTime))
    }
    nextSequence = max(nextSequence, chunk.sequence &+ 1)
    events = events.addingSaturating(UInt64(eventCount))
    if let chunkLastTime { lastTime = chunkLastTime }
  }
}
