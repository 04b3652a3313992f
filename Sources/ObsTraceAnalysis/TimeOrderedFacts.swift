import ObsTraceFormat

/// Puts the facts a timeline shows in the order they began, across threads and nested scopes.
///
/// The machine learns a run's reads when it ends and a write's fires when its didSet comes, so it states an outer
/// run after the inner runs it contains and a write after the runs its fires caused. A timeline line is dated by
/// its beginning (a run's begin, a write's willSet): this consumer holds each finished item until nothing still
/// open (a run, a write) began before it, then releases items in time order (ties: in the order they began).
/// What it holds is kept by thread (`TimeOrderedRuns`): with many threads, a thread preempted inside a write holds
/// back every other thread's lines until it runs again.
public struct TimeOrderedFacts {
  private var held = TimeOrderedRuns<ReplayFact>()
  /// What is still open, with the time it began: runs (by scope) and writes (by thread and property). Few at a
  /// time (the nesting depth, the threads writing at once), so arrays searched from the newest, which is what
  /// usually ends first.
  private var openRuns: [(scope: UInt32, time: UInt64)] = []
  private var openWrites: [(key: WriteKey, time: UInt64)] = []
  /// The earliest time among them; `.max` when nothing is open.
  private var earliestOpen = UInt64.max

  struct WriteKey: Equatable {
    var thread: UInt32
    var key: PropertyKey
  }

  /// Whether objects' creations and frees are passed on (a timeline filtered to an object shows them); else dropped.
  private let passesObjects: Bool

  public init(passesObjects: Bool = false) {
    self.passesObjects = passesObjects
  }

  /// The time a timeline line of this fact is dated by, or nil for facts a timeline does not show.
  public static func time(of fact: ReplayFact) -> UInt64? {
    switch fact {
    case .runEnded(let ended): ended.run.time
    case .write(let write): write.time
    case .read(let read): read.stale ? read.time : nil
    case .fire(let fire): fire.cause == nil || fire.afterSequenceEnded ? fire.time : nil
    case .cancel(let cancel): cancel.reason == .fired ? nil : cancel.time
    case .anomaly(let anomaly): anomaly.time
    case .sequenceEnded(let ended): ended.ending == nil ? nil : ended.time
    case .objectCreated, .objectFreed, .writeBegan, .runBegan: nil
    }
  }

  /// Takes a fact and passes on, in time order, every fact that is now safe to show.
  ///
  /// One switch per fact: most facts (reads, objects created and freed, fires of a write) have no line and change
  /// nothing open, and return at once; a run's or a write's beginning only makes the earliest open time earlier, so
  /// it releases nothing either (after every fact, what is held is later than the earliest open time).
  public mutating func consume(_ fact: ReplayFact, _ body: (ReplayFact) -> Void) {
    let time: UInt64
    let thread: UInt32
    switch fact {
    case .runBegan(let run):
      if let index = openRuns.lastIndex(where: { $0.scope == run.scope }) {
        let replaced = openRuns[index].time
        openRuns[index].time = run.time
        if replaced == earliestOpen { findEarliestOpen() }
        earliestOpen = min(earliestOpen, run.time)
        // The earliest open time may have moved later: release what it held back.
        release(body)
      } else {
        openRuns.append((run.scope, run.time))
        earliestOpen = min(earliestOpen, run.time)
      }
      return
    case .runEnded(let ended):
      if let index = openRuns.lastIndex(where: { $0.scope == ended.run.scope }) {
        let time = openRuns.remove(at: index).time
        if time == earliestOpen { findEarliestOpen() }
      }
      (time, thread) = (ended.run.time, ended.run.thread)
    case .writeBegan(let write):
      openWrites.append((WriteKey(thread: write.thread, key: write.key), write.time))
      earliestOpen = min(earliestOpen, write.time)
      return
    case .write(let write):
      let key = WriteKey(thread: write.thread, key: write.key)
      if let index = openWrites.lastIndex(where: { $0.key == key && $0.time == write.time }) {
        // The newest is the rule (one write at a time on a thread).
        if index == openWrites.count - 1 { openWrites.removeLast() } else { openWrites.remove(at: index) }
        if write.time == earliestOpen { findEarliestOpen() }
      }
      (time, thread) = (write.time, write.thread)
    case .read(let read):
      guard read.stale else { return }
      (time, thread) = (read.time, read.thread)
    case .fire(let fire):
      guard fire.cause == nil || fire.afterSequenceEnded else { return }
      (time, thread) = (fire.time, fire.thread)
    case .cancel(let cancel):
      guard cancel.reason != .fired else { return }
      (time, thread) = (cancel.time, cancel.thread)
    case .anomaly(let anomaly):
      (time, thread) = (anomaly.time, anomaly.thread)
    case .sequenceEnded(let ended):
      guard ended.ending != nil else { return }
      (time, thread) = (ended.time, ended.thread)
    case .objectCreated(let object), .objectFreed(let object):
      guard passesObjects else { return }
      (time, thread) = (object.time, object.thread)
    }
    // The common case: nothing held, nothing open before it: shown at once, without being held.
    if held.isEmpty && time <= earliestOpen {
      body(fact)
      return
    }
    held.push(fact, time: time, lane: thread)
    release(body)
  }

  /// Passes on what is held and no longer later than the earliest open time.
  private mutating func release(_ body: (ReplayFact) -> Void) {
    while let first = held.firstTime, first <= earliestOpen {
      body(held.pop())
    }
  }

  private mutating func findEarliestOpen() {
    earliestOpen = min(
      openRuns.lazy.map(\.time).min() ?? .max, openWrites.lazy.map(\.time).min() ?? .max)
  }

  /// Releases everything held, at the end of the trace.
  public mutating func finish(_ body: (ReplayFact) -> Void) {
    while !held.isEmpty { body(held.pop()) }
  }
}
