import ObsTraceAnalysis
import ObsTraceFormat

/// Hand-written event sequences, as the recorder would write them, for testing the replay rule by rule.
struct EventScript {
  var events: [TraceEvent] = []
  private var time: UInt64 = 0

  private mutating func add(_ event: TraceEvent) {
    var event = event
    time += 10
    event.time = time
    events.append(event)
  }

  mutating func created(_ object: UInt32, type: UInt32 = 1, thread: UInt32 = 1) {
    add(TraceEvent(kind: .objectCreated, thread: thread, time: 0, object: object, aux: type))
  }

  mutating func freed(_ object: UInt32, type: UInt32 = 1, thread: UInt32 = 1) {
    add(TraceEvent(kind: .objectFreed, thread: thread, time: 0, object: object, aux: type))
  }

  /// A further level's registrar `registrar` says it belongs to the object `object` (its first event bound them).
  mutating func bound(_ registrar: UInt32, to object: UInt32, thread: UInt32 = 1) {
    add(TraceEvent(kind: .objectBound, thread: thread, time: 0, object: registrar, aux: object))
  }

  /// A registrar created as the recorder creates one (its object and type not known yet), with a creation stack.
  mutating func registrarCreated(_ serial: UInt32, stack: UInt32 = 0, thread: UInt32 = 1) {
    add(TraceEvent(kind: .objectCreated, thread: thread, time: 0, object: serial, aux: 0, stack: stack))
  }

  /// Begins a run of `scope`; `instance` is the instance it continues (0: as a version-1 trace, none recorded).
  mutating func begin(
    _ scope: UInt32, label: UInt32, kind: ScopeKind = .tracking, parent: UInt32 = 0, thread: UInt32 = 1,
    instance: UInt32 = 0
  ) {
    add(
      TraceEvent(
        kind: .scopeBegin, flags: kind.rawValue, thread: thread, time: 0, object: instance, key: label, scope: scope,
        aux: parent))
  }

  mutating func read(
    _ object: UInt32, _ property: UInt32, in scope: UInt32 = 0, stale: Bool = false, thread: UInt32 = 1,
    stack: UInt32 = 0
  ) {
    var flags: UInt8 = scope != 0 ? EventFlags.accessInScope : 0
    if stale { flags |= EventFlags.staleRead }
    add(
      TraceEvent(
        kind: .access, flags: flags, thread: thread, time: 0, object: object, key: property, scope: scope, aux: 1,
        stack: stack))
  }

  mutating func end(_ scope: UInt32, thread: UInt32 = 1) {
    add(TraceEvent(kind: .scopeEnd, thread: thread, time: 0, scope: scope))
  }

  mutating func install(_ scope: UInt32, thread: UInt32 = 1) {
    add(TraceEvent(kind: .trackingInstalled, thread: thread, time: 0, scope: scope))
  }

  /// An `Observations` sequence's run marker in `scope`, as the recorder writes it after the scope's begin.
  mutating func observationsRun(_ sequence: UInt32, scope: UInt32, flags: UInt8 = 1, thread: UInt32 = 1) {
    events.append(
      TraceEvent(kind: .observationsRun, flags: flags, thread: thread, time: 0, key: sequence, scope: scope, aux: 7))
  }

  /// One value of an `Observations` loop (sequence `sequence`, label 1): its run in `scope` reads `object`'s
  /// property 1 and installs its tracking.
  mutating func observationsValue(scope: UInt32, sequence: UInt32, reading object: UInt32) {
    begin(scope, label: 1, kind: .observations, instance: sequence)
    observationsRun(sequence, scope: scope)
    read(object, 1, in: scope)
    end(scope)
    install(scope)
  }

  /// The end of sequence `sequence` whose last run is `scope`, as the recorder writes it: that run's tracking
  /// cancelled by the sequence's end, then the end with how it ended.
  mutating func sequenceEnded(_ sequence: UInt32, lastRun scope: UInt32, _ ending: SequenceEnding) {
    events.append(
      TraceEvent(kind: .trackingCancelled, flags: EventFlags.cancelledBySequenceEnd, thread: 1, time: 0, scope: scope))
    events.append(
      TraceEvent(kind: .observationsEnd, flags: ending.rawValue, thread: 1, time: 0, key: sequence, scope: scope))
  }

  /// A tracking run: begin, reads, end, install.
  mutating func run(
    _ scope: UInt32, label: UInt32, reads: [(UInt32, UInt32)], kind: ScopeKind = .tracking, thread: UInt32 = 1,
    instance: UInt32 = 0
  ) {
    begin(scope, label: label, kind: kind, thread: thread, instance: instance)
    for (object, property) in reads { read(object, property, in: scope, thread: thread) }
    end(scope, thread: thread)
    install(scope, thread: thread)
  }

  /// A write: willSet, the fires it causes (one-shot tracking is cancelled by its fire), didSet. `modify`: made
  /// through `_modify` (then `unchanged: nil` is a write not compared, for `notTriviallyCopyable`).
  mutating func write(
    _ object: UInt32, _ property: UInt32, firing scopes: [UInt32] = [], unchanged: Bool? = nil, oneShot: Bool = true,
    willSetFlags: UInt8 = 0, stack: UInt32 = 0, thread: UInt32 = 1, modify: Bool = false
  ) {
    beginWrite(
      object, property, firing: scopes, oneShot: oneShot, willSetFlags: willSetFlags, stack: stack, thread: thread)
    finishWrite(object, property, unchanged: unchanged, thread: thread, modify: modify)
  }

  /// The first half of a write: its willSet and the fires it causes; other threads' events may follow before
  /// `finishWrite`.
  mutating func beginWrite(
    _ object: UInt32, _ property: UInt32, firing scopes: [UInt32] = [], oneShot: Bool = true,
    willSetFlags: UInt8 = 0, stack: UInt32 = 0, thread: UInt32 = 1
  ) {
    add(
      TraceEvent(
        kind: .willSet, flags: willSetFlags, thread: thread, time: 0, object: object, key: property, aux: 1,
        stack: stack))
    for scope in scopes {
      add(TraceEvent(kind: .trackingFired, thread: thread, time: 0, object: object, key: property, scope: scope))
      if oneShot {
        add(
          TraceEvent(kind: .trackingCancelled, flags: EventFlags.cancelledByFire, thread: thread, time: 0, scope: scope)
        )
      }
    }
  }

  /// The didSet that ends a write begun with `beginWrite`.
  mutating func finishWrite(
    _ object: UInt32, _ property: UInt32, unchanged: Bool? = nil, thread: UInt32 = 1, modify: Bool = false
  ) {
    var flags: UInt8 = unchanged.map { $0 ? EventFlags.unchanged : EventFlags.changed } ?? 0
    if modify {
      flags |= EventFlags.modify | (unchanged == nil ? UncomparedReason.notTriviallyCopyable.flags : 0)
    }
    add(TraceEvent(kind: .didSet, flags: flags, thread: thread, time: 0, object: object, key: property, aux: 1))
  }

  /// Replays the script and returns the replay, with the timeline it produced.
  func replay(fanOutThreshold: Int = 10) -> (Replay, [ReplayFact]) {
    var replay = Replay(configuration: Replay.Configuration(fanOutThreshold: fanOutThreshold))
    var timeline: [ReplayFact] = []
    replay.onFact = { timeline.append($0) }
    replay.replay(events)
    return (replay, timeline)
  }
}
