import ObsTraceFormat

/// A model of Observation run over a trace's events, in time order, deriving once the facts that every command
/// prints. Memory grows with objects, properties and live scopes, never with the number of events.
///
/// What it models (stdlib/public/Observation): an access adds (object, property) to the innermost open scope's
/// list; a nested scope's list merges into its parent's when it ends (as `generateAccessList` does); when a
/// scope's observers are installed it subscribes to its list; a willSet fires what is subscribed, and one-shot
/// tracking cancels all its subscriptions when it fires. Fires are taken from the trace (the recorder saw them),
/// not predicted, and attributed to the write in progress on the firing thread.
public struct Replay {
  public struct Configuration: Sendable {
    /// A write that fires more scopes than this is a fan-out finding.
    public var fanOutThreshold = 10

    public init(fanOutThreshold: Int = 10) {
      self.fanOutThreshold = fanOutThreshold
    }
  }

  struct Run {
    var label: UInt32
    var kind: ScopeKind
    var thread: UInt32
    var parent: UInt32
    var begin: UInt64
    var beginSequence: UInt64
    var reads: [PropertyKey] = []
    var readSet: Set<PropertyKey> = []
    var ended = false
    var subscribed = false
    var instance: InstanceReference?
    /// The run read a property inside its willSet window: it is a stale run, not a redundant one.
    var readStale = false
    /// The `Observations` sequence (iterator) this run is a value of, or 0.
    var sequence: UInt32 = 0
  }

  struct InstanceKey: Hashable {
    var label: UInt32
    var objects: [UInt32]
    /// For `Observations` values: the sequence, which is the instance whatever the objects.
    var sequence: UInt32 = 0
  }

  /// An `Observations` sequence (one iterator): its label, what its last value read, and how it ended.
  struct Sequence {
    var label: UInt32
    var lastObjects: Set<UInt32> = []
    var ending: SequenceEnding?
  }

  /// One instance of a scope (a view's node, an observer): its runs follow each other.
  struct Instance {
    var lastRunBeginSequence: UInt64
    var lastReads: Set<PropertyKey>
    /// It fired and has not run again since.
    var awaitingRerun = false
    /// The run whose observers are installed now, or 0.
    var liveRun: UInt32 = 0
  }

  struct InstanceReference: Hashable {
    var key: InstanceKey
    var index: Int
  }

  struct Write {
    var key: PropertyKey
    var sequence: UInt64
    var time: UInt64
    var stack: UInt32
    var fired: [(scope: UInt32, label: UInt32)] = []
  }

  struct ThreadState {
    var writes: [Write] = []
  }

  struct SiteKey: Hashable {
    var property: UInt32
    var stack: UInt32
  }

  public let configuration: Configuration
  public private(set) var properties = DenseTable<PropertyStatistics>()
  public private(set) var scopes = DenseTable<ScopeStatistics>()  // by label id
  public private(set) var types: [UInt32: TypeStatistics] = [:]
  public private(set) var events = 0
  public private(set) var firstTime: UInt64?
  public private(set) var lastTime: UInt64 = 0
  private var threadSeen = DenseTable<Bool>()
  /// Threads that recorded events.
  public var threadsSeen: Set<UInt32> { Set(threadSeen.map(\.key)) }

  private var sequence: UInt64 = 0
  private var runs: [UInt32: Run] = [:]
  private var subscriptions: [PropertyKey: Set<UInt32>] = [:]
  private var instances: [InstanceKey: [Instance]] = [:]
  /// Per object property: the sequence number of its last real change, the instances whose last run read it,
  /// and the threads that wrote it (a bit per thread, the 64th standing for all higher ones). One hash lookup
  /// per write instead of three.
  struct KeyState {
    var lastRealChange: UInt64 = 0
    var readers: Set<InstanceReference> = []
    var writerThreads: UInt64 = 0
  }

  private var keys = KeyTable()
  private var threads = DenseTable<ThreadState>()
  private var sequences: [UInt32: Sequence] = [:]
  /// The thread that ran an `Observations` value on the main actor, if any: where main-actor work runs (with an
  /// async main, not the process's first thread, which `dispatchMain` ends).
  public private(set) var mainActorThread: UInt32?
  /// Per type: the threads that read or wrote its objects (a bit per thread, the 64th for all higher ones).
  private var typeThreads = DenseTable<UInt64>()
  // By object serial (dense in a process): arrays, since every access and write looks its object up.
  private var liveObjects = DenseTable<UInt32>()  // serial → type, created in the trace and not freed
  private var seenObjects = DenseTable<Bool>()
  private var objectTypes = DenseTable<UInt32>()

  /// An edge of the dependency graph: one object's property and a scope label.
  public struct Edge: Hashable, Sendable {
    public var object: UInt32
    public var property: UInt32
    public var label: UInt32
  }

  /// Reads of a property inside runs of a scope, per object.
  public private(set) var readEdges: [Edge: Int] = [:]
  /// Invalidations of a scope by writes of a property, per object: all, and those by writes that changed nothing.
  public private(set) var invalidationEdges: [Edge: (all: Int, wasted: Int)] = [:]

  // Findings, aggregated by where they happen.
  private(set) var noopWrites: [SiteKey: Int] = [:]
  private(set) var staleReads: [SiteKey: Int] = [:]
  private(set) var untrackedReads: [SiteKey: Int] = [:]
  private(set) var fanOuts: [UInt32: (count: Int, largest: Int)] = [:]

  /// Called with each timeline entry as the replay meets it.
  public var onTimelineEntry: ((TimelineEntry) -> Void)?

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
  }

  /// Replays one event; events must come in time order (see `TimeOrderedEvents`).
  public mutating func consume(_ event: TraceEvent) {
    events += 1
    sequence += 1
    if firstTime == nil { firstTime = event.time }
    lastTime = max(lastTime, event.time)
    threadSeen[event.thread] = true
    switch event.kind {
    case .objectCreated:
      liveObjects[event.object] = event.aux
      if event.aux != 0 { objectTypes[event.object] = event.aux }
    case .objectFreed:
      let type = event.aux != 0 ? event.aux : (objectTypes[event.object] ?? 0)
      if liveObjects[event.object] != nil {
        liveObjects[event.object] = nil
        types[type, default: TypeStatistics()].created += 1
        types[type, default: TypeStatistics()].freed += 1
      }
      seenObjects[event.object] = nil
      objectTypes[event.object] = nil
    case .access:
      access(event)
    case .willSet:
      willSet(event)
    case .didSet:
      didSet(event)
    case .scopeBegin:
      let kind = ScopeKind(rawValue: event.flags) ?? .tracking
      runs[event.scope] = Run(
        label: event.key, kind: kind, thread: event.thread, parent: event.aux, begin: event.time,
        beginSequence: sequence)
      if scopes[event.key] == nil { scopes[event.key] = ScopeStatistics(kind: kind) }
    case .scopeEnd:
      endRun(event)
    case .trackingInstalled:
      guard var run = runs[event.scope] else { return }
      run.subscribed = true
      for key in run.readSet { subscriptions[key, default: []].insert(event.scope) }
      runs[event.scope] = run
      if let instance = run.instance { instances[instance.key]?[instance.index].liveRun = event.scope }
    case .trackingFired:
      fired(event)
    case .trackingCancelled:
      cancel(event.scope)
    case .observationsRun:
      guard var run = runs[event.scope] else { return }
      run.sequence = event.key
      runs[event.scope] = run
      if sequences[event.key] == nil { sequences[event.key] = Sequence(label: run.label) }
      scopes[run.label]?.isolations[event.aux, default: 0] += 1
      if event.flags & EventFlags.onMainActor != 0 { mainActorThread = event.thread }
    case .observationsEnd:
      sequences[event.key]?.ending = SequenceEnding(rawValue: event.flags)
      if let label = sequences[event.key]?.label, let ending = SequenceEnding(rawValue: event.flags) {
        scopes[label]?.endings[ending.description, default: 0] += 1
      }
    }
  }

  private mutating func noteObject(_ event: TraceEvent) {
    if event.aux != 0 { typeThreads[event.aux, default: 0] |= 1 << UInt64(min(event.thread, 63)) }
    if event.aux != 0, objectTypes[event.object] == nil {
      objectTypes[event.object] = event.aux
      if liveObjects[event.object] != nil {
        liveObjects[event.object] = event.aux
      } else {
        seenObjects[event.object] = true
      }
    }
  }

  private mutating func access(_ event: TraceEvent) {
    noteObject(event)
    let key = PropertyKey(object: event.object, property: event.key)
    properties[event.key, default: PropertyStatistics()].reads += 1
    if event.flags & EventFlags.accessInScope != 0 {
      properties[event.key, default: PropertyStatistics()].trackedReads += 1
    }
    if event.flags & EventFlags.staleRead != 0 {
      properties[event.key, default: PropertyStatistics()].staleReads += 1
      staleReads[SiteKey(property: event.key, stack: event.stack), default: 0] += 1
      onTimelineEntry?(.staleRead(time: event.time, thread: event.thread, key: key, stack: event.stack))
    }
    if event.scope != 0, var run = runs[event.scope] {
      if run.readSet.insert(key).inserted { run.reads.append(key) }
      if event.flags & EventFlags.staleRead != 0 { run.readStale = true }
      runs[event.scope] = run
      scopes[run.label]?.reads[event.key, default: 0] += 1
      readEdges[Edge(object: event.object, property: event.key, label: run.label), default: 0] += 1
    } else if event.scope == 0 {
      untrackedReads[SiteKey(property: event.key, stack: event.stack), default: 0] += 1
    }
  }

  private mutating func willSet(_ event: TraceEvent) {
    noteObject(event)
    let key = PropertyKey(object: event.object, property: event.key)
    properties[event.key, default: PropertyStatistics()].writes += 1
    threads[event.thread, default: ThreadState()].writes.append(
      Write(key: key, sequence: sequence, time: event.time, stack: event.stack))
    // Coalesced: scopes that read this and already fired, waiting to run again, hear nothing of this write.
    let coalescedLabels: [UInt32] = keys.withState(key) { state in
      state.writerThreads |= 1 << UInt64(min(event.thread, 63))
      guard !state.readers.isEmpty else { return [] }
      return state.readers.filter { instances[$0.key]?[$0.index].awaitingRerun == true }.map(\.key.label)
    }
    for label in coalescedLabels {
      properties[event.key, default: PropertyStatistics()].coalescedWrites += 1
      scopes[label]?.coalescedWrites += 1
    }
  }

  private mutating func didSet(_ event: TraceEvent) {
    let key = PropertyKey(object: event.object, property: event.key)
    guard let index = threads[event.thread]?.writes.lastIndex(where: { $0.key == key }) else { return }
    let write = threads[event.thread, default: ThreadState()].writes.remove(at: index)
    let unchanged = event.flags & EventFlags.unchanged != 0
    if unchanged {
      properties[event.key, default: PropertyStatistics()].noopWrites += 1
      noopWrites[SiteKey(property: event.key, stack: write.stack), default: 0] += 1
      properties[event.key, default: PropertyStatistics()].wastedInvalidations += write.fired.count
      for fire in write.fired {
        scopes[fire.label]?.wastedInvalidations += 1
        invalidationEdges[Edge(object: key.object, property: key.property, label: fire.label)]?.wasted += 1
      }
    } else {
      keys.withState(key) { $0.lastRealChange = write.sequence }
    }
    let fanOut = write.fired.count
    if fanOut > properties[event.key, default: PropertyStatistics()].maximumFanOut {
      properties[event.key, default: PropertyStatistics()].maximumFanOut = fanOut
    }
    if fanOut > configuration.fanOutThreshold {
      let previous = fanOuts[event.key] ?? (0, 0)
      fanOuts[event.key] = (previous.count + 1, max(previous.largest, fanOut))
    }
    onTimelineEntry?(
      .write(
        TimelineWrite(
          time: write.time, thread: event.thread, key: key,
          outcome: unchanged ? .unchanged : (event.flags & EventFlags.changed != 0 ? .changed : .unknown),
          fired: write.fired, stack: write.stack)))
  }

  private mutating func fired(_ event: TraceEvent) {
    guard let run = runs[event.scope] else { return }
    scopes[run.label]?.invalidations += 1
    if let instance = run.instance {
      instances[instance.key]?[instance.index].awaitingRerun = true
      instances[instance.key]?[instance.index].liveRun = 0
    }
    let cause = PropertyKey(object: event.object, property: event.key)
    if event.object != 0, let writes = threads[event.thread]?.writes,
      let index = writes.lastIndex(where: { $0.key == cause })
    {
      threads[event.thread]!.writes[index].fired.append((event.scope, run.label))
      properties[event.key, default: PropertyStatistics()].invalidations += 1
      invalidationEdges[Edge(object: event.object, property: event.key, label: run.label), default: (0, 0)].all += 1
    } else {
      scopes[run.label]?.unexplainedInvalidations += 1
      onTimelineEntry?(.unexplainedFire(time: event.time, thread: event.thread, scope: event.scope, label: run.label))
    }
    if run.kind == .tracking { cancel(event.scope) }
  }

  private mutating func cancel(_ scope: UInt32) {
    guard var run = runs[scope] else { return }
    if let instance = run.instance, instances[instance.key]?[instance.index].liveRun == scope {
      instances[instance.key]?[instance.index].liveRun = 0
    }
    if run.subscribed {
      for key in run.readSet {
        subscriptions[key]?.remove(scope)
        if subscriptions[key]?.isEmpty == true { subscriptions[key] = nil }
      }
      run.subscribed = false
    }
    if run.ended {
      runs[scope] = nil
    } else {
      runs[scope] = run
    }
  }

  private mutating func endRun(_ event: TraceEvent) {
    guard var run = runs[event.scope] else { return }
    run.ended = true
    // A nested list merges into the enclosing one, as the real generateAccessList does on exit.
    if run.parent != 0, var parent = runs[run.parent], !parent.ended {
      for key in run.reads where parent.readSet.insert(key).inserted { parent.reads.append(key) }
      runs[run.parent] = parent
    }
    var objects = Array(Set(run.reads.map(\.object))).sorted()
    if objects.isEmpty { objects = [0] }
    if run.sequence != 0 {
      objects = []
      sequences[run.sequence]?.lastObjects = Set(run.reads.map(\.object))
    }
    let instanceKey = InstanceKey(label: run.label, objects: objects, sequence: run.sequence)
    scopes[run.label]?.runs += 1
    scopes[run.label]?.threads.insert(run.thread)
    // Which instance ran: one that fired and waits to run again; else one whose observers are gone (cancelled,
    // or never installed); else a new one (two live runs of one label on the same objects are two instances,
    // as two rows of a list are).
    var candidates = instances[instanceKey] ?? []
    // An Observations sequence is one instance, whatever happened between its values.
    let index =
      run.sequence != 0 && !candidates.isEmpty
      ? 0 : candidates.firstIndex(where: \.awaitingRerun) ?? candidates.firstIndex(where: { $0.liveRun == 0 })
    var redundant = false
    let reference: InstanceReference
    if let index {
      let previous = candidates[index]
      // Redundant: nothing it read really changed since the previous run began.
      redundant =
        !run.reads.isEmpty && !run.readStale
        && run.reads.allSatisfy { (keys[$0]?.lastRealChange ?? 0) < previous.lastRunBeginSequence }
      if redundant { scopes[run.label]?.redundantRuns += 1 }
      reference = InstanceReference(key: instanceKey, index: index)
      for key in previous.lastReads { keys.withState(key) { _ = $0.readers.remove(reference) } }
      candidates[index] = Instance(lastRunBeginSequence: run.beginSequence, lastReads: run.readSet)
    } else {
      scopes[run.label]?.instances += 1
      reference = InstanceReference(key: instanceKey, index: candidates.count)
      candidates.append(Instance(lastRunBeginSequence: run.beginSequence, lastReads: run.readSet))
    }
    instances[instanceKey] = candidates
    run.instance = reference
    for key in run.readSet { keys.withState(key) { _ = $0.readers.insert(reference) } }
    onTimelineEntry?(
      .run(
        TimelineRun(
          scope: event.scope, label: run.label, kind: run.kind, thread: run.thread, begin: run.begin, end: event.time,
          reads: run.reads, redundant: redundant)))
    // Keep the run while its observers are or will be installed: a tracking run that read nothing is never
    // installed (the real access list stays nil), and a named scope never is.
    if run.subscribed || (run.kind != .named && !run.reads.isEmpty) {
      runs[event.scope] = run
    } else {
      runs[event.scope] = nil
    }
  }

  /// `Observations` loops still running at the end of the trace that read `object` in their last value: the
  /// labels of their call sites.
  public func liveLoops(reading object: UInt32) -> [UInt32] {
    sequences.values.filter { $0.ending == nil && $0.lastObjects.contains(object) }.map(\.label)
  }

  /// Objects created in the trace and never freed, with their types.
  public var leakedObjectSerials: [(serial: UInt32, type: UInt32)] {
    liveObjects.map { ($0.key, objectTypes[$0.key] ?? $0.value) }
  }

  /// Properties of objects that more than one thread wrote: how many such objects, by property.
  public var crossThreadWrites: [UInt32: (objects: Int, threads: Int)] {
    var result: [UInt32: (objects: Int, threads: Int)] = [:]
    for (_, properties) in keys.byObject {
      for (property, state) in properties where state.writerThreads.nonzeroBitCount > 1 {
        let previous = result[property] ?? (0, 0)
        result[property] = (previous.objects + 1, max(previous.threads, state.writerThreads.nonzeroBitCount))
      }
    }
    return result
  }

  /// Per type, the threads its objects were read or written on.
  public var threadsByType: [UInt32: [UInt32]] {
    var result: [UInt32: [UInt32]] = [:]
    for (type, bits) in typeThreads {
      result[type] = (0..<64).filter { bits & (1 << UInt64($0)) != 0 }.map(UInt32.init)
    }
    return result
  }

  /// Runs still held: those whose observers are installed, or about to be.
  public var liveRunCount: Int { runs.count }

  /// Objects created in the trace and never freed, by type.
  public var leakedObjects: [UInt32: Int] {
    var leaked: [UInt32: Int] = [:]
    for (serial, type) in liveObjects { leaked[objectTypes[serial] ?? type, default: 0] += 1 }
    return leaked
  }

  /// Per-type created/freed counts, including objects still alive at the end.
  public var typeStatistics: [UInt32: TypeStatistics] {
    var result = types
    for (serial, type) in liveObjects { result[objectTypes[serial] ?? type, default: TypeStatistics()].created += 1 }
    for (serial, _) in seenObjects { result[objectTypes[serial] ?? 0, default: TypeStatistics()].seenOnly += 1 }
    return result
  }
}

/// Per object property state, by object serial then property id: two array lookups, no hashing, since the
/// replay touches it on every write.
struct KeyTable {
  var byObject = DenseTable<DenseTable<Replay.KeyState>>()

  subscript(key: PropertyKey) -> Replay.KeyState? {
    byObject[key.object]?[key.property]
  }

  /// Mutates the state of `key` in place (created empty).
  mutating func withState<Result>(_ key: PropertyKey, _ body: (inout Replay.KeyState) -> Result) -> Result {
    body(&byObject[key.object, default: DenseTable()][key.property, default: Replay.KeyState()])
  }
}
