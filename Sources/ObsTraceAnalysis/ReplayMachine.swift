import ObsTraceFormat

/// A small model of Observation run over a trace's events, in time order, that turns them into facts
/// (`ReplayFact`) for consumers. It keeps only the state needed to place each event: open and installed runs,
/// the instances they continue, writes in progress, live objects. Memory grows with live objects, their properties
/// and live scopes, never with the number of events, nor with objects freed and instances no run can continue.
///
/// What it models (stdlib/public/Observation): an access adds (object, property) to the innermost open scope's
/// list; a nested scope's list merges into its parent's when it ends (as `generateAccessList` does); when a
/// scope's observers are installed it subscribes to its list; one-shot tracking is cancelled when it fires.
/// Fires are taken from the trace (the recorder saw them), not predicted, and attributed to the write in progress
/// on the firing thread — except those of `untraced` runs (tracking ObsTrace does not own), which are predicted:
/// subscribed as the run ends, fired at the first willSet of anything it read, then gone. Which instance a run continues is recorded at the source (the `object` of `scopeBegin`,
/// version 2); a version-1 trace has none, and each label then counts as one instance.
public struct ReplayMachine {
  struct Run {
    var fact: RunFact
    var beginSequence: UInt64
    /// What it read, each object property once, in the order first read.
    var reads = OrderedKeySet()
    var ended = false
    var subscribed = false
    var readStale = false
    /// It read a property while another thread was writing it (between that write's willSet and didSet).
    var readRacing = false
    /// The `Observations` sequence (iterator) this run is a value of, or 0.
    var sequence: UInt32 = 0
    var isolation: UInt32 = 0
    /// Objects it subscribed to that are still alive.
    var liveObjects = 0
    /// A write fired its instance's previous run before it began (see `firedSinceRun`).
    var afterFire = false
    /// A tracking run whose instance id the recorder took after the run's own scope id: the re-track rule made a new
    /// instance here (`ScopeInstances`: ids are serials handed out in increasing order, and an instance a run
    /// continues, a harness's or an earlier run's, was taken before it). Version 1 recorded no instance: never.
    var beganNewInstance = false
  }

  /// A read outside any scope, the last event of its thread (see `untrackedAccessLast`).
  struct UntrackedAccess {
    var key: PropertyKey
    var stack: UInt32
    var time: UInt64
  }

  /// Which threads' last events the recording may have ended before their next one: a read outside any scope that
  /// is such a thread's last event may be the access of a `_modify` whose willSet was not recorded
  /// (`ReadFact.atEnd`). Set by the caller before `finish`, from the trace's footer and damage.
  public enum EndCut: Sendable, Equatable {
    /// The trace is whole and no thread was running at the stop: every thread's last event is its last.
    case none
    /// The threads listed were running when the recording stopped (the footer's `runningAtStop`).
    case threads(Set<UInt32>)
    /// The trace was cut (truncated, damaged, chunks or events missing): any thread's end may be lost.
    case all

    func cuts(_ thread: UInt32) -> Bool {
      switch self {
      case .none: false
      case .threads(let threads): threads.contains(thread)
      case .all: true
      }
    }
  }

  /// See `EndCut`; `.none` unless set.
  public var endCut = EndCut.none

  /// One instance of a scope (a view's node, an observer, an iterator): its runs follow each other.
  struct Instance {
    var label: UInt32
    var lastRunBeginSequence: UInt64
    var lastReads: OrderedKeySet
    /// Made new by the recorder at its first run in the trace under the re-track rule (a `withObservationTracking`
    /// that continued no fired instance: a tracking run whose instance id was taken after its scope's, see
    /// `Run.beganNewInstance`): such an instance is continued only while the recorder keeps it among its label's
    /// fired ones, and the replay forgets it when it has waited too long (`waitingKeptPerLabel`).
    var queued = false
    /// The thread of its last run: a run is taken as another waiting instance's (`instanceReadAlike`) only when both
    /// ran last on its own thread (the trace does not say a run's context; a thread is one, unless tasks or actors
    /// take turns on it).
    var thread: UInt32 = 0
    /// A run of it fired again (`RepeatedFire`): the recorder queued it once per fire, so a later re-track may
    /// continue it from a second entry: it is never dropped (`dropEndedInstance`).
    var firedAgain = false
  }

  /// An instance that fired and has not run again: its label (the one its coalesced writes count for) and, for a
  /// `queued` instance still in its label's queue, its place there (`WaitingQueue`; 0: not in it).
  struct Awaiting {
    var label: UInt32
    var ticket: UInt64 = 0
  }

  /// Per label, the `queued` instances that fired and have not been re-tracked yet, in the order they fired (the
  /// recorder's queue of fired instances, `ScopeInstances`, as the trace shows it): entries whose ticket no longer
  /// matches the instance's `Awaiting` are left behind (it ran again, or fired again later) and skipped.
  struct WaitingQueue {
    var entries: [(instance: UInt32, ticket: UInt64)] = []
    var head = 0
    /// Entries from `head` on that are still current.
    var live = 0
  }

  /// How many waiting instances of one label read a property (`KeyOverflow.waiting`).
  struct LabelTally {
    var label: UInt32
    var instances: UInt32
  }

  struct Write {
    var thread: UInt32
    var key: PropertyKey
    var sequence: UInt64
    var time: UInt64
    var stack: UInt32
    var kind: UInt8
    /// Whether it fired a scope: its fires are then in `firesInProgress`, under its `sequence`. Kept apart, so that
    /// a write holds no array: most fire nothing, and two empty arrays per write were copied into its fact and
    /// released (≈ 100 instructions a write on the loop's trace).
    var firedAny = false
  }

  /// A one-shot tracking run that fired, kept while Observation may still hold its tracking (see `RepeatedFire`):
  /// until its handlers have returned and no write that may have taken its observers before the cancel is in
  /// progress. A fire of it then is a fire again of a known run, not of an unknown scope. Plain data: kept and
  /// dropped without reference counting.
  struct FiredTracking {
    var fact: RunFact
    var beginSequence: UInt64
    /// The thread of its first fire: a fire again on it is nested with that one, on another concurrent.
    var thread: UInt32
    /// Its change handlers running now: fires whose recorded cancel has not come.
    var handlers = 1
    /// Once every handler returned: where Observation's cancel is known done, the sequence number of the cancelling
    /// thread's next event (the recorder records the cancel, then Observation cancels: a willSet that began before
    /// that event may have taken the observers). 0 while not known.
    var heldUntil: UInt64 = 0
    /// The sequence number of the cancel of its last handler (its thread is in `cancelsPending`).
    var cancelSequence: UInt64 = 0
  }

  /// The runs subscribed to one object, in the order they subscribed (see `subscribers`): the first
  /// `SubscriberList.inlined` held in the list itself, so that an object's list allocates nothing while it stays
  /// below its first compaction (the rule: a few runs at a time read an object).
  struct SubscriberList {
    static let inlined = 8
    private var first = SIMD8<UInt32>()
    private var firstCount = 0
    private var more: [UInt32] = []
    var compactAt = 8

    var count: Int { firstCount + more.count }

    mutating func append(_ scope: UInt32) {
      if firstCount < Self.inlined {
        first[firstCount] = scope
        firstCount += 1
      } else {
        more.append(scope)
      }
    }

    /// Calls `body` with each scope, in order (nothing is allocated).
    func forEach(_ body: (UInt32) -> Void) {
      for index in 0..<firstCount { body(first[index]) }
      for scope in more { body(scope) }
    }

    /// The scopes, in order.
    var scopes: [UInt32] {
      var result: [UInt32] = []
      result.reserveCapacity(count)
      for index in 0..<firstCount { result.append(first[index]) }
      result.append(contentsOf: more)
      return result
    }

    /// Removes the scopes `shouldRemove` says, in place: the kept ones move down in order over the removed ones, as
    /// if appended again one by one (no array is made, and `more` keeps its capacity).
    mutating func removeAll(where shouldRemove: (UInt32) -> Bool) {
      let total = count
      var kept = 0
      for index in 0..<total {
        // Read before any write at or past it: the kept ones are written at `kept`, never past `index`.
        let scope = index < Self.inlined ? first[index] : more[index - Self.inlined]
        guard !shouldRemove(scope) else { continue }
        if kept < Self.inlined { first[kept] = scope } else { more[kept - Self.inlined] = scope }
        kept += 1
      }
      firstCount = min(kept, Self.inlined)
      more.removeLast(more.count - max(0, kept - Self.inlined))
    }
  }

  struct Sequence {
    var label: UInt32
    var lastObjects: Set<UInt32> = []
    var ending: SequenceEnding?
    /// Its latest run (0: none yet): the run the recorder cancels when the sequence ends.
    var lastRun: UInt32 = 0
    /// Earlier runs of it whose tracking was still installed when a later run began (an iterator woken by the
    /// sequence's dirty flag, not by their fire): Observation keeps them installed, and the sequence's end ends
    /// them as it ends the last one. Rare: as a rule a run's fire wakes the next.
    var earlierInstalled: [UInt32] = []
  }

  /// Per object property, as plain data (no set or array of its own, so that the table holding it for every object
  /// property copies, retains and releases nothing): the sequence number of its last real change, how many
  /// instances of one label wait to run again having read it last, the first thread writing it now. What few
  /// properties have beyond that (waiting instances of more labels, more writers at once, untraced runs subscribed)
  /// is in `KeyOverflow`, flagged here.
  struct KeyState {
    /// `KeyOverflow.waiting` holds waiting instances of labels past `waitingLabel`.
    static let moreReaders: UInt8 = 1
    static let moreWriters: UInt8 = 2
    static let untracedRuns: UInt8 = 4

    var lastRealChange: UInt64 = 0
    /// How long before `lastRealChange` (in sequence numbers) the last change known to be real was: 0 when that is
    /// `lastRealChange` itself (a write compared and found changed, or a setter's), more when writes through
    /// `_modify` not compared came after it (`lastKnownChange`). Counted from `lastRealChange` in 32 bits, so that it
    /// takes the room the state's padding had (no byte more per object property); a lag that does not fit is
    /// `unknownLag`, read as no known change at all, which can only make a run's redundancy rest on writes not
    /// compared (`RunEndedFact.possiblyRedundant`) where it did not, never the other way.
    var knownChangeLag: UInt32 = 0
    static let unknownLag = UInt32.max
    /// The label of the instances counted in `waitingInstances` (meaningless while that is 0).
    var waitingLabel: UInt32 = 0
    /// Instances of `waitingLabel` whose last run read it and that fired and wait to run again: a write of it is
    /// coalesced into each. Counted as they start and stop waiting, so that a write reads a count, not a walk over
    /// every instance that ever read the property (tryout13 G15: 10^5 one-shot instances of one label, each write
    /// walked them all).
    var waitingInstances: UInt32 = 0
    /// The first thread writing it now (a willSet seen, its didSet not yet): one write at a time is the rule. None
    /// is `TraceFormat.reservedThread`, which the reader never yields (a chunk naming it is damage).
    var writingThread = TraceFormat.reservedThread
    /// The thread that first wrote it (`TraceFormat.reservedThread` until then): `WriteBeganFact.firstWriter`.
    var firstWriter = TraceFormat.reservedThread
    /// Which of `KeyOverflow`'s tables hold entries for it.
    var overflow: UInt8 = 0

    /// The sequence number of the last change known to be real (0: none).
    var lastKnownChange: UInt64 {
      knownChangeLag == Self.unknownLag ? 0 : lastRealChange - UInt64(knownChangeLag)
    }

    /// A write that did not leave the value unchanged ended (write `sequence`): `known`, it changed it (compared
    /// and found changed, or made through the setter, which the macro skips for an equal Equatable value); else it
    /// went through `_modify` and was not compared, and may have changed nothing.
    mutating func noteChange(_ sequence: UInt64, known: Bool) {
      if known {
        knownChangeLag = 0
      } else {
        let lastKnown = lastKnownChange
        let lag = sequence - lastKnown
        knownChangeLag = lastKnown == 0 || lag >= UInt64(Self.unknownLag) ? Self.unknownLag : UInt32(lag)
      }
      lastRealChange = sequence
    }
  }

  /// What a few object properties hold beyond their `KeyState`, by key: flagged in the state, so that the others
  /// never hash.
  struct KeyOverflow {
    /// Waiting instances that read it last, by label, for labels past the state's `waitingLabel` (never it).
    var waiting: [PropertyKey: [LabelTally]] = [:]
    /// Threads writing it now, past the state's first, one entry per write in progress.
    var writingThreads: [PropertyKey: [UInt32]] = [:]
    /// Untraced runs subscribed to it: its next willSet fires them (predicted).
    var untracedRuns: [PropertyKey: [UInt32]] = [:]

    /// Drops what it holds for `key` (its object was freed).
    mutating func forget(_ key: PropertyKey) {
      waiting[key] = nil
      writingThreads[key] = nil
      untracedRuns[key] = nil
    }

    /// One more instance of `label` that read it waits to run again.
    mutating func addWaiting(_ label: UInt32, _ key: PropertyKey, _ state: inout KeyState) {
      if state.waitingInstances == 0 || state.waitingLabel == label {
        if state.waitingInstances == 0 && state.overflow & KeyState.moreReaders != 0 {
          // Inline is free but others wait: this label may be among them.
          if let index = waiting[key]!.firstIndex(where: { $0.label == label }) {
            waiting[key]![index].instances += 1
            return
          }
        }
        state.waitingLabel = label
        state.waitingInstances += 1
        return
      }
      if let index = waiting[key]?.firstIndex(where: { $0.label == label }) {
        waiting[key]![index].instances += 1
      } else {
        waiting[key, default: []].append(LabelTally(label: label, instances: 1))
        state.overflow |= KeyState.moreReaders
      }
    }

    /// An instance of `label` that read it waits no more (it ran again, or was forgotten).
    mutating func removeWaiting(_ label: UInt32, _ key: PropertyKey, _ state: inout KeyState) {
      if state.waitingInstances > 0 && state.waitingLabel == label {
        state.waitingInstances -= 1
        return
      }
      guard state.overflow & KeyState.moreReaders != 0,
        let index = waiting[key]?.firstIndex(where: { $0.label == label })
      else { return }
      waiting[key]![index].instances -= 1
      if waiting[key]![index].instances == 0 { waiting[key]!.remove(at: index) }
      if waiting[key]!.isEmpty {
        waiting[key] = nil
        state.overflow &= ~KeyState.moreReaders
      }
    }

    /// Whether an instance that read it waits to run again.
    func hasWaiting(_ state: KeyState) -> Bool {
      state.waitingInstances != 0 || state.overflow & KeyState.moreReaders != 0
    }

    /// Calls `body` with each label that has instances waiting that read it, and how many.
    func forEachWaiting(_ key: PropertyKey, _ state: KeyState, _ body: (UInt32, UInt32) -> Void) {
      if state.waitingInstances != 0 { body(state.waitingLabel, state.waitingInstances) }
      guard state.overflow & KeyState.moreReaders != 0, let others = waiting[key] else { return }
      for tally in others { body(tally.label, tally.instances) }
    }

    mutating func beginWrite(on thread: UInt32, _ key: PropertyKey, _ state: inout KeyState) {
      if state.writingThread == TraceFormat.reservedThread {
        state.writingThread = thread
      } else {
        writingThreads[key, default: []].append(thread)
        state.overflow |= KeyState.moreWriters
      }
    }

    mutating func endWrite(on thread: UInt32, _ key: PropertyKey, _ state: inout KeyState) {
      guard state.overflow & KeyState.moreWriters != 0 else {
        if state.writingThread == thread { state.writingThread = TraceFormat.reservedThread }
        return
      }
      if state.writingThread == thread {
        state.writingThread = writingThreads[key]!.removeFirst()
      } else if let index = writingThreads[key]!.firstIndex(of: thread) {
        writingThreads[key]!.remove(at: index)
      }
      if writingThreads[key]!.isEmpty {
        writingThreads[key] = nil
        state.overflow &= ~KeyState.moreWriters
      }
    }

    /// Whether a thread other than `thread` is writing it.
    func isWritten(byOtherThan thread: UInt32, _ key: PropertyKey, _ state: KeyState) -> Bool {
      if state.writingThread != TraceFormat.reservedThread && state.writingThread != thread { return true }
      guard state.overflow & KeyState.moreWriters != 0 else { return false }
      return writingThreads[key]?.contains { $0 != thread } ?? false
    }

    mutating func subscribeUntraced(_ scope: UInt32, _ key: PropertyKey, _ state: inout KeyState) {
      untracedRuns[key, default: []].append(scope)
      state.overflow |= KeyState.untracedRuns
    }

    /// The untraced runs subscribed to the property, taken (its willSet fires them).
    mutating func takeUntracedRuns(_ key: PropertyKey, _ state: inout KeyState) -> [UInt32] {
      guard state.overflow & KeyState.untracedRuns != 0 else { return [] }
      state.overflow &= ~KeyState.untracedRuns
      return untracedRuns.removeValue(forKey: key) ?? []
    }
  }

  public private(set) var events = 0
  /// The fired instances of one label that the replay keeps waiting to be re-tracked, at most, among those the
  /// recorder's re-track rule made (`Instance.queued`): twice what the recorder keeps (`ScopeInstances.maximumWaiting`,
  /// 1024; it drops the oldest fired past that, and a re-track then continues none of them), so that what the trace's
  /// order of fires may put apart from the recorder's own never makes the replay forget one the recorder still holds.
  /// Past it the oldest is forgotten (its reads, its waiting, its previous run): writes after that are not coalesced
  /// into it, and the report says how many were forgotten (`forgottenInstances`). Without it a program that
  /// re-tracks one label faster than its writes fire it (tryout13 G15: one thread re-tracking in a loop while two
  /// write) leaves an instance behind at every run, and the replay kept each for ever.
  public static let waitingKeptPerLabel = 2048
  /// Spare read lists kept at most (`spareReadLists`): as many as runs end between their begins, as a rule a few.
  static let spareReadListLimit = 64
  /// Fired trackings kept at most past their cancel (`releasedTrackings`), and whose cancelling thread's next event
  /// is awaited at most (`cancelsPending`; a thread that exits after a cancel records nothing more).
  static let releasedTrackingsKept = 65536
  static let cancelsPendingKept = 64
  public private(set) var firstTime: UInt64?
  public private(set) var lastTime: UInt64 = 0
  private var threadSeen = DenseTable<Bool>()
  /// The thread of the previous event: runs of one thread's events are the rule, and `threadSeen` and
  /// `untrackedAccessLast` are not touched again for them.
  private var lastThread = TraceFormat.reservedThread
  /// Threads that recorded events.
  public var threadsSeen: Set<UInt32> { Set(threadSeen.map(\.key)) }
  /// What the machine could not place, by kind.
  public private(set) var anomalies: [AnomalyFact.Kind: Int] = [:]
  /// Whether the trace's header says it was started by code while the program ran (`Recorder.start`): set before
  /// the first event. A write then in progress ends in the trace with a didSet whose willSet is not in it.
  public var startedWhileRunning = false
  /// The didSets of writes begun before such a start (`unmatchedDidSet`), not counted among the writes, and the
  /// threads that made them.
  public private(set) var writesBegunBeforeStart = 0
  public private(set) var threadsWritingAtStart: Set<UInt32> = []
  /// The thread that ran an `Observations` value on the main actor, if any: where main-actor work runs (with an
  /// async main, not the process's first thread, which `dispatchMain` ends).
  public private(set) var mainActorThread: UInt32?
  /// Every thread that ran an `Observations` value on the main actor: with an async main on Linux the main actor's
  /// work is not bound to one thread (the main queue is drained by whichever thread `dispatchMain` hands it to).
  public private(set) var mainActorThreads: Set<UInt32> = []

  private var sequence: UInt64 = 0
  /// The read outside any scope that was the last event of `lastThread` (the previous event's thread), if it was:
  /// a direct willSet (`_modify`) of the same property next on the thread makes it the write's own access
  /// (`WriteBeganFact.ownAccess`). Kept here while the thread's events follow each other (the rule: one field read
  /// and cleared per event), put in `untrackedAccessLast` when another thread's event comes.
  private var lastThreadUntrackedAccess: UntrackedAccess?
  /// The other threads whose last event was a read outside any scope, with that read (until the thread's next
  /// event). Per thread, since the events of several threads interleave in time order; by thread id (an array: a
  /// thread that exited after such a read keeps its entry, which costs no other thread's event anything), looked
  /// at only when the thread changes and while it holds one.
  private var untrackedAccessLast = DenseTable<UntrackedAccess>()
  /// Writes between their willSet and didSet, over all threads: while none is, a read races nothing.
  private var writesInProgress = 0
  /// By scope id: ids are handed out in increasing order, and a run is held only while its observers are or will
  /// be installed (see `RecentTable`).
  private var runs = RecentTable<Run>()
  /// `Observations` runs the machine ended itself (every object they read was freed): the recorder still cancels
  /// such a run when its sequence ends, and that cancel is of a run known to have ended, not of an unknown one.
  private var endedWhenFreed: Set<UInt32> = []
  /// `Observations` runs whose sequence ended (finished, cancelled, abandoned) while they waited for a change, by
  /// scope: the recorder cancels such a run when its iteration ends, but Observation keeps its tracking installed
  /// until the next willSet of something it read, which fires it into nothing. That fire is expected, not an
  /// unknown scope's: it is given as a fire after its sequence ended (`FireFact.afterSequenceEnded`).
  private var endedWhileWaiting: [UInt32: RunFact] = [:]
  /// The latest run of each `Observations` sequence that has not ended, to its sequence: the recorder cancels that
  /// run when the sequence ends, whatever became of its tracking; one that fired already (a change came before the
  /// iterator ended) or was never installed (it read nothing: a closure that threw or finished at once) is gone
  /// from `runs`, and its cancel is of a run known, not an unknown scope's.
  private var lastRunOfSequence: [UInt32: UInt32] = [:]
  /// Per thread, the last tracking run that ended having read nothing ObsTrace records, until its install or the next
  /// such run on the thread. Observation installs a run whose access list is not empty, and a run whose reads all
  /// went to Observation's own registrar (an `@Observable` declared without `import ObsTrace`) has such a list: its
  /// `trackingInstalled` follows its end on its thread, and the run is put back then (see `installed`).
  private var endedWithoutTracedReads: [UInt32: (scope: UInt32, run: Run)] = [:]
  /// Untraced runs the machine ended at their predicted fire, before the recorder recorded their end (by scope, with
  /// the label): the recorder ends such a run only at its thread's next event, often the next run's first read, so
  /// its `scopeEnd` (and a read it may still make) comes after; neither is of an unknown scope. See `predictFires`.
  private var untracedEndedAtFire: [UInt32: UInt32] = [:]
  private var instances = RecentTable<Instance>()
  /// Instances that fired and have not run again since, with their label: a write of what they read is coalesced
  /// into their next run (counted in the properties' `KeyState.waitingInstances` as they start and stop waiting).
  private var awaitingRerun = RecentTable<Awaiting>()
  /// By label, the `queued` instances waiting to be re-tracked, oldest fired first (see `waitingKeptPerLabel`).
  private var waitingQueues = DenseTable<WaitingQueue>()
  /// The next `Awaiting.ticket` (from 1).
  private var nextTicket: UInt64 = 1
  /// By label, the instances the replay forgot (see `waitingKeptPerLabel`).
  public private(set) var forgottenInstances: [UInt32: Int] = [:]
  /// By label, runs that continued an instance the replay had forgotten (`recentlyForgotten`): the recorder had it
  /// again, because a fire of it came late. Observation may fire one tracking twice when two threads write what it
  /// read at once (each willSet takes the observers before either cancels it; tryout13's Racy fired 18,075 of 30,360
  /// runs twice), and the recorder queues the instance at each fire, the second time behind later fires.
  public private(set) var runsOfForgottenInstances: [UInt32: Int] = [:]
  /// The instances forgotten last, at most `recentlyForgottenKept` (with the times each is in `forgottenOrder`), so
  /// that a run that continues one is a run of it, not a new instance.
  private var recentlyForgotten = IDMap<Int>()
  /// `recentlyForgotten`'s instances in the order forgotten: a ring, `forgottenNext` its oldest once full.
  private var forgottenOrder: [UInt32] = []
  private var forgottenNext = 0
  static let recentlyForgottenKept = 16384
  /// Instances a write fired (recorded or predicted) since their last run began: a run that begins without its
  /// instance here re-ran without a fire (an `Observations` iterator woken by another iterator's fire: they share
  /// one state; or a program running a scope again by itself).
  private var firedSinceRun = RecentTable<Bool>()
  /// The most instances of one label that may wait for a run to be taken as another's than the recorder chose
  /// (`instanceReadAlike`): a list's rows re-rendered at once, not a queue of thousands that each run would walk.
  static let readAlikeChecked = 64
  /// The instance the replay takes a recorded re-tracked instance for, where a run was taken as another waiting
  /// instance's than the recorder chose (`instanceReadAlike`), and back: a permutation, by recorded id and by the
  /// replay's, holding only the ids it moved (an id dropped with its instance, `dropEndedInstance`).
  private var replayedInstanceOf: [UInt32: UInt32] = [:]
  private var recordedInstanceOf: [UInt32: UInt32] = [:]
  /// One-shot tracking runs that fired, by scope, while Observation may still hold them (`FiredTracking`).
  /// A table by scope id (ids are handed out in increasing order, and a fired run is kept a short while: a window
  /// over the recent ones, `RecentTable`), mutated in place: a dictionary cost several hashes and `_modify`
  /// coroutines a fire (the re-tracking report +22 % instructions, callgrind).
  private var firedTrackings = RecentTable<FiredTracking>()
  /// Scopes of `firedTrackings` whose last handler returned, with the thread that returned it, until that thread's
  /// next event. A scope leaves it when its tracking is held again (`unpend`): each entry is current, and an event
  /// of another thread passes it by its thread alone.
  private var cancelsPending: [(scope: UInt32, thread: UInt32)] = []
  /// Scopes of `firedTrackings` Observation no longer holds, with their `heldUntil`, oldest first from
  /// `releasedHead`: dropped once no write in progress began before it.
  private var releasedTrackings: [(scope: UInt32, heldUntil: UInt64)] = []
  private var releasedHead = 0
  /// Set while `finish` ends a run whose end is not in the trace.
  private var endingAtTraceEnd = false
  /// The array a write's beginning lists its coalesced instances in, kept between writes: once the fact is gone it
  /// is uniquely held again and is emptied in place, so that listing them allocates nothing per write.
  private var coalescedScratch: [CoalescedInstances] = []
  private var keys = KeyTable<KeyState>()
  private var keyOverflow = KeyOverflow()
  /// Writes between their willSet and didSet, on every thread, in the order they began: a thread's are found from
  /// the end (one write at a time is the rule), with no list per thread to look up, retain and release.
  private var openWrites: [Write] = []
  /// What the writes in progress fired, in the order fired, under the write's `sequence` (until its didSet): a
  /// list, not a table by write, since few writes are in progress at once (no hashing per fire).
  private var firesInProgress: [(write: UInt64, scope: UInt32, label: UInt32, predicted: Bool, again: RepeatedFire?)] =
    []
  /// Emptied read lists of instances' previous runs, kept for the next runs to begin: a run's list is then not
  /// allocated and regrown as it reads (a run reads about as much as the one before it).
  private var spareReadLists: [[PropertyKey]] = []
  private var sequences: [UInt32: Sequence] = [:]
  /// Installed runs subscribed to each object (object serial → scope ids).
  /// A run stops being subscribed at its fire or cancel but stays listed until its object's list is compacted:
  /// when the list reaches twice what was live at its previous compaction, ids of runs no longer subscribed are
  /// dropped. The lists hold the live runs (amortized O(1) per install), not every run that ever read the object.
  private var subscribers = RecentTable<SubscriberList>()
  /// What the replay knows of each object, by serial (dense in a process): one record, so that an access or a write
  /// looks its object up once (its type, the threads that used it, when it was last used), and a free removes one
  /// entry (with a table per fact, 100 k objects cost three lookups per event and eight table updates per free).
  private var objects = RecentTable<ObjectRecord>()
  /// Objects the trace used but did not see created (made before the recording), freed since or not.
  public private(set) var objectsFromBefore = 0
  /// By type id: an object's free counts in its type's entry (an array lookup, not two hashes per free).
  private var types = DenseTable<TypeStatistics>()
  /// Run boundaries so far (each run's begin and its end): the turns of the program that a leak's evidence counts
  /// in (`ObjectTurns`).
  private var turn: UInt32 = 0
  /// Run boundaries and object creations so far: orders an object's last use against other objects' creations.
  private var moment: UInt32 = 0
  /// Registrars freed in the trace with no recorded event (never bound to an object, so of no known object), by
  /// their creation stack (0: none recorded). See `registrarsWithoutEvents`.
  private var freedWithoutEvents: [UInt32: RegistrarStatistics] = [:]

  /// Whether a write's beginning lists the instances it is coalesced into (`WriteBeganFact.coalescedInto`): counts
  /// kept per property as instances start and stop waiting, and an array per write, which the statistics count and
  /// a timeline never shows. Off, `coalescedInto` is always empty; every other fact is the same.
  public let listsCoalescedWrites: Bool
  /// Whether it keeps the accounts of objects that only the report's totals and findings read, never a fact:
  /// which objects are alive or were only seen, their creation stacks and the threads that used them, per-type and
  /// per-registrar counts (`liveObjectSerials`, `typeStatistics`, `registrarsWithoutEvents`, `threadBits`,
  /// `creationStack`). Off (a timeline), those stay empty; every fact is the same.
  public let accountsObjects: Bool

  /// How an untraced scope's label prints (its call site, as the recording's stop named it), when the caller knows
  /// it: untraced runs whose labels print alike are runs of one instance, one per call site (docs/analysis.md,
  /// Instances). The recorder keys an untraced scope's label by its whole stack from the tracking call's caller on
  /// (what names it), so one call site reached along two paths (a view rendered first from `main`, then from a
  /// flush loop) has two labels, each recorded as an instance of its own; nil: each label is its own instance.
  public var untracedLabelName: ((UInt32) -> String)?
  /// The instance each untraced label's runs are replayed as, and by printed label the first one seen.
  private var untracedInstanceOfLabel: [UInt32: UInt32] = [:]
  private var untracedInstanceOfName: [String: UInt32] = [:]

  public init(listsCoalescedWrites: Bool = true, accountsObjects: Bool = true) {
    self.listsCoalescedWrites = listsCoalescedWrites
    self.accountsObjects = accountsObjects
  }

  /// The instance an untraced run of `label` continues: that of the first label that prints alike (see
  /// `untracedLabelName`), else the one recorded.
  private mutating func untracedInstance(
    label: UInt32, recorded: UInt32, _ name: (UInt32) -> String
  ) -> UInt32 {
    if let instance = untracedInstanceOfLabel[label] { return instance }
    let printed = name(label)
    let instance = untracedInstanceOfName[printed] ?? recorded
    untracedInstanceOfName[printed] = instance
    untracedInstanceOfLabel[label] = instance
    return instance
  }

  /// Replays one event, passing the facts it establishes to `consumer`; events must come in time order (see
  /// `TimeOrderedEvents`).
  public mutating func consume<Consumer: ReplayConsumer>(_ event: TraceEvent, into consumer: inout Consumer) {
    events += 1
    sequence += 1
    if !cancelsPending.isEmpty { settleCancels(on: event.thread) }
    if firstTime == nil { firstTime = event.time }
    lastTime = max(lastTime, event.time)
    // The thread's previous event, if it was a read outside any scope: taken, whatever this event is.
    var previousUntrackedAccess: UntrackedAccess?
    if event.thread == lastThread {
      previousUntrackedAccess = lastThreadUntrackedAccess
      lastThreadUntrackedAccess = nil
    } else {
      previousUntrackedAccess = switchThread(to: event.thread)
    }
    switch event.kind {
    case .objectCreated:
      let accounts = accountsObjects
      if accounts { moment &+= 1 }
      let turns = ObjectTurns(created: turn, createdAt: moment, lastUsedAt: moment)
      // Without accounts only a type is kept: an object created without one has no record yet.
      if accounts || event.aux != 0 {
        objects.withValue(event.object, default: ObjectRecord()) { record in
          if accounts {
            record.isLive = true
            record.liveType = event.aux
            record.threads |= Self.threadBit(event.thread)
            if event.stack != 0 { record.creationStack = event.stack }
            record.hasTurns = true
            record.turns = turns
          }
          if event.aux != 0 { record.type = event.aux }
        }
      }
      consumer.consume(
        .objectCreated(
          ObjectFact(
            time: event.time, thread: event.thread, object: event.object, type: event.aux, stack: event.stack)))
    case .objectFreed:
      freed(event, &consumer)
    case .objectBound:
      // A further registrar of the object `aux` (a class with @Observable at several levels): not an object of
      // its own; the object's events carry `aux`, and its creation and freeing count once, there. Only where it was
      // created is kept (until its free).
      let emptied =
        objects.withExisting(event.object) { record -> Bool in
          record = ObjectRecord(creationStack: record.creationStack)
          return record.creationStack == 0
        } ?? false
      if emptied { objects.removeValue(event.object) }
    case .access:
      access(event, noteUse(event, namingType: true), &consumer)
    case .willSet:
      willSet(event, noteUse(event, namingType: true), previousUntrackedAccess, &consumer)
    case .didSet:
      _ = noteUse(event, namingType: false)
      didSet(event, &consumer)
    case .scopeBegin:
      turn &+= 1
      moment &+= 1
      let kind = ScopeKind(rawValue: event.flags) ?? .tracking
      // Version 1 recorded no instance: the label stands for it.
      var instance = event.object != 0 ? event.object : event.key | 0x8000_0000
      if kind == .untraced, let untracedLabelName {
        instance = untracedInstance(label: event.key, recorded: instance, untracedLabelName)
      }
      if kind == .tracking, !replayedInstanceOf.isEmpty, let replayed = replayedInstanceOf[instance] {
        instance = replayed
      }
      let fact = RunFact(
        scope: event.scope, label: event.key, kind: kind, instance: instance, parent: event.aux,
        thread: event.thread, time: event.time)
      let afterFire = !firedSinceRun.isEmpty && firedSinceRun[instance] != nil
      if afterFire { firedSinceRun[instance] = nil }
      runs.put(
        event.scope,
        Run(
          fact: fact, beginSequence: sequence, reads: OrderedKeySet(reusing: spareReadLists.popLast()),
          afterFire: afterFire, beganNewInstance: kind == .tracking && event.object > event.scope))
      if !awaitingRerun.isEmpty {
        // An untraced run's end is recorded late (or never): its instance runs again from here, and a write after its
        // begin is not coalesced into a run still to come. Any other: the recorder took it from its label's queue
        // of fired instances here; it waits (for the writes coalesced into this run) until this run ends.
        if kind == .untraced { stopAwaiting(instance) } else { leaveQueue(instance) }
      }
      consumer.consume(.runBegan(fact))
    case .scopeEnd:
      // An untraced run the machine ended at its predicted fire: this is its late recorded end.
      if !untracedEndedAtFire.isEmpty, untracedEndedAtFire.removeValue(forKey: event.scope) != nil { return }
      turn &+= 1
      moment &+= 1
      endRun(event, &consumer)
    case .trackingInstalled:
      installed(event, &consumer)
    case .trackingFired:
      fired(event, &consumer)
    case .trackingCancelled:
      guard runs.contains(event.scope) else {
        // One-shot tracking was already cancelled by its fire, just before: its handler returned.
        if event.flags == CancelReason.fired.rawValue {
          if !firedTrackings.isEmpty { handlerReturned(event) }
          return
        }
        // An Observations run ended when its objects were freed; its sequence ended since.
        if endedWhenFreed.remove(event.scope) != nil { return }
        // The last run of a sequence that ends, its tracking fired already or never installed: nothing to cancel.
        if event.flags == CancelReason.sequenceEnded.rawValue, lastRunOfSequence[event.scope] != nil { return }
        return anomaly(.eventOfUnknownScope, event, &consumer)
      }
      cancel(
        event.scope, time: event.time, thread: event.thread, reason: CancelReason(rawValue: event.flags) ?? .unknown,
        derived: false, &consumer)
    case .observationsRun:
      guard var run = runs[event.scope] else { return anomaly(.eventOfUnknownScope, event, &consumer) }
      run.sequence = event.key
      run.isolation = event.aux
      // Version 1: the sequence (iterator) is the instance.
      if run.fact.instance & 0x8000_0000 != 0 { run.fact.instance = event.key }
      runs[event.scope] = run
      newRun(event.scope, ofSequence: event.key, label: run.fact.label)
      if event.flags & EventFlags.onMainActor != 0 {
        mainActorThread = event.thread
        mainActorThreads.insert(event.thread)
      }
    case .observationsEnd:
      let ending = SequenceEnding(rawValue: event.flags)
      sequences[event.key]?.ending = ending
      if let last = sequences[event.key]?.lastRun, last != 0 { lastRunOfSequence[last] = nil }
      if let earlier = sequences[event.key]?.earlierInstalled, !earlier.isEmpty {
        endEarlierRuns(earlier, time: event.time, thread: event.thread, &consumer)
        sequences[event.key]?.earlierInstalled = []
      }
      consumer.consume(
        .sequenceEnded(
          SequenceEndedFact(
            time: event.time, thread: event.thread, sequence: event.key, label: sequences[event.key]?.label ?? 0,
            ending: ending)))
    }
  }

  /// Run `scope` of `sequence` began: it is the sequence's latest run, and the one before it, if still installed,
  /// one of its earlier installed runs. Out of line: one per `Observations` value.
  @inline(never)
  private mutating func newRun(_ scope: UInt32, ofSequence sequence: UInt32, label: UInt32) {
    var state = sequences[sequence] ?? Sequence(label: label)
    if state.lastRun != 0 {
      lastRunOfSequence[state.lastRun] = nil
      if runs.withExisting(state.lastRun, { $0.subscribed }) == true {
        state.earlierInstalled.removeAll { runs.withExisting($0, { $0.subscribed }) != true }
        state.earlierInstalled.append(state.lastRun)
      }
    }
    state.lastRun = scope
    lastRunOfSequence[scope] = sequence
    sequences[sequence] = state
  }

  /// A sequence ended: its earlier runs whose tracking is still installed end with it, as its last run does (the
  /// recorder cancels only that one). Observation keeps them installed; a later fire of one wakes nothing of this
  /// iterator (`endedWhileWaiting`).
  @inline(never)
  private mutating func endEarlierRuns<Consumer: ReplayConsumer>(
    _ scopes: [UInt32], time: UInt64, thread: UInt32, _ consumer: inout Consumer
  ) {
    for scope in scopes where runs.withExisting(scope, { $0.subscribed && $0.ended }) == true {
      cancel(scope, time: time, thread: thread, reason: .sequenceEnded, derived: true, &consumer)
    }
  }

  /// The previous event was of another thread: its last read outside any scope, if it had one, goes to the table,
  /// and the one of `thread`, if it has one, is taken from it. Out of line: runs of one thread's events are the rule.
  @inline(never)
  private mutating func switchThread(to thread: UInt32) -> UntrackedAccess? {
    if let access = lastThreadUntrackedAccess {
      untrackedAccessLast[lastThread] = access
      lastThreadUntrackedAccess = nil
    }
    lastThread = thread
    threadSeen[thread] = true
    return untrackedAccessLast.isEmpty ? nil : untrackedAccessLast.removeValue(thread)
  }

  /// A run's observers were installed: it subscribes to each object it read. Out of line (as the other scope
  /// events' are), so that the dispatch every event goes through stays small.
  @inline(never)
  private mutating func installed<Consumer: ReplayConsumer>(_ event: TraceEvent, _ consumer: inout Consumer) {
    guard let reads = runs.withExisting(event.scope, { run in run.subscribed ? nil : run.reads }) else {
      if let ended = endedWithoutTracedReads[event.thread], ended.scope == event.scope {
        // Installed although it read nothing ObsTrace records: it read models ObsTrace does not trace. It is
        // subscribed to none of the objects ObsTrace knows; its fire, by a write ObsTrace did not record, is placed.
        endedWithoutTracedReads[event.thread] = nil
        var run = ended.run
        run.subscribed = true
        run.liveObjects = 0
        runs[event.scope] = run
        return
      }
      return anomaly(.eventOfUnknownScope, event, &consumer)
    }
    guard let reads else { return }
    // The run is marked subscribed after its lists: a list compacted on the way drops an earlier entry of this
    // run (one left from before a cancel), as it did when the run was put back only at the end.
    var objects = 0
    reads.forEachObject { object in
      objects += 1
      subscribers.withValue(object, default: SubscriberList()) { list in
        if list.count >= list.compactAt {
          list.removeAll { runs.withExisting($0, { $0.subscribed }) != true }
          list.compactAt = max(8, 2 * list.count)
        }
        list.append(event.scope)
      }
    }
    runs.withExisting(event.scope) { run in
      run.subscribed = true
      run.liveObjects = objects
    }
  }

  /// A didSet with no willSet before it on its thread. In a trace started by code while the program ran
  /// (`startedWhileRunning`), a didSet of a property of an object no recorded willSet has written yet is the end of a
  /// write that began before the start (its willSet came before the recording did: tryout16's P8), counted apart and
  /// said next to `started-while-running`; any other is an inconsistency.
  private mutating func unmatchedDidSet<Consumer: ReplayConsumer>(
    _ event: TraceEvent, _ key: PropertyKey, _ consumer: inout Consumer
  ) {
    if startedWhileRunning, keys.withState(key, { $0.firstWriter == TraceFormat.reservedThread }) {
      writesBegunBeforeStart += 1
      threadsWritingAtStart.insert(event.thread)
      return
    }
    anomaly(.didSetWithoutWillSet, event, &consumer, key: key)
  }

  private mutating func anomaly<Consumer: ReplayConsumer>(
    _ kind: AnomalyFact.Kind, _ event: TraceEvent, _ consumer: inout Consumer, key: PropertyKey? = nil
  ) {
    anomalies[kind, default: 0] += 1
    consumer.consume(
      .anomaly(AnomalyFact(kind: kind, time: event.time, thread: event.thread, scope: event.scope, key: key)))
  }

  /// Mutates `value` in place through `body`: one access to a dictionary's value, not a read and a write.
  @inline(__always)
  private static func update<Value, Result>(_ value: inout Value, _ body: (inout Value) -> Result) -> Result {
    body(&value)
  }

  /// Notes a read or write of the event's object, in its record, in one lookup: the thread that used it, that it was
  /// used now (its turns); and, `namingType`, its type: the one known, else the event's (`aux`), which then names
  /// it (an object not created in the trace is counted as from before). Returns the object's type (0: none known),
  /// or 0 when not `namingType`.
  @inline(__always)
  private mutating func noteUse(_ event: TraceEvent, namingType: Bool) -> UInt32 {
    guard accountsObjects else {
      // Only its type is kept (a timeline's machine): looked up, and written only when the event first names it.
      guard namingType else { return 0 }
      if let type = objects[event.object]?.type, type != 0 { return type }
      guard event.aux != 0 else { return 0 }
      objects.withValue(event.object, default: ObjectRecord()) { $0.type = event.aux }
      return event.aux
    }
    let accounts = accountsObjects
    let moment = moment
    var fromBefore = false
    let type = objects.withValue(event.object, default: ObjectRecord()) { record -> UInt32 in
      if accounts {
        record.threads |= Self.threadBit(event.thread)
        if record.hasTurns { record.turns.lastUsedAt = moment }
      }
      guard namingType else { return 0 }
      if record.type != 0 { return record.type }
      guard event.aux != 0 else { return 0 }
      record.type = event.aux
      guard accounts else { return event.aux }
      if record.isLive {
        record.liveType = event.aux
      } else {
        record.isSeen = true
        fromBefore = true
      }
      return event.aux
    }
    if fromBefore { objectsFromBefore += 1 }
    return type
  }

  private mutating func freed<Consumer: ReplayConsumer>(_ event: TraceEvent, _ consumer: inout Consumer) {
    // Everything known of the object goes with it: its record, and its properties' states (serials are never used
    // again, so nothing reads or writes them after this), with what they hold beyond the state.
    let record = objects.removeValue(event.object)
    keys.removeObject(event.object) { key, state in
      if state.overflow != 0 { keyOverflow.forget(key) }
    }
    let type = event.aux != 0 ? event.aux : (record?.type ?? 0)
    if accountsObjects, let record, record.isLive {
      if type != 0 {
        types.withValue(type, default: TypeStatistics()) {
          $0.created += 1
          $0.freed += 1
        }
      } else {
        // No event named its object: a registrar, not an object (see `registrarsWithoutEvents`).
        let stack = record.creationStack
        freedWithoutEvents[stack, default: RegistrarStatistics()].created += 1
        freedWithoutEvents[stack, default: RegistrarStatistics()].freed += 1
      }
    } else if accountsObjects, let record, record.isSeen, type != 0 {
      // Made before the recording, seen in it, freed while it ran: counted with those from before, as freed (its
      // record goes, so `typeStatistics` no longer finds it among the live ones).
      types.withValue(type, default: TypeStatistics()) {
        $0.seenOnly += 1
        $0.seenOnlyFreed += 1
      }
    }
    consumer.consume(
      .objectFreed(ObjectFact(time: event.time, thread: event.thread, object: event.object, type: type, stack: 0)))
    // Runs subscribed only to freed objects can never fire again: they end here.
    if let list = subscribers.removeValue(event.object) {
      list.forEach { scope in
        // nil: no run, or one no longer subscribed.
        let remaining =
          runs.withExisting(
            scope,
            { run -> Int? in
              guard run.subscribed else { return nil }
              run.liveObjects -= 1
              return run.liveObjects
            }) ?? nil
        if let remaining, remaining <= 0 {
          cancel(scope, time: event.time, thread: event.thread, reason: .objectsFreed, derived: true, &consumer)
        }
      }
    }
  }

  private mutating func access<Consumer: ReplayConsumer>(
    _ event: TraceEvent, _ type: UInt32, _ consumer: inout Consumer
  ) {
    let key = PropertyKey(object: event.object, property: event.key)
    let stale = event.flags & EventFlags.staleRead != 0
    // A read on this thread while another thread is between its willSet and didSet of the same property: the value
    // is being replaced as it is read, so the read may have seen the old one (and a tracking installed after it may
    // have missed the change).
    let racing =
      writesInProgress > 0
      && keys.withExisting(key, { keyOverflow.isWritten(byOtherThan: event.thread, key, $0) }) == true
    var label: UInt32 = 0
    if event.scope != 0 {
      // In place, in one access: reading `runs[scope]` would copy the run out (retaining what it holds).
      var untracedFirstRead = false
      if let placed = runs.withExisting(
        event.scope,
        { run -> UInt32? in
          guard !run.ended else { return nil }
          if run.reads.insert(key) && run.fact.kind == .untraced { untracedFirstRead = true }
          if stale { run.readStale = true }
          if racing { run.readRacing = true }
          return run.fact.label
        }), let placed
      {
        label = placed
        // Observation installs an untraced run's tracking as its closure returns, which the recorder does not see
        // (it records the end at the thread's next event): from its read on, a write on another thread may find it
        // installed (`predictFires`).
        if untracedFirstRead { keys.withState(key) { keyOverflow.subscribeUntraced(event.scope, key, &$0) } }
      } else if let ended = untracedEndedAtFire[event.scope] {
        // A read of an untraced run after the machine ended it at a predicted fire: see `predictFires`.
        label = ended
      } else {
        // Not placed in a run (label 0), and not an untracked read either: the recorder saw a scope open.
        anomaly(.accessInUnknownScope, event, &consumer, key: key)
      }
    }
    let scope = event.scope
    // The thread's last event now (`lastThread` is this event's).
    if scope == 0 { lastThreadUntrackedAccess = UntrackedAccess(key: key, stack: event.stack, time: event.time) }
    consumer.consume(
      .read(
        ReadFact(
          time: event.time, thread: event.thread, key: key, type: type, scope: scope, label: label, stale: stale,
          racing: racing, stack: event.stack)))
  }

  private mutating func willSet<Consumer: ReplayConsumer>(
    _ event: TraceEvent, _ type: UInt32, _ previousUntrackedAccess: UntrackedAccess?, _ consumer: inout Consumer
  ) {
    let key = PropertyKey(object: event.object, property: event.key)
    let direct = event.flags & EventFlags.willSetDirect != 0
    let ownAccess = direct && previousUntrackedAccess?.key == key
    openWrites.append(
      Write(
        thread: event.thread, key: key, sequence: sequence, time: event.time, stack: event.stack, kind: event.flags))
    // Coalesced: instances that read this and already fired, waiting to run again, hear nothing of this write.
    // While none waits (a program without scopes), there is nothing to list.
    let listed = listsCoalescedWrites && !awaitingRerun.isEmpty
    // Optional: an empty array was retained and released at each write (the same for `coalesced`).
    var untracedRuns: [UInt32]?
    writesInProgress += 1
    var firstWriter = event.thread
    var overlapping = false
    // The property's state as this write leaves it: its waiting instances, for those the write is coalesced into
    // (read here, not looked up again).
    var written = KeyState()
    keys.withState(key) { state in
      // Another write in progress (this one is counted): is one of them of this property, on another thread?
      if writesInProgress > 1 { overlapping = keyOverflow.isWritten(byOtherThan: event.thread, key, state) }
      keyOverflow.beginWrite(on: event.thread, key, &state)
      if state.firstWriter == TraceFormat.reservedThread { state.firstWriter = event.thread }
      firstWriter = state.firstWriter
      if state.overflow & KeyState.untracedRuns != 0 { untracedRuns = keyOverflow.takeUntracedRuns(key, &state) }
      written = state
    }
    // Listed in the scratch array only when an instance read it (none did: nothing to list, nothing to take).
    let listing = listed && keyOverflow.hasWaiting(written)
    var coalesced = listing ? coalescedInstances(reading: key, written) : nil
    consumer.consume(
      .writeBegan(
        WriteBeganFact(
          time: event.time, thread: event.thread, key: key, type: type, stack: event.stack, coalescedList: coalesced,
          direct: direct, ownAccess: ownAccess, ownAccessStack: ownAccess ? previousUntrackedAccess!.stack : 0,
          overlapping: overlapping, firstWriter: firstWriter)))
    // Kept for the next write: held only here once the fact is gone, it is emptied in place then.
    if listing { swap(&coalesced!, &coalescedScratch) }
    if let untracedRuns, !untracedRuns.isEmpty { predictFires(untracedRuns, event, key, &consumer) }
  }

  /// The fires of the untraced runs subscribed to what a willSet writes (`predictFire`). Out of line: a rare case.
  ///
  /// An untraced run is installed by Observation as its closure returns, after its last read; the recorder records
  /// its end only at its thread's next event (often the next run's first read, or never), so a run still open here
  /// may have been installed long ago. A write on another thread after its last read is taken as after its install:
  /// the run ends here and fires (each `Observations` value after the first follows such a fire). On the run's own
  /// thread a write while it is open is inside its closure (its end would have come first): it fires nothing. If
  /// the run reads again after such a fire, the write came while its closure still ran and fired nothing in the
  /// program: the trace shows it only then, and the fire stays counted (docs/analysis.md, Predicted invalidations).
  @inline(never)
  private mutating func predictFires<Consumer: ReplayConsumer>(
    _ scopes: [UInt32], _ event: TraceEvent, _ key: PropertyKey, _ consumer: inout Consumer
  ) {
    for scope in scopes {
      guard let (subscribed, ended, thread) = runs.withExisting(scope, { ($0.subscribed, $0.ended, $0.fact.thread) })
      else { continue }
      if subscribed {
        predictFire(scope, event, key, &consumer)
      } else if !ended && thread != event.thread {
        untracedEndedAtFire[scope] = runs.withExisting(scope, { $0.fact.label })
        turn &+= 1
        moment &+= 1
        endRun(TraceEvent(kind: .scopeEnd, thread: thread, time: event.time, scope: scope), &consumer)
        predictFire(scope, event, key, &consumer)
      } else if !ended {
        // Written inside its own closure: it still reads, and is installed later.
        keys.withState(key) { keyOverflow.subscribeUntraced(scope, key, &$0) }
      }
    }
  }

  /// The instances that read `key` (its `state`) and wait to run again, by label, listed in the scratch array: as
  /// many entries as labels, whatever the number of instances.
  private mutating func coalescedInstances(reading key: PropertyKey, _ state: KeyState) -> [CoalescedInstances] {
    var coalesced: [CoalescedInstances] = []
    swap(&coalesced, &coalescedScratch)
    // Emptied by its last elements (one or two, as a rule): `removeAll(keepingCapacity:)` took ≈ 57 instructions.
    while !coalesced.isEmpty { coalesced.removeLast() }
    keyOverflow.forEachWaiting(key, state) { label, count in
      coalesced.append(CoalescedInstances(label: label, instances: Int(count)))
    }
    return coalesced
  }

  /// An untraced run (tracking ObsTrace does not own) fires at this willSet, as Observation's one-shot tracking
  /// does at the first willSet of anything it read: a fire by this write, marked predicted (not recorded).
  private mutating func predictFire<Consumer: ReplayConsumer>(
    _ scope: UInt32, _ event: TraceEvent, _ key: PropertyKey, _ consumer: inout Consumer
  ) {
    guard let run = runs.withExisting(scope, { $0.fact }),
      let index = openWrites.lastIndex(where: { $0.thread == event.thread })
    else { return }
    openWrites[index].firedAny = true
    let write = openWrites[index].sequence
    noteAwaitingRerun(run.instance)
    firesInProgress.append((write, scope, run.label, true, nil))
    consumer.consume(
      .fire(
        FireFact(
          time: event.time, thread: event.thread, scope: scope, label: run.label, instance: run.instance,
          cause: key, predicted: true)))
    cancel(scope, time: event.time, thread: event.thread, reason: .fired, derived: true, &consumer)
  }

  private mutating func didSet<Consumer: ReplayConsumer>(_ event: TraceEvent, _ consumer: inout Consumer) {
    let key = PropertyKey(object: event.object, property: event.key)
    // In place: the thread's open writes are not copied, and the last one (the rule) is popped.
    var found: Write?
    if let last = openWrites.last, last.thread == event.thread, last.key == key {
      found = openWrites.removeLast()
    } else if let index = openWrites.lastIndex(where: { $0.thread == event.thread && $0.key == key }) {
      found = openWrites.remove(at: index)
    }
    guard let write = found else { return unmatchedDidSet(event, key, &consumer) }
    let unchanged = event.flags & EventFlags.unchanged != 0
    let fired = write.firedAny ? takeFires(of: write.sequence) : nil
    writesInProgress -= 1
    let sequence = write.sequence
    let outcome: WriteFact.Outcome =
      unchanged ? .unchanged : (event.flags & EventFlags.changed != 0 ? .changed : .unknown)
    // A write through `_modify` not compared may have changed nothing: a change, but not one known (see
    // `RunEndedFact.possiblyRedundant`); a setter's write is one (the macro skips an equal Equatable value).
    let known = outcome == .changed || event.flags & EventFlags.modify == 0
    keys.withState(key) { state in
      keyOverflow.endWrite(on: event.thread, key, &state)
      if !unchanged { state.noteChange(sequence, known: known) }
    }
    consumer.consume(
      .write(
        WriteFact(
          time: write.time, endTime: event.time, thread: event.thread, key: key, outcome: outcome,
          writeKind: write.kind, throughModify: event.flags & EventFlags.modify != 0,
          uncompared: outcome == .unknown ? UncomparedReason(flags: event.flags) : .notRecorded, firedScopes: fired,
          stack: write.stack)))
    if !releasedTrackings.isEmpty { dropReleasedTrackings() }
  }

  /// The fires of the write `write` (its `sequence`), in order, taken from `firesInProgress`; nil when there are none.
  private mutating func takeFires(of write: UInt64) -> FiredScopes? {
    var scopes: [(scope: UInt32, label: UInt32)] = []
    var predicted: [UInt32] = []
    var again: [(scope: UInt32, how: RepeatedFire)] = []
    var kept = 0
    for index in firesInProgress.indices {
      let fire = firesInProgress[index]
      if fire.write == write {
        scopes.append((fire.scope, fire.label))
        if fire.predicted { predicted.append(fire.scope) }
        if let how = fire.again { again.append((fire.scope, how)) }
      } else {
        firesInProgress[kept] = fire
        kept += 1
      }
    }
    firesInProgress.removeLast(firesInProgress.count - kept)
    return FiredScopes(scopes: scopes, predicted: predicted, again: again)
  }

  private mutating func fired<Consumer: ReplayConsumer>(_ event: TraceEvent, _ consumer: inout Consumer) {
    guard
      let (run, beginSequence) = runs.withExisting(
        event.scope,
        { run in
          run.subscribed || run.fact.kind == .named || !run.ended ? (run.fact, run.beginSequence) : nil
        }) ?? nil
    else {
      if let run = endedWhileWaiting.removeValue(forKey: event.scope) {
        // The tracking of an Observations iteration that ended while waiting, still installed in Observation: its
        // fire wakes nothing (see `endedWhileWaiting`).
        let cause = PropertyKey(object: event.object, property: event.key)
        let explained =
          event.object != 0 && openWrites.contains(where: { $0.thread == event.thread && $0.key == cause })
        return consumer.consume(
          .fire(
            FireFact(
              time: event.time, thread: event.thread, scope: event.scope, label: run.label,
              instance: run.instance, cause: explained ? cause : nil, afterSequenceEnded: true)))
      }
      if !firedTrackings.isEmpty, let how = firesAgain(event) { return fireAgain(event, how, &consumer) }
      return anomaly(.fireOfUnknownScope, event, &consumer)
    }
    noteAwaitingRerun(run.instance)
    placeFire(event, run, again: nil, &consumer)
    if run.kind == .tracking {
      cancel(event.scope, time: event.time, thread: event.thread, reason: .fired, derived: true, &consumer)
      // Observation holds it until its handler returns (and a willSet that took it before then may fire it again).
      // (A run fired anew while it was still open: a cancel awaited for its earlier handler no longer settles it.)
      if !cancelsPending.isEmpty && firedTrackings.contains(event.scope) { unpend(event.scope) }
      firedTrackings.put(event.scope, FiredTracking(fact: run, beginSequence: beginSequence, thread: event.thread))
    }
  }

  /// A fire of `run` said, as an invalidation by the write in progress on its thread to the property the fire names
  /// when there is one (that write then fired, and the fire waits on it in `firesInProgress`): a first fire
  /// (`again` nil) or a fire again.
  private mutating func placeFire<Consumer: ReplayConsumer>(
    _ event: TraceEvent, _ run: RunFact, again: RepeatedFire?, _ consumer: inout Consumer
  ) {
    let cause = PropertyKey(object: event.object, property: event.key)
    var explained = false
    if event.object != 0,
      let index = openWrites.lastIndex(where: { $0.thread == event.thread && $0.key == cause })
    {
      openWrites[index].firedAny = true
      firesInProgress.append((openWrites[index].sequence, event.scope, run.label, false, again))
      explained = true
    }
    consumer.consume(
      .fire(
        FireFact(
          time: event.time, thread: event.thread, scope: event.scope, label: run.label, instance: run.instance,
          cause: explained ? cause : nil, again: again)))
  }

  /// How a fire of a one-shot tracking that fired before is a fire again (`RepeatedFire`), or nil when Observation
  /// cannot have held it: a handler of it still runs (Observation cancels after the handler), or its cancel is not
  /// known done (its cancelling thread recorded nothing since), or the write that fires it began before that.
  @inline(never)
  private func firesAgain(_ event: TraceEvent) -> RepeatedFire? {
    guard let fired = firedTrackings[event.scope] else { return nil }
    let how: RepeatedFire = fired.thread == event.thread ? .nested : .concurrent
    if fired.handlers > 0 || fired.heldUntil == 0 { return how }
    let cause = PropertyKey(object: event.object, property: event.key)
    guard event.object != 0,
      let write = openWrites.last(where: { $0.thread == event.thread && $0.key == cause }),
      write.sequence < fired.heldUntil
    else { return nil }
    return how
  }

  /// A fire again of a one-shot tracking Observation still held: an invalidation by the write in progress (its
  /// handler runs again), with no cancel of its own (the run was cancelled at its first fire).
  @inline(never)
  private mutating func fireAgain<Consumer: ReplayConsumer>(
    _ event: TraceEvent, _ how: RepeatedFire, _ consumer: inout Consumer
  ) {
    guard let fired = firedTrackings[event.scope] else { return }
    let run = fired.fact
    // Its instance waits to run again, as at its first fire, unless a later run of it ended since.
    let latest = instances.withExisting(run.instance) { instance -> Bool in
      instance.firedAgain = true
      return instance.lastRunBeginSequence == fired.beginSequence
    }
    if latest == true { noteAwaitingRerun(run.instance) }
    placeFire(event, run, again: how, &consumer)
    // Its handler runs again: a recorded cancel follows it.
    firedTrackings.withExisting(event.scope) { fired in
      fired.handlers += 1
      fired.heldUntil = 0
    }
    if !cancelsPending.isEmpty { unpend(event.scope) }
  }

  /// `scope`'s tracking is held again (fired again, or anew): the cancel its thread's next event would settle is
  /// not awaited any more. Out of line: rare.
  @inline(never)
  private mutating func unpend(_ scope: UInt32) {
    cancelsPending.removeAll { $0.scope == scope }
  }

  /// The recorded cancel that follows a fired tracking's handler: that handler returned; when it was the last,
  /// Observation cancels the tracking before the thread's next event (`settleCancels`).
  @inline(never)
  private mutating func handlerReturned(_ event: TraceEvent) {
    let sequence = sequence
    // In place: nil when it is not kept or no handler of it runs, else whether this was its last.
    let returned =
      firedTrackings.withExisting(event.scope) { fired -> Bool? in
        guard fired.handlers > 0 else { return nil }
        fired.handlers -= 1
        guard fired.handlers == 0 else { return false }
        fired.cancelSequence = sequence
        fired.heldUntil = 0
        return true
      } ?? nil
    guard let last = returned else { return }
    if last { cancelsPending.append((event.scope, event.thread)) }
    if cancelsPending.count > Self.cancelsPendingKept {
      // A thread that exited after its cancel records nothing more: held until just after the cancel, at least.
      let oldest = cancelsPending.removeFirst().scope
      if let at = firedTrackings.withExisting(oldest, { $0.cancelSequence }) { release(oldest, heldUntil: at + 1) }
    }
  }

  /// An event of `thread`: the fired trackings whose last handler returned on it are cancelled in Observation now.
  /// Each entry is current (`unpend`): only its thread is compared, nothing looked up.
  @inline(never)
  private mutating func settleCancels(on thread: UInt32) {
    var kept = 0
    for index in cancelsPending.indices {
      let pending = cancelsPending[index]
      if pending.thread == thread {
        release(pending.scope, heldUntil: sequence)
      } else {
        cancelsPending[kept] = pending
        kept += 1
      }
    }
    cancelsPending.removeLast(cancelsPending.count - kept)
  }

  /// A fired tracking Observation no longer holds: kept while a write that began before `heldUntil` is in progress.
  private mutating func release(_ scope: UInt32, heldUntil: UInt64) {
    firedTrackings.withExisting(scope) { $0.heldUntil = heldUntil }
    releasedTrackings.append((scope, heldUntil))
    if releasedTrackings.count - releasedHead > Self.releasedTrackingsKept {
      dropReleasedTrackings(keeping: Self.releasedTrackingsKept / 2)
    }
    dropReleasedTrackings()
  }

  /// Drops the released trackings no write in progress may still fire (all but the newest `keeping`, at most).
  @inline(never)
  private mutating func dropReleasedTrackings(keeping: Int = Int.max) {
    let oldestWrite = openWrites.first?.sequence ?? UInt64.max
    var next = releasedHead
    while next < releasedTrackings.count {
      let (scope, heldUntil) = releasedTrackings[next]
      guard heldUntil <= oldestWrite || releasedTrackings.count - next > keeping else { break }
      next += 1
      // Not if it fired again since (then it is released again, later).
      if firedTrackings.withExisting(scope, { $0.handlers == 0 && $0.heldUntil == heldUntil }) == true {
        firedTrackings.remove(scope)
      }
    }
    if next == releasedTrackings.count {
      releasedTrackings.removeAll(keepingCapacity: true)
      next = 0
    } else if next > 1024 && 2 * next > releasedTrackings.count {
      // The dropped front goes once it is most of the list: amortized O(1) a release, not a move of the rest each.
      releasedTrackings.removeFirst(next)
      next = 0
    }
    releasedHead = next
  }

  private mutating func cancel<Consumer: ReplayConsumer>(
    _ scope: UInt32, time: UInt64, thread: UInt32, reason: CancelReason, derived: Bool, _ consumer: inout Consumer
  ) {
    guard
      let (fact, wasSubscribed, ended, sequence, beginSequence) = runs.withExisting(
        scope,
        { run in
          defer { run.subscribed = false }
          return (run.fact, run.subscribed, run.ended, run.sequence, run.beginSequence)
        })
    else { return }
    if ended {
      runs.remove(scope)
      if derived && reason == .objectsFreed && sequence != 0 { endedWhenFreed.insert(scope) }
      if reason == .sequenceEnded && wasSubscribed { endedWhileWaiting[scope] = fact }
      if derived && reason == .objectsFreed && fact.kind == .tracking {
        dropEndedInstance(fact.instance, lastRun: beginSequence)
      }
    }
    // One cancel per run: a one-shot fire is cancelled here, and the recorder's own cancel that follows it
    // finds the run gone.
    guard wasSubscribed else { return }
    consumer.consume(
      .cancel(
        CancelFact(
          time: time, thread: thread, scope: scope, label: fact.label, instance: fact.instance,
          reason: reason, derived: derived)))
  }

  private mutating func endRun<Consumer: ReplayConsumer>(_ event: TraceEvent, _ consumer: inout Consumer) {
    // Moved out while it ends (and put back if it stays): nothing it holds is copied.
    guard runs.withExisting(event.scope, { !$0.ended }) == true, var run = runs.remove(event.scope) else {
      return anomaly(.eventOfUnknownScope, event, &consumer)
    }
    run.ended = true
    // A nested list merges into the enclosing one, as the real generateAccessList does on exit.
    var mergedInto: UInt32 = 0
    if run.fact.parent != 0 {
      runs.withExisting(run.fact.parent) { parent in
        guard !parent.ended else { return }
        for key in run.reads.elements { parent.reads.insert(key) }
        mergedInto = parent.fact.label
      }
    }
    if run.sequence != 0 {
      sequences[run.sequence]?.lastObjects = Set(run.reads.elements.map(\.object))
    }
    if run.fact.kind == .tracking && !run.beganNewInstance && !run.reads.isEmpty && !awaitingRerun.isEmpty,
      let other = instanceReadAlike(run, thread: event.thread)
    {
      takeAsRun(of: other, &run)
    }
    let id = run.fact.instance
    var redundant = false
    var possiblyRedundant = false
    let first: Bool
    // It waits no more: its instance runs again here (with what its previous run read: taken out just below).
    if !awaitingRerun.isEmpty { stopAwaiting(id) }
    var queued = run.beganNewInstance
    if var previous = instances.removeValue(id) {
      first = false
      queued = previous.queued
      // Redundant: it read only what its previous run read, and none of it really changed since that run
      // began (a run that reads something new, a row added or another model, saw something change). A run that
      // read a value while another thread was replacing it raced a change: not redundant (see `readRacing`).
      // A write through `_modify` not compared counts as a change, which it may not have been: a run that only
      // such writes kept from being redundant is possibly redundant, and the scope's count a least one.
      if !run.reads.isEmpty && !run.readStale && !run.readRacing {
        let began = previous.lastRunBeginSequence
        redundant = true
        possiblyRedundant = true
        for key in run.reads.elements {
          guard previous.lastReads.contains(key) else {
            (redundant, possiblyRedundant) = (false, false)
            break
          }
          let (real, known) = keys.withExisting(key, { ($0.lastRealChange, $0.lastKnownChange) }) ?? (0, 0)
          if known >= began {
            (redundant, possiblyRedundant) = (false, false)
            break
          }
          if real >= began { redundant = false }
        }
        if redundant { possiblyRedundant = false }
      }
      if spareReadLists.count < Self.spareReadListLimit, var spare = previous.lastReads.takeElements() {
        spare.removeAll(keepingCapacity: true)
        spareReadLists.append(spare)
      }
    } else if !recentlyForgotten.isEmpty && recentlyForgotten[id] != nil {
      // A run of an instance the replay forgot: not a new instance; what its previous run read is not known, so it
      // is not judged redundant.
      first = false
      queued = true
      runsOfForgottenInstances[run.fact.label, default: 0] += 1
    } else {
      first = true
    }
    // Its slot is empty (its previous run's instance was taken out above): made in place, not through the
    // subscript's setter, which copies the optional it is given and tests the slot by copying it out.
    instances.withValue(
      id,
      default: Instance(
        label: run.fact.label, lastRunBeginSequence: run.beginSequence, lastReads: run.reads, queued: queued,
        thread: run.fact.thread)
    ) { _ in }
    consumer.consume(
      .runEnded(
        RunEndedFact(
          run: run.fact, end: event.time, reads: run.reads.elements, firstOfInstance: first, redundant: redundant,
          possiblyRedundant: possiblyRedundant, afterFire: run.afterFire, readStale: run.readStale,
          readRacing: run.readRacing, sequence: run.sequence, isolation: run.isolation,
          endedAtTraceEnd: endingAtTraceEnd, mergedInto: mergedInto)))
    if run.fact.kind == .untraced && !run.reads.isEmpty {
      // Observation installs its observers as the tracking returns: from here the next willSet of anything it
      // read fires it (predicted at that willSet).
      run.subscribed = true
      for key in run.reads.elements { keys.withState(key) { keyOverflow.subscribeUntraced(event.scope, key, &$0) } }
    }
    // Keep the run while its observers are or will be installed: a tracking run that read nothing is never
    // installed (the real access list stays nil), and a named scope never is.
    if run.subscribed || (run.fact.kind != .named && !run.reads.isEmpty) {
      runs.put(event.scope, run)
    } else if run.fact.kind != .named && run.fact.kind != .untraced {
      endedWithoutTracedReads[event.thread] = (event.scope, run)
    }
  }

  /// Drops a re-tracked call's instance (`Instance.queued`) whose latest run was just ended by the free of every
  /// object it read, unfired: the recorder continues such an instance only from its label's queue of fired
  /// instances, which it is not in (it did not fire since that run began, nor wait), so no run continues it again.
  /// Without this a program that makes short-lived models, each tracked once, kept every one's instance until the
  /// end (tryout14's H18: 3.2 M models, a report of 1.17 GB).
  @inline(never)
  private mutating func dropEndedInstance(_ instance: UInt32, lastRun beginSequence: UInt64) {
    guard firedSinceRun.isEmpty || !firedSinceRun.contains(instance),
      awaitingRerun.isEmpty || !awaitingRerun.contains(instance),
      instances.withExisting(
        instance, { $0.queued && !$0.firedAgain && $0.lastRunBeginSequence == beginSequence }) == true,
      var dropped = instances.remove(instance)
    else { return }
    if !recordedInstanceOf.isEmpty, let recorded = recordedInstanceOf.removeValue(forKey: instance) {
      replayedInstanceOf[recorded] = nil
    }
    if spareReadLists.count < Self.spareReadListLimit, var spare = dropped.lastReads.takeElements() {
      spare.removeAll(keepingCapacity: true)
      spareReadLists.append(spare)
    }
  }

  /// The waiting instance whose last run read exactly what `run` (a re-tracking run that ends) read, where the
  /// recorder gave the run another waiting instance of its label, whose last run read something else; nil when there
  /// is none, or more than one, or the recorder's choice was exact.
  ///
  /// The recorder takes an instance as the run begins, before its reads are known: of the fired instances waiting in
  /// the run's context, the one that fired first (`ScopeInstances`). List rows re-rendered in display order rather
  /// than in the order their writes fired them are then each taken for another row: the row whose write changed
  /// nothing was counted as the other row's run (which changed: not redundant), and that row's as a run that read
  /// something new (tryout18's R1: `redundant 0` for a redundant run). Both instances must be `queued` (made by the
  /// re-track rule: never an `Observations` iterator, a harness, a named or an untraced scope, whose instances the
  /// recorder knows), have last run on this run's thread (the context the recorder chose in, as far as the trace
  /// tells), and no change handler of the label may be running on the thread (a re-track from `onChange` continues
  /// that handler's instance, exactly).
  /// Only while at most `readAlikeChecked` instances of the label wait: past that the recorder's choice stands, so
  /// that no run walks thousands of them (a call re-tracked faster than its writes fire it, `waitingKeptPerLabel`).
  @inline(never)
  private func instanceReadAlike(_ run: Run, thread: UInt32) -> UInt32? {
    let recorded = run.fact.instance
    let label = run.fact.label
    func readAlike(_ reads: OrderedKeySet) -> Bool {
      reads.count == run.reads.count && run.reads.elements.allSatisfy { reads.contains($0) }
    }
    guard let queue = waitingQueues[label], queue.live > 0, queue.live <= Self.readAlikeChecked,
      awaitingRerun.contains(recorded), let instance = instances[recorded],
      instance.queued && instance.thread == thread && !readAlike(instance.lastReads)
    else { return nil }
    var found: UInt32?
    for entry in queue.entries[queue.head...] where entry.instance != recorded {
      guard awaitingRerun[entry.instance]?.ticket == entry.ticket, let waiting = instances[entry.instance],
        waiting.queued && waiting.thread == thread && readAlike(waiting.lastReads)
      else { continue }
      // Two waiting instances read alike: which one this run continues is not known, and the recorder's stands.
      if found != nil { return nil }
      found = entry.instance
    }
    guard let found else { return nil }
    var handlerRunning = false
    firedTrackings.forEachEntry { _, fired in
      if fired.handlers > 0 && fired.thread == thread && fired.fact.label == label { handlerRunning = true }
    }
    return handlerRunning ? nil : found
  }

  /// Takes the run that ends, which the recorder gave the instance `run.fact.instance`, as a run of `other` (see
  /// `instanceReadAlike`): `other` leaves its label's queue, and the recorded instance takes its place there, still
  /// waiting; from here the recorder's id of each is replayed as the other's.
  @inline(never)
  private mutating func takeAsRun(of other: UInt32, _ run: inout Run) {
    let recorded = run.fact.instance
    let label = run.fact.label
    // `other` leaves the queue, and the recorded instance (which left it as the run began) takes its place.
    let ticket = awaitingRerun[other]?.ticket ?? 0
    waitingQueues.withExisting(label) { queue in
      if let index = queue.entries[queue.head...].firstIndex(where: { $0.instance == other && $0.ticket == ticket }) {
        queue.entries[index].instance = recorded
      }
    }
    awaitingRerun.withExisting(other) { $0.ticket = 0 }
    awaitingRerun.withExisting(recorded) { $0.ticket = ticket }
    // What fired since the last run began: the run's own instance's is taken as the run begins.
    let recordedFired = run.afterFire
    run.afterFire = firedSinceRun[other] != nil
    firedSinceRun[other] = nil
    if recordedFired { firedSinceRun[recorded] = true }
    // The recorder's ids of the two, swapped.
    let recordedOfRun = recordedInstanceOf[recorded] ?? recorded
    let recordedOfOther = recordedInstanceOf[other] ?? other
    for (id, replayed) in [(recordedOfRun, other), (recordedOfOther, recorded)] {
      if id == replayed {
        replayedInstanceOf[id] = nil
        recordedInstanceOf[replayed] = nil
      } else {
        replayedInstanceOf[id] = replayed
        recordedInstanceOf[replayed] = id
      }
    }
    run.fact.instance = other
  }

  /// Marks `instance` as fired and waiting to run again (if a run of it has ended: an instance is known from then):
  /// what its last run read counts it among the waiting instances a write of it is coalesced into, and a `queued`
  /// instance joins its label's queue.
  private mutating func noteAwaitingRerun(_ instance: UInt32) {
    firedSinceRun[instance] = true
    guard awaitingRerun[instance] == nil,
      let (label, queued, reads) = instances.withExisting(instance, { ($0.label, $0.queued, $0.lastReads.elements) })
    else { return }
    if listsCoalescedWrites {
      for key in reads { keys.withState(key) { keyOverflow.addWaiting(label, key, &$0) } }
    }
    var ticket: UInt64 = 0
    if queued {
      ticket = nextTicket
      nextTicket += 1
    }
    awaitingRerun[instance] = Awaiting(label: label, ticket: ticket)
    if queued { enqueueWaiting(instance, label: label, ticket: ticket) }
  }

  /// `instance` waits no more (its next run ends, or an untraced one begins): no write is coalesced into it from
  /// here, and it leaves its label's queue.
  private mutating func stopAwaiting(_ instance: UInt32) {
    guard let awaiting = awaitingRerun.removeValue(instance) else { return }
    if awaiting.ticket != 0 { waitingQueues.withExisting(awaiting.label) { $0.live -= 1 } }
    guard listsCoalescedWrites, let reads = instances.withExisting(instance, { $0.lastReads.elements }) else { return }
    // In place, and not made again for a freed object (whose state went with it, its counts too).
    for key in reads { keys.withExisting(key) { keyOverflow.removeWaiting(awaiting.label, key, &$0) } }
  }

  /// A run of `instance` began: if it waited in its label's queue, the recorder took it from there (it still waits,
  /// for the writes coalesced into this run, until the run ends).
  private mutating func leaveQueue(_ instance: UInt32) {
    let label =
      awaitingRerun.withExisting(instance) { awaiting -> UInt32? in
        guard awaiting.ticket != 0 else { return nil }
        awaiting.ticket = 0
        return awaiting.label
      } ?? nil
    if let label { waitingQueues.withExisting(label) { $0.live -= 1 } }
  }

  /// Puts a `queued` instance that fired at the end of its label's queue; past `waitingKeptPerLabel` waiting, the
  /// oldest is forgotten. The queue drops entries no longer current as it goes (amortized O(1) a fire).
  @inline(never)
  private mutating func enqueueWaiting(_ instance: UInt32, label: UInt32, ticket: UInt64) {
    let oldest = waitingQueues.withValue(label, default: WaitingQueue()) { queue -> UInt32? in
      queue.entries.append((instance, ticket))
      queue.live += 1
      if queue.entries.count - queue.head > 2 * queue.live + 64 {
        // Mostly entries of instances that ran again: only the current ones are kept, in order.
        queue.entries = queue.entries[queue.head...].filter { awaitingRerun[$0.instance]?.ticket == $0.ticket }
        queue.head = 0
      }
      guard queue.live > Self.waitingKeptPerLabel else { return nil }
      while queue.head < queue.entries.count {
        let entry = queue.entries[queue.head]
        queue.head += 1
        if awaitingRerun[entry.instance]?.ticket == entry.ticket {
          queue.live -= 1
          return entry.instance
        }
      }
      return nil
    }
    waitingQueues.withExisting(label) { queue in
      if queue.head > 64 && queue.head * 2 > queue.entries.count {
        queue.entries.removeFirst(queue.head)
        queue.head = 0
      }
    }
    if let oldest { forget(oldest) }
  }

  /// Forgets a waiting instance that its label's queue pushed out: its waiting, its fire and its last run go, and
  /// it is counted in `forgottenInstances`.
  @inline(never)
  private mutating func forget(_ instance: UInt32) {
    guard let awaiting = awaitingRerun.removeValue(instance) else { return }
    firedSinceRun.removeValue(instance)
    forgottenInstances[awaiting.label, default: 0] += 1
    if forgottenOrder.count < Self.recentlyForgottenKept {
      forgottenOrder.append(instance)
    } else {
      let oldest = forgottenOrder[forgottenNext]
      if let times = recentlyForgotten[oldest] {
        if times > 1 { recentlyForgotten.insert(oldest, times - 1) } else { recentlyForgotten.removeValue(forKey: oldest) }
      }
      forgottenOrder[forgottenNext] = instance
      forgottenNext = (forgottenNext + 1) % Self.recentlyForgottenKept
    }
    recentlyForgotten.withValue(instance, default: { 0 }) { $0 += 1 }
    guard var forgotten = instances.removeValue(instance) else { return }
    if listsCoalescedWrites {
      for key in forgotten.lastReads.elements {
        keys.withExisting(key) { keyOverflow.removeWaiting(awaiting.label, key, &$0) }
      }
    }
    if spareReadLists.count < Self.spareReadListLimit, var spare = forgotten.lastReads.takeElements() {
      spare.removeAll(keepingCapacity: true)
      spareReadLists.append(spare)
    }
  }

  /// What the replay holds per instance (for tests: it follows the instances that may still run, not every one the
  /// trace had): instances known, waiting to run again, fired since their run began, and in their labels' queues.
  var instanceTableSizes: (instances: Int, awaiting: Int, firedSinceRun: Int, queued: Int) {
    var queued = 0
    waitingQueues.forEachEntry { _, queue in queued += queue.entries.count - queue.head }
    return (instances.count, awaitingRerun.count, firedSinceRun.count, queued)
  }

  /// What the replay holds per object and per instance, entries and array slots (for tests: it follows the live
  /// objects and the instances that may still run, not every one the trace had).
  var perObjectSizes: (objects: Int, keyObjects: Int, subscribers: Int, slots: Int) {
    (objects.count, keys.objectCount, subscribers.count, max(objects.slots, keys.objectSlots, subscribers.slots))
  }
  var instanceSlots: Int { max(instances.slots, awaitingRerun.slots, firedSinceRun.slots) }

  /// Fired one-shot trackings kept (for tests: they go once no write in progress may still fire them).
  var firedTrackingCount: Int { firedTrackings.count }

  /// `Observations` sequences still running at the end of the trace that read `object` in their last value:
  /// the labels of their call sites.
  public func liveLoops(reading object: UInt32) -> [UInt32] {
    sequences.values.filter { $0.ending == nil && $0.lastObjects.contains(object) }.map(\.label)
  }

  /// Objects created in the trace and never freed, with their types (registrars that recorded no event, which
  /// name no object, are `liveRegistrarsWithoutEvents`).
  public var liveObjectSerials: [(serial: UInt32, type: UInt32)] {
    var result: [(serial: UInt32, type: UInt32)] = []
    objects.forEachEntry { serial, record in
      guard record.isLive, record.typeOfLive != 0 else { return }
      result.append((serial, record.typeOfLive))
    }
    return result
  }

  /// Registrars created in the trace, never freed, that recorded no event: their serials and creation stacks (0:
  /// none recorded).
  public var liveRegistrarsWithoutEvents: [(serial: UInt32, stack: UInt32)] {
    var result: [(serial: UInt32, stack: UInt32)] = []
    objects.forEachEntry { serial, record in
      guard record.isLive, record.typeOfLive == 0 else { return }
      result.append((serial, record.creationStack))
    }
    return result
  }

  /// Registrars created in the trace that recorded no event, by creation stack (0: none recorded), freed or not.
  ///
  /// A registrar names its object only at the object's first recorded event (`objectBound`, docs/analysis.md): one
  /// whose object was never read or written while recording is of no known object and type, and one object of a
  /// class with `@Observable` at k levels has k of them. They are counted here, never as objects.
  public var registrarsWithoutEvents: [UInt32: RegistrarStatistics] {
    var result = freedWithoutEvents
    for (_, stack) in liveRegistrarsWithoutEvents { result[stack, default: RegistrarStatistics()].created += 1 }
    return result
  }

  /// The threads that created, read or wrote the object `serial`, as `threadBit`s (0 when unknown or freed).
  public func threadBits(ofObject serial: UInt32) -> UInt64 { objects[serial]?.threads ?? 0 }

  /// A thread's bit in an object's set of threads: serial modulo 64, so that a set costs one word; with more than
  /// 64 threads two may share a bit, which only errs towards "this thread may have used it".
  public static func threadBit(_ thread: UInt32) -> UInt64 { 1 << UInt64(thread % 64) }

  /// Runs still held: those whose observers are installed, or about to be.
  public var liveRunCount: Int { runs.count }

  /// Ends the runs still open after the last event, each at the trace's last time, as runs whose end is not in the
  /// trace (`RunEndedFact.endedAtTraceEnd`). The recorder records an untraced run's end only at its thread's next
  /// event (`predictFires`): a run whose thread recorded nothing after it (an `Observations` loop waiting for its
  /// next value when the trace ended, its write never made) would otherwise stay open, uncounted and unsaid, though
  /// its begin and reads are in the trace. A traced run still open was inside its closure when the recording
  /// stopped (a thread running at the stop, or a process killed there): its begin and reads are in the trace, so it
  /// is a run too, as `export` draws it up to the trace's end. Then states the writes whose didSet is not in the
  /// trace (`finishOpenWrites`). Call once, after the last event.
  public mutating func finish<Consumer: ReplayConsumer>(into consumer: inout Consumer) {
    if endCut != .none { stateAccessesAtEnd(&consumer) }
    // Inner runs first: an outer run's reads then include theirs, as when they end in the program.
    for scope in runs.ids.reversed() {
      guard let (ended, thread) = runs.withExisting(scope, { ($0.ended, $0.fact.thread) }), !ended else { continue }
      turn &+= 1
      moment &+= 1
      endingAtTraceEnd = true
      endRun(TraceEvent(kind: .scopeEnd, thread: thread, time: lastTime, scope: scope), &consumer)
      endingAtTraceEnd = false
    }
    if !openWrites.isEmpty { finishOpenWrites(&consumer) }
  }

  /// The reads outside any scope that are the last events of threads the recording may have cut (`endCut`), each
  /// stated again as `ReadFact.atEnd`, in thread order: the access of a `_modify` comes before its willSet, and a
  /// recording that ended between the two holds an access that reads like the program's read but may not be one.
  private mutating func stateAccessesAtEnd<Consumer: ReplayConsumer>(_ consumer: inout Consumer) {
    var last: [(thread: UInt32, access: UntrackedAccess)] = []
    if let access = lastThreadUntrackedAccess { last.append((lastThread, access)) }
    untrackedAccessLast.forEachEntry { thread, access in last.append((thread, access)) }
    for (thread, access) in last.sorted(by: { $0.thread < $1.thread }) where endCut.cuts(thread) {
      consumer.consume(
        .read(
          ReadFact(
            time: access.time, thread: thread, key: access.key, type: 0, scope: 0, label: 0, stale: false,
            stack: access.stack, atEnd: true)))
    }
    lastThreadUntrackedAccess = nil
    untrackedAccessLast = DenseTable<UntrackedAccess>()
  }

  /// The writes whose didSet is not in the trace (the recording stopped inside them: `exit` from an observer the
  /// write fired), each stated as a write, unfinished, with what it fired: their beginning and their fires were
  /// counted, and a timeline shows a write only when it is stated.
  private mutating func finishOpenWrites<Consumer: ReplayConsumer>(_ consumer: inout Consumer) {
    for write in openWrites {
      let fired = write.firedAny ? takeFires(of: write.sequence) : nil
      consumer.consume(
        .write(
          WriteFact(
            time: write.time, endTime: lastTime, thread: write.thread, key: write.key, outcome: .unknown,
            writeKind: write.kind, throughModify: false, firedScopes: fired, stack: write.stack, unfinished: true)))
    }
    openWrites.removeAll()
    writesInProgress = 0
  }

  /// Entries of the per-object subscriber lists (for tests: what the replay holds for runs that subscribed).
  var subscriptionCount: Int {
    var count = 0
    subscribers.forEachEntry { count += $1.count }
    return count
  }

  /// Per-type created/freed counts, including objects still alive at the end; registrars that recorded no event
  /// are not objects of any type (`registrarsWithoutEvents`).
  public var typeStatistics: [UInt32: TypeStatistics] {
    var result: [UInt32: TypeStatistics] = [:]
    types.forEachEntry { type, statistics in result[type] = statistics }
    for (_, type) in liveObjectSerials { result[type, default: TypeStatistics()].created += 1 }
    objects.forEachEntry { _, record in
      if record.isSeen { result[record.type, default: TypeStatistics()].seenOnly += 1 }
    }
    return result
  }

  /// The stack a live object was created with (0: not recorded).
  public func creationStack(ofObject object: UInt32) -> UInt32 { objects[object]?.creationStack ?? 0 }

  /// The turn a live object created in the trace was created in, and when it was created and last read or written
  /// (nil: not created in the trace, or freed).
  public func turns(ofObject object: UInt32) -> ObjectTurns? {
    guard let record = objects[object], record.hasTurns else { return nil }
    return record.turns
  }

  /// The type of a live object, or 0.
  public func type(ofObject object: UInt32) -> UInt32 { objects[object]?.type ?? 0 }

  /// Objects that a run still subscribed at this point read (a view's tracking, an observer, a loop's value,
  /// installed and not yet fired or cancelled; an untraced run's predicted subscription): something still watches
  /// them. Computed when asked (for the findings, once), from the subscriber lists.
  public var watchedObjects: Set<UInt32> {
    var watched: Set<UInt32> = []
    subscribers.forEachEntry { object, list in
      var subscribed = false
      list.forEach { scope in
        if !subscribed, runs[scope]?.subscribed == true { subscribed = true }
      }
      if subscribed { watched.insert(object) }
    }
    for (key, scopes) in keyOverflow.untracedRuns where !scopes.isEmpty { watched.insert(key.object) }
    return watched
  }
}

/// What the replay knows of one object (`ReplayMachine`'s table by serial), as plain data: every field is a word or
/// less, so that the table's slots are copied and destroyed without reference counting. Its accounts (all but
/// `type`) are kept only when the machine `accountsObjects`.
struct ObjectRecord {
  /// Created in the trace and not freed.
  var isLive = false
  /// Used in the trace without its creation in it (made before the recording), and named a type then.
  var isSeen = false
  /// Whether `turns` holds its turns (a live object created in the trace).
  var hasTurns = false
  /// Its type as its creation gave it (`aux`; 0 for a registrar that does not know its object yet).
  var liveType: UInt32 = 0
  /// Its type once known, from its creation or its first read or write (0: not known).
  var type: UInt32 = 0
  /// The stack it was created with (0: none recorded).
  var creationStack: UInt32 = 0
  /// The threads that created, read or wrote it, as `ReplayMachine.threadBit`s.
  var threads: UInt64 = 0
  var turns = ObjectTurns(created: 0, createdAt: 0, lastUsedAt: 0)

  /// The type of a live object: its known type, else what its creation gave.
  var typeOfLive: UInt32 { type != 0 ? type : liveType }
}

/// When an object was created and last used. `created` is a turn: the number of run boundaries (a run's begin or
/// end) before it (a run begins when a view renders, an observer re-tracks, an `Observations` loop takes a value);
/// objects created in one turn, with no run beginning or ending between them, were created together (a screen's
/// rows). `createdAt` and `lastUsedAt` are moments, which also count object creations: an object whose last use
/// came before another object of its type was created, in a later turn, was left behind by it (see
/// docs/analysis.md, `leaked-object`).
public struct ObjectTurns: Equatable, Sendable {
  public var created: UInt32
  public var createdAt: UInt32
  public var lastUsedAt: UInt32

  /// Whether this object was left behind by `newer`: created in an earlier turn, and not read or written since
  /// `newer` was created.
  public func isLeftBehind(by newer: ObjectTurns) -> Bool {
    created < newer.created && lastUsedAt < newer.createdAt
  }
}

/// Per object property state, by object serial then property id: an array lookup, no hashing, since the replay
/// touches it on every write. An object's first property's state is held inline in the object's slot (most objects
/// are read and written through one property): no second table, no second lookup, no allocation of its own. The
/// other properties' states are in a second table by object, apart, so that a slot holds nothing but the first
/// state: with a plain `State` the table's slots are plain data, copied and destroyed without reference counting.
struct KeyTable<State> {
  struct ObjectStates {
    var firstProperty: UInt32
    var first: State
  }

  /// By object serial: serials are handed out in increasing order and objects come and go, so a window that slides
  /// over the live ones (`RecentTable`), not an array over every serial the trace named.
  private var byObject = RecentTable<ObjectStates>()
  /// The states of each object's properties past its first, by object then property.
  private var others = RecentTable<DenseTable<State>>()

  subscript(key: PropertyKey) -> State? {
    @inline(__always) get {
      guard let states = byObject[key.object] else { return nil }
      return states.firstProperty == key.property ? states.first : others[key.object]?[key.property]
    }
  }

  /// Mutates the state of `key` in place, if it has one (nothing is created, nothing copied).
  @inline(__always)
  mutating func withExisting<Result>(_ key: PropertyKey, _ body: (inout State) -> Result) -> Result? {
    let first = byObject.withExisting(key.object) { states -> Result? in
      states.firstProperty == key.property ? body(&states.first) : nil
    }
    switch first {
    case .none: return nil
    case .some(.some(let result)): return result
    case .some(.none): return withOther(key, body)
    }
  }

  @inline(never)
  private mutating func withOther<Result>(_ key: PropertyKey, _ body: (inout State) -> Result) -> Result? {
    others.withExisting(key.object) { $0.withExisting(key.property, body) } ?? nil
  }

  /// Mutates the state of `key` in place (created from `value` when absent).
  @inline(__always)
  mutating func withState<Result>(
    _ key: PropertyKey, default value: @autoclosure () -> State, _ body: (inout State) -> Result
  ) -> Result {
    let first = byObject.withValue(key.object, default: ObjectStates(firstProperty: key.property, first: value())) {
      states -> Result? in
      states.firstProperty == key.property ? body(&states.first) : nil
    }
    if let first { return first }
    return others.withValue(key.object, default: DenseTable()) { $0.withValue(key.property, default: value(), body) }
  }

  /// Removes the states of `object`'s properties (it was freed: nothing can read or write them again), calling
  /// `body` with each.
  mutating func removeObject(_ object: UInt32, _ body: (PropertyKey, State) -> Void) {
    guard let states = byObject.remove(object) else { return }
    body(PropertyKey(object: object, property: states.firstProperty), states.first)
    guard let more = others.remove(object) else { return }
    more.forEachEntry { property, state in body(PropertyKey(object: object, property: property), state) }
  }

  /// Entries of the table by object, and its array's slots (for tests: memory follows the live objects).
  var objectCount: Int { byObject.count }
  var objectSlots: Int { max(byObject.slots, others.slots) }

  /// Every state, by object then property (the first property's first).
  func forEach(_ body: (PropertyKey, State) -> Void) {
    byObject.forEachEntry { object, states in
      body(PropertyKey(object: object, property: states.firstProperty), states.first)
      guard let more = others[object], !more.isEmpty else { return }
      more.forEachEntry { property, state in body(PropertyKey(object: object, property: property), state) }
    }
  }
}

extension KeyTable where State == ReplayMachine.KeyState {
  /// Mutates the state of `key` in place (created empty).
  @inline(__always)
  mutating func withState<Result>(_ key: PropertyKey, _ body: (inout State) -> Result) -> Result {
    withState(key, default: State(), body)
  }
}
