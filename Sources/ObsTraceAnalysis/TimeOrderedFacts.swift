import ObsTraceFormat

/// Puts the facts a timeline shows in the order they began, across threads and nested scopes.
///
/// The machine learns a run's reads when it ends and a write's fires when its didSet comes, so it states an outer
/// run after the inner runs it contains and a write after the runs its fires caused. A timeline line is dated by
/// its beginning (a run's begin, a write's willSet): this consumer holds each finished item until nothing still
/// open (a run, a write) began before it, then releases items in time order (ties: in the order they began).
public struct TimeOrderedFacts {
  private var heap: [(time: UInt64, order: UInt64, fact: ReplayFact)] = []
  private var nextOrder: UInt64 = 0
  /// Open runs (scope → begin time) and open writes ((thread, object, property) → willSet time).
  private var openRuns: [UInt32: UInt64] = [:]
  private var openWrites: [WriteKey: [UInt64]] = [:]

  struct WriteKey: Hashable {
    var thread: UInt32
    var key: PropertyKey
  }

  public init() {}

  /// The time a timeline line of this fact is dated by, or nil for facts a timeline does not show.
  public static func time(of fact: ReplayFact) -> UInt64? {
    switch fact {
    case .runEnded(let ended): ended.run.time
    case .write(let write): write.time
    case .read(let read): read.stale ? read.time : nil
    case .fire(let fire): fire.cause == nil ? fire.time : nil
    case .cancel(let cancel): cancel.reason == .fired ? nil : cancel.time
    case .anomaly(let anomaly): anomaly.time
    case .sequenceEnded(let ended): ended.ending == nil ? nil : ended.time
    case .objectCreated, .objectFreed, .writeBegan, .runBegan: nil
    }
  }

  /// Takes a fact and passes on, in time order, every fact that is now safe to show.
  public mutating func consume(_ fact: ReplayFact, _ body: (ReplayFact) -> Void) {
    switch fact {
    case .runBegan(let run): openRuns[run.scope] = run.time
    case .runEnded(let ended): openRuns[ended.run.scope] = nil
    case .writeBegan(let write):
      openWrites[WriteKey(thread: write.thread, key: write.key), default: []].append(write.time)
    case .write(let write):
      let key = WriteKey(thread: write.thread, key: write.key)
      if var times = openWrites[key], let index = times.lastIndex(of: write.time) {
        times.remove(at: index)
        openWrites[key] = times.isEmpty ? nil : times
      }
    default: break
    }
    if let time = Self.time(of: fact) {
      push((time, nextOrder, fact))
      nextOrder += 1
    }
    let open = min(openRuns.values.min() ?? .max, openWrites.values.lazy.compactMap(\.first).min() ?? .max)
    while let first = heap.first, first.time <= open {
      body(pop().fact)
    }
  }

  /// Releases everything held, at the end of the trace.
  public mutating func finish(_ body: (ReplayFact) -> Void) {
    while !heap.isEmpty { body(pop().fact) }
  }

  private func less(_ a: Int, _ b: Int) -> Bool {
    (heap[a].time, heap[a].order) < (heap[b].time, heap[b].order)
  }

  private mutating func push(_ item: (time: UInt64, order: UInt64, fact: ReplayFact)) {
    heap.append(item)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard less(child, parent) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func pop() -> (time: UInt64, order: UInt64, fact: ReplayFact) {
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count && less(left, smallest) { smallest = left }
      if right < heap.count && less(right, smallest) { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return top
  }
}
