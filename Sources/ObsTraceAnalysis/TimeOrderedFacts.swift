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
  /// What is still open, with the time it began: runs (by scope) and writes (by thread and property). Few at a time
  /// as a rule (the nesting depth, the threads writing at once), so arrays searched from the newest, which is what
  /// usually ends first. Past `searchedAtMost` of either (a deep nesting, a hostile trace), everything open is kept
  /// by key instead (`indexed`) until all of it has ended: searched, a run's beginning looked through every open run
  /// (tryout15's J3: 100,000 nested scopes took 3.7 s, 400,000 took 66 s). By key from the start, a timeline of the
  /// bench's 100 k-object trace took 19 % more instructions (hashing a write's key at its beginning and its end).
  private var openRuns: [(scope: UInt32, time: UInt64)] = []
  private var openWrites: [(key: WriteKey, time: UInt64)] = []
  private var indexed: OpenByKey?
  static let searchedAtMost = 32
  /// The earliest time among them; `.max` when nothing is open.
  private var earliestOpen = UInt64.max
  /// Room for held facts, taken or not (for tests: bounded by what is held, not 256 a queue).
  var heldRoom: Int { held.room }
  /// Entries of the by-key heap pushed, popped and looked at, over the whole timeline (for tests: linear in the
  /// facts), and whether open things are kept by key now.
  var openWork: Int { indexed?.work ?? indexedWork }
  private var indexedWork = 0
  var isIndexed: Bool { indexed != nil }
  /// The earliest time still open (for tests: the plain rule's), and how many times the by-key heap dropped its
  /// stale entries all at once.
  var earliestOpenTime: UInt64 { earliestOpen }
  var openDrops: Int { indexed?.drops ?? indexedDrops }
  private var indexedDrops = 0

  struct WriteKey: Hashable {
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
    case .read(let read): read.stale || read.atEnd ? read.time : nil
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
      let replaced: UInt64?
      if indexed != nil {
        replaced = indexed!.beginRun(run.scope, time: run.time)
      } else if let index = openRuns.lastIndex(where: { $0.scope == run.scope }) {
        replaced = openRuns[index].time
        openRuns[index].time = run.time
      } else {
        replaced = nil
        openRuns.append((run.scope, run.time))
        if openRuns.count > Self.searchedAtMost { indexAll() }
      }
      if let replaced {
        if replaced == earliestOpen { findEarliestOpen() }
        earliestOpen = min(earliestOpen, run.time)
        // The earliest open time may have moved later: release what it held back.
        release(body)
      } else {
        earliestOpen = min(earliestOpen, run.time)
      }
      return
    case .runEnded(let ended):
      var began: UInt64?
      if indexed != nil {
        began = indexed!.endRun(ended.run.scope)
        leaveIndexedIfEmpty()
      } else if let index = openRuns.lastIndex(where: { $0.scope == ended.run.scope }) {
        began = openRuns.remove(at: index).time
      }
      if let began, began == earliestOpen { findEarliestOpen() }
      (time, thread) = (ended.run.time, ended.run.thread)
    case .writeBegan(let write):
      let key = WriteKey(thread: write.thread, key: write.key)
      if indexed != nil {
        indexed!.beginWrite(key, time: write.time)
      } else {
        openWrites.append((key, write.time))
        if openWrites.count > Self.searchedAtMost { indexAll() }
      }
      earliestOpen = min(earliestOpen, write.time)
      return
    case .write(let write):
      let key = WriteKey(thread: write.thread, key: write.key)
      var ended = false
      if indexed != nil {
        ended = indexed!.endWrite(key, time: write.time)
        leaveIndexedIfEmpty()
      } else if let index = openWrites.lastIndex(where: { $0.key == key && $0.time == write.time }) {
        // The newest is the rule (one write at a time on a thread).
        if index == openWrites.count - 1 { openWrites.removeLast() } else { openWrites.remove(at: index) }
        ended = true
      }
      if ended && write.time == earliestOpen { findEarliestOpen() }
      (time, thread) = (write.time, write.thread)
    case .read(let read):
      guard read.stale || read.atEnd else { return }
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
    if indexed != nil {
      earliestOpen = indexed!.earliest()
    } else {
      earliestOpen = min(openRuns.lazy.map(\.time).min() ?? .max, openWrites.lazy.map(\.time).min() ?? .max)
    }
  }

  /// Releases everything held, at the end of the trace.
  public mutating func finish(_ body: (ReplayFact) -> Void) {
    while !held.isEmpty { body(held.pop()) }
  }

  /// Moves what is open from the arrays to `indexed`: too many to search.
  private mutating func indexAll() {
    var byKey = OpenByKey()
    byKey.work = indexedWork
    byKey.drops = indexedDrops
    for (scope, time) in openRuns { _ = byKey.beginRun(scope, time: time) }
    for (key, time) in openWrites { byKey.beginWrite(key, time: time) }
    openRuns = []
    openWrites = []
    indexed = byKey
  }

  /// Back to the arrays once nothing is open.
  private mutating func leaveIndexedIfEmpty() {
    guard let byKey = indexed, byKey.isEmpty else { return }
    indexedWork = byKey.work
    indexedDrops = byKey.drops
    indexed = nil
  }
}

/// Open runs and writes kept by key, with a heap of the times they began: a beginning, an end and the earliest cost
/// the same however many are open. An entry of the heap goes stale when what it names ends or begins again at another
/// time; stale entries are dropped when they come first (what a deep nesting does: the inner ends, then the outer),
/// and all at once when they outnumber what is open, so the entries are bounded by what is open.
struct OpenByKey {
  /// Runs by scope; writes by thread, property and time, counted (a hostile trace may begin one twice).
  var runs: [UInt32: UInt64] = [:]
  var writes: [OpenWrite: Int] = [:]
  var byTime = TimeOrderedHeap<Open>()
  /// Entries pushed, popped and looked at when dropped all at once, and the times they were (for tests).
  var work = 0
  var drops = 0

  struct OpenWrite: Hashable {
    var key: TimeOrderedFacts.WriteKey
    var time: UInt64
  }

  enum Open: Hashable {
    case run(UInt32)
    case write(TimeOrderedFacts.WriteKey)
  }

  struct Entry: Hashable {
    var open: Open
    var time: UInt64
  }

  var isEmpty: Bool { runs.isEmpty && writes.isEmpty }

  /// A run of `scope` began at `time`; returns the time it had begun at if it was open.
  mutating func beginRun(_ scope: UInt32, time: UInt64) -> UInt64? {
    let replaced = runs.updateValue(time, forKey: scope)
    if replaced != time { push(.run(scope), time: time) }
    return replaced
  }

  /// A run of `scope` ended; returns when it began, if it was open.
  mutating func endRun(_ scope: UInt32) -> UInt64? { runs.removeValue(forKey: scope) }

  mutating func beginWrite(_ key: TimeOrderedFacts.WriteKey, time: UInt64) {
    let open = OpenWrite(key: key, time: time)
    let count = writes[open, default: 0]
    // Counted as open before its entry is pushed: the push may drop every stale entry, and counted after, this
    // write's own entry was one of them (it was then open with no entry, and the earliest open time passed it).
    writes[open] = count + 1
    if count == 0 { push(.write(key), time: time) }
  }

  /// A write ended; returns whether it was open.
  mutating func endWrite(_ key: TimeOrderedFacts.WriteKey, time: UInt64) -> Bool {
    let open = OpenWrite(key: key, time: time)
    guard let count = writes[open] else { return false }
    writes[open] = count == 1 ? nil : count - 1
    return true
  }

  /// The earliest time still open (`.max` when nothing is): the first entry that is not stale.
  mutating func earliest() -> UInt64 {
    while let first = byTime.firstTime, Self.isStale(Entry(open: byTime.first, time: first), runs, writes) {
      _ = byTime.pop()
      work += 1
    }
    return byTime.firstTime ?? .max
  }

  private mutating func push(_ open: Open, time: UInt64) {
    byTime.push(open, time: time)
    work += 1
    guard byTime.count > 2 * (runs.count + writes.count) + 64 else { return }
    work += byTime.count
    drops += 1
    let (runs, writes) = (runs, writes)
    // An open thing keeps one entry (a run that ended and began again at the same time has two: one is dropped).
    var kept = Set<Entry>()
    byTime.removeAll { time, open in
      let entry = Entry(open: open, time: time)
      return Self.isStale(entry, runs, writes) || !kept.insert(entry).inserted
    }
  }

  private static func isStale(_ entry: Entry, _ runs: [UInt32: UInt64], _ writes: [OpenWrite: Int]) -> Bool {
    switch entry.open {
    case .run(let scope): runs[scope] != entry.time
    case .write(let key): writes[OpenWrite(key: key, time: entry.time)] == nil
    }
  }
}
