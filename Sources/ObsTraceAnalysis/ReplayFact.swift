import ObsTraceFormat

/// One thing the replay established, in the order it established it. The machine (`ReplayMachine`) turns the
/// trace's events into facts; statistics, the graph, the timeline, findings and exports are consumers of facts
/// (`ReplayConsumer`). A new view is a new consumer. See docs/analysis.md for what each fact means and rests on.
public enum ReplayFact: Sendable {
  /// An object's registrar was created in the trace.
  case objectCreated(ObjectFact)
  /// An object's registrar was freed.
  case objectFreed(ObjectFact)
  /// A property was read (in a run, or outside any scope).
  case read(ReadFact)
  /// A write began (its willSet): what it will fire is not known yet.
  case writeBegan(WriteBeganFact)
  /// A write finished (its didSet): whether it changed the value and what it fired.
  case write(WriteFact)
  /// A scope run began.
  case runBegan(RunFact)
  /// A scope run ended: what it read.
  case runEnded(RunEndedFact)
  /// A scope fired (its change handler ran).
  case fire(FireFact)
  /// A scope's observers were removed, with the reason.
  case cancel(CancelFact)
  /// An `Observations` sequence ended.
  case sequenceEnded(SequenceEndedFact)
  /// Something the machine could not place: counted, never dropped in silence.
  case anomaly(AnomalyFact)
}

/// Receives facts as the machine establishes them.
public protocol ReplayConsumer {
  mutating func consume(_ fact: ReplayFact)
}

/// A consumer that drops every fact (for callers that only want the machine's own state).
public struct IgnoringConsumer: ReplayConsumer {
  public init() {}
  @inline(__always) public mutating func consume(_ fact: ReplayFact) {}
}

/// Two consumers fed the same facts, in order.
public struct PairedConsumer<First: ReplayConsumer, Second: ReplayConsumer>: ReplayConsumer {
  public var first: First
  public var second: Second

  public init(_ first: First, _ second: Second) {
    self.first = first
    self.second = second
  }

  @inline(__always) public mutating func consume(_ fact: ReplayFact) {
    first.consume(fact)
    second.consume(fact)
  }
}

/// A consumer that calls a closure (for printers that stream, and for tests).
public struct ClosureConsumer: ReplayConsumer {
  public var body: (ReplayFact) -> Void

  public init(_ body: @escaping (ReplayFact) -> Void) {
    self.body = body
  }

  public mutating func consume(_ fact: ReplayFact) { body(fact) }
}

public struct ObjectFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var object: UInt32
  /// The object's type id, or 0 when the trace never said.
  public var type: UInt32
  /// Where it was created (an interned stack), or 0 when not recorded.
  public var stack: UInt32
}

public struct ReadFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var key: PropertyKey
  /// The object's type id, or 0.
  public var type: UInt32
  /// The run the read went to, or 0 when no scope of ObsTrace's was open.
  public var scope: UInt32
  /// The label of that run, or 0.
  public var label: UInt32
  /// The read happened inside the property's own willSet window: it saw the old value.
  public var stale: Bool
  /// The read happened on this thread while another thread was writing the property (after that write's willSet,
  /// before its didSet): it may have seen the old value.
  public var racing: Bool = false
  public var stack: UInt32
  /// Stated again at the end of the replay (`ReplayMachine.finish`), not a new read: this read outside any scope
  /// was the last event of its thread, and the recording may have ended before that thread's next event (the
  /// thread was running at the stop, or the trace was cut: `ReplayMachine.EndCut`). It may have been the access a
  /// `_modify` makes before its willSet, which the recording did not reach: consumers take back the read they
  /// counted (`read` first stated it) and say it as an access at the end of the recording.
  public var atEnd: Bool = false
}

public struct WriteBeganFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var key: PropertyKey
  public var type: UInt32
  public var stack: UInt32
  /// Instances that read this property, fired, and have not run again, by label: this write fires nothing for
  /// them (it is coalesced into their next run).
  public var coalescedInto: [CoalescedInstances] {
    get { coalescedList ?? [] }
    set { coalescedList = newValue.isEmpty ? nil : newValue }
  }
  /// `coalescedInto`, nil when empty (nearly every write): an empty array in the fact was retained as the fact was
  /// made and released as it went, with the empty arrays the willSet made for it.
  var coalescedList: [CoalescedInstances]?
  /// The registrar's willSet was called directly, as the macro's `_modify` does (version 2).
  public var direct: Bool = false
  /// The event just before this direct willSet on its own thread (whatever other threads recorded in between) was
  /// a read of the same property outside any scope: the `_modify`'s own access (`m.count += 1` accesses, then
  /// calls willSet), part of this write and not a read of the program. Judged on the thread's own events, so that
  /// writes on several threads at once are judged alike in every run.
  public var ownAccess: Bool = false
  /// The site of that access (its stack id), when `ownAccess`.
  public var ownAccessStack: UInt32 = 0
  /// Another thread was writing this object property when this write began (its willSet came between that
  /// write's willSet and didSet): two writes of one property at once, the evidence of a race.
  public var overlapping: Bool = false
  /// The thread that first wrote this object property in the trace (this write's own, at its first write): a
  /// write on another thread makes it a property written on several.
  public var firstWriter: UInt32
}

/// How many instances of one label a write is coalesced into (`WriteBeganFact.coalescedInto`).
public struct CoalescedInstances: Sendable, Equatable {
  public var label: UInt32
  public var instances: Int

  public init(label: UInt32, instances: Int) {
    self.label = label
    self.instances = instances
  }
}

extension WriteBeganFact {
  /// The label of each instance the write is coalesced into, one entry an instance.
  public var coalescedLabels: [UInt32] {
    coalescedInto.flatMap { repeatElement($0.label, count: $0.instances) }
  }
}

public struct WriteFact: Sendable {
  public enum Outcome: Sendable, Equatable { case changed, unchanged, unknown }
  /// When the write began (its willSet).
  public var time: UInt64
  /// When it finished (its didSet).
  public var endTime: UInt64
  public var thread: UInt32
  public var key: PropertyKey
  public var outcome: Outcome
  /// How the write was made, as the recorder saw it (0: not recorded; see `WriteKind`).
  public var writeKind: UInt8
  /// Whether it went through `_modify` (didSet flag `modify`, version 2): then `outcome` is `.unknown` only when
  /// the recorder did not compare it (`OBSTRACE_COMPARE`).
  public var throughModify: Bool
  /// Why a write through `_modify` was not compared (`outcome` `.unknown`; else `.notRecorded`).
  public var uncompared: UncomparedReason = .notRecorded
  /// `fired`, `predicted` and `firedAgain` in one box, nil when the write fired nothing (most fire nothing): with
  /// three arrays, each fact was made with three retains of the empty array and destroyed with three releases.
  var firedScopes: FiredScopes? = nil
  /// Scope runs this write fired: (scope id, label id).
  public var fired: [(scope: UInt32, label: UInt32)] {
    get { firedScopes?.scopes ?? [] }
    set { firedScopes = FiredScopes(scopes: newValue, predicted: predicted, again: firedAgain) }
  }
  /// Of `fired`, the scopes whose fire was predicted (untraced), not recorded.
  public var predicted: [UInt32] {
    get { firedScopes?.predicted ?? [] }
    set { firedScopes = FiredScopes(scopes: fired, predicted: newValue, again: firedAgain) }
  }
  /// Of `fired`, the scopes this write fired again (`FireFact.again`), with how.
  public var firedAgain: [(scope: UInt32, how: RepeatedFire)] {
    get { firedScopes?.again ?? [] }
    set { firedScopes = FiredScopes(scopes: fired, predicted: predicted, again: newValue) }
  }
  /// How many scope runs it fired: `fired.count`, without making an array when it fired none.
  public var firedCount: Int { firedScopes?.scopes.count ?? 0 }
  public var stack: UInt32
  /// Its didSet is not in the trace: the recording stopped inside the write (the process exited in an observer the
  /// write fired or in a signal handler on the writing thread, or the trace ends there). Stated when the replay finishes, its `endTime` the trace's last time.
  public var unfinished = false
}

/// What a write fired (`WriteFact.fired`, `predicted`, `firedAgain`), never empty: a write that fired nothing
/// holds none. Described by its contents, as the three arrays were in a fact's description (tests compare facts so).
final class FiredScopes: Sendable, CustomStringConvertible {
  let scopes: [(scope: UInt32, label: UInt32)]
  let predicted: [UInt32]
  let again: [(scope: UInt32, how: RepeatedFire)]

  /// Nil when nothing fired.
  init?(scopes: [(scope: UInt32, label: UInt32)], predicted: [UInt32], again: [(scope: UInt32, how: RepeatedFire)]) {
    guard !scopes.isEmpty || !predicted.isEmpty || !again.isEmpty else { return nil }
    self.scopes = scopes
    self.predicted = predicted
    self.again = again
  }

  var description: String { "fired: \(scopes), predicted: \(predicted), firedAgain: \(again)" }
}

public struct RunFact: Sendable, Equatable {
  public var scope: UInt32
  public var label: UInt32
  public var kind: ScopeKind
  /// The instance this run continues (recorded at the source; see docs/analysis.md).
  public var instance: UInt32
  /// The run that was innermost on the thread when this one began, or 0.
  public var parent: UInt32
  public var thread: UInt32
  public var time: UInt64
}

public struct RunEndedFact: Sendable {
  public var run: RunFact
  public var end: UInt64
  /// What the run read, in the order of first read (with what nested runs read, merged as Observation does).
  public var reads: [PropertyKey]
  /// The first run of its instance.
  public var firstOfInstance: Bool
  /// Nothing it read really changed since its instance's previous run began.
  public var redundant: Bool
  /// Not `redundant` only because writes through `_modify` not compared touched what it read since its instance's
  /// previous run began (and no write known to change a value did): redundant if they changed nothing.
  public var possiblyRedundant = false
  /// A write fired its instance's previous run before it began (a write that changed nothing, for a redundant run);
  /// else it re-ran unfired.
  public var afterFire: Bool = true
  /// It read a property inside that property's willSet window.
  public var readStale: Bool
  /// It read a property while another thread was writing it (see `ReadFact.racing`).
  public var readRacing: Bool = false
  /// For `Observations` values: the sequence (iterator), else 0.
  public var sequence: UInt32
  /// For `Observations` values: the type of the actor it ran on (0: nonisolated).
  public var isolation: UInt32
  /// Its end is not in the trace: an untraced run whose thread recorded nothing after it, or a traced run whose
  /// closure had not returned when the trace ended, ended by the replay at the trace's last time
  /// (`ReplayMachine.finish`).
  public var endedAtTraceEnd: Bool = false
  /// The label of the run its reads merged into (the run it was nested in, still open: Observation merges a nested
  /// tracking's access list into the enclosing one as it returns), or 0.
  public var mergedInto: UInt32 = 0
}

public struct FireFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var scope: UInt32
  public var label: UInt32
  public var instance: UInt32
  /// The write in progress on the firing thread that caused it, or nil: a write ObsTrace did not record (of an
  /// `@Observable` declared without `import ObsTrace`; Observation fires only inside a willSet, never at a deinit).
  public var cause: PropertyKey?
  /// The replay predicted this fire (an `untraced` run: tracking ObsTrace does not own); the recorder did not
  /// see it.
  public var predicted = false
  /// The run's `Observations` sequence had ended (the iterator was released, cancelled or finished) before this
  /// fire: Observation's tracking of the last value outlives the iterator and fires at the next change of what it
  /// read, and the recorder ended the run for the trace when the sequence ended. No value follows; it invalidates
  /// no run, and is counted as no invalidation.
  public var afterSequenceEnded = false
  /// A one-shot tracking that fired before and that Observation still held: a fire again of the same run, counted as
  /// an invalidation (its handler ran again). nil: its first fire.
  public var again: RepeatedFire?
}

/// How a one-shot tracking fired again (`FireFact.again`). Observation's `withObservationTracking` calls the change
/// handler from the willSet that fires it and cancels the tracking only after the handler returns
/// (`_installTracking(_:onChange:)`: `onChange()` then `tracking.cancel()`), and each willSet takes the observers it
/// calls under the registrar's lock, then calls them outside it. So the tracking fires again at a willSet of what it
/// read that comes while its handler runs, or that took the observers before the cancel removed them.
public enum RepeatedFire: Sendable, Equatable {
  /// Inside its own change handler, still running on this thread: a write the handler made, directly or through
  /// handlers it fired (two models kept in sync through onChange).
  case nested
  /// By a write on another thread that took Observation's observers before the cancel of the first fire removed
  /// them: two writes at once.
  case concurrent
}

/// Why a scope's observers were removed (the flags of `trackingCancelled`).
public enum CancelReason: UInt8, Sendable, CustomStringConvertible {
  /// Not recorded (a version-1 trace).
  case unknown = 0
  /// One-shot tracking fired.
  case fired = 1
  /// The `Observations` iteration it belonged to was cancelled or finished while waiting.
  case sequenceEnded = 2
  /// Every object it read was freed: nothing can fire it any more.
  case objectsFreed = 3

  public var description: String {
    switch self {
    case .unknown: "cancelled"
    case .fired: "fired"
    case .sequenceEnded: "sequence ended"
    case .objectsFreed: "objects freed"
    }
  }
}

public struct CancelFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var scope: UInt32
  public var label: UInt32
  public var instance: UInt32
  public var reason: CancelReason
  /// The machine concluded it (every object the run read was freed); the recorder did not write it.
  public var derived: Bool
}

public struct SequenceEndedFact: Sendable, Equatable {
  public var time: UInt64
  public var thread: UInt32
  public var sequence: UInt32
  public var label: UInt32
  public var ending: SequenceEnding?
}

/// What the machine could not place.
public struct AnomalyFact: Sendable, Equatable {
  public enum Kind: String, Sendable, CaseIterable {
    /// A read attributed to a scope that never began (or ended long before).
    case accessInUnknownScope = "read in an unknown scope"
    /// A didSet with no willSet of the same property in progress on its thread.
    case didSetWithoutWillSet = "didSet without its willSet"
    /// A fire of a scope that never began or was already cancelled.
    case fireOfUnknownScope = "fire of an unknown scope"
    /// A scope end, install, cancel or `Observations` run of a scope that never began.
    case eventOfUnknownScope = "event of an unknown scope"
    /// An event of a kind this reader does not know.
    case unknownEvent = "event of an unknown kind"
    /// A reference to a property, label, stack, object or type no definition of the trace states (counted by the
    /// reader: the event is replayed under that id).
    case undefinedID = "reference to an undefined id"

    /// The kind said of several: "2 events of an unknown scope".
    public var plural: String {
      switch self {
      case .accessInUnknownScope: "reads in an unknown scope"
      case .didSetWithoutWillSet: "didSets without their willSet"
      case .fireOfUnknownScope: "fires of an unknown scope"
      case .eventOfUnknownScope: "events of an unknown scope"
      case .unknownEvent: "events of an unknown kind"
      case .undefinedID: "references to an undefined id"
      }
    }
  }
  public var kind: Kind
  public var time: UInt64
  public var thread: UInt32
  public var scope: UInt32
  public var key: PropertyKey?
}
