import ObsTraceFormat

/// Turns the replay's aggregates into findings, each with a concrete hint. The heuristics are documented in
/// docs/analysis.md; keep the two together.
enum Findings {
  static func derive(
    _ replay: Replay, _ definitions: TraceDefinitions, _ trace: AnalysisReport.Trace?, mainThread: UInt32? = nil
  ) -> [Finding] {
    var findings: [Finding] = []
    func location(_ stack: UInt32) -> SymbolizedFrame? {
      stack == 0 ? nil : definitions.site(ofStack: stack)
    }
    // A stack whose frames are named and none is the user's code: the site could not be placed, and is said so.
    func site(_ stack: UInt32) -> String? {
      if let frame = location(stack) { return SiteFormatting.describe(frame) }
      guard stack != 0, definitions.frames(ofStack: stack).contains(where: { !$0.function.isEmpty }) else { return nil }
      return "(\(SiteFormatting.notPlaced))"
    }

    // Stacks whose sites print alike (a helper's line reached from two callers) are one site: their counts make one
    // finding, as every output shows one place; before, the same finding was printed once per stack, each with part
    // of the count. The stack with the lowest id stands for the site. Stacks that give no site (no symbols, no
    // stack) stay apart: nothing says they are one place.
    func mergedBySite<Value>(_ counts: [FindingEvidence.SiteKey: Value], _ merge: (Value, Value) -> Value)
      -> [(key: FindingEvidence.SiteKey, value: Value)]
    {
      var merged: [String: (key: FindingEvidence.SiteKey, value: Value)] = [:]
      for (key, value) in counts.sorted(by: { ($0.key.property, $0.key.stack) < ($1.key.property, $1.key.stack) }) {
        let text = site(key.stack).map { "\(key.property) \($0)" } ?? "\(key.property) stack \(key.stack)"
        if let previous = merged[text] {
          merged[text] = (previous.key, merge(previous.value, value))
        } else {
          merged[text] = (key, value)
        }
      }
      return Array(merged.values)
    }

    let evidence = replay.evidence
    let noopCounts = evidence.noopWrites.reduce(into: [:]) { counts, entry in
      counts[entry.key] = (count: entry.value, wasted: evidence.noopWastedInvalidations[entry.key] ?? 0)
    }
    for (key, writes) in mergedBySite(noopCounts, { ($0.count + $1.count, $0.wasted + $1.wasted) }) {
      let property = definitions.propertyName(key.property)
      let (count, wasted) = writes
      // A warning only with its cost: scope runs these writes invalidated. Without one, what happened (information).
      findings.append(
        Finding(
          kind: .noopWrite, property: property, scope: nil, site: site(key.stack), count: count,
          message: "\(count) write\(count == 1 ? "" : "s") to \(property) left the value unchanged"
            + (wasted > 0
              ? " and still invalidated \(wasted) scope run\(wasted == 1 ? "" : "s")"
              : " and invalidated no scope run"),
          hint: wasted > 0
            ? "writes through _modify (x.items[i].y = v, x.n += 0) notify even when nothing changes; "
              + "compare before writing, or assign the whole value so the setter's equality check applies"
            : "no scope ObsTrace saw was subscribed to it at these writes, so they invalidated nothing here; writes "
              + "through _modify (x.items[i].y = v, x.n += 0) notify even when nothing changes, and would invalidate a "
              + "scope that read it",
          evidence: "didSet events marked unchanged: the recorder compared the value before and after the write"
            + (wasted > 0 ? "" : "; none of these writes fired a scope"),
          location: location(key.stack), withoutCost: wasted == 0))
    }
    for (key, count) in mergedBySite(evidence.staleReads, +) {
      let property = definitions.propertyName(key.property)
      findings.append(
        Finding(
          kind: .staleRead, property: property, scope: nil, site: site(key.stack), count: count,
          message: "\(count) read\(count == 1 ? "" : "s") of \(property) inside its own willSet saw the old value",
          hint: "onChange runs before the value is stored; re-read after the write (DispatchQueue.main.async, "
            + "a Task, or Observations, which reads after the change)",
          evidence: "reads recorded on the writing thread between the property's willSet and its didSet",
          location: location(key.stack)))
    }
    for (key, count) in evidence.racingReads {
      let property = definitions.propertyName(key.property)
      let scope = definitions.labelName(key.label)
      findings.append(
        Finding(
          kind: .staleRead, property: property, scope: scope, site: nil, count: count,
          message: "\(count) read\(count == 1 ? "" : "s") of \(property) by \(scope) raced a write of it on another "
            + "thread and may have seen the old value",
          hint: "the run read while the value was being replaced (onChange and Observations wake it inside the "
            + "writer's willSet); a tracking installed after such a read can miss the change and wait for the next one "
            + "(an Observations loop may never see the last value): make the writer and the reader run on one actor",
          evidence: "reads recorded on one thread between another thread's willSet and didSet of the same property"))
    }
    // By property and the site of the writes (with call stacks on): one finding per site, as for no-op writes.
    for (key, fanOut) in mergedBySite(evidence.fanOuts, { ($0.count + $1.count, max($0.largest, $1.largest)) }) {
      let name = definitions.propertyName(key.property)
      findings.append(
        Finding(
          kind: .fanOut, property: name, scope: nil, site: site(key.stack), count: fanOut.count,
          message: fanOut.count == 1
            ? "1 write to \(name) invalidated \(fanOut.largest) scopes, more than "
              + "\(replay.configuration.fanOutThreshold)"
            : "\(fanOut.count) writes to \(name) each invalidated more than "
              + "\(replay.configuration.fanOutThreshold) scopes (largest: \(fanOut.largest))",
          hint: "many views read this one property; split it, or pass each view only the part it shows",
          evidence: "fires recorded inside one write's willSet, each naming the write's property",
          location: location(key.stack)))
    }
    // Tracking ObsTrace does not own: by call site, with what the user can do about it.
    var untracedBySite: [String: (runs: Int, predicted: Int, unended: Int)] = [:]
    // Each label's statistics read in place (`forEachEntry`), not copied out by an iterator.
    let scopes = replay.scopes
    scopes.forEachEntry { label, statistics in
      guard statistics.kind == .untraced else { return }
      let previous = untracedBySite[definitions.labelName(label)] ?? (0, 0, 0)
      untracedBySite[definitions.labelName(label)] = (
        previous.runs + statistics.runs, previous.predicted + statistics.predictedInvalidations,
        previous.unended + statistics.runsEndedAtTraceEnd
      )
    }
    for (site, entry) in untracedBySite {
      // Runs whose end the trace does not have are said, not left out (ReplayMachine.finish).
      let unended =
        entry.unended == 0
        ? ""
        : "; \(entry.unended) of these runs \(entry.unended == 1 ? "has" : "have") no recorded end (\(entry.unended == 1 ? "its" : "their") "
          + "thread recorded nothing after \(entry.unended == 1 ? "it" : "them"), as for a loop still waiting for its next value when "
          + "the trace ended): counted up to the trace's end"
      findings.append(
        Finding(
          kind: .untracedTracking, property: nil, scope: site, site: site, count: entry.runs,
          message: "\(entry.runs) scope\(entry.runs == 1 ? "" : "s") at \(site) track\(entry.runs == 1 ? "s" : "") "
            + "with Observation directly; add `import ObsTrace` to that file to record them exactly",
          hint:
            "their reads are recorded; their \(entry.predicted) invalidation\(entry.predicted == 1 ? " is" : "s are") "
            + "predicted from Observation's rules (one fire, at the first willSet of anything read), not recorded"
            + unended,
          evidence: "reads recorded while Observation's runtime reported tracking in progress that was not one of "
            + "ObsTrace's scopes (_swift_observation_tls_get)"))
    }
    findings += unrecordedWriteFindings(replay, definitions, trace)
    let begunBefore = replay.machine.writesBegunBeforeStart
    if let trace, trace.startedWhileRunning, replay.machine.objectsFromBefore > 0 || begunBefore > 0 {
      let objects = replay.machine.objectsFromBefore
      let threads = replay.machine.threadsWritingAtStart.sorted().map { "T\($0)" }.joined(separator: ", ")
      // A write in progress at the start: its willSet came before the recording, its didSet after (P8).
      let inProgress =
        begunBefore == 0
        ? ""
        : "; \(begunBefore) write\(begunBefore == 1 ? " was" : "s were") in progress at the start (\(threads)): "
          + "\(begunBefore == 1 ? "its didSet is" : "their didSets are") in the trace, \(begunBefore == 1 ? "its" : "their") "
          + "willSet before it, so \(begunBefore == 1 ? "it is" : "they are") not counted among the writes"
      findings.append(
        Finding(
          kind: .startedWhileRunning, property: nil, scope: nil, site: nil, count: objects,
          message: "the recording started while the program ran (Recorder.start), and \(objects) object"
            + (objects == 1 ? "" : "s") + " made before it \(objects == 1 ? "was" : "were") used: tracking begun "
            + "before the start is not seen, so a write of such an object that invalidated nothing recorded may have "
            + "invalidated such tracking" + inProgress,
          hint: "start the recording before the views or loops you want to see track (OBSTRACE_OUTPUT starts it at "
            + "the program's first model), or let them re-track once after the start",
          evidence: "the trace's header: started by Recorder.start, not from OBSTRACE_OUTPUT; events of objects "
            + "whose creation is not in the trace"
            + (begunBefore == 0 ? "" : "; a thread's didSet of a property no willSet in the trace had written yet")))
    }
    if let trace, trace.forks > 0 {
      let times = trace.forks == 1 ? "once" : "\(trace.forks) times"
      findings.append(
        Finding(
          kind: .forked, property: nil, scope: nil, site: nil, count: Int(clamping: trace.forks),
          message: "the process forked \(times) while recording: a child of fork does not record, so nothing "
            + "\(trace.forks == 1 ? "its child" : "its children") did is in this trace (the parent's own events are)",
          hint: "to trace what a child does, have it exec a program built with ObsTrace, which records on its own "
            + "from OBSTRACE_OUTPUT (put %p in it for a file per process)",
          evidence: "the footer: forks counted by the recorder's fork handler while recording was on"))
    }
    var redundantByName: [String: ScopeStatistics] = [:]
    scopes.forEachEntry { label, statistics in
      guard statistics.redundantRuns > 0 else { return }
      let name = definitions.labelName(label)
      redundantByName[name] = redundantByName[name].map { $0.merging(statistics) } ?? statistics
    }
    for (name, statistics) in redundantByName {
      findings.append(
        Finding(
          kind: .redundantRun, property: nil, scope: name, site: nil, count: statistics.redundantRuns,
          message: "\(statistics.redundantRuns) run\(statistics.redundantRuns == 1 ? "" : "s") of \(name) read only "
            + "values that no real change had touched since its previous run",
          hint: Self.redundantRunHint(statistics),
          evidence: "each of these runs continued a recorded instance, and no write that changed a value it read "
            + "happened since that instance's previous run began"
            + Self.redundantRunCauses(statistics)))
    }
    findings += objectFindings(replay, definitions, trace)
    // Writes of one object's property at once on two threads (one's willSet between the other's willSet and didSet):
    // a race, recorded. Written from several threads without that is what happened, not a warning: threads taking
    // turns under a lock, a task resuming on another thread, an actor's executor moving between threads.
    let concurrentWrites = evidence.concurrentWrites
    for (property, writes) in concurrentWrites {
      let name = definitions.propertyName(property)
      findings.append(
        Finding(
          kind: .concurrentWrite, property: name, scope: nil, site: site(writes.stack), count: writes.writes,
          message: "\(writes.writes) write\(writes.writes == 1 ? "" : "s") to \(name) began while another thread's "
            + "write to it on the same object was in progress (\(writes.objects) object\(writes.objects == 1 ? "" : "s"))",
          hint: "two threads wrote one property at once, with nothing ordering the writes (a data race): confine the "
            + "model to an actor (@MainActor), or make each write hold one lock",
          evidence: "willSet events recorded on one thread between another thread's willSet and didSet of the same "
            + "object's property" + (site(writes.stack) == nil ? "" : "; the site is the first such write's"),
          location: location(writes.stack)))
    }
    // The main actor's threads: the process's first thread and every thread main-actor work was seen on.
    let mainThreads = replay.machine.mainActorThreads.union(mainThread.map { [$0] } ?? [])
    // Named, so that a user can look at them (timeline --thread).
    func named(_ threads: [UInt32]) -> String {
      threads.prefix(8).map { "T\($0)" }.joined(separator: ", ") + (threads.count > 8 ? ", …" : "")
    }
    let overlapped = evidence.concurrentlyWrittenObjects
    for (property, objects) in evidence.crossThreadWrites {
      let name = definitions.propertyName(property)
      // One finding per site: the objects whose first write from a thread other than their first writer's (the
      // first such with a stack recorded) is there, each with its own count of threads. Before, a property's
      // objects made one finding with the most threads of any object and the first object's site (a fresh-clone
      // try-out's G13: '3 objects' Counter.count written from 120 threads' at the line of an object written from 2).
      var groups: [(site: String?, writes: [FindingEvidence.CrossThreadWrite])] = []
      for write in objects {
        let text = site(write.stack)
        if let index = groups.firstIndex(where: { $0.site == text }) {
          groups[index].writes.append(write)
        } else {
          groups.append((text, [write]))
        }
      }
      for group in groups {
        let writes = group.writes
        let stack = writes.first { $0.stack != 0 && site($0.stack) != nil }?.stack ?? 0
        let counts = writes.map(\.threads.count).sorted()
        let one = writes.count == 1
        let spelled: String
        if counts.first == counts.last {
          spelled = "\(counts[0]) threads" + (one ? "" : " each")
        } else if counts.count <= 5 {
          spelled =
            counts.dropLast().map(String.init).joined(separator: ", ") + " and \(counts[counts.count - 1]) threads"
        } else {
          spelled = "\(counts[0]) to \(counts[counts.count - 1]) threads each"
        }
        let threads = Set(writes.flatMap(\.threads)).sorted()
        let overlapping = writes.contains { overlapped[property]?.contains($0.object) ?? false }
        let onMainActor = !overlapping && threads.allSatisfy(mainThreads.contains)
        let hint: String
        if overlapping {
          hint = "information: some of these writes overlapped (see the concurrent-write warning)"
        } else if onMainActor {
          hint =
            "information: every thread that wrote \(one ? "it" : "them") is one the main actor ran on (the "
            + "process's first thread, where top-level code and an async main before its first await run, and threads "
            + "main-actor work was seen on); the main actor runs on one thread at a time, so the writes it made are "
            + "ordered by it, not a data race"
        } else {
          hint =
            "information: no write was seen to begin inside another thread's write of the same object's property; "
            + "that does not show the writes were ordered (a write's recorded window is short: its didSet takes "
            + "its willSet's time unless an event in between read the clock), so if nothing orders them (a lock, "
            + "one actor, the awaits of one task), ThreadSanitizer can tell"
        }
        let recorded =
          one
          ? "willSet events of the object's property recorded on \(counts[0]) distinct threads (\(named(threads)))"
          : "willSet events of each object's property recorded on "
            + (counts.first == counts.last
              ? "\(counts[0]) distinct threads each"
              : "distinct threads, by object: " + counts.dropLast().map(String.init).joined(separator: ", ")
                + " and \(counts[counts.count - 1])") + " (\(named(threads)) in all)"
        findings.append(
          Finding(
            kind: .crossThreadWrite, property: name, scope: nil, site: site(stack), count: writes.count,
            message: "\(writes.count) object\(one ? "'s" : "s'") \(name) written from \(spelled)",
            hint: hint,
            evidence: recorded
              + (overlapping
                ? ", some inside another thread's write of it" : ", none inside another thread's write of it")
              + (onMainActor ? "; each is one of the main actor's threads (\(named(mainThreads.sorted())))" : "")
              + (site(stack) == nil
                ? ""
                : "; the site is \(one ? "its" : "each object's") first write from a thread other than its first writer"),
            location: location(stack)))
      }
    }
    // Types used on the main actor's thread(s) and off them: for a @MainActor model each use off them is an
    // isolation violation; for a model that is not isolated, uses in turn are correct. Isolation is not visible
    // at run time, so this says what happened (information); races are warned by concurrent-write and stale-read.
    if !mainThreads.isEmpty {
      for (type, threads) in evidence.threadsByType
      where threads.contains(where: mainThreads.contains) && !threads.allSatisfy(mainThreads.contains) {
        let name = definitions.typeName(type)
        let otherThreads = threads.filter { !mainThreads.contains($0) }.sorted()
        let others = otherThreads.count
        let main = mainThreads.count == 1 ? "the main thread" : "the main actor's \(mainThreads.count) threads"
        findings.append(
          Finding(
            kind: .offMainThread, property: nil, scope: nil, site: nil, count: others,
            message:
              "\(name) objects were used on \(main) and on \(others) other thread\(others == 1 ? "" : "s")",
            hint: "information: if \(name) is @MainActor, every use off the main actor is an isolation violation (an "
              + "@unchecked Sendable or a nonisolated path let it through); if it is not isolated, uses in turn are "
              + "correct (a race among them is warned as concurrent-write or stale-read)",
            evidence: "reads and writes of \(name) objects recorded on \(main) (\(named(mainThreads.sorted()))) and on "
              + "\(named(otherThreads))"))
      }
    }
    if let trace { findings += traceFindings(trace) }
    var anomalies = replay.anomalies
    if let trace, trace.undefinedReferences > 0 { anomalies[.undefinedID, default: 0] += trace.undefinedReferences }
    findings += anomalyFindings(
      anomalies, firstUndefined: trace?.firstUndefinedReference, redefinitions: trace?.redefinitions ?? 0,
      firstRedefinition: trace?.firstRedefinition)
    findings += forgottenInstanceFindings(replay, definitions)
    // Reads, and accesses at the end of the recording (`ReadFact.atEnd`), by site.
    var untracked = evidence.untrackedReads.mapValues { (reads: $0, atEnd: 0) }
    for (key, atEnd) in evidence.accessesAtEnd { untracked[key, default: (0, 0)].atEnd += atEnd }
    for (key, counts) in mergedBySite(untracked, { ($0.reads + $1.reads, $0.atEnd + $1.atEnd) }) {
      let property = definitions.propertyName(key.property)
      let (count, atEnd) = counts
      // The last access of a thread the recording may have cut: a read, or a `_modify`'s start (ReadFact.atEnd).
      let end =
        "\(atEnd) access\(atEnd == 1 ? "" : "es") of \(property) outside any tracking scope at the end of the "
        + "recording: \(atEnd == 1 ? "a read" : "each a read"), or the start of a write through _modify that the "
        + "recording did not reach"
      findings.append(
        Finding(
          kind: .untrackedRead, property: property, scope: nil, site: site(key.stack), count: count,
          message: count == 0
            ? end
            : "\(count) read\(count == 1 ? "" : "s") of \(property) outside any tracking scope"
              + (atEnd == 0 ? "" : ", and " + end),
          hint: "information: such reads subscribe nothing (an action, a test assertion, a re-read)",
          evidence: "accesses recorded with no scope of ObsTrace's open on their thread"
            + (atEnd == 0
              ? ""
              : "; \(atEnd == 1 ? "one was its thread's" : "\(atEnd) were their threads'") last event, on a thread "
                + "running at the stop or in a trace cut short, so the willSet that would follow the access of a "
                + "_modify may be missing"),
          location: location(key.stack))
      )
    }
    return sorted(findings)
  }

  /// Fires with no recorded write in progress (`ScopeStatistics.unexplainedInvalidations`), in one finding: they come
  /// from writes ObsTrace did not record, most likely of a model declared in a file without `import ObsTrace`.
  static func unrecordedWriteFindings(
    _ replay: Replay, _ definitions: TraceDefinitions, _ trace: AnalysisReport.Trace?
  ) -> [Finding] {
    var byScope: [String: Int] = [:]
    replay.scopes.forEachEntry { label, statistics in
      guard statistics.unexplainedInvalidations > 0 else { return }
      byScope[definitions.labelName(label), default: 0] += statistics.unexplainedInvalidations
    }
    let total = byScope.values.reduce(0, +)
    guard total > 0 else { return [] }
    let scopes = byScope.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
    let named =
      scopes.count == 1
      ? scopes[0].key
      : "\(scopes.count) scopes: " + scopes.prefix(3).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        + (scopes.count > 3 ? ", …" : "")
    let lossy = trace.map { $0.droppedEvents > 0 || !$0.damage.isEmpty || $0.truncated } ?? false
    return [
      Finding(
        kind: .unrecordedWrite, property: nil, scope: scopes.count == 1 ? scopes[0].key : nil, site: nil,
        count: total,
        message: "\(total) invalidation\(total == 1 ? " was" : "s were") fired by a write ObsTrace did not record, "
          + "invalidating \(named); such writes are in no property's count",
        hint: "the likely cause: the scope read an @Observable class declared in a file without `import ObsTrace` "
          + "(in another module or package), whose reads and writes go to Observation's own registrar; add the "
          + "import to that file to record them"
          + (lossy ? " (this trace also lost events: a lost willSet looks the same)" : ""),
        evidence: "fires recorded with no recorded write in progress on the firing thread: Observation fires a "
          + "scope inside the willSet of a write (never at a deinit), and that willSet is not in the trace")
    ]
  }

  /// This many objects of a type left behind and unwatched (see `objectFindings`), none of the type freed, is a
  /// pile-up.
  static let pileUpThreshold = 10

  /// Damaged chunks said one by one (those the reader keeps whole); the rest in one finding.
  static let damagedChunksListed = TraceDamageList.listedLimit

  /// Objects alive at the end: a leak only with evidence, never from a trace that may have lost its frees
  /// (truncated, or with dropped events); the rest is information. The evidence is objects left behind: never read
  /// or written again once a newer live object of their type had been created in a later turn (a scope run began
  /// or ended between their creations, `ObjectTurns`), yet never freed. Objects created together and alive at the end (a
  /// screen's rows) are not left behind; nor is one object a loop still reads, unless a newer one of its type took
  /// its place (the trace shows no holders: a global may hold it as well as the loop's task). A pile-up counts only
  /// objects nothing watches at the end (no run still subscribed to them: a row a view still shows is watched by
  /// that view's tracking, however long ago it was read).
  static func objectFindings(_ replay: Replay, _ definitions: TraceDefinitions, _ trace: AnalysisReport.Trace?)
    -> [Finding]
  {
    var findings: [Finding] = []
    let incomplete =
      trace.map {
        $0.truncated || $0.droppedEvents > 0 || $0.lostAtStop > 0 || $0.ringless > 0 || $0.signalHandlerEvents > 0
      } ?? false
    func location(_ stack: UInt32) -> SymbolizedFrame? { stack == 0 ? nil : definitions.creationSite(ofStack: stack) }
    var alive: [String: Int] = [:]
    /// Live objects by type name and creation stack (0: not recorded), for a pile-up's site.
    var aliveBySite: [String: [UInt32: Int]] = [:]
    /// Objects an `Observations` loop still reads: those left behind by a newer one, and the others.
    var heldByLoops: [String: (count: Int, leftBehind: Int, loops: Set<String>)] = [:]
    // Objects a thread still running at the stop had used: it may have freed them after (at exit, its last events
    // may be missing), so they are neither alive at the end nor a pile-up.
    let runningAtStop = (trace?.runningAtStop ?? []).reduce(UInt64(0)) { $0 | ReplayMachine.threadBit($1) }
    var maybeFreedAfter: [String: Int] = [:]
    /// Of those, the ones an `Observations` loop that never ended still reads: alive-at-end says them (the loop holds
    /// them while it runs), and running-at-stop counts them among the objects used on its threads.
    var maybeFreedAfterHeldByLoops = 0
    let live = replay.machine.liveObjectSerials
    // The newest live object of each type (the last created): an object last used before it was left behind.
    var newest: [UInt32: ObjectTurns] = [:]
    for (serial, type) in live {
      guard let turns = replay.machine.turns(ofObject: serial) else { continue }
      if let known = newest[type], known.createdAt >= turns.createdAt { continue }
      newest[type] = turns
    }
    func leftBehind(_ serial: UInt32, _ type: UInt32) -> Bool {
      guard let turns = replay.machine.turns(ofObject: serial), let newer = newest[type] else { return false }
      return turns.isLeftBehind(by: newer)
    }
    /// Live objects left behind and watched by nothing, by type name: a pile-up's evidence.
    var leftBehindByType: [String: Int] = [:]
    let watched = incomplete ? [] : replay.machine.watchedObjects
    for (serial, type) in live {
      let name = definitions.typeName(type)
      let loops = replay.machine.liveLoops(reading: serial)
      if !incomplete, !loops.isEmpty {
        if replay.machine.threadBits(ofObject: serial) & runningAtStop != 0 {
          maybeFreedAfter[name, default: 0] += 1
          maybeFreedAfterHeldByLoops += 1
        }
        var entry = heldByLoops[name] ?? (0, 0, [])
        entry.count += 1
        if leftBehind(serial, type) { entry.leftBehind += 1 }
        entry.loops.formUnion(loops.map { definitions.labelName($0) })
        heldByLoops[name] = entry
      } else if replay.machine.threadBits(ofObject: serial) & runningAtStop != 0 {
        maybeFreedAfter[name, default: 0] += 1
      } else {
        alive[name, default: 0] += 1
        if leftBehind(serial, type), !watched.contains(serial) { leftBehindByType[name, default: 0] += 1 }
        aliveBySite[name, default: [:]][replay.machine.creationStack(ofObject: serial), default: 0] += 1
      }
    }
    // Registrars that recorded no event name no object: counted as registrars, by where they were created.
    var aliveRegistrars: [UInt32: [UInt32]] = [:]  // serials by creation stack (0: none recorded)
    var registrarsMaybeFreedAfter = 0
    for (serial, stack) in replay.machine.liveRegistrarsWithoutEvents {
      if replay.machine.threadBits(ofObject: serial) & runningAtStop != 0 {
        registrarsMaybeFreedAfter += 1
      } else {
        aliveRegistrars[stack, default: []].append(serial)
      }
    }
    if let trace, !trace.runningAtStop.isEmpty || trace.lostAtStop > 0 {
      // Traced runs whose closure had not returned (ReplayMachine.finish): counted, and said here.
      var openRuns: [String: Int] = [:]
      replay.scopes.forEachEntry { label, statistics in
        guard statistics.kind != .untraced, statistics.runsEndedAtTraceEnd > 0 else { return }
        openRuns[definitions.labelName(label), default: 0] += statistics.runsEndedAtTraceEnd
      }
      findings.append(
        runningAtStopFinding(
          trace, maybeFreedAfter: maybeFreedAfter, heldByLoops: maybeFreedAfterHeldByLoops,
          registrarsMaybeFreedAfter: registrarsMaybeFreedAfter, openRuns: openRuns))
    }
    findings += registrarFindings(replay, definitions, alive: aliveRegistrars, incomplete: incomplete)
    for (name, entry) in heldByLoops {
      let loop = entry.loops.sorted().first ?? "?"
      let rest = entry.count - entry.leftBehind
      if rest > 0 {
        // A loop still reading an object is no evidence that the loop alone holds it.
        let them = rest == 1 ? "it" : "them"
        findings.append(
          Finding(
            kind: .aliveAtEnd, property: nil, scope: loop, site: loop, count: rest,
            message: "\(rest) \(name) object\(rest == 1 ? " was" : "s were") alive when the trace ended, still read "
              + "by the Observations loop at \(loop), which never ended",
            hint: "information: a loop meant to run as long as the program is fine; if nothing else holds \(them) "
              + "(a global, a parent model), the loop's task does: capture [weak self] in the Task and in the "
              + "Observations closure, and cancel the task in deinit",
            evidence: "the sequence had no end recorded when the trace stopped cleanly, and its last value read "
              + "\(rest == 1 ? "this object" : "these objects"), never freed; no newer \(name) replaced \(them) "
              + "(the trace does not show what else holds \(them))"))
      }
      let count = entry.leftBehind
      guard count > 0 else { continue }
      findings.append(
        Finding(
          kind: .leakedObject, property: nil, scope: loop, site: loop, count: count,
          message: "\(count) \(name) object\(count == 1 ? " is" : "s are") kept alive by the Observations loop at "
            + "\(loop), which still reads \(count == 1 ? "it" : "them") and never ended, though a newer \(name) "
            + "replaced \(count == 1 ? "it" : "them")",
          hint: "the loop's task holds the model (a strong self in the Task or in the Observations closure); "
            + "capture [weak self] in both, and cancel the task in deinit",
          evidence: "the sequence had no end recorded when the trace stopped cleanly, and its last value read "
            + "\(count == 1 ? "this object" : "these objects"), which \(count == 1 ? "was" : "were") never freed, "
            + "nor read or written again, by the loop or anything else, after a newer \(name) was created, in a later "
            + "turn (a scope run began or ended between their creations)"))
    }
    if !incomplete {
      for (type, statistics) in replay.typeStatistics
      where type != 0 && statistics.freed == 0 && statistics.created >= pileUpThreshold {
        let name = definitions.typeName(type)
        guard let count = alive[name], let left = leftBehindByType[name], left >= pileUpThreshold else { continue }
        // The others of the type alive at the end are only that (information, below).
        alive[name] = count - left
        // Where they were created: the site that created most of them (stacks recorded with call stacks on).
        let sites = (aliveBySite[name] ?? [:]).filter { $0.key != 0 }
          .compactMap { stack, count in location(stack).map { (frame: $0, count: count) } }
          .sorted { ($1.count, SiteFormatting.describe($0.frame)) < ($0.count, SiteFormatting.describe($1.frame)) }
        let top = sites.first
        let created = top.map { top in
          " at \(SiteFormatting.describe(top.frame))"
            + (top.count < count ? " (\(top.count) of them; \(sites.count) sites in all)" : "")
        }
        findings.append(
          Finding(
            kind: .leakedObject, property: nil, scope: nil, site: top.map { SiteFormatting.describe($0.frame) },
            count: left,
            message: "\(left) \(name) objects piled up, left behind by newer ones: created \(statistics.created) times "
              + "in the trace" + (created ?? "") + ", none ever freed",
            hint: "something keeps every new one alive (a cache, an array, a cycle through a closure capturing self); "
              + "find who holds them (unless something still needs them though nothing read them, as a long list's "
              + "rows off screen)"
              + (top == nil
                ? " (record with call stacks on, OBSTRACE_BACKTRACES=writes or all, to see where they are created)"
                : ""),
            evidence: "the live count of \(name) grew with each of \(statistics.created) creations and never fell; "
              + "\(left) were never read or written again after a newer \(name) was created, in a later turn (a scope "
              + "run began or ended between their creations), and no run still watched them at the end"
              + (top == nil ? "" : "; the site is the first user frame of the stacks recorded at their creation"),
            location: top?.frame))
      }
    }
    for (name, count) in alive where count > 0 {
      findings.append(
        Finding(
          kind: .aliveAtEnd, property: nil, scope: nil, site: nil, count: count,
          message: "\(count) \(name) object\(count == 1 ? " was" : "s were") alive when the trace ended",
          hint: "information: globals and objects the program still held when recording stopped are alive at the "
            + "end; that alone is not a leak",
          evidence: incomplete
            ? "the trace is incomplete (truncated, or with dropped or lost events): frees may be missing, so nothing is "
              + "concluded" : "created in the trace, no free recorded"))
    }
    return findings
  }

  /// Registrars that recorded no event, alive at the end (`alive`: their serials by creation stack, those no thread
  /// running at the stop used): a pile-up where at least `pileUpThreshold` were left behind at one site (created in
  /// an earlier turn than the newest registrar created there: a scope run began or ended between their creations;
  /// none was ever used) and none created there was freed, in a complete trace; the rest information. Registrars
  /// made together (a screen's rows, made in one turn) are no evidence of a pile-up, however many. They name no
  /// object, so neither names a type or a count of objects: a class with `@Observable` at k levels has k registrars
  /// per object.
  static func registrarFindings(
    _ replay: Replay, _ definitions: TraceDefinitions, alive: [UInt32: [UInt32]], incomplete: Bool
  ) -> [Finding] {
    guard !alive.isEmpty else { return [] }
    // By site: stacks that resolve to one site (each level's registrar is created in its own class's init) are one.
    var aliveBySite: [String: (count: Int, stacks: [[UInt32]], frame: SymbolizedFrame)] = [:]
    var unplaced = 0
    for (stack, serials) in alive {
      guard stack != 0, let frame = definitions.creationSite(ofStack: stack) else {
        unplaced += serials.count
        continue
      }
      let site = SiteFormatting.describe(frame)
      var entry = aliveBySite[site] ?? (0, [], frame)
      entry.count += serials.count
      entry.stacks.append(serials)
      aliveBySite[site] = entry
    }
    var createdBySite: [String: RegistrarStatistics] = [:]
    for (stack, statistics) in replay.machine.registrarsWithoutEvents where stack != 0 {
      guard let frame = definitions.creationSite(ofStack: stack) else { continue }
      let site = SiteFormatting.describe(frame)
      createdBySite[site, default: RegistrarStatistics()].created += statistics.created
      createdBySite[site, default: RegistrarStatistics()].freed += statistics.freed
    }
    var findings: [Finding] = []
    var remaining = unplaced
    var remainingSites: [(site: String, count: Int)] = []
    for (site, entry) in aliveBySite.sorted(by: { $0.key < $1.key }) {
      let created = createdBySite[site] ?? RegistrarStatistics()
      // Left behind by the newest registrar created at the site. `largest`, the most left behind of any one stack,
      // stands for the objects: each level of a class has a stack of its own, so the sum over a site counts an
      // object once per level.
      let newest = entry.stacks.joined().compactMap { replay.machine.turns(ofObject: $0) }.max {
        $0.createdAt < $1.createdAt
      }
      var leftBehind = 0
      var largest = 0
      for serials in entry.stacks {
        let left = serials.count { serial in
          guard let newest, let turns = replay.machine.turns(ofObject: serial) else { return false }
          return turns.isLeftBehind(by: newest)
        }
        leftBehind += left
        largest = max(largest, left)
      }
      guard !incomplete, largest >= pileUpThreshold, created.freed == 0 else {
        remaining += entry.count
        remainingSites.append((site, entry.count))
        continue
      }
      // Those made in the newest one's turn are only alive at the end.
      if entry.count > leftBehind {
        remaining += entry.count - leftBehind
        remainingSites.append((site, entry.count - leftBehind))
      }
      findings.append(
        Finding(
          kind: .leakedObject, property: nil, scope: nil, site: site, count: leftBehind,
          message: "objects created at \(site) piled up: \(created.created) @Observable registrars were created there "
            + "in the trace and none was ever freed, \(leftBehind) of them left behind by newer ones; their objects "
            + "were never read or written while recording, so their type and number are not known (an object has one "
            + "registrar per @Observable level of its class)",
          hint: "something keeps every object created there alive (a cache, an array, a cycle through a closure "
            + "capturing self); find who holds them",
          evidence: "the registrars created at \(site) (the first user frame of the stacks recorded at their "
            + "creation) grew with each of \(created.created) creations and none was freed, in a complete trace; "
            + "\(leftBehind) were created in an earlier turn than the newest one there (a scope run began or ended "
            + "between their creations); no event named their object",
          location: entry.frame))
    }
    guard remaining > 0 else { return findings }
    let top = remainingSites.max { ($0.count, $1.site) < ($1.count, $0.site) }
    let many = remaining != 1
    findings.append(
      Finding(
        kind: .aliveAtEnd, property: nil, scope: nil, site: nil, count: remaining,
        message: "\(remaining) @Observable registrar\(many ? "s" : "") with no recorded event \(many ? "were" : "was") "
          + "alive when the trace ended"
          + (top.map { top in
            top.count == remaining ? ", created at \(top.site)" : " (\(top.count) created at \(top.site))"
          } ?? "")
          + ": \(many ? "their objects were" : "its object was") never read or written while recording, so which "
          + "objects and types they are is not known (an object has one registrar per @Observable level of its "
          + "class, and a registrar a type keeps by hand, outside @Observable, is counted too)",
        hint: "information: globals and objects the program still held when recording stopped are alive at the end; "
          + "that alone is not a leak"
          + (unplaced > 0
            ? " (with call stacks on, OBSTRACE_BACKTRACES=writes or all, the report says where they were created, "
              + "and whether they pile up there)" : ""),
        evidence: incomplete
          ? "the trace is incomplete (truncated, or with dropped or lost events): frees may be missing, so nothing is "
            + "concluded" : "created in the trace, no free recorded, no event named their object"))
    return findings
  }

  /// Threads still running when the recording stopped, and what that leaves out.
  static func runningAtStopFinding(
    _ trace: AnalysisReport.Trace, maybeFreedAfter: [String: Int], heldByLoops: Int = 0,
    registrarsMaybeFreedAfter: Int = 0, openRuns: [String: Int] = [:]
  ) -> Finding {
    let threads = trace.runningAtStop
    // What the trace shows of each: its last event, and how long before the stop (an idle pool thread's is long
    // before it, or it has none); not whether it was working or waiting at the stop, which the trace cannot tell.
    let shown =
      threads.prefix(8).map { thread in
        guard let last = trace.lastEventsOfRunningThreads[thread] else { return "T\(thread): no event in the trace" }
        let before = trace.durationNanoseconds > last ? trace.durationNanoseconds - last : 0
        return "T\(thread): last event \(before / 1_000_000).\(before / 100_000 % 10) ms before the stop"
      }.joined(separator: "; ") + (threads.count > 8 ? "; …" : "")
    var message =
      threads.isEmpty
      ? "the recording stopped while threads were still recording"
      : "\(threads.count) thread\(threads.count == 1 ? "" : "s") had not exited "
        + "when the recording stopped (\(shown)): what \(threads.count == 1 ? "it" : "they") did after the stop, if "
        + "anything, is not in the trace"
    if trace.lostAtStop > 0 {
      message +=
        "; \(trace.lostAtStop) event\(trace.lostAtStop == 1 ? "" : "s") recorded during the stop "
        + "\(trace.lostAtStop == 1 ? "was" : "were") lost"
    }
    let objects = maybeFreedAfter.values.reduce(0, +)
    if objects > 0 {
      let types = maybeFreedAfter.keys.sorted().joined(separator: ", ")
      let they = objects == 1 ? "it" : "them"
      message +=
        "; \(objects) object\(objects == 1 ? "" : "s") (\(types)) used on \(threads.count == 1 ? "it" : "them") "
        + "may have been freed after the stop: "
        + (heldByLoops == 0
          ? "no alive-at-end or leak finding counts \(they)"
          : heldByLoops == objects
            ? "no leak finding counts \(they); alive-at-end does, as still read by an Observations loop that never "
              + "ended (which holds \(they) while it runs)"
            : "no leak finding counts them; alive-at-end counts only the \(heldByLoops) still read by an Observations "
              + "loop that never ended (which holds \(heldByLoops == 1 ? "it" : "them") while it runs)")
    }
    let open = openRuns.values.reduce(0, +)
    if open > 0 {
      let labels = openRuns.keys.sorted()
      message +=
        "; \(open) run\(open == 1 ? "" : "s") (" + labels.prefix(4).joined(separator: ", ")
        + (labels.count > 4 ? ", …" : "") + ") had not returned from \(open == 1 ? "its" : "their") closure: "
        + "counted as \(open == 1 ? "a run" : "runs") up to the trace's end, \(open == 1 ? "its" : "their") end not "
        + "in the trace"
    }
    if registrarsMaybeFreedAfter > 0 {
      let many = registrarsMaybeFreedAfter != 1
      message +=
        "; \(registrarsMaybeFreedAfter) @Observable registrar\(many ? "s" : "") with no recorded event, created on "
        + "\(threads.count == 1 ? "it" : "them"), may have been freed after the stop: no alive-at-end or leak finding "
        + "counts \(many ? "them" : "it")"
    }
    return Finding(
      kind: .runningAtStop, property: nil, scope: nil, site: nil, count: max(1, threads.count),
      message: message,
      hint: "the program stopped recording (or exited) before these threads exited; a pool thread (Dispatch, Swift "
        + "concurrency) waits for work until the process exits, and may have done nothing after its last event; if "
        + "they still had work to do, join them (or stop recording after they are done) for a trace that holds "
        + "their last events",
      evidence: "the footer: threads that had recorded and had not exited when recording was switched off"
        + (trace.lostAtStop > 0 ? ", and the records left in their rings after the final drain" : ""))
  }

  /// What the machine could not place, in one finding.
  /// The instances the replay forgot (`ReplayMachine.waitingKeptPerLabel`), by scope as it prints: said with their
  /// count, since the scope's coalesced writes leave out the writes after each was forgotten.
  static func forgottenInstanceFindings(_ replay: Replay, _ definitions: TraceDefinitions) -> [Finding] {
    guard !replay.machine.forgottenInstances.isEmpty else { return [] }
    var byScope: [String: Int] = [:]
    for (label, count) in replay.machine.forgottenInstances {
      byScope[definitions.labelName(label), default: 0] += count
    }
    var laterRuns: [String: Int] = [:]
    for (label, count) in replay.machine.runsOfForgottenInstances {
      laterRuns[definitions.labelName(label), default: 0] += count
    }
    let kept = ReplayMachine.waitingKeptPerLabel
    return byScope.sorted { $0.key < $1.key }.map { scope, count in
      let them = count == 1 ? "it" : "them"
      let runs = laterRuns[scope] ?? 0
      let later =
        runs == 0
        ? ""
        : "; \(runs) later run\(runs == 1 ? "" : "s") continued one of \(them) (a fire of it came late, and the recorder "
          + "queued it again): counted as \(runs == 1 ? "a run" : "runs") of \(runs == 1 ? "its" : "their") instance, "
          + "not judged redundant"
      return Finding(
        kind: .forgottenInstances, property: nil, scope: scope, site: nil, count: count,
        message: "\(count) instance\(count == 1 ? "" : "s") of \(scope) fired and \(count == 1 ? "was" : "were") not "
          + "re-tracked while \(kept) later-fired ones waited: the replay forgot \(them), and the writes after that are "
          + "not counted as coalesced into \(them)" + later,
        hint: "information: code that re-tracks more often than a write fires it leaves an observer behind at each "
          + "run that continued none (Observation keeps each subscribed until a write fires it): re-track from "
          + "onChange, or once a change",
        evidence:
          "fires of this scope's instances recorded while \(kept) fired instances of it waited to be re-tracked; "
          + "the recorder continues at most the \(kept / 2) it queued last; the replay knows the last "
          + "\(ReplayMachine.recentlyForgottenKept) it forgot, and a run of one forgotten before them would count as a "
          + "new instance")
    }
  }

  static func anomalyFindings(
    _ anomalies: [AnomalyFact.Kind: Int], firstUndefined: String? = nil, redefinitions: Int = 0,
    firstRedefinition: String? = nil
  ) -> [Finding] {
    let total = anomalies.values.reduce(0, +)
    guard total > 0 || redefinitions > 0 else { return [] }
    let parts = AnomalyFact.Kind.allCases.compactMap { kind -> String? in
      guard let count = anomalies[kind] else { return nil }
      guard kind == .undefinedID else { return "\(count) \(count == 1 ? kind.rawValue : kind.plural)" }
      return "\(count) reference\(count == 1 ? "" : "s") to an id no definition states"
        + (firstUndefined.map { " (first: \($0))" } ?? "")
    }
    var clauses: [String] = []
    if total > 0 {
      clauses.append(
        "\(total) event\(total == 1 ? "" : "s") could not be placed (" + parts.joined(separator: ", ") + ")")
    }
    if redefinitions > 0 {
      // A recorder gives an id one meaning for the whole trace: events on each side of such a definition are named
      // two ways (the report's tables by the last meaning; the timeline and dump keep the names they printed first).
      clauses.append(
        "\(redefinitions) definition\(redefinitions == 1 ? "" : "s") gave an id already defined another meaning"
          + (firstRedefinition.map { " (first: \($0))" } ?? "") + ": the events of such an id may be named by "
          + "either meaning, and not the same in every output")
    }
    return [
      Finding(
        kind: .inconsistentTrace, property: nil, scope: nil, site: nil, count: total + redefinitions,
        message: "the trace is inconsistent: " + clauses.joined(separator: "; ") + "; counts that involve them are "
          + "off by that much",
        hint: "events were lost (dropped, a damaged chunk, a cut end) or the recorder has a bug: report it",
        evidence: "events that name a scope that never began, a didSet with no willSet before it on its thread, or "
          + "an id (property, label, stack, object, type) that no definition in the file states; definitions that "
          + "state an id twice with two meanings")
    ]
  }

  static func traceFindings(_ trace: AnalysisReport.Trace) -> [Finding] {
    var findings: [Finding] = []
    if trace.seesUntracedTracking == false {
      findings.append(
        Finding(
          kind: .untracedTracking, property: nil, scope: nil, site: nil, count: 1,
          message: "the recorder could not see tracking ObsTrace does not own (Observation's "
            + "_swift_observation_tls_get was not found): reads inside it count as outside any scope",
          hint: "tracking in files that import ObsTrace is recorded either way; only withObservationTracking and "
            + "Observations in files without the import are not seen: add the import there, or keep the symbol "
            + "table of the binary that holds Observation (libswiftObservation.so, or the executable itself when "
            + "built with --static-swift-stdlib: do not strip it); the recording's standard error said which was "
            + "missing",
          evidence: "the trace header: the recorder did not find the symbol"))
    }
    if trace.droppedEvents > 0 {
      findings.append(
        Finding(
          kind: .droppedEvents, property: nil, scope: nil, site: nil, count: Int(clamping: trace.droppedEvents),
          message: "\(trace.droppedEvents) events were dropped because a ring was full: any count may be off "
            + "(a lost free keeps an object alive, a lost fire or cancel leaves a scope waiting); no leak is concluded",
          hint: "record without OBSTRACE_DROP (lossless), or with a larger OBSTRACE_RING_CAPACITY",
          evidence: "the drop counters the recorder wrote in the chunks' headers"))
    }
    if trace.truncated, let holder = trace.recordingProcess {
      findings.append(
        Finding(
          kind: .truncated, property: nil, scope: nil, site: nil, count: 1,
          message: "the trace is still being recorded by process \(holder): read up to its last whole chunk so far; "
            + "what happens after is not in it yet, so no leak is concluded",
          hint: "read it again after that recording stops (the program exits, or stops recording)",
          evidence:
            "the file has no footer yet, and process \(holder) holds its lock (/proc/locks), as a recording does "
            + "until it closes the file"))
    } else if trace.truncated, let zeros = trace.zeroTail {
      findings.append(
        Finding(
          kind: .truncated, property: nil, scope: nil, site: nil, count: 1,
          message: "the trace is truncated: \(zeros) (a preallocated file, or the system stopped before the data "
            + "reached the disk); read everything whole before it; what happened after is unknown, so no leak is "
            + "concluded",
          hint: "the process or the machine stopped before the trace's end was written; its last events are missing",
          evidence: "the file has no footer and ends in zero bytes where chunks should be"))
    } else if let footer = trace.malformedFooter {
      let damaged = footer.message == TraceReader.damagedFooterMessage
      findings.append(
        Finding(
          kind: .truncated, property: nil, scope: nil, site: nil, count: 1,
          message:
            "the trace's footer (at byte \(footer.offset)) is \(footer.footerState): the recording wrote it, but the "
            + "counts it holds (events recorded, dropped and lost at the stop, threads still running) cannot be read, "
            + "so what the recording lost is not known; every whole chunk before it was read; no leak is concluded",
          hint: damaged
            ? "the file changed after it was written (a disk, a copy, a transfer); record again, or copy the trace "
              + "again from where it was recorded, for a trace whose losses are known"
            : "its checksum holds, so it was written so (another version of the recorder?) or rewritten whole "
              + "since; record again for a trace whose losses are known",
          evidence: damaged
            ? "the file's last chunk, whose header says it is the footer, and whose checksum does not match"
            : "a chunk whose header says it is the footer, its checksum holding, whose contents do not decode"))
    } else if trace.truncated {
      findings.append(
        Finding(
          kind: .truncated, property: nil, scope: nil, site: nil, count: 1,
          message: "the trace is truncated: the recording did not stop cleanly; read up to its last whole chunk; "
            + "what happened after is unknown, so no leak is concluded",
          hint: "the process was killed or crashed; events of its last ~0.3 s may be missing",
          evidence: "the file has no footer (or ends inside a chunk)"))
    }
    // The reader keeps the footer apart, the first spots whole, and of the rest their count and ends (a file of a
    // million damaged spots kept them all: tryout14's H2).
    for damage in trace.damage.listed.prefix(damagedChunksListed) {
      findings.append(
        Finding(
          kind: .damagedChunk, property: nil, scope: nil, site: nil, count: 1, message: "damaged chunk \(damage)",
          hint: damage.isCopy
            ? "a copy of a chunk already read (the file was put together from pieces, or a chunk repeated): its "
              + "events were read once; nothing is lost by it"
            : trace.readsEveryRecordedEvent
              ? "no recorded event is missing (every event the footer counts was read): the chunk held definitions "
                + "(names, sites, the symbol table), and those are lost; the rest of the trace was read"
              : "the contents of that chunk are lost; the rest of the trace was read",
          evidence: damage.isCopy
            ? "its thread's chunk numbers: that number was read before"
            : "the chunk's checksum, length or contents did not hold up"))
    }
    // The others in one finding, not three lines each (a file of a million damaged spots printed three million).
    if trace.damage.more > 0, let first = trace.damage.firstMore, let last = trace.damage.lastMore {
      let more = trace.damage.more
      findings.append(
        Finding(
          kind: .damagedChunk, property: nil, scope: nil, site: nil, count: more,
          message: "\(more) more damaged chunks, from byte \(first.offset) to byte \(last.offset); skipped",
          hint: "the contents of those chunks are lost; the rest of the trace was read; 'obstrace dump' lists "
            + "every one",
          evidence: "the chunks' checksums, lengths or contents did not hold up"))
    }
    return findings
  }

  static func sorted(_ findings: [Finding]) -> [Finding] {
    findings.sorted { a, b in
      if a.isInformational != b.isInformational { return !a.isInformational }
      if a.count != b.count { return a.count > b.count }
      // Last the message: findings equal in all else (alive-at-end of two types) came in the hash order of the
      // dictionaries they were gathered in, which changes from run to run.
      return (a.kind.rawValue, a.property ?? "", a.scope ?? "", a.site ?? "", a.message) < (
        b.kind.rawValue, b.property ?? "", b.scope ?? "", b.site ?? "", b.message
      )
    }
  }
}

/// How a code place is written in every output: `Module/File.swift:12 (function)`.
public enum SiteFormatting {
  /// `App/Store.swift:12 (Store.reload())`; a line the binary does not give for certain is said so:
  /// `App/main.swift:10 (Volume.level.didset; line approximate)` (docs/symbols.md, Line numbers). The place is
  /// spelled as a scope's call-site label is, `Module/File.swift:line` (`SiteFilter.callSiteLabel`): a package's
  /// executables each have a `main.swift`, and a module holds one file of a name, so the module tells them apart
  /// (before, sites said the file only, `main.swift:147`, and labels the module too: two spellings in one report).
  /// The file alone when the frame names no module. A frame the binary gives no line (line 0: code of a function
  /// inlined from another module whose definition was not found, docs/symbols.md, Inlined frames) is said so,
  /// `retitle(_:_:) (line unknown)`; before, `Screens/<compiler-generated>:0 (retitle(_:_:))`.
  public static func describe(_ frame: SymbolizedFrame) -> String {
    let function = shortFunction(frame.function)
    guard !frame.file.isEmpty else { return function }
    if frame.line == 0 { return "\(function) \(lineUnknownMark)" }
    return "\(place(frame)) (\(function)\(frame.lineIsApproximate ? approximateMark : ""))"
  }

  /// `App/Store.swift:12`: the frame's module (from its function's name, or DWARF's for top-level code), file name
  /// and line.
  public static func place(_ frame: SymbolizedFrame) -> String { SiteFilter.callSiteLabel(frame) }

  /// What follows a function the binary gives no line.
  public static let lineUnknownMark = "(line unknown)"

  /// What follows a site's function when its line is approximate.
  public static let approximateMark = "; line approximate"

  /// What a write's site says when its stack holds no frame of the user's code (every frame is ObsTrace's,
  /// Observation's, the runtime's or the macro's): the site could not be placed.
  public static let notPlaced = "no site: no frame of the program's own code in its stack"

  /// `Demo.FirstView.body.getter : Swift.String` → `FirstView.body.getter`; `Demo.render(model: Demo.Model) -> ()`
  /// → `render(model:)`. A parameter's label is read at the list's own level only: a comma or colon inside a
  /// generic argument list, a tuple, a closure's type or a dictionary's (`ReferenceWritableKeyPath<A, Swift.Int>`,
  /// `[Swift.String : Swift.Int]`) is part of one parameter's type; before, every comma began a label
  /// (`bump<A where A: AnyObject>(_:_:_:)` for two parameters, a fresh-clone try-out's H17). A private
  /// declaration's discriminator is dropped (`Demo.(helper in _5B5C…)(x: Swift.Int)` → `helper(x:)`), and a
  /// `defer` block is said in its function as a closure is (`$defer #1 () -> () in Demo.save() -> ()` → `defer #1
  /// in save()`; before, `$defer #1 ()`).
  public static func shortFunction(_ function: String) -> String {
    var function = withoutPrivateDiscriminators(Substring(SiteFilter.withoutQualifiers(Substring(function))))
    // `(extension in Other):Demo.Model.total()`: the extension's module says nothing the site does not.
    if function.hasPrefix("(extension in "), let close = function.firstRange(of: "):") {
      function = String(function[close.upperBound...])
    }
    // An executable's top-level code: `main` (swiftc), `Module_main` (SwiftPM), `async_Main` and its pieces
    // (`async_MainTY5_`, one per await, different in each build) once it awaits. Said as what it is.
    if SiteFilter.isTopLevelCode(function) { return "top-level code" }
    // `closure #3 () -> () in Demo.Store.reload() -> ()` → `closure #3 in Store.reload()`; a `defer` block likewise.
    for (closure, said) in [
      ("implicit closure #", "implicit closure #"), ("closure #", "closure #"), ("$defer #", "defer #"),
    ]
    where function.hasPrefix(closure) {
      let number = function.dropFirst(closure.count).prefix { $0.isNumber }
      if let enclosing = function.firstRange(of: " in ") {
        return "\(said)\(number) in " + shortFunction(String(function[enclosing.upperBound...]))
      }
    }
    var name = Substring(function)
    if let colon = outermost(" : ", in: name) { name = name[..<colon.lowerBound] }
    if let arrow = outermost(" -> ", in: name) { name = name[..<arrow.lowerBound] }
    // The effects written after the parameters (`run() async`, `save(to: Swift.String) throws`, `f(A) throws(B)`)
    // go with the result: before, they hid the parameter list, whose types were printed (sites18's note).
    name = withoutEffects(name)
    // Drop parameter types: `render(model: Demo.Model)` → `render(model:)`.
    if let open = outermost("(", in: name)?.lowerBound, name.hasSuffix(")"), !name.hasPrefix("closure") {
      let parameters = name[name.index(after: open)..<name.index(before: name.endIndex)]
      let labels = outermostParts(of: parameters, separatedBy: ",").map { part -> String in
        let trimmed = part.drop { $0 == " " }
        if let colon = outermost(":", in: trimmed) { return String(trimmed[..<colon.lowerBound]) + ":" }
        return "_:"
      }
      name = name[..<open] + "(" + labels.joined() + ")"
    }
    // Drop the module: the first component, when more follow.
    let text = String(name)
    if let dot = text.firstIndex(of: "."), !text.hasPrefix("closure"),
      text[..<dot].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
    {
      return String(text[text.index(after: dot)...])
    }
    return text
  }

  /// `name` without the effects a demangled function's name writes after its parameter list: ` async`, ` throws`,
  /// ` rethrows`, a typed ` throws(E)`, in any number (`f() async throws`).
  static func withoutEffects(_ name: Substring) -> Substring {
    var name = name
    while true {
      if let effect = [" async", " throws", " rethrows"].first(where: { name.hasSuffix($0) }) {
        name = name.dropLast(effect.count)
        continue
      }
      // A typed throws: ` throws(` and its balanced `)` at the end.
      guard name.hasSuffix(")"), let open = name.range(of: " throws(", options: .backwards) else { return name }
      let thrown = name[open.upperBound..<name.index(before: name.endIndex)]
      guard outermost(")", in: thrown) == nil, outermost("(", in: thrown) == nil else { return name }
      name = name[..<open.lowerBound]
    }
  }

  /// The first range of `separator` in `text` outside every bracket pair (`<…>`, `(…)`, `[…]`; the `>` of `->` is
  /// not one), or nil.
  static func outermost(_ separator: String, in text: Substring) -> Range<Substring.Index>? {
    var depth = 0
    var index = text.startIndex
    var previous: Character = " "
    while index < text.endIndex {
      let character = text[index]
      if depth == 0, text[index...].hasPrefix(separator) { return index..<text.index(index, offsetBy: separator.count) }
      switch character {
      case "<", "(", "[": depth += 1
      case ">" where previous != "-": depth = max(0, depth - 1)
      case ")", "]": depth = max(0, depth - 1)
      default: break
      }
      previous = character
      index = text.index(after: index)
    }
    return nil
  }

  /// `text` cut at each `separator` outside every bracket pair (`outermost`); one empty part for empty text is none.
  static func outermostParts(of text: Substring, separatedBy separator: String) -> [Substring] {
    var parts: [Substring] = []
    var rest = text
    while let range = outermost(separator, in: rest) {
      parts.append(rest[..<range.lowerBound])
      rest = rest[range.upperBound...]
    }
    if !parts.isEmpty || !rest.allSatisfy({ $0 == " " }) { parts.append(rest) }
    return parts
  }

  /// `Demo.(helper in _5B5C4E9DD2991B209D8B55F54D39D273)(x: Swift.Int)` → `Demo.helper(x: Swift.Int)`: a private
  /// declaration's name is written with the file's discriminator, which says nothing to the reader.
  static func withoutPrivateDiscriminators(_ text: Substring) -> String {
    var result = ""
    var rest = text
    while let marker = rest.firstRange(of: " in _") {
      // The name runs back from the marker to its `(`; the discriminator forward to its `)`.
      let name = rest[..<marker.lowerBound].reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
      let start = rest.index(marker.lowerBound, offsetBy: -name.count)
      let hash = rest[marker.upperBound...].prefix { $0.isHexDigit }
      let end = rest.index(marker.upperBound, offsetBy: hash.count)
      guard !name.isEmpty, start > rest.startIndex, rest[rest.index(before: start)] == "(", !hash.isEmpty,
        end < rest.endIndex, rest[end] == ")"
      else {
        result += rest[..<marker.upperBound]
        rest = rest[marker.upperBound...]
        continue
      }
      result += rest[..<rest.index(before: start)] + rest[start..<marker.lowerBound]
      rest = rest[rest.index(after: end)...]
    }
    return result + rest
  }
}

extension Findings {
  /// What made a scope's redundant runs, as the trace shows it: a write that fired the instance's previous run
  /// (and changed nothing it read: a no-op write), or no write at all. An `Observations` sequence iterated by
  /// several tasks re-runs its closure unfired: its iterators share one state, and a fire that finds no iterator
  /// waiting marks it dirty, so that the next `next()` of any iterator runs the closure again at once.
  static func redundantRunHint(_ statistics: ScopeStatistics) -> String {
    let unfired = statistics.unfiredRedundantRuns
    let fired = statistics.redundantRuns - unfired
    let afterWrite =
      "the scope re-ran for a write that changed nothing it shows; see the noop-write findings, or what "
      + "invalidated it in `obstrace timeline --scope`"
    let byItself =
      statistics.kind == .observations && statistics.sequences > 1
      ? "no write fired these runs' previous runs: this Observations sequence had \(statistics.sequences) "
        + "iterators, which share one state: each re-runs the closure after another's fire (Observation's own "
        + "behaviour); iterate it from one task, or make one sequence per consumer"
      : "no write fired these runs' previous runs: the program ran the scope again by itself; see what began "
        + "each run in `obstrace timeline --scope`"
    if unfired == 0 { return afterWrite }
    if fired == 0 { return byItself }
    return "\(fired) re-ran after a write that changed nothing they show (see the noop-write findings); for the "
      + "other \(unfired), " + byItself
  }

  /// The evidence's count of unfired redundant runs, when there are any.
  static func redundantRunCauses(_ statistics: ScopeStatistics) -> String {
    let unfired = statistics.unfiredRedundantRuns
    guard unfired > 0 else { return "" }
    return "; \(unfired) of them began with no write having fired their instance's previous run"
  }
}
