import ObsTraceFormat

/// What a trace says, with names: the facts every command prints.
public struct AnalysisReport: Sendable {
  public struct Trace: Sendable {
    public var path: String
    public var events: Int
    public var threads: Int
    public var droppedEvents: UInt64
    public var truncated: Bool
    /// Damaged spots: counted, the first ones kept (`TraceDamageList`).
    public var damage: TraceDamageList
    /// Where the zeros that end the file begin, when reading stopped at them (`TraceReader.zeroTail`): its end was
    /// never written.
    public var zeroTail: TraceDamage?
    /// Bytes after the trace's footer that are not part of it (`TraceReader.afterFooter`): the trace is whole.
    public var afterFooter: TraceDamage?
    public var durationNanoseconds: UInt64
    /// The stack level the recording used: off, writes, all.
    public var backtraces: String
    /// Whether the trace has a symbol table (names of properties, places of stacks).
    public var symbolized: Bool
    /// Whether the recorder could see tracking ObsTrace does not own; nil when the trace does not say (version 1).
    public var seesUntracedTracking: Bool?
    /// Whether the recording was started by code while the program ran (`Recorder.start`): tracking begun before it
    /// is not seen (the header's flag).
    public var startedWhileRunning = false
    /// Threads still running when the recording stopped (the footer's): what they did after is not in the trace.
    public var runningAtStop: [UInt32] = []
    /// Of those, the time of the last event read of each (none: it has no event in the file): what the trace shows of
    /// what each was doing at the stop.
    public var lastEventsOfRunningThreads: [UInt32: UInt64] = [:]
    /// Events stored too late for the recording's final drain (the footer's count): not in the trace.
    public var lostAtStop: UInt64 = 0
    /// Events offered on threads that could not get a ring (its memory could not be allocated; the footer's count):
    /// not in the trace.
    public var ringless: UInt64 = 0
    /// How many times the process forked while recording (the footer's count): its children did not record.
    public var forks: UInt64 = 0
    /// Events offered by signal handlers that interrupted the recorder on their thread (the footer's count): counted,
    /// not recorded, so not in the trace.
    public var signalHandlerEvents: UInt64 = 0
    /// References to ids no definition states (the reader's count), and the first of them (`property #5`).
    public var undefinedReferences = 0
    public var firstUndefinedReference: String?
    /// Definitions that gave an id already defined another meaning (the reader's count), and the first of them.
    public var redefinitions = 0
    public var firstRedefinition: String?
    /// The process still recording into the trace, holding its lock, when it was read (`TraceReader.recordingProcess`):
    /// its missing end is not yet written, not lost.
    public var recordingProcess: Int32?
    /// Chunks of a thread missing by its chunk numbers (a thread numbers its chunks from 0): chunks that were
    /// written and are not in the file, damaged or cut out (`ThreadChunkLedger.gaps`).
    public var missingChunks: [ThreadChunkLedger.Gap] = []
    /// Per thread, events its footer counts as recorded (written in its chunks) that were not read: its lost chunks,
    /// the last ones too, which no later chunk's number shows. By thread serial; only threads with such events.
    public var unreadRecordedEvents: [(thread: UInt32, unread: UInt64, recorded: UInt64)] = []
    /// Whether the trace has a footer and exactly the events it counts as recorded were read
    /// (`TraceReader.readsEveryRecordedEvent`): its damaged chunks, if any, lost definitions (names, sites), not events.
    public var readsEveryRecordedEvent = false

    /// The footer, when the file has one whose checksum holds and whose contents do not decode
    /// (`TraceReader.malformedFooter`): the trace is `truncated` (no footer was read), and this is said instead of a
    /// missing footer and a damaged chunk. Nil otherwise.
    public var malformedFooter: TraceDamage? {
      truncated ? damage.malformedFooter : nil
    }

    /// Whether chunks are missing that no damaged chunk accounts for (chunks removed from the file, or lost to
    /// damage the reader did not see as a chunk): what `missingEventsSummary` says.
    /// Whether events are known lost: dropped in the rings, lost at the stop, damaged, cut short or cut out.
    public var lostEvents: Bool {
      droppedEvents > 0 || lostAtStop > 0 || ringless > 0 || signalHandlerEvents > 0 || truncated || !damage.isEmpty
        || !missingChunks.isEmpty || !unreadRecordedEvents.isEmpty
    }

    public var missingWithoutDamage: Bool {
      damage.isEmpty && (!missingChunks.isEmpty || !unreadRecordedEvents.isEmpty)
    }

    /// What the chunk numbers and the footer's counts show missing, in one clause each (empty when nothing is):
    /// "chunk #1 of T1 is missing (its thread's chunk numbers skip it)", "12 of the 40 events the footer counts
    /// as recorded on T1 are not in the file".
    public var missingEventsClauses: [String] {
      var clauses: [String] = []
      if !missingChunks.isEmpty {
        let count = missingChunks.reduce(UInt64(0)) { $0 &+ $1.count }
        let which = missingChunks.prefix(3).map {
          $0.count == 1 ? "T\($0.thread) #\($0.first)" : "T\($0.thread) #\($0.first)–#\($0.first + $0.count - 1)"
        }
        clauses.append(
          "\(count) chunk\(count == 1 ? " is" : "s are") missing by \(missingChunks.count == 1 ? "its thread's" : "their threads'") numbers ("
            + which.joined(separator: ", ") + (missingChunks.count > 3 ? ", …" : "") + ")")
      }
      if !unreadRecordedEvents.isEmpty {
        let unread = unreadRecordedEvents.reduce(UInt64(0)) { $0 &+ $1.unread }
        let which = unreadRecordedEvents.prefix(3).map { "T\($0.thread): \($0.unread) of \($0.recorded)" }
        clauses.append(
          "\(unread) event\(unread == 1 ? "" : "s") the footer counts as recorded \(unread == 1 ? "is" : "are") not in the file ("
            + which.joined(separator: ", ") + (unreadRecordedEvents.count > 3 ? ", …" : "") + ")")
      }
      return clauses
    }

    public init(
      path: String, events: Int, threads: Int, droppedEvents: UInt64, truncated: Bool, damage: TraceDamageList,
      durationNanoseconds: UInt64, backtraces: String, symbolized: Bool, seesUntracedTracking: Bool? = nil,
      runningAtStop: [UInt32] = [], lostAtStop: UInt64 = 0, ringless: UInt64 = 0
    ) {
      self.runningAtStop = runningAtStop
      self.lostAtStop = lostAtStop
      self.ringless = ringless
      self.path = path
      self.events = events
      self.threads = threads
      self.droppedEvents = droppedEvents
      self.truncated = truncated
      self.damage = damage
      self.durationNanoseconds = durationNanoseconds
      self.backtraces = backtraces
      self.symbolized = symbolized
      self.seesUntracedTracking = seesUntracedTracking
    }
  }

  public struct Property: Sendable {
    public var id: UInt32
    public var name: String
    /// The module that declares it, when symbols name it: what tells apart two properties of one name (types of
    /// one name in two modules).
    public var module: String? = nil
    /// The module its name is qualified with (`ModA` for `ModA.Model.count`), because another type of the trace
    /// has its type's name (`TraceDefinitions.qualifyingModule(ofProperty:)`); nil for a name that is unique.
    public var qualifyingModule: String? = nil
    public var statistics: PropertyStatistics
  }

  public struct Scope: Sendable {
    public var label: String
    public var statistics: ScopeStatistics
    /// Property names read, most read first.
    public var reads: [String]
    /// For `Observations`: the actors its runs executed on (`MainActor`, an actor's type, `nonisolated`).
    public var isolations: [String]
  }

  public struct Objects: Sendable {
    public var type: String
    /// The module `type` is qualified with (`ModA` for `ModA.Model`), because another type of the trace has the
    /// same name; nil for a name that is unique.
    public var qualifyingModule: String? = nil
    public var statistics: TypeStatistics
  }

  /// `@Observable` registrars created in the trace that recorded no event: of no known object (see
  /// `RegistrarStatistics`).
  public struct RegistrarsWithoutEvents: Sendable {
    public struct Site: Sendable {
      /// The first user frame of the stack recorded at their creation, past the class's initializers; nil when no
      /// stack was recorded (call stacks off) or none resolved.
      public var site: String?
      public var statistics: RegistrarStatistics
    }

    public var total = RegistrarStatistics()
    /// By creation site: most created first, then by site.
    public var sites: [Site] = []

    public init() {}

    /// What they are, in one sentence for the report's objects section; nil when there are none.
    public var summary: String? {
      guard total.created > 0 else { return nil }
      let many = total.created != 1
      return "\(total.created) @Observable registrar\(many ? "s" : "") recorded no event (\(total.freed) freed, "
        + "\(total.aliveAtEnd) alive at the end), not counted above: a registrar names its object at the object's "
        + "first read or write, and \(many ? "their objects had" : "its object had") none while recording, so which "
        + "objects and types they were is not known (an object has one registrar per @Observable level of its class, and "
        + "a registrar a type keeps by hand, outside @Observable, is counted too)"
    }

    /// A site's line: `created at main.swift:12 (load()): 9 (9 freed)`. `backtraces` is the trace's call stack
    /// level (`off`, `writes`, `all`): with `off`, no site was recorded.
    public static func describe(_ site: Site, backtraces: String) -> String {
      let place =
        site.site.map { "created at \($0)" }
        ?? (backtraces == "off"
          ? "created where not recorded (call stacks off: OBSTRACE_BACKTRACES=writes records it)"
          : "created where no frame of the program's was resolved")
      return place + ": \(site.statistics.created) (\(site.statistics.freed) freed)"
    }

    /// Groups the replay's counts by creation stack into sites: stacks that resolve to one site are one.
    init(_ byStack: [UInt32: RegistrarStatistics], _ definitions: TraceDefinitions) {
      var bySite: [String?: RegistrarStatistics] = [:]
      for (stack, statistics) in byStack {
        total.created += statistics.created
        total.freed += statistics.freed
        let site = stack == 0 ? nil : definitions.creationSite(ofStack: stack).map(SiteFormatting.describe)
        bySite[site, default: RegistrarStatistics()].created += statistics.created
        bySite[site, default: RegistrarStatistics()].freed += statistics.freed
      }
      sites = bySite.map { Site(site: $0.key, statistics: $0.value) }.sorted {
        ($1.statistics.created, $0.site ?? "~") < ($0.statistics.created, $1.site ?? "~")
      }
    }
  }

  public var trace: Trace
  /// Sorted: most invalidations first, then most writes, then name.
  public var properties: [Property]
  /// Sorted: most runs first, then label.
  public var scopes: [Scope]
  public var objects: [Objects]
  /// Registrars that recorded no event: not objects (their objects were never read or written while recording).
  public var registrarsWithoutEvents = RegistrarsWithoutEvents()
  /// The property of each write the recording stopped inside (its willSet in the trace, its didSet not), by name.
  public var unfinishedWrites: [String] = []
  /// Warnings first (by count), then information.
  public var findings: [Finding]
}

/// Reads a trace, replays it and names what it found.
public enum TraceAnalysis {
  /// Analyses the trace at `path`. `onFact` sees each fact as the machine establishes it; a consumer names what it
  /// kept from the definitions returned at the end (ids keep their meaning through a trace, and the names known at
  /// the end are the most complete). No copy of the definitions is made per fact: that cost ≈ 1,400 instructions an
  /// event (a retain and a release of each of their tables).
  public static func analyze(
    path: String, configuration: Replay.Configuration = Replay.Configuration(),
    onFact: ((ReplayFact) -> Void)? = nil
  ) throws(TraceFileError) -> AnalysisReport {
    try replay(path: path, configuration: configuration, collectsEdges: false, onFact: onFact).report
  }

  /// Analyses the trace at `path`, and keeps the replay and the definitions the report was made from, for a view
  /// that needs more than the report (the HTML page's graph) without reading the trace again.
  public static func replay(
    path: String, configuration: Replay.Configuration = Replay.Configuration(),
    onFact: ((ReplayFact) -> Void)? = nil
  ) throws(TraceFileError) -> (report: AnalysisReport, replay: Replay, definitions: TraceDefinitions) {
    try replay(path: path, configuration: configuration, collectsEdges: true, onFact: onFact)
  }

  /// `replay(path:configuration:onFact:)`, keeping the graph's edges or not (`Replay.init`'s `collectsEdges`).
  public static func replay(
    path: String, configuration: Replay.Configuration, collectsEdges: Bool,
    onFact: ((ReplayFact) -> Void)?
  ) throws(TraceFileError) -> (report: AnalysisReport, replay: Replay, definitions: TraceDefinitions) {
    let reader = try TraceReader(path: path)
    var replay = Replay(configuration: configuration, collectsEdges: collectsEdges)
    replay.onFact = onFact
    replay.replay(reader)
    replay.onFact = nil
    return (report(replay, reader), replay, reader.definitions)
  }

  /// Replays what `reader` reads through the machine alone, into `consumer`: for a command that needs only the facts
  /// (a timeline), not the statistics and findings a report derives from them. The consumer may read the reader's
  /// definitions as they stand when a fact comes. `listsCoalescedWrites`, `accountsObjects`: see `ReplayMachine`.
  /// Returns the machine, for a caller that decides when (or whether, at exit) its state is freed.
  @discardableResult
  public static func replay<Consumer: ReplayConsumer>(
    _ reader: TraceReader, into consumer: inout Consumer, listsCoalescedWrites: Bool = true,
    accountsObjects: Bool = true
  ) -> ReplayMachine {
    var machine = ReplayMachine(listsCoalescedWrites: listsCoalescedWrites, accountsObjects: accountsObjects)
    machine.untracedLabelName = { [unowned reader] in reader.definitions.labelName($0) }
    machine.startedWhileRunning = reader.header.startedWhileRunning
    forEachEventInTimeOrder(reader) { machine.consume($0, into: &consumer) }
    machine.endCut = endCut(of: reader)
    machine.finish(into: &consumer)
    return machine
  }

  /// Which threads the recording may have ended before their next event, from a reader that has read every event:
  /// all of them when the trace was cut (truncated, damaged, chunks or recorded events missing, events stored too
  /// late for the final drain), else those the footer lists as running at the stop (none: the trace is whole and
  /// every other thread had exited, or was the one that stopped).
  public static func endCut(of reader: TraceReader) -> ReplayMachine.EndCut {
    if reader.truncated || !reader.damage.isEmpty || !reader.readsEveryRecordedEvent
      || (reader.footer?.lostAtStop ?? 0) > 0
    {
      return .all
    }
    let running = reader.footer?.runningAtStop ?? []
    return running.isEmpty ? .none : .threads(Set(running))
  }

  /// The trace's events in time order across threads (`TimeOrderedEvents`), as every replay reads them. The merge
  /// runs where the chunks are decoded (`TraceReader.forEachStretch`: the reader thread of a big trace), and this
  /// thread takes the events a stretch at a time; inlined, so that `body` is called directly in that loop, not
  /// through a closure an event.
  @inline(__always)
  static func forEachEventInTimeOrder(_ reader: TraceReader, _ body: (TraceEvent) -> Void) {
    let ordered = TimeOrderedEvents(threads: reader.footer.map { Set($0.threads.map(\.thread)) })
    reader.forEachStretch(ordering: ordered) { stretch in
      stretch.withEvents { events in
        for event in events { body(event) }
      }
    }
  }

  /// The findings of a replay, without the trace-level ones (drops, truncation, damage).
  public static func findings(of replay: Replay, definitions: TraceDefinitions, mainThread: UInt32? = nil) -> [Finding]
  {
    Findings.derive(replay, definitions, nil, mainThread: mainThread ?? replay.mainActorThread)
  }

  /// The binaries of the trace's symbol table that named nothing, by file name: some of their addresses (stack
  /// frames, property getters) resolved to no function, and none to a file and line (no symbol table, no debug
  /// info: `strip` removes both). A library with symbols but no debug info (the toolchain's) names its functions,
  /// and is not one of them. Empty without a symbol table (the report says that apart). Asked for by the report
  /// command, not a field of `AnalysisReport.Trace`: with one there, `AmbiguousNameTests` crashed (a null resume
  /// pointer in its async test; not understood yet).
  public static func binariesWithoutSymbols(_ definitions: TraceDefinitions) -> [String] {
    var unnamed: Set<String> = []
    var placed: Set<String> = []
    for frame in definitions.symbols.frames.values where !frame.module.isEmpty {
      if frame.function.isEmpty { unnamed.insert(frame.module) }
      if !frame.file.isEmpty { placed.insert(frame.module) }
    }
    return unnamed.subtracting(placed).sorted()
  }

  /// The fallback names (`Model.<Int #3>`) of the properties a trace's symbol table does not name, sorted; empty
  /// without a symbol table (the report says that apart). Asked for by the report command, as
  /// `binariesWithoutSymbols`.
  public static func propertiesWithFallbackNames(_ definitions: TraceDefinitions) -> [String] {
    guard !definitions.symbols.isEmpty else { return [] }
    return definitions.properties.keys.filter { definitions.symbols.propertyNames[$0] == nil }
      .map { definitions.propertyName($0) }.sorted()
  }

  static func report(_ replay: Replay, _ reader: TraceReader) -> AnalysisReport {
    var trace = AnalysisReport.Trace(
      path: reader.path, events: replay.events, threads: max(replay.threadsSeen.count, reader.threads.count),
      droppedEvents: reader.droppedEvents, truncated: reader.truncated, damage: reader.damage,
      durationNanoseconds: reader.footer?.durationNanoseconds ?? reader.lastEventTime,
      backtraces: ["off", "writes", "all"][min(2, Int(reader.header.stackLevel))],
      symbolized: !reader.definitions.symbols.isEmpty, seesUntracedTracking: reader.header.seesUntracedTracking,
      runningAtStop: reader.footer?.runningAtStop ?? [], lostAtStop: reader.footer?.lostAtStop ?? 0,
      ringless: reader.footer?.ringless ?? 0)
    trace.undefinedReferences = reader.unknownIDEvents
    for thread in trace.runningAtStop {
      if let last = reader.chunkLedger.lastTime(thread) { trace.lastEventsOfRunningThreads[thread] = last }
    }
    trace.forks = reader.footer?.forks ?? 0
    trace.signalHandlerEvents = reader.footer?.signalHandlerEvents ?? 0
    trace.startedWhileRunning = reader.header.startedWhileRunning
    trace.zeroTail = reader.zeroTail
    trace.afterFooter = reader.afterFooter
    trace.recordingProcess = reader.recordingProcess
    trace.firstUndefinedReference = reader.firstUnknownID
    trace.redefinitions = reader.redefinitions
    trace.firstRedefinition = reader.firstRedefinition
    trace.missingChunks = reader.chunkLedger.gaps
    trace.readsEveryRecordedEvent = reader.readsEveryRecordedEvent
    if let footer = reader.footer {
      var recorded: [UInt32: UInt64] = [:]
      // The reserved serial is "no thread" (a chunk naming it is damage).
      for totals in footer.threads where totals.thread != TraceFormat.reservedThread {
        recorded[totals.thread, default: 0] &+= totals.recorded
      }
      trace.unreadRecordedEvents = recorded.sorted { $0.key < $1.key }.compactMap { thread, count in
        let read = reader.chunkLedger.eventsRead(thread)
        return count > read ? (thread, count - read, count) : nil
      }
    }
    // The main actor's threads: the process's first thread (its OS thread id is the process id), where top-level
    // code and an async main's code before its first await run on the main actor, even when it ends early
    // (dispatchMain ends it, and an async main's later main-actor work runs on the thread it hands the main queue
    // to); and every thread main-actor work was seen running on (`ReplayMachine.mainActorThreads`, which
    // `Findings` adds).
    // The lowest serial when several threads claim it (a hand-made or damaged trace): the reader's threads are a
    // dictionary, whose order changes from process to process, and the report must not.
    let first = reader.threads.filter { $0.value == Int32(bitPattern: reader.header.processID) }.keys.min()
    return report(
      replay, definitions: reader.definitions, trace: trace, mainThread: first ?? replay.mainActorThread)
  }

  /// The report of a replay that was fed by something other than a file (an in-test recording).
  public static func report(
    _ replay: Replay, definitions: TraceDefinitions, trace: AnalysisReport.Trace, mainThread: UInt32? = nil
  ) -> AnalysisReport {
    let properties = replay.properties.map { id, statistics in
      AnalysisReport.Property(
        id: id, name: definitions.propertyName(id), module: definitions.propertyModule(id),
        qualifyingModule: definitions.qualifyingModule(ofProperty: id), statistics: statistics)
    }.sorted {
      ($1.statistics.invalidations, $1.statistics.writes, $0.name) < (
        $0.statistics.invalidations, $0.statistics.writes, $1.name
      )
    }

    // Scopes are reported by label text: call sites resolved to one text may have been several labels. The labels
    // are sorted by their text (then id), so that those of one text are adjacent and merge in id order (the first's
    // kind kept); then the merged rows are ordered by runs (most first) and text, as indices: a row's statistics (five
    // tables) are copied once, into the report, and never hashed by text or moved by a sort (with 10 k labels, a
    // dictionary of statistics by text and a sort of (runs, text, statistics) cost ≈ 60 M instructions, callgrind).
    let scopeTable = replay.scopes
    var labelsByName: [(name: String, label: UInt32)] = []
    labelsByName.reserveCapacity(scopeTable.count)
    scopeTable.forEachEntry { label, _ in labelsByName.append((definitions.labelName(label), label)) }
    labelsByName.sort { ($0.name, $0.label) < ($1.name, $1.label) }
    var merged: [(name: String, statistics: ScopeStatistics)] = []
    merged.reserveCapacity(labelsByName.count)
    for entry in labelsByName {
      guard let statistics = scopeTable[entry.label] else { continue }
      if let last = merged.indices.last, merged[last].name == entry.name {
        merged[last].statistics = merged[last].statistics.merging(statistics)
      } else {
        merged.append((entry.name, statistics))
      }
    }
    // Every property a scope read was read, so it has statistics and a name here; a name is made once, not per
    // scope that read it and per comparison of the sort (names are built from the type's reflected name, character
    // by character).
    var propertyNames = DenseTable<String>()
    for property in properties { propertyNames[property.id] = property.name }
    // Most runs first, then by text: `merged` is in text order, so the index breaks ties.
    let order = merged.indices.map { (runs: merged[$0].statistics.runs, index: $0) }.sorted {
      ($1.runs, $0.index) < ($0.runs, $1.index)
    }
    var scopes: [AnalysisReport.Scope] = []
    scopes.reserveCapacity(order.count)
    for (_, index) in order {
      let statistics = merged[index].statistics
      let reads: [String]
      if statistics.reads.count == 1 {
        let id = statistics.reads.first!.key
        reads = [propertyNames[id] ?? definitions.propertyName(id)]
      } else {
        reads = statistics.reads.map {
          (count: $0.value, name: propertyNames[$0.key] ?? definitions.propertyName($0.key))
        }
        .sorted { ($1.count, $0.name) < ($0.count, $1.name) }.map(\.name)
      }
      let isolations =
        statistics.isolations.isEmpty
        ? [] : statistics.isolations.keys.map { $0 == 0 ? "nonisolated" : definitions.typeName($0) }.sorted()
      scopes.append(
        AnalysisReport.Scope(label: merged[index].name, statistics: statistics, reads: reads, isolations: isolations))
    }

    let objects = replay.typeStatistics.map { type, statistics in
      AnalysisReport.Objects(
        type: type == 0 ? "<unknown type>" : definitions.typeName(type),
        qualifyingModule: type == 0 ? nil : definitions.qualifyingModule(ofType: type), statistics: statistics)
    }.sorted { $0.type < $1.type }

    let findings = Findings.derive(replay, definitions, trace, mainThread: mainThread)
    var report = AnalysisReport(
      trace: trace, properties: properties, scopes: scopes, objects: objects, findings: findings)
    report.registrarsWithoutEvents = AnalysisReport.RegistrarsWithoutEvents(
      replay.machine.registrarsWithoutEvents, definitions)
    report.unfinishedWrites = replay.statistics.unfinishedWrites.map { definitions.propertyName($0) }
    return report
  }
}

extension Replay {
  /// Replays the whole of `reader`'s trace, its events in time order across threads, then `finish`.
  public mutating func replay(_ reader: TraceReader) {
    namingUntracedLabels { [unowned reader] in reader.definitions.labelName($0) }
    startedWhileRunning = reader.header.startedWhileRunning
    // The loop of `forEachEventInTimeOrder`, calling `consume` itself: through that function's `body`, each event
    // went through a closure's thunk (≈ 10 instructions an event, callgrind).
    let ordered = TimeOrderedEvents(threads: reader.footer.map { Set($0.threads.map(\.thread)) })
    reader.forEachStretch(ordering: ordered) { stretch in
      stretch.withEvents { events in
        for event in events { consume(event) }
      }
    }
    endCut = TraceAnalysis.endCut(of: reader)
    finish()
  }
}
