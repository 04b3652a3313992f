import ObsTraceAnalysis
import ObsTraceFormat

/// One thing a trace viewer draws: a slice beginning or ending on a thread's track, or an instant.
struct ExportEvent {
  enum Phase { case begin, end, instant }

  enum Value {
    case string(String)
    case number(UInt64)
    case flag(Bool)
  }

  var phase: Phase
  /// The recording thread (its serial), whose track the event is on.
  var thread: UInt32
  /// Nanoseconds since the recording started.
  var time: UInt64
  /// Empty for an end.
  var name = ""
  var category = ""
  var arguments: [(name: String, value: Value)] = []
  /// Flows that start here: at a run's end, to the write that will invalidate it; at a fire, to the run it
  /// causes. (On an end, the flow belongs to the slice that ends.)
  var flowsOut: [UInt64] = []
  /// Flows that end here: at a write's end, from the runs it invalidated; at a run's begin, from the fire that
  /// caused it.
  var flowsIn: [UInt64] = []
}

/// A track: one per recording thread, in one process.
struct ExportThread {
  var thread: UInt32
  var osThreadID: Int32
  var name: String
}

/// Where export events go: Perfetto's protobuf or Chrome's JSON, written as they come (flat memory).
protocol ExportWriter {
  mutating func declare(_ thread: ExportThread) throws(CommandError)
  mutating func write(_ event: ExportEvent) throws(CommandError)
  mutating func finish() throws(CommandError)
  /// Says, inside the file, that the trace lost events (`text`: what, where), at `time`: before `finish`.
  mutating func noteLoss(_ text: String, at time: UInt64) throws(CommandError)
}

/// Turns the replay's facts into viewer events: each scope run a slice on its thread's track (named by its scope,
/// with its kind, instance and, at its end, what it read and whether it was redundant), each write a slice
/// (`write Type.property`, with the object, the site and whether it changed the value), each read an instant,
/// each fire an instant inside the write that caused it. Flows follow the cause: from each run to the write that
/// invalidated it (the run subscribed to what the write changed), and from each fire to the run of the same
/// instance that it caused. Runs and writes nest on a thread as calls do; a slice that would end out of order ends the slices
/// above it first (marked `cut`), so that every track stays balanced.
///
/// With a filter (the timeline's), a slice or instant is written when the timeline would show its line (a read, when
/// it would show a line for it: in its time window and thread, of the object or property asked for, inside a run of
/// the scope asked for): a run or write as `selection` decided from their ends, the others here. A slice's end is
/// written when its begin was, a flow when both its ends are.
struct TraceExport<Writer: ExportWriter>: ReplayConsumer {
  var writer: Writer
  let reader: TraceReader
  private(set) var error: CommandError?
  /// Per thread, the open slices: a run's scope id, or a write's (object, property), innermost last.
  private var open: [UInt32: [OpenSlice]] = [:]
  private var declared: Set<UInt32> = []
  /// Flows from fires that wait for the next run of their instance.
  private var pendingFlows: [UInt32: [UInt64]] = [:]
  /// A run's flow to the write that invalidates it is its scope id plus 2³², so that the write can name it
  /// without keeping a table; fire flows are numbered from 2³³. (Below 2⁵³: JSON readers keep them exact.)
  private var nextFlow: UInt64 = 1 << 33
  static func runFlow(_ scope: UInt32) -> UInt64 { 1 << 32 | UInt64(scope) }

  /// A run's `redundant` when it would be redundant if the writes through `_modify` not compared before it changed
  /// nothing (`RunEndedFact.possiblyRedundant`), as the timeline and the report say it.
  static var possiblyRedundant: String {
    "not known: redundant if the writes not compared since its previous run changed nothing"
  }
  /// A write's `wasted` when it went through `_modify`, was not compared, and invalidated something.
  static var notKnownWasted: String { "not known: not compared" }
  private(set) var lastTime: UInt64 = 0
  // Names resolved once per id: resolving (symbols, module prefixes) costs more than writing an event.
  private var propertyNames: [UInt32: String] = [:]
  private var memberNames: [UInt32: String] = [:]
  private var labelNames: [UInt32: String] = [:]
  /// Per thread, a read outside any scope not yet emitted (see `place`).
  private var pendingReads: [UInt32: ExportEvent] = [:]
  private var typeNames: [UInt32: String] = [:]
  private var sites: [UInt32: String] = [:]
  /// With a filter: what it keeps (nil: everything), and what it is checked against when nothing matched.
  private var matcher: TimelineFilter.Matcher?
  private let selection: ExportSelection?
  private(set) var evidence: TimelineFilter.Evidence?
  /// With a filter, the runs whose slices were begun: a write's flow from a run is drawn only when the run is.
  private var keptRuns = DenseTable<Void>()
  private var writesBegun = 0
  /// Events written (begins, ends and instants), not counting the ends `finish` adds.
  private(set) var emitted = 0

  enum OpenSlice: Equatable {
    case run(UInt32)
    case write(PropertyKey)
  }

  init(
    writer: Writer, reader: TraceReader, filter: TimelineFilter = TimelineFilter(), selection: ExportSelection? = nil
  ) {
    self.writer = writer
    self.reader = reader
    self.selection = selection
    if !filter.isEmpty {
      matcher = TimelineFilter.Matcher(filter: filter, reader: reader)
      evidence = TimelineFilter.Evidence(filter: filter)
    }
  }

  /// Calls `body` with the reader's definitions in place: `reader.definitions` is a copy of the whole struct (a
  /// retain and a release of each of its tables, ≈ 1,000 instructions), and objects are named per event.
  private func withDefinitions<Result>(_ body: (borrowing TraceDefinitions) -> Result) -> Result {
    reader.withDefinitions(body)
  }

  mutating func consume(_ fact: ReplayFact) {
    guard error == nil else { return }
    evidence?.note(fact)
    do {
      try place(fact)
    } catch {
      self.error = error
    }
  }

  private mutating func place(_ fact: ReplayFact) throws(CommandError) {
    // A read outside any scope waits for its thread's next fact: when that is the willSet of a `_modify` whose own
    // access it was (`WriteBeganFact.ownAccess`), it is part of the write slice, not a read of the program. Other
    // threads' facts may come in between (they are emitted meanwhile: viewers order each track by time).
    if !pendingReads.isEmpty, let pending = pendingReads.removeValue(forKey: Self.thread(of: fact)) {
      if case .writeBegan(let write) = fact, write.ownAccess {
      } else if case .read(let read) = fact, read.atEnd {
        // The same access, stated again at the end: exported below as an access, not as a read.
      } else {
        try emit(pending)
      }
    }
    switch fact {
    case .runBegan(let run):
      if matcher != nil {
        let kept =
          selection.map { $0.runs[run.scope] != nil }
          ?? matcher!.matches(
            time: run.time, thread: run.thread, keys: EmptyCollection(), label: run.label, scope: run.scope)
        guard kept else {
          pendingFlows.removeValue(forKey: run.instance)
          return
        }
        keptRuns[run.scope] = ()
      }
      var event = ExportEvent(
        phase: .begin, thread: run.thread, time: run.time, name: labelName(run.label), category: "scope")
      event.arguments = [
        ("kind", .string(run.kind.description)), ("scope", .number(UInt64(run.scope))),
        ("instance", .number(UInt64(run.instance))),
      ]
      event.flowsIn = pendingFlows.removeValue(forKey: run.instance) ?? []
      try begin(event, .run(run.scope))
    case .runEnded(let ended):
      var arguments: [(String, ExportEvent.Value)] = [
        ("read", .string(ended.reads.map { object($0) }.joined(separator: ", "))),
        // A run that is redundant only if writes through `_modify` not compared changed nothing is not known to be
        // either: said as such, not `false` (scopeq7's leftover).
        ("redundant", ended.possiblyRedundant ? .string(Self.possiblyRedundant) : .flag(ended.redundant)),
      ]
      if ended.run.kind == .observations {
        arguments.append(
          ("isolation", .string(ended.isolation == 0 ? "nonisolated" : typeName(ended.isolation))))
      }
      if ended.readStale { arguments.append(("stale read", .flag(true))) }
      try end(
        .run(ended.run.scope), thread: ended.run.thread, time: ended.end, arguments: arguments,
        flowsOut: [Self.runFlow(ended.run.scope)])
    case .read(let read):
      if matcher != nil,
        !matcher!.matches(
          time: read.time, thread: read.thread, keys: CollectionOfOne(read.key),
          label: read.scope != 0 ? read.label : nil,
          scope: read.scope)
      {
        return
      }
      var event = ExportEvent(
        phase: .instant, thread: read.thread, time: read.time,
        name: (read.atEnd ? "access " : "read ") + propertyName(read.key.property),
        category: read.atEnd ? "access at end" : read.stale ? "stale read" : "read")
      event.arguments = [("object", .string(objectName(read.key.object)))]
      if read.scope != 0 { event.arguments.append(("scope", .string(labelName(read.label)))) }
      if read.stale { event.arguments.append(("stale", .flag(true))) }
      if let site = site(read.stack) { event.arguments.append(("site", .string(site))) }
      if read.atEnd {
        event.arguments.append(
          ("at end of recording", .string("a read, or the start of a write through _modify that the recording did not reach")))
        try emit(event)
      } else if read.scope == 0 {
        pendingReads[read.thread] = event
      } else {
        try emit(event)
      }
    case .writeBegan(let write):
      let place = writesBegun
      writesBegun += 1
      if matcher != nil {
        let kept =
          selection?.writes.contains(place)
          ?? matcher!.matches(time: write.time, thread: write.thread, keys: CollectionOfOne(write.key), label: nil)
        if !kept { return }
      }
      var event = ExportEvent(
        phase: .begin, thread: write.thread, time: write.time,
        name: "write " + propertyName(write.key.property), category: "write")
      event.arguments = [("object", .string(objectName(write.key.object)))]
      if let site = site(write.stack) { event.arguments.append(("site", .string(site))) }
      try begin(event, .write(write.key))
    case .write(let write):
      let outcome: String
      // A write through `_modify` not compared may have changed nothing: its outcome, and whether what it
      // invalidated was wasted, are not known (a setter's write is a change: the macro skips an equal value).
      let notCompared = write.throughModify && write.outcome == .unknown
      switch write.outcome {
      case .changed: outcome = "changed"
      case .unchanged: outcome = "unchanged"
      case .unknown: outcome = notCompared ? "not compared" : "set"
      }
      let wasted: ExportEvent.Value =
        notCompared && !write.fired.isEmpty
        ? .string(Self.notKnownWasted) : .flag(write.outcome == .unchanged && !write.fired.isEmpty)
      try end(
        .write(write.key), thread: write.thread, time: write.endTime,
        arguments: [
          ("outcome", .string(outcome)), ("invalidated", .number(UInt64(write.fired.count))), ("wasted", wasted),
        ],
        flowsIn: write.fired.compactMap {
          matcher == nil || keptRuns[$0.scope] != nil ? Self.runFlow($0.scope) : nil
        })
    case .fire(let fire):
      if matcher != nil,
        !matcher!.matches(
          time: fire.time, thread: fire.thread, keys: fire.cause.map { [$0] } ?? [], label: fire.label,
          scope: fire.scope)
      {
        return
      }
      var event = ExportEvent(
        phase: .instant, thread: fire.thread, time: fire.time,
        name: (fire.afterSequenceEnded ? "fire after its sequence ended: " : "invalidate ") + labelName(fire.label),
        category: "fire")
      event.arguments = [("scope", .number(UInt64(fire.scope))), ("instance", .number(UInt64(fire.instance)))]
      // An untraced scope's fire is predicted from Observation's rules, not recorded: said, as the text and the
      // timeline say it (tryout17's Q8).
      if fire.predicted { event.arguments.append(("predicted", .flag(true))) }
      if let cause = fire.cause {
        event.arguments.append(("by", .string(propertyName(cause.property))))
        event.arguments.append(("object", .string(objectName(cause.object))))
      } else {
        event.arguments.append(
          ("by", .string("a write ObsTrace did not record (an @Observable without `import ObsTrace`?)")))
      }
      // The last value's tracking of an ended sequence: no run follows it.
      if !fire.afterSequenceEnded {
        event.flowsOut = [nextFlow]
        pendingFlows[fire.instance, default: []].append(nextFlow)
        nextFlow += 1
      }
      try emit(event)
    case .sequenceEnded(let ended):
      if matcher != nil,
        !matcher!.matches(time: ended.time, thread: ended.thread, keys: EmptyCollection(), label: ended.label)
      {
        return
      }
      var event = ExportEvent(
        phase: .instant, thread: ended.thread, time: ended.time,
        name: "Observations ended: " + labelName(ended.label), category: "sequence")
      event.arguments = [("ending", .string(ended.ending?.description ?? "unknown"))]
      try emit(event)
    case .anomaly(let anomaly):
      if matcher != nil,
        !matcher!.matches(
          time: anomaly.time, thread: anomaly.thread, keys: anomaly.key.map { [$0] } ?? [], label: nil)
      {
        return
      }
      try emit(
        ExportEvent(
          phase: .instant, thread: anomaly.thread, time: anomaly.time, name: "anomaly: \(anomaly.kind.rawValue)",
          category: "anomaly"))
    // Not drawn, but their threads get a track.
    case .objectCreated(let object), .objectFreed(let object):
      try declare(object.thread)
    case .cancel(let cancel):
      try declare(cancel.thread)
    }
  }

  /// The thread a fact happened on.
  private static func thread(of fact: ReplayFact) -> UInt32 {
    switch fact {
    case .objectCreated(let object), .objectFreed(let object): object.thread
    case .read(let read): read.thread
    case .writeBegan(let write): write.thread
    case .write(let write): write.thread
    case .runBegan(let run): run.thread
    case .runEnded(let ended): ended.run.thread
    case .fire(let fire): fire.thread
    case .cancel(let cancel): cancel.thread
    case .sequenceEnded(let ended): ended.thread
    case .anomaly(let anomaly): anomaly.thread
    }
  }

  /// Ends what is still open (a truncated trace, a run that never ended) at the last time seen, then the file.
  /// Says in the exported file that the trace lost events, at the last time exported.
  mutating func noteLoss(_ text: String) throws(CommandError) {
    try writer.noteLoss(text, at: lastTime)
  }

  mutating func finish() throws(CommandError) {
    for thread in pendingReads.keys.sorted() { try emit(pendingReads[thread]!) }
    pendingReads = [:]
    if let error { throw error }
    try declareThreads()
    for thread in open.keys.sorted() {
      while open[thread]?.isEmpty == false {
        open[thread]!.removeLast()
        try writer.write(
          ExportEvent(phase: .end, thread: thread, time: lastTime, arguments: [("unfinished", .flag(true))]))
      }
    }
    try writer.finish()
  }

  private mutating func begin(_ event: ExportEvent, _ slice: OpenSlice) throws(CommandError) {
    try emit(event)
    open[event.thread, default: []].append(slice)
  }

  private mutating func end(
    _ slice: OpenSlice, thread: UInt32, time: UInt64, arguments: [(String, ExportEvent.Value)],
    flowsOut: [UInt64] = [], flowsIn: [UInt64] = []
  ) throws(CommandError) {
    guard let index = open[thread]?.lastIndex(of: slice) else { return }
    // Out of order: end the slices above it first, so that the track stays balanced.
    while open[thread]!.count - 1 > index {
      open[thread]!.removeLast()
      try emit(ExportEvent(phase: .end, thread: thread, time: time, arguments: [("cut", .flag(true))]))
    }
    open[thread]!.removeLast()
    var event = ExportEvent(phase: .end, thread: thread, time: time)
    event.arguments = arguments.map { (name: $0.0, value: $0.1) }
    event.flowsOut = flowsOut
    event.flowsIn = flowsIn
    try emit(event)
  }

  /// Names every thread the reader has met that has no track yet: a thread whose events draw nothing still has
  /// its track.
  mutating func declareThreads() throws(CommandError) {
    for thread in reader.threads.keys.sorted() { try declare(thread) }
  }

  private mutating func declare(_ thread: UInt32) throws(CommandError) {
    // --thread: that thread's track alone.
    if let only = matcher?.filter.thread, only != thread { return }
    guard declared.insert(thread).inserted else { return }
    let osThreadID = reader.threads[thread] ?? 0
    let main = osThreadID != 0 && osThreadID == Int32(bitPattern: reader.header.processID)
    try writer.declare(
      ExportThread(thread: thread, osThreadID: osThreadID, name: "T\(thread)\(main ? " (main)" : "")"))
  }

  private mutating func emit(_ event: ExportEvent) throws(CommandError) {
    try declare(event.thread)
    lastTime = max(lastTime, event.time)
    emitted += 1
    try writer.write(event)
  }

  private mutating func propertyName(_ id: UInt32) -> String {
    if let name = propertyNames[id] { return name }
    let name = withDefinitions { $0.propertyName(id) }
    propertyNames[id] = name
    return name
  }

  private mutating func labelName(_ id: UInt32) -> String {
    if let name = labelNames[id] { return name }
    let name = withDefinitions { $0.labelName(id) }
    labelNames[id] = name
    return name
  }

  private mutating func typeName(_ id: UInt32) -> String {
    if let name = typeNames[id] { return name }
    let name = withDefinitions { $0.typeName(id) }
    typeNames[id] = name
    return name
  }

  private mutating func objectName(_ serial: UInt32) -> String {
    guard let type = withDefinitions({ $0.objects[serial] }) else { return "<unknown type>#\(serial)" }
    return "\(typeName(type))#\(serial)"
  }

  /// `ListView.Model#1.count`: the object and the property's name without its type (which may itself hold dots).
  private mutating func object(_ key: PropertyKey) -> String {
    let member: String
    if let name = memberNames[key.property] {
      member = name
    } else {
      member = withDefinitions { $0.shortPropertyName(key.property) }
      memberNames[key.property] = member
    }
    return "\(objectName(key.object)).\(member)"
  }

  private mutating func site(_ stack: UInt32) -> String? {
    guard stack != 0 else { return nil }
    if let site = sites[stack] { return site.isEmpty ? nil : site }
    let site = withDefinitions { $0.site(ofStack: stack) }.map(SiteFormatting.describe) ?? ""
    sites[stack] = site
    return site.isEmpty ? nil : site
  }
}
