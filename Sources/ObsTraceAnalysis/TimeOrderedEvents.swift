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
///
/// Events are released by time, ties in the order they arrived. Held events stay in their chunks' arrays, in
/// runs: a run is a queue of slices of chunks in time order (a thread's chunks while its times do not go back),
/// and a small heap of runs by their first event picks the next one: a release costs a comparison or two among
/// the runs (about one per thread), not a move of the event through a heap of every held event.
///
/// Work and memory are linear in the trace's threads, however many come and go: the watermark is kept in a heap of
/// the threads' latest times (a chunk costs a push and a few pops, not a look at every thread: tryout15's J6, where a
/// trace of 100,000 threads that each wrote one chunk was not read in 60 s), a thread's run is given up once it is
/// empty (only threads with held events have one), and a held chunk whose pooled block is mostly empty (a thread's
/// few last events, flushed at its exit) is copied into a block of its own size, so that holding it does not keep
/// the 4,096-event block (160 KiB) it was decoded into.
public struct TimeOrderedEvents: EventOrdering {
  public static let defaultCapacity = 1 << 20

  /// Events `start..<end` of a chunk; event `i` arrived `order + i`-th.
  private struct Slice: Sendable {
    var events: EventBuffer
    var start: Int
    var end: Int
    var order: UInt64
  }

  /// Slices whose events are in (time, arrival) order, one after the other.
  private struct Run {
    var slices: [Slice] = []
    var head = 0  // the first slice not yet released
    var lastTime: UInt64 = 0
    /// The thread whose events it holds.
    var thread: UInt32 = 0
    var isEmpty: Bool { head == slices.count }

    /// Marks the first slice's events before `position` released; returns the (time, arrival order) of the run's
    /// first event now, if any.
    mutating func release(upTo position: Int) -> (time: UInt64, order: UInt64)? {
      slices[head].start = position
      if position == slices[head].end {
        slices[head].events = EventBuffer()  // the chunk's block is given back once its last held event is released
        head += 1
        if head == slices.count {
          slices.removeAll(keepingCapacity: true)
          head = 0
          return nil
        }
        if head >= 64 && head * 2 >= slices.count {
          slices.removeFirst(head)
          head = 0
        }
      }
      // Read in place: a copy of the slice would retain and release its chunk's array.
      let start = slices[head].start
      return (slices[head].events[start].time, slices[head].order + UInt64(start))
    }
  }

  private var runs: [Run] = []
  private var freeRuns: [Int] = []
  /// The run a thread's next events join while their times do not go back: only threads with events held have one
  /// (a run is given up, to `freeRuns`, when its last event is released).
  private var runOfThread: [UInt32: Int] = [:]
  /// Runs holding events, by their first event's (time, arrival order).
  private var heap = TimeOrderedHeap<Int>()
  private var held = 0
  private var nextOrder: UInt64 = 0

  private var latestTime: [UInt32: UInt64] = [:]
  private var ended: Set<UInt32> = []
  /// The threads not ended by their latest time: the watermark is the first. An entry goes stale when its thread's
  /// latest time moves on (a new entry is pushed) or the thread ends; stale entries are dropped when they come first,
  /// or all at once when they outnumber the threads not ended (`liveThreads`).
  private var clocks = TimeOrderedHeap<UInt32>()
  private var liveThreads = 0
  /// Watermark entries pushed, popped and looked at when dropped all at once, over the merge (for tests: linear in
  /// the chunks, not in chunks × threads).
  private(set) var watermarkWork = 0
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
    for thread in threads ?? [] {
      latestTime[thread] = 0
      clocks.push(thread, time: 0, order: 0)
    }
    liveThreads = latestTime.count
  }

  /// Entries kept for the watermark, the threads that have a run, and the runs (held or free): what the merge keeps
  /// per thread beyond a time and a flag (for tests: bounded by the threads not ended, not all the trace's).
  var perThreadState: (clocks: Int, threadsWithRuns: Int, runs: Int) { (clocks.count, runOfThread.count, runs.count) }

  /// Notes a thread's latest time and whether it ended, and returns the watermark: the oldest latest time among the
  /// threads not ended (`.max` when none is left).
  private mutating func noteClock(_ thread: UInt32, latest: UInt64, previous: UInt64?, ends: Bool) -> UInt64 {
    // A thread is in `latestTime` from its first chunk (or the footer) on, and ended only after.
    if previous == nil { liveThreads += 1 }
    if ends, ended.insert(thread).inserted { liveThreads -= 1 }
    if latest != previous && !ended.contains(thread) {
      clocks.push(thread, time: latest, order: 0)
      watermarkWork += 1
    }
    while let first = clocks.firstTime, Self.isStale(first, clocks.first, latestTime, ended) {
      _ = clocks.pop()
      watermarkWork += 1
    }
    if clocks.count > 2 * liveThreads + 64 {
      watermarkWork += clocks.count
      let (latestTime, ended) = (latestTime, ended)
      clocks.removeAll { Self.isStale($0, $1, latestTime, ended) }
    }
    return clocks.firstTime ?? .max
  }

  /// Whether a watermark entry no longer holds: its thread ended or has a later latest time.
  private static func isStale(
    _ time: UInt64, _ thread: UInt32, _ latestTime: [UInt32: UInt64], _ ended: Set<UInt32>
  ) -> Bool {
    ended.contains(thread) || latestTime[thread] != time
  }

  /// Adds a chunk and passes on every event that is now safe to release, in time order, a stretch at a time
  /// (`EventOrdering`: `TraceReader.forEachStretch` calls it on the thread that decodes the chunks).
  public mutating func take(_ chunk: EventChunk, release: (EventStretch) -> Void) {
    let previousLatest = latestTime[chunk.thread]
    var latest = previousLatest ?? chunk.firstTime
    if let last = chunk.events.last { latest = max(previousLatest ?? 0, last.time) }
    latestTime[chunk.thread] = latest
    newestTime = max(newestTime, latest)
    var watermark = noteClock(chunk.thread, latest: latest, previous: previousLatest, ends: chunk.threadEnded)
    if knownThreads == nil { watermark = min(watermark, newestTime > window ? newestTime - window : 0) }
    // The common case, one busy thread: nothing is waiting and the whole chunk is below the watermark, so it
    // passes through in its own (time) order without being held.
    if held == 0, let last = chunk.events.last, last.time <= watermark,
      (previousLatest ?? 0) <= (chunk.events.first?.time ?? 0)
    {
      nextOrder += UInt64(chunk.events.count)
      release(EventStretch(events: chunk.events, range: chunk.events.indices))
      return
    }
    hold(chunk)
    while let first = heap.firstTime, first <= watermark || held > capacity {
      release(releaseStretch(watermark: watermark))
    }
  }

  /// Releases everything left, at the end of the trace, a stretch at a time.
  public mutating func releaseAll(_ release: (EventStretch) -> Void) {
    while !heap.isEmpty { release(releaseStretch(watermark: .max)) }
  }

  /// Adds a chunk and passes on every event that is now safe to release, in time order, one at a time. The
  /// events released are taken from the merge before the first is passed on: a `body` that throws loses the rest.
  public mutating func add(_ chunk: EventChunk, _ body: (TraceEvent) throws -> Void) rethrows {
    var stretches: [EventStretch] = []
    take(chunk) { stretches.append($0) }
    for stretch in stretches { try stretch.forEach(body) }
  }

  /// Releases everything left, at the end of the trace, one event at a time.
  public mutating func finish(_ body: (TraceEvent) throws -> Void) rethrows {
    var stretches: [EventStretch] = []
    releaseAll { stretches.append($0) }
    for stretch in stretches { try stretch.forEach(body) }
  }

  /// Queues the chunk's events: each stretch whose times do not go back joins the thread's run, or a new run
  /// when it starts before that run's last event. A chunk whose block has more than twice the room its events take
  /// is held in a copy of its own size, and its block goes back to the pool.
  private mutating func hold(_ chunk: EventChunk) {
    guard !chunk.events.isEmpty else { return }
    let events = chunk.events.blockCapacity > 2 * chunk.events.count ? chunk.events.compacted() : chunk.events
    let order = nextOrder
    nextOrder += UInt64(events.count)
    held += events.count
    var start = 0
    events.withEvents(in: events.indices) { times in
      var previous = times[0].time
      for index in 1..<times.count {
        let time = times[index].time
        if time < previous {
          append(Slice(events: events, start: start, end: index, order: order), thread: chunk.thread)
          start = index
        }
        previous = time
      }
    }
    append(Slice(events: events, start: start, end: events.count, order: order), thread: chunk.thread)
  }

  private mutating func append(_ slice: Slice, thread: UInt32) {
    let firstTime = slice.events[slice.start].time
    // A thread's run holds events (an emptied one is given up).
    if let index = runOfThread[thread], runs[index].lastTime <= firstTime {
      runs[index].slices.append(slice)
      runs[index].lastTime = slice.events[slice.end - 1].time
      return
    }
    let index: Int
    if let free = freeRuns.popLast() {
      index = free
    } else {
      index = runs.count
      runs.append(Run())
    }
    runs[index].slices.removeAll(keepingCapacity: true)
    runs[index].head = 0
    runs[index].slices.append(slice)
    runs[index].lastTime = slice.events[slice.end - 1].time
    runs[index].thread = thread
    // A run the thread's events left behind (they went back in time) stays in the heap until emptied.
    runOfThread[thread] = index
    heap.push(index, time: firstTime, order: slice.order + UInt64(slice.start))
  }

  /// Releases the earliest events held, while they are under the watermark or more than `capacity` are held,
  /// from the first run's first slice: the stretch of it before the next run's first event, taken in one go (a
  /// comparison an event; the heap is touched once a stretch). Threads' events come in long stretches (a thread
  /// writes while it has a CPU), so this is nearly all of them: before, each event was taken from its run and the
  /// heap sifted, ≈ 230 instructions an event on a trace of 4 threads. One event must be held, and the first is
  /// released (the outer loop checked it).
  private mutating func releaseStretch(watermark: UInt64) -> EventStretch {
    let index = heap.first
    let head = runs[index].head
    // Read once a stretch: the chunk's buffer (one retain) and where its held events are.
    let events = runs[index].slices[head].events
    let start = runs[index].slices[head].start
    let end = runs[index].slices[head].end
    let order = runs[index].slices[head].order
    // The next run's first event: this run's events come before it (ties by arrival).
    let (limitTime, limitOrder) = heap.secondKey ?? (.max, .max)
    // How many more are released whatever their time (the buffer is over capacity).
    var forced = held - capacity
    var position = start
    events.withEvents(in: start..<end) { stretch in
      for event in stretch {
        let time = event.time
        if time > limitTime || (time == limitTime && order + UInt64(position) >= limitOrder) { break }
        if time > watermark && forced <= 0 { break }
        forced -= 1
        position += 1
      }
    }
    finishStretch(index, from: start, to: position)
    return EventStretch(events: events, range: start..<position)
  }

  /// Marks a run's events `start..<position` of its first slice released and puts the run back in its place in
  /// the heap, or out of it when empty.
  private mutating func finishStretch(_ index: Int, from start: Int, to position: Int) {
    held -= position - start
    if let next = runs[index].release(upTo: position) {
      heap.replaceFirst(time: next.time, order: next.order)
    } else {
      _ = heap.pop()
      // An emptied run is free again; if it was its thread's current one, the thread has none until its next events.
      let thread = runs[index].thread
      if runOfThread[thread] == index { runOfThread[thread] = nil }
      freeRuns.append(index)
    }
  }
}
