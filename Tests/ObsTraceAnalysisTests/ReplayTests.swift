@testable import ObsTraceAnalysis
import ObsTraceFormat
import Testing

// Ids used in the scripts: object 1 and 2; properties 1 (`value`) and 2 (`other`); labels 1 ("A") and 2 ("B").

@Suite("Replay")
struct ReplayTests {
  @Test("one-shot tracking: a write fires the scope once, and later writes fire nothing")
  func oneShot() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], unchanged: false)
    script.write(1, 1, unchanged: false)
    let (replay, timeline) = script.replay()
    #expect(replay.properties[1]?.writes == 2)
    #expect(replay.properties[1]?.invalidations == 1)
    #expect(replay.scopes[1]?.runs == 1)
    #expect(replay.scopes[1]?.invalidations == 1)
    let writes = timeline.compactMap { entry -> Int? in
      if case .write(let write) = entry { return write.fired.count }
      return nil
    }
    #expect(writes == [1, 0])
  }

  @Test("writes after a scope fired and before it ran again are coalesced")
  func coalesced() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], unchanged: false)
    script.write(1, 1, unchanged: false)
    script.write(1, 1, unchanged: false)
    script.run(2, label: 1, reads: [(1, 1)])  // runs again
    script.write(1, 2, unchanged: false)  // a property it did not read
    script.write(1, 1, firing: [2], unchanged: false)
    let (replay, _) = script.replay()
    #expect(replay.properties[1]?.coalescedWrites == 2)
    #expect(replay.scopes[1]?.coalescedWrites == 2)
    #expect(replay.scopes[1]?.instances == 1)
    #expect(replay.scopes[1]?.runs == 2)
  }

  @Test("a write coalesced into several waiting instances is one coalesced write of the property, one of each instance")
  func coalescedIntoSeveralInstances() {
    var script = EventScript()
    // Three one-shot instances of "A" (rows of a list) and one of "B", all reading `value` (tryout11 T4).
    script.run(1, label: 1, reads: [(1, 1)], instance: 101)
    script.run(2, label: 1, reads: [(1, 1)], instance: 102)
    script.run(3, label: 1, reads: [(1, 1)], instance: 103)
    script.run(4, label: 2, reads: [(1, 1)], instance: 201)
    script.write(1, 1, firing: [1, 2, 3, 4], unchanged: false)
    script.write(1, 1, unchanged: false)  // all four are waiting to run again: coalesced into each
    let (replay, timeline) = script.replay()
    let coalescedInto = timeline.compactMap { fact -> Int? in
      if case .writeBegan(let write) = fact { return write.coalescedLabels.count }
      return nil
    }
    #expect(coalescedInto == [0, 4])
    #expect(replay.properties[1]?.writes == 2)
    #expect(replay.properties[1]?.coalescedWrites == 1)
    #expect(replay.scopes[1]?.instances == 3)
    #expect(replay.scopes[1]?.coalescedWrites == 3)
    #expect(replay.scopes[2]?.coalescedWrites == 1)
  }

  @Test("an instance's next run that reads something new and drops something: writes of what it reads now are coalesced into it, of what it dropped not")
  func coalescedAfterReadsChanged() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1), (2, 1)])
    script.write(1, 1, firing: [1], unchanged: false)
    script.run(2, label: 1, reads: [(1, 1), (3, 1)])  // the same instance: drops object 2, reads object 3
    script.write(3, 1, firing: [2], unchanged: false)
    script.write(3, 1, unchanged: false)  // read by its last run: coalesced
    script.write(2, 1, unchanged: false)  // read only by its run before: not
    script.write(1, 1, unchanged: false)  // read by both: coalesced
    script.run(3, label: 1, reads: [(2, 1)])  // back to object 2 alone
    script.write(2, 1, firing: [3], unchanged: false)
    script.write(2, 1, unchanged: false)
    script.write(3, 1, unchanged: false)
    script.write(1, 1, unchanged: false)
    let (_, facts) = script.replay()
    let coalesced = facts.compactMap { fact -> [UInt32]? in
      if case .writeBegan(let write) = fact { return write.coalescedLabels }
      return nil
    }
    #expect(coalesced == [[], [], [1], [], [1], [], [1], [], []])
  }

  @Test("a machine that does not list coalesced writes (the timeline's) gives every other fact the same")
  func withoutCoalescedWrites() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1), (2, 1)])
    script.write(1, 1, firing: [1], unchanged: false)
    script.write(1, 1, unchanged: false)
    script.write(2, 1, unchanged: true)
    script.run(2, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [2], unchanged: false)
    func facts(listingCoalescedWrites: Bool) -> (facts: [String], coalesced: [[UInt32]]) {
      var machine = ReplayMachine(listsCoalescedWrites: listingCoalescedWrites)
      var collected: [ReplayFact] = []
      var consumer = ClosureConsumer { collected.append($0) }
      for event in script.events { machine.consume(event, into: &consumer) }
      var coalesced: [[UInt32]] = []
      let facts = collected.map { fact -> String in
        guard case .writeBegan(var write) = fact else { return String(describing: fact) }
        coalesced.append(write.coalescedLabels)
        write.coalescedInto = []
        return String(describing: ReplayFact.writeBegan(write))
      }
      return (facts, coalesced)
    }
    let listed = facts(listingCoalescedWrites: true)
    let unlisted = facts(listingCoalescedWrites: false)
    #expect(listed.coalesced == [[], [1], [1], []])
    #expect(unlisted.coalesced == [[], [], [], []])
    #expect(listed.facts == unlisted.facts)
    #expect(listed.facts.count > 10)
  }

  @Test("a machine that keeps no accounts of objects (the timeline's) gives every fact the same, and no accounts")
  func withoutObjectAccounts() {
    var script = EventScript()
    script.registrarCreated(9, stack: 4)
    script.created(1)
    script.created(2, type: 2, thread: 2)
    script.run(1, label: 1, reads: [(1, 1), (2, 1)])
    script.run(2, label: 2, reads: [(1, 1)], instance: 200)
    script.write(1, 1, firing: [1, 2], unchanged: false)
    script.run(3, label: 1, reads: [(1, 1), (2, 1)])
    script.freed(2, type: 2)
    script.freed(9, type: 0)
    script.created(3)
    script.read(3, 1, thread: 3)
    func replayed(accountingObjects: Bool) -> (facts: [String], machine: ReplayMachine) {
      var machine = ReplayMachine(listsCoalescedWrites: false, accountsObjects: accountingObjects)
      var facts: [String] = []
      var consumer = ClosureConsumer { facts.append(String(describing: $0)) }
      for event in script.events { machine.consume(event, into: &consumer) }
      return (facts, machine)
    }
    let accounted = replayed(accountingObjects: true)
    let unaccounted = replayed(accountingObjects: false)
    #expect(accounted.facts == unaccounted.facts)
    #expect(accounted.facts.count > 15)
    // Off, the accounts stay empty (on, they are what the report reads).
    #expect(accounted.machine.typeStatistics[1]?.created == 2)
    #expect(accounted.machine.threadBits(ofObject: 3) != 0)
    #expect(accounted.machine.registrarsWithoutEvents[4]?.freed == 1)
    #expect(unaccounted.machine.typeStatistics.isEmpty)
    #expect(unaccounted.machine.threadBits(ofObject: 3) == 0)
    #expect(unaccounted.machine.registrarsWithoutEvents.isEmpty)
    #expect(unaccounted.machine.liveObjectSerials.isEmpty)
  }

  @Test("an invalidation by a write that changed nothing is wasted, and the re-run it causes is redundant")
  func wasted() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], unchanged: true)
    script.run(2, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [2], unchanged: false)
    script.run(3, label: 1, reads: [(1, 1)])
    let (replay, timeline) = script.replay()
    #expect(replay.properties[1]?.noopWrites == 1)
    #expect(replay.properties[1]?.invalidations == 2)
    #expect(replay.properties[1]?.wastedInvalidations == 1)
    #expect(replay.scopes[1]?.wastedInvalidations == 1)
    #expect(replay.scopes[1]?.redundantRuns == 1)
    let redundant = timeline.compactMap { entry -> Bool? in
      if case .runEnded(let run) = entry { return run.redundant }
      return nil
    }
    #expect(redundant == [false, true, false])
  }

  @Test(
    "one write that fires more scopes than the threshold is a fan-out",
    arguments: [
      (scopes: 12, threshold: 10, fanOuts: 1), (scopes: 12, threshold: 12, fanOuts: 0),
      (scopes: 3, threshold: 2, fanOuts: 1),
    ])
  func fanOut(scopes: Int, threshold: Int, fanOuts: Int) {
    var script = EventScript()
    for scope in 1...UInt32(scopes) { script.run(scope, label: 1, reads: [(1, 1)], instance: 100 + scope) }
    script.write(1, 1, firing: Array(1...UInt32(scopes)), unchanged: false)
    let (replay, _) = script.replay(fanOutThreshold: threshold)
    #expect(replay.properties[1]?.maximumFanOut == scopes)
    #expect(replay.scopes[1]?.instances == scopes)
    let report = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(report.filter { $0.kind == .fanOut }.count == fanOuts)
  }

  @Test(
    "a fan-out names the user's line of its writes, one finding per site, when stacks were recorded; none without")
  func fanOutSites() throws {
    var script = EventScript()
    for round: UInt32 in 0..<3 {
      for scope in 1...UInt32(12) {
        script.run(round * 100 + scope, label: 1, reads: [(1, 1)], instance: 1000 + scope)
      }
      // Two writes at main.swift:20, one at main.swift:30; stack 9 resolves to nothing of the user's.
      let stack: UInt32 = [7, 7, 8][Int(round)]
      script.write(1, 1, firing: (1...UInt32(12)).map { round * 100 + $0 }, unchanged: false, stack: stack)
    }
    for scope in 1...UInt32(12) { script.run(300 + scope, label: 1, reads: [(1, 1)], instance: 1000 + scope) }
    script.write(1, 1, firing: (1...UInt32(12)).map { 300 + $0 }, unchanged: false, stack: 9)
    let (replay, _) = script.replay()
    var definitions = TraceDefinitions()
    definitions.stacks = [7: [0x100, 0x200], 8: [0x100, 0x300], 9: [0x100]]
    definitions.symbols.frames[0x100] = SymbolizedFrame(
      address: 0x100, function: "Observation.ObservationRegistrar.willSet", module: "libswiftObservation.so")
    definitions.symbols.frames[0x200] = SymbolizedFrame(
      address: 0x200, function: "Demo.apply() -> ()", file: "/src/Demo/main.swift", line: 20, module: "Demo")
    definitions.symbols.frames[0x300] = SymbolizedFrame(
      address: 0x300, function: "Demo.reset() -> ()", file: "/src/Demo/main.swift", line: 30, module: "Demo")
    let fanOuts = TraceAnalysis.findings(of: replay, definitions: definitions).filter { $0.kind == .fanOut }
    let bySite = Dictionary(uniqueKeysWithValues: fanOuts.map { ($0.site ?? "none", $0.count) })
    // Stack 9's frames are named, none the user's: the finding says its site could not be placed.
    #expect(
      bySite == [
        "Demo/main.swift:20 (apply())": 2, "Demo/main.swift:30 (reset())": 1,
        "(no site: no frame of the program's own code in its stack)": 1,
      ])
    #expect(Set(fanOuts.map { $0.location?.line }) == [20, 30, nil])
  }

  /// A helper's write or read reached from two callers: two stacks, one site (the helper's line). Before, one
  /// finding per stack, the same text twice, each with half the count.
  @Test("stacks whose sites print alike make one finding, their counts summed: no-op writes, untracked reads, fan-outs")
  func oneFindingPerPrintedSite() throws {
    var script = EventScript()
    for round: UInt32 in 0..<2 {
      for scope in 1...UInt32(12) {
        script.run(round * 100 + scope, label: 1, reads: [(1, 1)], instance: 1000 + scope)
      }
      // Through `bump()` at main.swift:5, from its callers at lines 20 (stack 7) and 30 (stack 8).
      let stack: UInt32 = [7, 8][Int(round)]
      script.write(1, 1, firing: (1...UInt32(12)).map { round * 100 + $0 }, unchanged: true, stack: stack)
      script.read(1, 2, stack: stack)
    }
    let (replay, _) = script.replay()
    var definitions = TraceDefinitions()
    definitions.stacks = [7: [0x100, 0x200, 0x400], 8: [0x100, 0x200, 0x500]]
    definitions.symbols.frames[0x100] = SymbolizedFrame(
      address: 0x100, function: "Observation.ObservationRegistrar.willSet", module: "libswiftObservation.so")
    definitions.symbols.frames[0x200] = SymbolizedFrame(
      address: 0x200, function: "Demo.bump() -> ()", file: "/src/Demo/main.swift", line: 5, module: "Demo")
    for (address, line) in [(UInt64(0x400), UInt32(20)), (0x500, 30)] {
      definitions.symbols.frames[address] = SymbolizedFrame(
        address: address, function: "Demo.run() -> ()", file: "/src/Demo/main.swift", line: line, module: "Demo")
    }
    let findings = TraceAnalysis.findings(of: replay, definitions: definitions)
    for kind in [Finding.Kind.noopWrite, .untrackedRead, .fanOut] {
      let found = findings.filter { $0.kind == kind }
      #expect(found.map(\.site) == ["Demo/main.swift:5 (bump())"], "\(kind): \(found)")
      #expect(found.map(\.count) == [2], "\(kind): \(found)")
    }
    #expect(findings.first { $0.kind == .noopWrite }?.message.hasPrefix("2 writes to ") == true, "\(findings)")
  }

  @Test("nested tracking: the inner list merges into the outer one when the inner scope ends")
  func nested() {
    var script = EventScript()
    script.begin(1, label: 1)
    script.read(1, 1, in: 1)
    script.begin(2, label: 2, parent: 1)
    script.read(1, 2, in: 2)
    script.end(2)
    script.install(2)
    script.end(1)
    script.install(1)
    script.write(1, 2, firing: [2, 1], unchanged: false)
    let (replay, timeline) = script.replay()
    let runs = timeline.compactMap { entry -> [PropertyKey]? in
      if case .runEnded(let run) = entry { return run.reads }
      return nil
    }
    #expect(
      runs == [
        [PropertyKey(object: 1, property: 2)],
        [PropertyKey(object: 1, property: 1), PropertyKey(object: 1, property: 2)],
      ])
    #expect(replay.properties[2]?.invalidations == 2)
    #expect(replay.scopes[1]?.invalidations == 1)
    #expect(replay.scopes[2]?.invalidations == 1)
  }

  @Test(
    "nested tracking: a nested run's reads count for every run they merge into (scope reads, graph edges), as Observation merges access lists; an outer that read nothing itself lists them"
  )
  func nestedReadsCountForTheEnclosingRuns() {
    var script = EventScript()
    // Run 1 (label 1) reads nothing itself; run 2 (label 2) in it reads object 1's property 1 twice; run 3 (label 3)
    // in run 2 reads its property 2. A run of label 4 after them, not nested, reads property 1 once.
    script.begin(1, label: 1)
    script.begin(2, label: 2, parent: 1)
    script.read(1, 1, in: 2)
    script.read(1, 1, in: 2)
    script.begin(3, label: 3, parent: 2)
    script.read(1, 2, in: 3)
    script.end(3)
    script.install(3)
    script.end(2)
    script.install(2)
    script.end(1)
    script.install(1)
    script.run(4, label: 4, reads: [(1, 1)])
    script.write(1, 2, firing: [3, 2, 1], unchanged: false)
    let (replay, _) = script.replay()
    #expect(replay.scopes[1]?.reads == [1: 2, 2: 1])
    #expect(replay.scopes[2]?.reads == [1: 2, 2: 1])
    #expect(replay.scopes[3]?.reads == [2: 1])
    #expect(replay.scopes[4]?.reads == [1: 1])
    // A read is one read of its property, however many runs it merges into.
    #expect(replay.properties[1]?.trackedReads == 3)
    #expect(replay.properties[2]?.trackedReads == 1)
    var edges: [String: Int] = [:]
    for (edge, count) in replay.readEdges { edges["\(edge.object).\(edge.property) \(edge.label)"] = count }
    #expect(edges == ["1.1 1": 2, "1.2 1": 1, "1.1 2": 2, "1.2 2": 1, "1.2 3": 1, "1.1 4": 1])
    #expect(replay.scopes[1]?.invalidations == 1)
  }

  @Test("a run nested in one that had ended merges into nothing: its reads count for its own label only")
  func nestedInAnEndedRun() {
    var script = EventScript()
    script.begin(1, label: 1)
    script.begin(2, label: 2, parent: 1)
    script.end(1)
    script.read(1, 1, in: 2)
    script.end(2)
    let (replay, _) = script.replay()
    #expect(replay.scopes[1]?.reads.isEmpty == true)
    #expect(replay.scopes[2]?.reads == [1: 1])
    #expect(replay.readEdges.count == 1)
  }

  @Test("continuous tracking fires until cancelled; one-shot tracking fires once")
  func continuous() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], kind: .continuous)
    script.write(1, 1, firing: [1], unchanged: false, oneShot: false)
    script.write(1, 1, firing: [1], unchanged: false, oneShot: false)
    let (replay, _) = script.replay()
    #expect(replay.scopes[1]?.invalidations == 2)
    #expect(replay.properties[1]?.invalidations == 2)
  }

  @Test("a write on one thread fires a scope that runs on another, attributed to that write")
  func crossThread() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], thread: 1)
    script.write(1, 1, firing: [1], unchanged: false, thread: 2)
    script.run(2, label: 1, reads: [(1, 1)], thread: 1)
    let (replay, timeline) = script.replay()
    #expect(replay.properties[1]?.invalidations == 1)
    #expect(replay.scopes[1]?.unexplainedInvalidations == 0)
    #expect(replay.scopes[1]?.redundantRuns == 0)
    let writeThreads = timeline.compactMap { entry -> UInt32? in
      if case .write(let write) = entry, !write.fired.isEmpty { return write.thread }
      return nil
    }
    #expect(writeThreads == [2])
  }

  @Test(
    "a re-run on another thread that reads while the write that woke it is still in progress raced it: a stale read, not redundant"
  )
  func racingRead() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], thread: 2, instance: 7)
    // Thread 1 writes; its willSet wakes the scope, which re-runs on thread 2 before thread 1's didSet.
    script.beginWrite(1, 1, firing: [1], thread: 1)
    script.run(2, label: 1, reads: [(1, 1)], thread: 2, instance: 7)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    // The same after the didSet: the change is seen, nothing raced.
    script.write(1, 1, firing: [2], unchanged: false, thread: 1)
    script.run(3, label: 1, reads: [(1, 1)], thread: 2, instance: 7)
    let (replay, timeline) = script.replay()
    let runs = timeline.compactMap { entry -> (redundant: Bool, racing: Bool)? in
      if case .runEnded(let run) = entry { return (run.redundant, run.readRacing) }
      return nil
    }
    #expect(runs.map(\.redundant) == [false, false, false])
    #expect(runs.map(\.racing) == [false, true, false])
    #expect(replay.scopes[1]?.redundantRuns == 0)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(!findings.contains { $0.kind == .redundantRun })
    let raced = findings.filter { $0.kind == .staleRead }
    #expect(raced.count == 1)
    #expect(raced.first?.count == 1)
    #expect(raced.first?.scope != nil)
    #expect(raced.first?.message.contains("raced a write of it on another thread") == true)
  }

  @Test(
    "a read racing a write that changed nothing (compared) saw no old value: no stale-read finding; one not compared keeps it (tryout18's R11)",
    arguments: [(true, 0), (false, 1), (nil, 1)] as [(Bool?, Int)])
  func racingANoOpWrite(unchanged: Bool?, warnings: Int) {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], thread: 2, instance: 7)
    script.beginWrite(1, 1, firing: [1], thread: 1)
    script.run(2, label: 1, reads: [(1, 1)], thread: 2, instance: 7)
    script.finishWrite(1, 1, unchanged: unchanged, thread: 1, modify: true)
    let (replay, _) = script.replay()
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let raced = findings.filter { $0.kind == .staleRead }
    #expect(raced.count == warnings, "\(raced.map(\.message))")
    #expect(raced.allSatisfy { $0.count == 1 })
  }

  @Test("two threads writing one property at once: a read races until the other thread's write is done")
  func overlappingWritesOfOneProperty() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], thread: 3, instance: 7)
    script.beginWrite(1, 1, firing: [1], thread: 1)
    script.beginWrite(1, 1, firing: [], thread: 2)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    // Thread 2 is still writing: a read on thread 1 races it, on thread 2 it does not.
    script.run(2, label: 1, reads: [(1, 1)], thread: 1, instance: 8)
    script.run(3, label: 2, reads: [(1, 1)], thread: 2, instance: 9)
    script.finishWrite(1, 1, unchanged: false, thread: 2)
    script.run(4, label: 3, reads: [(1, 1)], thread: 1, instance: 10)
    let (_, timeline) = script.replay()
    let racing = timeline.compactMap { entry -> Bool? in
      if case .runEnded(let run) = entry { return run.readRacing }
      return nil
    }
    #expect(racing == [false, true, false, false])
  }

  @Test("a read inside a write of the same thread does not race it (that is the recorder's own stale read)")
  func sameThreadWriteDoesNotRace() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)], thread: 1, instance: 7)
    script.beginWrite(1, 1, firing: [1], thread: 1)
    script.run(2, label: 1, reads: [(1, 1)], thread: 1, instance: 7)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    let (_, timeline) = script.replay()
    let racing = timeline.compactMap { entry -> Bool? in
      if case .read(let read) = entry { return read.racing }
      return nil
    }
    #expect(racing == [false, false])
  }

  @Test("a fire with no write in progress is an invalidation by a write ObsTrace did not record, said once")
  func unexplained() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)])
    script.events.append(TraceEvent(kind: .trackingFired, thread: 1, time: 999, scope: 1))
    script.events.append(
      TraceEvent(kind: .trackingCancelled, flags: EventFlags.cancelledByFire, thread: 1, time: 1000, scope: 1))
    let (replay, _) = script.replay()
    #expect(replay.scopes[1]?.unexplainedInvalidations == 1)
    #expect(replay.scopes[1]?.invalidations == 1)
    #expect(replay.anomalies.isEmpty)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let unrecorded = findings.filter { $0.kind == .unrecordedWrite }
    #expect(unrecorded.count == 1)
    #expect(unrecorded.first?.count == 1)
    #expect(unrecorded.first?.isInformational == false)
    #expect(unrecorded.first?.hint.contains("without `import ObsTrace`") == true)
    #expect(!findings.contains { $0.kind == .inconsistentTrace })
  }

  /// F1 of a fresh-clone try-out: `withObservationTracking { _ = legacy.count }` where `Legacy` is declared without
  /// `import ObsTrace`. The recorder sees the scope begin and end with no read, then Observation install it (its
  /// access list holds the untraced read), then the fire of the untraced write, with no write in progress.
  @Test("a run that read only untraced models is installed and fired: kept, its fire counted, no anomaly")
  func runOfUntracedModelsOnly() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [])  // begin, end, install: its reads went to Observation's own registrar
    script.read(1, 1)  // an unrelated traced read between the install and the fire
    script.events.append(TraceEvent(kind: .trackingFired, thread: 1, time: 999, scope: 1))
    script.events.append(
      TraceEvent(kind: .trackingCancelled, flags: EventFlags.cancelledByFire, thread: 1, time: 1000, scope: 1))
    // Its re-run, the same way, on another thread this time, while thread 1 ends a run that read nothing and is
    // never installed (it must not take the other thread's place).
    script.begin(2, label: 1, thread: 2)
    script.begin(3, label: 2, thread: 1)
    script.end(3, thread: 1)
    script.end(2, thread: 2)
    script.install(2, thread: 2)
    script.events.append(TraceEvent(kind: .trackingFired, thread: 2, time: 2000, scope: 2))
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty)
    #expect(replay.scopes[1]?.runs == 2)
    #expect(replay.scopes[1]?.invalidations == 2)
    #expect(replay.scopes[1]?.unexplainedInvalidations == 2)
    #expect(replay.scopes[2]?.invalidations == 0)
    let fires = facts.compactMap { fact -> FireFact? in if case .fire(let fire) = fact { fire } else { nil } }
    #expect(fires.map(\.scope) == [1, 2])
    #expect(fires.allSatisfy { $0.cause == nil })
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(findings.filter { $0.kind == .unrecordedWrite }.map(\.count) == [2])
    #expect(!findings.contains { $0.kind == .inconsistentTrace })
  }

  @Test(
    "an install of a scope that never began, or of a run that read nothing whose install never came, stays an anomaly")
  func installOfUnknownScope() {
    var script = EventScript()
    script.begin(1, label: 1)
    script.end(1)
    script.begin(2, label: 1)
    script.end(2)
    script.install(1)  // not the thread's last run that read nothing: that was 2
    script.install(7)  // never began
    script.events.append(TraceEvent(kind: .trackingFired, thread: 1, time: 999, scope: 7))
    let (replay, _) = script.replay()
    #expect(replay.anomalies == [.eventOfUnknownScope: 2, .fireOfUnknownScope: 1])
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(findings.first { $0.kind == .inconsistentTrace }?.count == 3)
    #expect(!findings.contains { $0.kind == .unrecordedWrite })
  }

  /// A fresh-clone try-out's Q6 (session 17): objects made before the start, used while recording and then freed,
  /// were in no column of the objects table ("from before" counted only those still alive at the end).
  @Test("objects from before the recording are counted whether or not they are freed while it runs, and their frees")
  func objectsFromBefore() {
    var script = EventScript()
    script.created(1)
    for object: UInt32 in 3...5 { script.read(object, 1) }
    script.freed(4)
    script.freed(5)
    script.freed(1)
    // Freed without a read or write while recording: nothing shows it was ever seen.
    script.freed(9)
    let (replay, _) = script.replay()
    #expect(replay.typeStatistics[1] == TypeStatistics(created: 1, freed: 1, seenOnly: 3, seenOnlyFreed: 2))
    #expect(replay.machine.objectsFromBefore == 3)
  }

  @Test("stale reads, untracked reads and objects never freed are found")
  func hazards() {
    var script = EventScript()
    script.created(1)
    script.created(2)
    script.freed(2)
    script.read(1, 1)
    script.read(1, 1)
    script.begin(1, label: 1)
    script.read(1, 1, in: 1, stale: true)
    script.end(1)
    let (replay, _) = script.replay()
    #expect(replay.properties[1]?.staleReads == 1)
    #expect(replay.properties[1]?.reads == 3)
    #expect(replay.properties[1]?.trackedReads == 1)
    #expect(replay.machine.liveObjectSerials.map(\.serial) == [1])
    #expect(replay.typeStatistics[1]?.created == 2)
    #expect(replay.typeStatistics[1]?.freed == 1)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    // Alive at the end is information, not a leak: nothing says what holds it.
    #expect(Set(findings.map(\.kind)) == [.staleRead, .untrackedRead, .aliveAtEnd])
    #expect(findings.first { $0.kind == .untrackedRead }?.count == 2)
  }

  @Test(
    "an object of a class with @Observable at two levels counts once, as its type; registrars that recorded no event count as registrars, not objects"
  )
  func registrarsWithoutEvents() {
    var script = EventScript()
    // A Dog (type 1): its own level's registrar (serial 1) then Animal's (2), bound at its first event.
    script.registrarCreated(1, stack: 7)
    script.registrarCreated(2, stack: 8)
    script.bound(2, to: 1)
    script.read(1, 1)
    // Another Dog, never read or written: two registrars, nothing names their object.
    script.registrarCreated(3, stack: 7)
    script.registrarCreated(4, stack: 8)
    // A third, kept to the end.
    script.registrarCreated(5, stack: 7)
    script.registrarCreated(6, stack: 8)
    for serial: UInt32 in [1, 2] { script.freed(serial, type: 1) }
    for serial: UInt32 in [3, 4] { script.freed(serial, type: 0) }
    let (replay, _) = script.replay()
    #expect(replay.typeStatistics.count == 1)
    #expect(replay.typeStatistics[1] == TypeStatistics(created: 1, freed: 1))
    #expect(
      replay.machine.registrarsWithoutEvents == [
        7: RegistrarStatistics(created: 2, freed: 1), 8: RegistrarStatistics(created: 2, freed: 1),
      ])
    #expect(replay.machine.liveObjectSerials.isEmpty)
    #expect(replay.machine.liveRegistrarsWithoutEvents.map(\.serial).sorted() == [5, 6])
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    // No stack resolves here: alive at the end as registrars, no type named.
    let alive = findings.filter { $0.kind == .aliveAtEnd }
    #expect(alive.count == 1)
    #expect(alive.first?.count == 2)
    #expect(alive.first?.message.hasPrefix("2 @Observable registrars with no recorded event were alive") == true)
    #expect(!alive.contains { $0.message.contains("type #") || $0.message.contains("unknown type") })
  }

  @Test("the access a _modify write makes (m.count += 1) is part of the write, not an untracked read")
  func modifyAccessIsNotAnUntrackedRead() {
    var script = EventScript()
    script.created(1)
    // m.count += 1, twice: the macro's _modify accesses, then calls willSet directly.
    for _ in 0..<2 {
      script.read(1, 1)
      script.write(1, 1, willSetFlags: EventFlags.willSetDirect)
    }
    // A read the program makes, then a setter's write (through withMutation): the read stays a read.
    script.read(1, 1)
    script.write(1, 1, willSetFlags: EventFlags.willSetInWithMutation)
    // A read of another property, then a _modify of this one: not its access.
    script.read(1, 2)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect)
    let (replay, _) = script.replay()
    let untracked = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .untrackedRead
    }
    #expect(untracked.map(\.count).sorted() == [1, 1])
    // The reads column counts the program's reads: not the two accesses of _modify writes outside any scope.
    #expect(replay.properties[1]?.reads == 1)
    #expect(replay.properties[2]?.reads == 1)
    #expect(replay.properties[1]?.writes == 4)
  }

  @Test("_modify writes on two threads at once: each access is its own write's, however the threads interleave")
  func modifyAccessesOfTwoThreadsInterleaved() {
    var script = EventScript()
    script.created(1)
    script.created(2)
    // Thread 1 does a.count += 1 and thread 2 b.count += 1, their events interleaved in time: each access is
    // followed on its own thread by its direct willSet, with the other thread's access or willSet in between.
    script.read(1, 1, thread: 1, stack: 1)
    script.read(2, 1, thread: 2, stack: 2)
    script.beginWrite(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 1)
    script.beginWrite(2, 1, willSetFlags: EventFlags.willSetDirect, thread: 2)
    script.finishWrite(2, 1, thread: 2)
    script.finishWrite(1, 1, thread: 1)
    // Thread 1 again, with a read the program makes on thread 2 (at site 3) between its access and its willSet.
    script.read(1, 1, thread: 1, stack: 1)
    script.read(1, 1, thread: 2, stack: 3)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 1)
    // And the other way round: thread 2's read of the property thread 1 is about to write, then thread 1's direct
    // willSet with no access of its own before it on its thread (its access was of another property): not thread
    // 2's read, which stays the program's.
    script.read(1, 2, thread: 1, stack: 1)
    script.read(1, 1, thread: 2, stack: 4)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 1)
    let (replay, facts) = script.replay()
    #expect(replay.properties[1]?.reads == 2)
    #expect(replay.properties[1]?.writes == 4)
    #expect(replay.properties[2]?.reads == 1)
    let untracked = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .untrackedRead
    }
    // Property 1 at sites 3 and 4 (thread 2's reads), property 2 at site 1: nothing at sites 1 and 2 of property 1.
    #expect(untracked.map(\.count) == [1, 1, 1])
    let owned = facts.compactMap { fact -> [UInt32]? in
      guard case .writeBegan(let write) = fact else { return nil }
      return [write.thread, write.ownAccess ? write.ownAccessStack : 0]
    }
    #expect(owned == [[1, 1], [2, 2], [1, 1], [1, 0]])
  }

  @Test("a thread's read outside any scope stays its own while other threads' events come between it and its willSet")
  func modifyAccessesOfThreeThreadsHeldAtOnce() {
    var script = EventScript()
    script.created(1)
    script.created(2)
    script.created(3)
    // Three threads each read their own object's property outside any scope, then write it through _modify: the
    // three reads wait at once, each behind the other threads' events, and each is its own thread's write's access.
    script.read(1, 1, thread: 1, stack: 1)
    script.read(2, 1, thread: 2, stack: 2)
    script.read(3, 1, thread: 3, stack: 3)
    script.write(3, 1, willSetFlags: EventFlags.willSetDirect, thread: 3)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 1)
    script.write(2, 1, willSetFlags: EventFlags.willSetDirect, thread: 2)
    // Thread 1's read of 1.1 waits while thread 2 writes 1.1 directly after its own didSet: thread 2's write has no
    // access of its own (thread 1's read is not its), and thread 1's write that follows has.
    script.read(1, 1, thread: 1, stack: 1)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 2)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect, thread: 1)
    let (replay, facts) = script.replay()
    let owned = facts.compactMap { fact -> [UInt32]? in
      guard case .writeBegan(let write) = fact else { return nil }
      return [write.thread, write.ownAccess ? write.ownAccessStack : 0]
    }
    #expect(owned == [[3, 3], [1, 1], [2, 2], [2, 0], [1, 1]])
    // Every read was a write's own access: none is counted, and none is an untracked read.
    #expect(replay.properties[1]?.reads == 0)
    #expect(replay.properties[1]?.writes == 5)
    let untracked = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .untrackedRead
    }
    #expect(untracked.isEmpty)
  }

  @Test("the rule for _modify accesses gives the same counts in every interleaving of two threads' events")
  func modifyAccessesInEveryInterleaving() {
    // Two threads, each: a read the program makes (site 1), then x.count += 1 (access at site 2, willSet, didSet),
    // twice. Every interleaving of the two threads' 8 events (12,870 of them) must count 4 reads and 4 writes.
    func thread(_ t: UInt32) -> [TraceEvent] {
      var events: [TraceEvent] = []
      for _ in 0..<2 {
        events.append(TraceEvent(kind: .access, thread: t, time: 0, object: t, key: 1, aux: 1, stack: 1))
        events.append(TraceEvent(kind: .access, thread: t, time: 0, object: t, key: 1, aux: 1, stack: 2))
        events.append(
          TraceEvent(kind: .willSet, flags: EventFlags.willSetDirect, thread: t, time: 0, object: t, key: 1, aux: 1))
        events.append(TraceEvent(kind: .didSet, thread: t, time: 0, object: t, key: 1, aux: 1))
      }
      return events
    }
    let first = thread(1)
    let second = thread(2)
    var interleavings = 0
    for mask in 0..<(1 << 16) where mask.nonzeroBitCount == 8 {
      var script = EventScript()
      var (i, j) = (0, 0)
      for bit in 0..<16 {
        if mask & (1 << bit) != 0 {
          script.events.append(first[i])
          i += 1
        } else {
          script.events.append(second[j])
          j += 1
        }
      }
      for index in script.events.indices { script.events[index].time = UInt64(index + 1) * 10 }
      interleavings += 1
      let (replay, _) = script.replay()
      #expect(replay.properties[1]?.reads == 4, "interleaving \(mask)")
      #expect(replay.properties[1]?.writes == 4)
      // One site (stack 1), the program's reads: none at the accesses' site (stack 2).
      let untracked = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
        $0.kind == .untrackedRead
      }
      #expect(untracked.map(\.count) == [4], "interleaving \(mask)")
    }
    #expect(interleavings == 12_870)
  }

  @Test("inside a scope the access of a _modify write is a tracked read: Observation subscribes the scope to it")
  func modifyAccessInAScopeIsARead() {
    var script = EventScript()
    script.created(1)
    script.begin(1, label: 1)
    script.read(1, 1, in: 1)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect)
    script.end(1)
    let (replay, _) = script.replay()
    #expect(replay.properties[1]?.reads == 1)
    #expect(replay.properties[1]?.trackedReads == 1)
  }

  @Test("untracked reads are counted by site, however the sites interleave, less the accesses of _modify writes")
  func untrackedReadsBySite() {
    var script = EventScript()
    script.created(1)
    // Site 1 three times, site 2 twice, site 1 again, a _modify of property 1 right after a read at site 2 (its
    // own access), then site 2 once more and a read of another property at site 1.
    for stack in [UInt32(1), 1, 1, 2, 2, 1] { script.read(1, 1, stack: stack) }
    script.read(1, 1, stack: 2)
    script.write(1, 1, willSetFlags: EventFlags.willSetDirect)
    script.read(1, 1, stack: 2)
    script.read(1, 2, stack: 1)
    let (replay, _) = script.replay()
    let untracked = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .untrackedRead
    }
    // Property 1 at site 1: 4; at site 2: 3; property 2 at site 1: 1.
    #expect(untracked.map(\.count).sorted() == [1, 3, 4])
  }

  @Test("a no-op write finding counts the invalidations of its own site, not the property's total")
  func noopWriteCountsItsSite() {
    var script = EventScript()
    script.created(1)
    // Two sites (stacks 1 and 2), each a no-op write that invalidates one run.
    for (scope, stack) in [(UInt32(1), UInt32(1)), (2, 2)] {
      script.run(scope, label: scope, reads: [(1, 1)])
      script.write(1, 1, firing: [scope], unchanged: true, stack: stack)
    }
    let (replay, _) = script.replay()
    #expect(replay.properties[1]?.wastedInvalidations == 2)
    let noops = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter { $0.kind == .noopWrite }
    #expect(noops.count == 2)
    #expect(noops.allSatisfy { $0.message.hasSuffix("still invalidated 1 scope run") }, "\(noops.map(\.message))")
  }

  @Test(
    "a no-op write finding is a warning only when its writes invalidated a scope run; without that cost, information"
  )
  func noopWriteWarnsOnlyWithACost() {
    var script = EventScript()
    script.created(1)
    // Site 1: a no-op write while nothing reads the property; then one after the run it fired, once per run.
    script.write(1, 1, firing: [], unchanged: true, stack: 1)
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], unchanged: false, stack: 3)
    script.write(1, 1, firing: [], unchanged: true, stack: 1)
    // Site 2: a no-op write that invalidates a run.
    script.run(2, label: 2, reads: [(1, 1)])
    script.write(1, 1, firing: [2], unchanged: true, stack: 2)
    let (replay, _) = script.replay()
    let noops = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter { $0.kind == .noopWrite }
    let free = noops.filter { $0.count == 2 }
    let costly = noops.filter { $0.count == 1 }
    #expect(free.count == 1 && costly.count == 1, "\(noops)")
    #expect(free.first?.isInformational == true)
    #expect(free.first?.message.hasSuffix("left the value unchanged and invalidated no scope run") == true)
    #expect(costly.first?.isInformational == false)
    #expect(costly.first?.message.hasSuffix("and still invalidated 1 scope run") == true)
  }

  @Test(
    "a redundant run that no write fired is not blamed on no-op writes: an Observations sequence's iterators re-run for each other's fire; one after a no-op write still points to it"
  )
  func redundantRunHintFitsItsCause() {
    var script = EventScript()
    script.created(1)
    // One Observations sequence iterated twice (iterators 10 and 11, as two tasks' `for await`): a write fires
    // both values; each iterator runs again; iterator 10 then runs once more with nothing fired (their shared state
    // was left dirty by the other's fire).
    func value(_ scope: UInt32, of iterator: UInt32) {
      script.begin(scope, label: 1, kind: .observations, instance: iterator)
      script.observationsRun(iterator, scope: scope)
      script.read(1, 1, in: scope)
      script.end(scope)
      script.install(scope)
    }
    value(1, of: 10)
    value(2, of: 11)
    script.write(1, 1, firing: [1, 2], unchanged: false)
    value(3, of: 10)
    value(4, of: 11)
    value(5, of: 10)
    // A tracking re-run after a write that changed nothing it read: a no-op write's cost.
    script.run(6, label: 2, reads: [(1, 2)], instance: 20)
    script.write(1, 2, firing: [6], unchanged: true)
    script.run(7, label: 2, reads: [(1, 2)], instance: 20)
    let (replay, _) = script.replay()
    let redundant = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .redundantRun
    }
    #expect(redundant.count == 2, "\(redundant)")
    let unfired = redundant.filter { $0.hint.contains("no write fired") }
    #expect(unfired.count == 1 && unfired.first?.count == 1, "\(redundant)")
    #expect(
      unfired.first?.hint == "no write fired these runs' previous runs: this Observations sequence had 2 iterators, "
        + "which share one state: each re-runs the closure after another's fire (Observation's own behaviour); "
        + "iterate it from one task, or make one sequence per consumer")
    #expect(unfired.first?.evidence.hasSuffix("; 1 of them began with no write having fired their instance's previous run") == true)
    let afterNoop = redundant.filter { $0.hint.contains("see the noop-write findings") }
    #expect(afterNoop.count == 1 && afterNoop.first?.count == 1, "\(redundant)")
    #expect(afterNoop.first?.evidence.contains("began with no write") == false)
  }

  @Test("memory holds live scopes, not finished ones: ten thousand one-shot runs leave nothing behind")
  func finishedRunsAreForgotten() {
    var script = EventScript()
    for scope in 1...UInt32(10_000) {
      script.run(scope, label: 1, reads: [(1, 1)])
      script.write(1, 1, firing: [scope], unchanged: false)
    }
    let (replay, _) = script.replay()
    #expect(replay.liveRunCount == 0)
    #expect(replay.scopes[1]?.runs == 10_000)
    #expect(replay.scopes[1]?.instances == 1)
  }
}

@Suite("Time order")
struct TimeOrderTests {
  func chunk(_ thread: UInt32, _ times: [UInt64], ended: Bool = false) -> EventChunk {
    EventChunk(
      offset: 0, thread: thread, osThreadID: 0, sequence: 0, droppedSinceLastChunk: 0, firstTime: times.first ?? 0,
      threadEnded: ended, events: times.map { TraceEvent(kind: .access, thread: thread, time: $0) })
  }

  @Test("chunks written out of time order come out in time order")
  func merge() {
    var ordered = TimeOrderedEvents(threads: [1, 2, 3])
    var out: [UInt64] = []
    ordered.add(chunk(2, [50, 60], ended: true)) { out.append($0.time) }
    ordered.add(chunk(3, [55, 70], ended: true)) { out.append($0.time) }
    #expect(out.isEmpty)  // thread 1 has not been heard from: nothing is safe yet
    ordered.add(chunk(1, [10, 65])) { out.append($0.time) }
    ordered.finish { out.append($0.time) }
    #expect(out == [10, 50, 55, 60, 65, 70])
  }

  @Test("the buffer is capped: an idle thread cannot make it grow without bound")
  func capped() {
    var ordered = TimeOrderedEvents(threads: [1, 2], capacity: 100)
    var released = 0
    ordered.add(chunk(1, Array(0..<1000))) { _ in released += 1 }
    #expect(released == 900)
  }

  /// The order the merge is specified to give, written the plain way: every held event in one list, and each
  /// release the earliest by time, ties by arrival, while it is under the watermark or the list is over capacity.
  struct Reference {
    var held: [(time: UInt64, order: Int, event: TraceEvent)] = []
    var latest: [UInt32: UInt64] = [:]
    var ended: Set<UInt32> = []
    var arrived = 0
    var newest: UInt64 = 0
    let known: Set<UInt32>?
    let capacity: Int
    let window: UInt64

    init(threads: Set<UInt32>?, capacity: Int, window: UInt64) {
      known = threads
      self.capacity = capacity
      self.window = window
      for thread in threads ?? [] { latest[thread] = 0 }
    }

    mutating func add(_ chunk: EventChunk, _ out: inout [TraceEvent]) {
      let previous = latest[chunk.thread]
      if let last = chunk.events.last {
        latest[chunk.thread] = max(latest[chunk.thread] ?? 0, last.time)
      } else if latest[chunk.thread] == nil {
        latest[chunk.thread] = chunk.firstTime
      }
      if chunk.threadEnded { ended.insert(chunk.thread) }
      newest = max(newest, latest[chunk.thread] ?? 0)
      var watermark = latest.filter { !ended.contains($0.key) }.values.min() ?? UInt64.max
      if known == nil { watermark = min(watermark, newest > window ? newest - window : 0) }
      // Nothing held, the whole chunk under the watermark and after the thread's latest: passed on as it came.
      if held.isEmpty, let last = chunk.events.last, last.time <= watermark,
        (previous ?? 0) <= (chunk.events.first?.time ?? 0)
      {
        arrived += chunk.events.count
        out.append(contentsOf: chunk.events)
        return
      }
      for event in chunk.events {
        held.append((event.time, arrived, event))
        arrived += 1
      }
      while let index = earliest(), held[index].time <= watermark || held.count > capacity {
        out.append(held.remove(at: index).event)
      }
    }

    mutating func finish(_ out: inout [TraceEvent]) {
      while let index = earliest() { out.append(held.remove(at: index).event) }
    }

    func earliest() -> Int? {
      held.indices.min { (held[$0].time, held[$0].order) < (held[$1].time, held[$1].order) }
    }
  }

  @Test("the merge releases what the plain rule says, in its order, across threads, ties, times that go back, caps")
  func sameAsTheRule() {
    var seed: UInt64 = 0x6d65_7267_6531_32
    func next(_ bound: UInt64) -> UInt64 {  // SplitMix64: the same cases every run
      seed &+= 0x9e37_79b9_7f4a_7c15
      var z = seed
      z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
      z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
      return (z ^ (z >> 31)) % bound
    }
    var compared = 0
    var heldBack = 0
    for round in 0..<400 {
      let threadCount = UInt32(1 + next(6))
      let footer = next(4) != 0
      let capacity = [4, 16, 100, 1 << 20][Int(next(4))]
      let window = [5, 50, 1_000_000_000][Int(next(3))] as UInt64
      var ordered = TimeOrderedEvents(
        threads: footer ? Set(1...threadCount) : nil, capacity: capacity, window: UInt64(window))
      var reference = Reference(threads: footer ? Set(1...threadCount) : nil, capacity: capacity, window: window)
      var clock = [UInt64](repeating: 0, count: Int(threadCount) + 1)
      var ended = Set<UInt32>()
      var serial: UInt32 = 0
      var got: [TraceEvent] = []
      var expected: [TraceEvent] = []
      for _ in 0..<(1 + next(40)) {
        let thread = UInt32(1 + next(UInt64(threadCount)))
        // Now and then a chunk of a thread that has ended (a damaged or hostile trace).
        if ended.contains(thread) && next(8) != 0 { continue }
        var times: [UInt64] = []
        for _ in 0..<next(12) {
          // Mostly forward, sometimes the same time (ties across threads), now and then back (a damaged trace).
          let step = next(10)
          if step == 0, clock[Int(thread)] > 20 { clock[Int(thread)] -= next(20) } else { clock[Int(thread)] += step }
          times.append(clock[Int(thread)])
        }
        let end = next(10) == 0
        if end { ended.insert(thread) }
        let chunk = EventChunk(
          offset: 0, thread: thread, osThreadID: 0, sequence: 0, droppedSinceLastChunk: 0,
          firstTime: times.first ?? clock[Int(thread)], threadEnded: end,
          events: times.map { time in
            serial += 1
            return TraceEvent(kind: .access, thread: thread, time: time, key: serial)
          })
        let before = got.count
        ordered.add(chunk) { got.append($0) }
        reference.add(chunk, &expected)
        heldBack += serial > got.count && got.count == before ? 1 : 0
      }
      ordered.finish { got.append($0) }
      reference.finish(&expected)
      #expect(got.map(\.key) == expected.map(\.key), "round \(round)")
      compared += expected.count
    }
    #expect(compared > 10_000)
    #expect(heldBack > 1000)  // the cases hold events back, not only pass them through
  }

  /// `count` threads that each write one chunk and exit, one after another, merged and compared with the rule.
  func comeAndGo(
    _ count: UInt32, footer: Bool, descending: Bool = false
  ) -> (ordered: TimeOrderedEvents, got: [UInt32], expected: [UInt32]) {
    let threads = footer ? Set(1...count) : nil
    var ordered = TimeOrderedEvents(threads: threads, window: 10)
    var reference = Reference(threads: threads, capacity: TimeOrderedEvents.defaultCapacity, window: 10)
    var got: [TraceEvent] = []
    var expected: [TraceEvent] = []
    for thread in 1...count {
      let first = UInt64(descending ? count - thread : thread) * 10
      let chunk = EventChunk(
        offset: 0, thread: thread, osThreadID: 0, sequence: 0, droppedSinceLastChunk: 0, firstTime: first,
        threadEnded: true,
        events: [0, 3, 15].map { TraceEvent(kind: .access, thread: thread, time: first + $0, key: thread) })
      ordered.add(chunk) { got.append($0) }
      reference.add(chunk, &expected)
    }
    ordered.finish { got.append($0) }
    reference.finish(&expected)
    return (ordered, got.map(\.key), expected.map(\.key))
  }

  @Test("threads that come and go cost the merge work and state for the threads not ended, not for all it has seen")
  func threadsComeAndGo() {
    // tryout15's J6: each chunk looked at every thread's latest time for the watermark (a trace of 100,000 threads
    // of one chunk each was not read in 60 s), and a thread's run, once made, was kept to the end.
    let count: UInt32 = 1_000
    for (footer, descending) in [(false, false), (false, true), (true, false), (true, true)] {
      let (ordered, got, expected) = comeAndGo(count, footer: footer, descending: descending)
      #expect(got == expected, "footer \(footer), descending \(descending)")
      #expect(got.count == 3 * Int(count))
      // A push and a pop or two a chunk (the footer's threads pushed at the start), not a look at every thread.
      #expect(ordered.watermarkWork <= 4 * Int(count), "footer \(footer), descending \(descending)")
      let state = ordered.perThreadState
      #expect(state.clocks == 0 && state.threadsWithRuns == 0, "footer \(footer), descending \(descending)")
      // Without a footer a thread's events wait only for the window: a few runs at a time, used again.
      if !footer { #expect(state.runs <= 4, "descending \(descending): \(state.runs) runs") }
    }
  }

  @Test("a thread that stays behind holds the watermark while the others move on: entries gone stale are dropped")
  func staleClocksAreDropped() {
    // Thread 1 records nothing after time 0; threads 2… send chunk after chunk, each a later latest time: their
    // earlier entries go stale under thread 1's and are dropped together once they outnumber the threads.
    let threads = Set(UInt32(1)...40)
    var ordered = TimeOrderedEvents(threads: threads, capacity: 500)
    var reference = Reference(threads: threads, capacity: 500, window: 1_000_000_000)
    var got: [TraceEvent] = []
    var expected: [TraceEvent] = []
    var serial: UInt32 = 0
    for round in UInt64(0)..<60 {
      for thread in UInt32(2)...40 {
        let times = [round * 100 + UInt64(thread), round * 100 + UInt64(thread) + 50]
        let chunk = EventChunk(
          offset: 0, thread: thread, osThreadID: 0, sequence: round, droppedSinceLastChunk: 0, firstTime: times[0],
          threadEnded: round == 59 && thread % 2 == 0,
          events: times.map { time in
            serial += 1
            return TraceEvent(kind: .access, thread: thread, time: time, key: serial)
          })
        ordered.add(chunk) { got.append($0) }
        reference.add(chunk, &expected)
        #expect(ordered.perThreadState.clocks <= 2 * 40 + 64)
      }
    }
    ordered.finish { got.append($0) }
    reference.finish(&expected)
    #expect(got.map(\.key) == expected.map(\.key))
    #expect(got.count == 60 * 39 * 2)
  }

  @Test("threads' long stretches come out as the plain rule says: ties at their seams by arrival, a cap cuts one")
  func longStretches() {
    // Four threads, each a chunk of 1,200 events in stretches of 100 that take turns (thread 1's times 0…99,
    // thread 2's 99…198, …): each stretch ends on the next one's first time, a tie. Released in stretches, the
    // merge must stop at each seam and, under a cap, in the middle of one.
    for capacity in [150, 1_000, 1 << 20] {
      var ordered = TimeOrderedEvents(threads: [1, 2, 3, 4], capacity: capacity)
      var reference = Reference(threads: [1, 2, 3, 4], capacity: capacity, window: 1_000_000_000)
      var got: [TraceEvent] = []
      var expected: [TraceEvent] = []
      var serial: UInt32 = 0
      for thread in UInt32(1)...4 {
        var times: [UInt64] = []
        for stretch in 0..<12 {
          let first = UInt64(stretch * 4 + Int(thread) - 1) * 99
          times += (0..<100).map { first + UInt64($0) }
        }
        let chunk = EventChunk(
          offset: 0, thread: thread, osThreadID: 0, sequence: 0, droppedSinceLastChunk: 0, firstTime: times[0],
          threadEnded: thread == 4,
          events: times.map { time in
            serial += 1
            return TraceEvent(kind: .access, thread: thread, time: time, key: serial)
          })
        ordered.add(chunk) { got.append($0) }
        reference.add(chunk, &expected)
      }
      ordered.finish { got.append($0) }
      reference.finish(&expected)
      #expect(expected.count == 4_800)
      #expect(got.map(\.key) == expected.map(\.key), "capacity \(capacity)")
    }
  }
}

@Suite("Replay of concurrency")
struct ConcurrencyReplayTests {
  @Test("Observations values are one instance per sequence, with their isolation and ending")
  func sequences() {
    var script = EventScript()
    script.created(1)
    for (scope, sequence) in [(UInt32(10), UInt32(100)), (11, 200), (12, 100)] {
      script.observationsValue(scope: scope, sequence: sequence, reading: 1)
    }
    script.events.append(
      TraceEvent(
        kind: .observationsEnd, flags: SequenceEnding.cancelled.rawValue, thread: 1, time: 0, key: 200, scope: 11))
    let (replay, _) = script.replay()
    #expect(replay.scopes[1]?.instances == 2)
    #expect(replay.scopes[1]?.runs == 3)
    #expect(replay.scopes[1]?.isolations == [7: 3])
    #expect(replay.scopes[1]?.endings == ["cancelled": 1])
    // One story: two sequences ran, one ended, the other is still running at the end.
    #expect(replay.scopes[1]?.sequences == 2)
    #expect(replay.scopes[1]?.sequencesRunningAtEnd == 1)
    #expect(replay.machine.liveLoops(reading: 1) == [1])  // sequence 100 never ended and still reads object 1
  }

  @Test(
    "an Observations run ended because its objects were freed, whose sequence then ends, is placed: no inconsistency"
  )
  func sequenceEndsAfterItsObjectsWereFreed() {
    var script = EventScript()
    script.created(1)
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    script.freed(1)  // the model goes away: the run can never fire again
    // Its deinit cancels the loop's task: the recorder ends the last run and the sequence.
    script.sequenceEnded(100, lastRun: 10, .cancelled)
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty)
    let cancels = facts.compactMap { fact -> CancelReason? in
      if case .cancel(let cancel) = fact { return cancel.reason }
      return nil
    }
    #expect(cancels == [.objectsFreed])
    #expect(replay.scopes[1]?.endings == ["cancelled": 1])
    #expect(replay.scopes[1]?.sequencesRunningAtEnd == 0)
  }

  @Test(
    "a fire of an abandoned sequence's last run (Observation's tracking outlives the iterator), by a write on the loop's thread or another, is placed: no inconsistency, no invalidation; a second fire of it, or of a run never known, still is one",
    arguments: [UInt32(1), 2])
  func fireAfterSequenceAbandoned(writer: UInt32) {
    var script = EventScript()
    script.created(1)
    // for await v in Observations({ m.total }) { if v > 0 { break } }: a value, its tracking installed, the
    // iterator abandoned (the recorder ends the run and the sequence), then a write fires that tracking, which
    // Observation kept installed, once (the recorder's events, in a 6.3.1 recording).
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    script.sequenceEnded(100, lastRun: 10, .abandoned)
    script.write(1, 1, firing: [10], thread: writer)
    script.write(1, 1, thread: writer)
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    let fires = facts.compactMap { fact -> FireFact? in
      if case .fire(let fire) = fact { return fire }
      return nil
    }
    #expect(fires.count == 1)
    #expect(fires.first?.afterSequenceEnded == true)
    #expect(fires.first?.scope == 10)
    #expect(fires.first?.cause == PropertyKey(object: 1, property: 1))
    #expect(replay.scopes[1]?.invalidations == 0)
    #expect(replay.properties[1]?.writes == 2)
    #expect(replay.scopes[1]?.endings == ["abandoned": 1])
    // The same fire a second time (or of any run never seen) is still an inconsistency: Observation's tracking
    // fires once.
    var again = script
    again.write(1, 1, firing: [10], thread: writer)
    #expect(again.replay().0.anomalies == [.fireOfUnknownScope: 1])
  }

  @Test(
    "the cancel that ends a sequence whose last run fired already or was never installed (it read nothing: a closure that threw or finished at once) is placed: no inconsistency; a cancel of a run that is not its sequence's last still is one",
    arguments: ["fired", "threw", "finished"])
  func sequenceEndsAfterItsLastRunIsGone(story: String) {
    var script = EventScript()
    script.created(1)
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    script.write(1, 1, firing: [10])  // the change that ends run 10's tracking (and would wake the next value)
    var ending = SequenceEnding.cancelled
    var last: UInt32 = 10
    switch story {
    case "threw":
      // Observations<Int, E> { if fail { throw E() }; return m.value }: the next run throws before reading.
      script.begin(11, label: 1, kind: .observations, instance: 100)
      script.observationsRun(100, scope: 11)
      script.end(11)
      (ending, last) = (.threw, 11)
    case "finished":
      // Observations.untilFinished { .finish }: its only run reads nothing, and is never installed.
      script = EventScript()
      script.begin(10, label: 1, kind: .observations, instance: 100)
      script.observationsRun(100, scope: 10)
      script.end(10)
      ending = .finished
    default:
      break  // the task was cancelled after the fire woke it, before its next run
    }
    var recorded = script
    recorded.sequenceEnded(100, lastRun: last, ending)
    let (replay, facts) = recorded.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    #expect(replay.scopes[1]?.endings == [ending.description: 1])
    #expect(replay.scopes[1]?.sequencesRunningAtEnd == 0)
    // Nothing was cancelled by the end: the run's tracking was already gone.
    #expect(!facts.contains { if case .cancel(let cancel) = $0 { cancel.reason == .sequenceEnded } else { false } })
    guard story == "threw" else { return }
    // The recorder before this fix cancelled the run before the one that threw (its lastRun was not updated by a
    // throw): a cancel of a run that is not the sequence's last is not placed.
    var older = script
    older.sequenceEnded(100, lastRun: 10, ending)
    #expect(older.replay().0.anomalies == [.eventOfUnknownScope: 1])
  }

  @Test(
    "a sequence's end ends each of its runs whose tracking is still installed, not only its last: a later fire of either is after the sequence ended, no invalidation (one sequence, two iterators)"
  )
  func sequenceEndEndsItsEarlierInstalledRuns() {
    var script = EventScript()
    script.created(1)
    // Upstream's "Concurrent observers": iterator 100 takes value 10; a fire that woke no one left the shared state
    // dirty, so it runs again (11) with 10's tracking still installed; then its loop ends (abandoned).
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    script.observationsValue(scope: 11, sequence: 100, reading: 1)
    script.sequenceEnded(100, lastRun: 11, .abandoned)
    // The other iterator's value, then a write that fires all three trackings Observation has installed.
    script.observationsValue(scope: 12, sequence: 200, reading: 1)
    script.write(1, 1, firing: [12, 10, 11])
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    let fires = facts.compactMap { fact -> FireFact? in
      if case .fire(let fire) = fact { return fire }
      return nil
    }
    #expect(fires.map(\.scope) == [12, 10, 11])
    #expect(fires.map(\.afterSequenceEnded) == [false, true, true])
    #expect(replay.scopes[1]?.invalidations == 1)
    #expect(replay.properties[1]?.invalidations == 1)
    let ended = facts.compactMap { fact -> UInt32? in
      if case .cancel(let cancel) = fact, cancel.reason == .sequenceEnded { return cancel.scope }
      return nil
    }
    #expect(ended == [11, 10])
  }

  @Test("a type used on the main actor's thread and on others is an off-main-thread finding, information only")
  func offMain() {
    var script = EventScript()
    script.begin(10, label: 1, kind: .observations, thread: 5)
    script.events.append(
      TraceEvent(kind: .observationsRun, flags: EventFlags.onMainActor, thread: 5, time: 0, key: 100, scope: 10, aux: 9)
    )
    script.read(1, 1, in: 10, thread: 5)
    script.end(10, thread: 5)
    script.read(2, 2, thread: 5)  // the type (1) used on the main actor's thread only…
    var (replay, _) = script.replay()
    #expect(replay.mainActorThread == 5)
    #expect(
      TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter { $0.kind == .offMainThread }.isEmpty)
    script.read(1, 1, thread: 6)  // …until it is read on thread 6
    (replay, _) = script.replay()
    let offMain = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions()).filter {
      $0.kind == .offMainThread
    }
    #expect(offMain.count == 1)
    #expect(offMain.first?.count == 1)
    // What happened, not a fault shown: a model that is not isolated may be used in turn on several threads.
    #expect(offMain.first?.isInformational == true)
  }

  @Test("main-actor work seen on two threads: a type used on both is used on the main actor, not off it")
  func mainActorOnTwoThreads() {
    var script = EventScript()
    // An Observations value on the main actor runs on thread 5, later another on thread 7 (an async main: the main
    // queue is drained by whichever thread dispatchMain hands it to).
    for (scope, thread) in [(UInt32(10), UInt32(5)), (11, 7)] {
      script.begin(scope, label: 1, kind: .observations, thread: thread)
      script.events.append(
        TraceEvent(
          kind: .observationsRun, flags: EventFlags.onMainActor, thread: thread, time: 0, key: scope + 90,
          scope: scope, aux: 9))
      script.read(1, 1, in: scope, thread: thread)
      script.end(scope, thread: thread)
      script.write(1, 1, thread: thread)
    }
    var (replay, _) = script.replay()
    #expect(replay.machine.mainActorThreads == [5, 7])
    var findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(findings.filter { $0.kind == .offMainThread }.isEmpty)
    // Written on thread 5 and on 7, in turn: what happened, not a warning.
    #expect(findings.filter { $0.kind == .crossThreadWrite }.map(\.isInformational) == [true])
    #expect(findings.filter { !$0.isInformational }.isEmpty, "\(findings)")
    script.read(1, 1, thread: 8)
    (replay, _) = script.replay()
    findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let offMain = findings.filter { $0.kind == .offMainThread }
    #expect(offMain.map(\.count) == [1])
    #expect(offMain.first?.message.contains("the main actor's 2 threads and on 1 other thread") == true)
  }

  @Test("an object written from two threads in turn is a cross-thread-write finding (information); from one, nothing")
  func crossThread() {
    var script = EventScript()
    script.write(1, 1, unchanged: false, thread: 1)
    script.write(1, 1, unchanged: false, thread: 2)
    script.write(2, 1, unchanged: false, thread: 1)
    script.write(2, 1, unchanged: false, thread: 1)
    let (replay, _) = script.replay()
    #expect(replay.evidence.crossThreadWrites.count == 1)
    #expect(replay.evidence.crossThreadWrites[1]?.map(\.object) == [1])
    #expect(replay.evidence.crossThreadWrites[1]?.first?.threads == [1, 2])
    #expect(replay.evidence.concurrentWrites.isEmpty)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let crossThread = findings.filter { $0.kind == .crossThreadWrite }
    #expect(crossThread.count == 1)
    // No write overlapped another: no evidence of a race, so no warning.
    #expect(crossThread.first?.isInformational == true)
    #expect(findings.filter { !$0.isInformational }.isEmpty, "\(findings)")
  }

  @Test("a write that begins inside another thread's write of the same object property is a concurrent-write warning")
  func concurrentWrite() {
    var script = EventScript()
    // Thread 2 writes object 1's property 1 between thread 1's willSet and didSet of it: at once.
    script.beginWrite(1, 1, thread: 1)
    script.write(1, 1, unchanged: false, thread: 2)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    // Overlapping, but not of one object property: another property of object 1, and property 1 of object 2.
    script.beginWrite(1, 1, thread: 1)
    script.write(1, 2, unchanged: false, thread: 2)
    script.write(2, 1, unchanged: false, thread: 3)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    // And three at once: thread 3 and then thread 2 inside thread 1's write.
    script.beginWrite(1, 1, thread: 1)
    script.beginWrite(1, 1, thread: 3)
    script.write(1, 1, unchanged: false, thread: 2)
    script.finishWrite(1, 1, unchanged: false, thread: 3)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    let (replay, facts) = script.replay()
    let overlapping = facts.compactMap { fact -> Bool? in
      guard case .writeBegan(let write) = fact else { return nil }
      return write.overlapping
    }
    #expect(overlapping == [false, true, false, false, false, false, true, true])
    #expect(replay.evidence.concurrentWrites[1]?.writes == 3)
    #expect(replay.evidence.concurrentWrites[1]?.objects == 1)
    #expect(replay.evidence.concurrentWrites[2] == nil)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let concurrent = findings.filter { $0.kind == .concurrentWrite }
    #expect(concurrent.count == 1)
    #expect(concurrent.first?.isInformational == false)
    #expect(concurrent.first?.count == 3)
    #expect(
      concurrent.first?.message.hasSuffix(
        "began while another thread's write to it on the same object was in progress (1 object)") == true)
    #expect(findings.filter { $0.kind == .crossThreadWrite }.first?.hint.contains("concurrent-write") == true)
  }
}

@Suite("Timeline order")
struct TimelineOrderTests {
  /// The runs and writes a timeline shows, as (kind, time), in the order `TimeOrderedFacts` releases them.
  func ordered(_ script: EventScript) -> [String] {
    let (_, facts) = script.replay()
    var ordered = TimeOrderedFacts()
    var out: [String] = []
    func note(_ fact: ReplayFact) {
      switch fact {
      case .runEnded(let ended): out.append("run \(ended.run.label) @\(ended.run.time)")
      case .write(let write): out.append("write @\(write.time)")
      default: break
      }
    }
    for fact in facts { ordered.consume(fact, note) }
    ordered.finish(note)
    return out
  }

  @Test("a nested run is shown after the run that contains it, and a write after the runs that began before it")
  func nestedAndWrites() {
    var script = EventScript()
    script.begin(1, label: 1)  // t=10: the outer run begins
    script.read(1, 1, in: 1)
    script.begin(2, label: 2, parent: 1)  // t=30: the inner run begins
    script.read(1, 2, in: 2)
    script.end(2)  // the inner run ends first: the machine states it first
    script.install(2)
    script.end(1)
    script.install(1)
    script.write(1, 2, firing: [2, 1], unchanged: false)  // t=90
    script.begin(3, label: 1)  // t=150, while on another thread…
    script.write(1, 1, unchanged: false, thread: 2)  // …a write begins at t=160 and ends before the run does
    script.read(1, 1, in: 3)
    script.end(3)
    #expect(ordered(script) == ["run 1 @10", "run 2 @30", "write @90", "run 1 @150", "write @160"])
  }
}

@Suite("What the machine cannot place")
struct AnomalyTests {
  /// A trace started by code while another thread was inside a write (tryout16's P8): that write's didSet comes
  /// first on its thread, its willSet was before the start.
  static func startedMidWrite(startedWhileRunning: Bool) -> (Replay, [Finding]) {
    var script = EventScript()
    script.events.append(TraceEvent(kind: .didSet, thread: 2, time: 0, object: 7, key: 1, aux: 1))
    script.write(7, 1, unchanged: false, thread: 2)
    // A didSet of a property written in the trace already, with no willSet of its own: inconsistent even so.
    script.events.append(TraceEvent(kind: .didSet, thread: 2, time: 900, object: 7, key: 1, aux: 1))
    var replay = Replay()
    replay.startedWhileRunning = startedWhileRunning
    replay.replay(script.events)
    var trace = AnalysisReport.Trace(
      path: "started.trc", events: replay.events, threads: 1, droppedEvents: 0, truncated: false, damage: [],
      durationNanoseconds: 1, backtraces: "off", symbolized: true)
    trace.startedWhileRunning = startedWhileRunning
    return (replay, Findings.derive(replay, TraceDefinitions(), trace))
  }

  @Test("in a trace started while the program ran, a thread's didSet of a property no willSet wrote yet is a write begun before the start, said next to started-while-running, not an inconsistency")
  func writeBegunBeforeStart() {
    let (started, findings) = Self.startedMidWrite(startedWhileRunning: true)
    #expect(started.anomalies == [.didSetWithoutWillSet: 1])
    #expect(started.machine.writesBegunBeforeStart == 1)
    let said = findings.first { $0.kind == .startedWhileRunning }
    #expect(
      said?.message.hasSuffix(
        "; 1 write was in progress at the start (T2): its didSet is in the trace, its willSet before it, so it is "
          + "not counted among the writes") == true, "\(said?.message ?? "none")")
    // Not started while running (OBSTRACE_OUTPUT): nothing began before, and both are inconsistencies, as before.
    let (whole, _) = Self.startedMidWrite(startedWhileRunning: false)
    #expect(whole.anomalies == [.didSetWithoutWillSet: 2])
    #expect(whole.machine.writesBegunBeforeStart == 0)
  }

  @Test("a read in an unknown scope, a didSet without willSet and a fire of an unknown scope are counted and reported")
  func counted() {
    var script = EventScript()
    script.created(1)
    script.read(1, 1, in: 42)  // scope 42 never began
    script.events.append(TraceEvent(kind: .didSet, thread: 1, time: 500, object: 1, key: 1, aux: 1))
    script.events.append(TraceEvent(kind: .trackingFired, thread: 1, time: 600, object: 1, key: 1, scope: 43))
    let (replay, facts) = script.replay()
    #expect(replay.anomalies == [.accessInUnknownScope: 1, .didSetWithoutWillSet: 1, .fireOfUnknownScope: 1])
    #expect(facts.filter { if case .anomaly = $0 { true } else { false } }.count == 3)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    let inconsistent = findings.first { $0.kind == .inconsistentTrace }
    #expect(inconsistent?.count == 3)
    #expect(inconsistent?.message.contains("1 read in an unknown scope") == true)
    #expect(inconsistent?.message.contains("1 didSet without its willSet") == true)
    #expect(inconsistent?.isInformational == false)
    // Two of a kind are said in the plural.
    script.events.append(TraceEvent(kind: .scopeEnd, thread: 1, time: 700, scope: 44))
    script.events.append(TraceEvent(kind: .trackingInstalled, thread: 1, time: 800, scope: 45))
    script.events.append(TraceEvent(kind: .didSet, thread: 1, time: 900, object: 1, key: 1, aux: 1))
    let two = TraceAnalysis.findings(of: script.replay().0, definitions: TraceDefinitions()).first {
      $0.kind == .inconsistentTrace
    }
    #expect(
      two?.message.contains(
        "(1 read in an unknown scope, 2 didSets without their willSet, 1 fire of an unknown scope, "
          + "2 events of an unknown scope)") == true, "\(two?.message ?? "")")
  }

  @Test(
    "a write whose didSet never came (the process exited in the onChange it fired) is stated at the end, unfinished, with its fire: what is counted is what a timeline shows"
  )
  func unfinishedWrite() {
    var script = EventScript()
    script.created(1)
    script.run(10, label: 1, reads: [(1, 1)])
    script.write(1, 2)  // a whole write, for contrast
    script.beginWrite(1, 1, firing: [10], stack: 7)  // onChange { exit(3) }: no didSet
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty)
    let writes = facts.compactMap { fact -> WriteFact? in
      if case .write(let write) = fact { return write }
      return nil
    }
    #expect(writes.map(\.key.property) == [2, 1])
    #expect(writes.map(\.unfinished) == [false, true])
    #expect(writes.last?.fired.map(\.scope) == [10])
    #expect(writes.last?.stack == 7)
    #expect(writes.last?.endTime == replay.lastTime)
    #expect(replay.statistics.unfinishedWrites == [1])
    #expect(replay.properties[1]?.writes == 1)
    #expect(replay.properties[1]?.invalidations == 1)
    #expect(replay.scopes[1]?.invalidations == 1)
  }

  @Test("a run whose objects were all freed ends (objects freed), so it waits for nothing")
  func objectsFreed() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)], instance: 7)
    script.freed(1)
    let (replay, facts) = script.replay()
    #expect(replay.liveRunCount == 0)
    let cancels = facts.compactMap { fact -> CancelReason? in
      if case .cancel(let cancel) = fact { return cancel.reason }
      return nil
    }
    #expect(cancels == [.objectsFreed])
    #expect(replay.scopes[1]?.endedWithoutFire == ["objects freed": 1])
  }
}

@Suite("Threads still running at the stop")
struct RunningAtStopTests {
  /// Twelve objects of type 1 created on thread 2, each in a turn of its own and read once on thread 1, none freed
  /// (eleven left behind by newer ones: a pile-up); one object of type 2 on thread 1.
  func script() -> EventScript {
    var script = EventScript()
    for serial in UInt32(1)...12 {
      script.created(serial, type: 1, thread: 2)
      script.read(serial, 1, thread: 1)
      script.run(100 + serial, label: 9, reads: [])
    }
    script.created(13, type: 2, thread: 1)
    return script
  }

  func findings(runningAtStop: [UInt32], lostAtStop: UInt64 = 0, loop: Bool = false) -> [Finding] {
    var script = script()
    if loop {
      // A thirteenth Worker, made on thread 2, that an Observations loop (on thread 1) still reads at the end.
      script.created(14, type: 1, thread: 2)
      script.observationsValue(scope: 200, sequence: 300, reading: 14)
    }
    let (replay, _) = script.replay()
    var definitions = TraceDefinitions()
    definitions.types[1] = "Worker"
    definitions.types[2] = "Model"
    var trace = AnalysisReport.Trace(
      path: "t.trc", events: replay.events, threads: 2, droppedEvents: 0, truncated: false, damage: [],
      durationNanoseconds: 2_000_000, backtraces: "off", symbolized: true, runningAtStop: runningAtStop,
      lostAtStop: lostAtStop)
    // What the reader's ledger gives: the time of each running thread's last event read.
    for thread in runningAtStop { trace.lastEventsOfRunningThreads[thread] = 500_000 }
    return TraceAnalysis.report(replay, definitions: definitions, trace: trace).findings
  }

  @Test("objects a thread still running at the stop used are neither a pile-up nor alive at the end")
  func objectsOfRunningThreads() throws {
    // Without the footer's list, twelve Workers never freed pile up: a leak.
    let unaware = findings(runningAtStop: [])
    #expect(unaware.contains { $0.kind == .leakedObject && $0.message.contains("Worker") })
    #expect(!unaware.contains { $0.kind == .runningAtStop })

    let aware = findings(runningAtStop: [2])
    #expect(!aware.contains { $0.kind == .leakedObject })
    let alive = aware.filter { $0.kind == .aliveAtEnd }
    #expect(alive.map(\.message) == ["1 Model object was alive when the trace ended"])
    let running = try #require(aware.first { $0.kind == .runningAtStop })
    #expect(running.isInformational)
    #expect(
      running.message.hasPrefix(
        "1 thread had not exited when the recording stopped (T2: last event 1.5 ms before the stop): what it did "
          + "after the stop, if anything, is not in the trace"), "\(running.message)")
    #expect(running.message.contains("12 objects (Worker) used on it may have been freed after the stop"))
  }

  @Test(
    "an object a running thread used that an Observations loop still reads: alive-at-end says the loop, running-at-stop counts it and says so"
  )
  func objectOfARunningThreadHeldByALoop() throws {
    let findings = findings(runningAtStop: [2], loop: true)
    #expect(!findings.contains { $0.kind == .leakedObject })
    let alive = findings.filter { $0.kind == .aliveAtEnd }.map(\.message)
    #expect(alive.contains { $0.hasPrefix("1 Worker object was alive when the trace ended, still read by the Observations loop") }, "\(alive)")
    let running = try #require(findings.first { $0.kind == .runningAtStop })
    #expect(
      running.message.contains(
        "; 13 objects (Worker) used on it may have been freed after the stop: no leak finding counts them; alive-at-end "
          + "counts only the 1 still read by an Observations loop that never ended (which holds it while it runs)"),
      "\(running.message)")
  }

  @Test("events lost at the stop make the trace incomplete: no leak is concluded, and the finding counts them")
  func lostAtStop() throws {
    let findings = findings(runningAtStop: [3], lostAtStop: 5)
    #expect(!findings.contains { $0.kind == .leakedObject })
    let running = try #require(findings.first { $0.kind == .runningAtStop })
    #expect(running.message.contains("5 events recorded during the stop were lost"))
  }
}

@Suite("Leaks need evidence: objects left behind")
struct LeftBehindTests {
  func findings(_ script: EventScript) -> [Finding] {
    let (replay, _) = script.replay()
    var definitions = TraceDefinitions()
    definitions.types[1] = "Row"
    definitions.labels[1] = "main.swift:20"
    let trace = AnalysisReport.Trace(
      path: "t.trc", events: replay.events, threads: 1, droppedEvents: 0, truncated: false, damage: [],
      durationNanoseconds: 1, backtraces: "off", symbolized: true)
    return TraceAnalysis.report(replay, definitions: definitions, trace: trace).findings
  }

  @Test("twelve objects created in one turn and alive at the end are a screen, not a pile-up")
  func oneTurn() throws {
    var script = EventScript()
    // Each written as it is made, then never used again but the third; a later run reads only that.
    for serial in UInt32(1)...12 {
      script.created(serial)
      script.write(serial, 1)
    }
    script.run(50, label: 2, reads: [(3, 1)])
    script.read(3, 1)
    let findings = findings(script)
    #expect(!findings.contains { $0.kind == .leakedObject })
    #expect(findings.first { $0.kind == .aliveAtEnd }?.message == "12 Row objects were alive when the trace ended")
  }

  @Test("objects created turn after turn and still read in the last turn are not left behind")
  func stillRead() {
    var script = EventScript()
    for serial in UInt32(1)...12 {
      script.created(serial)
      // A list's render reads every row, and is fired by the next row's addition (object 99, a Cache).
      script.run(100 + serial, label: 2, reads: [(99, 1)] + (UInt32(1)...serial).map { ($0, 1) })
      script.write(99, 1, firing: [100 + serial])
    }
    #expect(!findings(script).contains { $0.kind == .leakedObject })
  }

  /// Objects of type 1 created `count` times, one a turn: each read by a run that also reads object 99 (a cache),
  /// then fired by a write of the cache (so that nothing watches the object any more) unless `watched`.
  func cache(_ count: UInt32, watched: Bool = false) -> EventScript {
    var script = EventScript()
    for serial in UInt32(1)...count {
      script.created(serial)
      script.run(100 + serial, label: 2, reads: [(99, 1), (serial, 1)])
      if !watched { script.write(99, 1, firing: [100 + serial]) }
    }
    return script
  }

  @Test("objects never used again once a newer one was created in a later turn pile up, from ten left behind")
  func leftBehind() throws {
    // The newest is not left behind: 11 created leave 10.
    for (created, leak) in [(UInt32(11), true), (10, false)] {
      let findings = findings(cache(created))
      let leaks = findings.filter { $0.kind == .leakedObject }
      #expect(leaks.count == (leak ? 1 : 0), "\(created)")
      if leak {
        #expect(
          leaks.first?.message
            == "10 Row objects piled up, left behind by newer ones: created 11 times in the trace, none ever freed")
        #expect(leaks.first?.count == 10)
        #expect(leaks.first?.evidence.contains("10 were never read or written again after a newer Row") == true)
        // The newest, still in use, is only alive at the end.
        #expect(findings.first { $0.kind == .aliveAtEnd }?.message == "1 Row object was alive when the trace ended")
      } else {
        #expect(findings.first { $0.kind == .aliveAtEnd }?.message == "10 Row objects were alive when the trace ended")
      }
    }
  }

  @Test("objects left behind that a run still watches at the end (a row a view shows) are not a pile-up")
  func watched() {
    let findings = findings(cache(12, watched: true))
    #expect(!findings.contains { $0.kind == .leakedObject })
    #expect(findings.first { $0.kind == .aliveAtEnd }?.message == "12 Row objects were alive when the trace ended")
  }

  @Test(
    "left behind: created in an earlier turn than a newer one, and last used before the newer one's creation, even in the newer one's turn"
  )
  func lastUseBeforeNewerCreation() {
    for usedAfter in [false, true] {
      var script = EventScript()
      for serial in UInt32(1)...11 {
        script.created(serial)
        script.run(100 + serial, label: 2, reads: [(99, 1), (serial, 1)])
        script.write(99, 1, firing: [100 + serial])
        // Used once more after its run (as a loop's body uses its model), in the turn the next one is created in.
        script.read(serial, 1)
      }
      // The older ones used again after the newest was created: none left behind.
      if usedAfter { for serial in UInt32(1)...10 { script.read(serial, 1) } }
      let (replay, _) = script.replay()
      let first = replay.machine.turns(ofObject: 1)
      let newest = replay.machine.turns(ofObject: 11)
      #expect(first.map { [$0.created, $0.createdAt] } == [0, 1])
      #expect((newest?.created ?? 0) > (first?.created ?? 0))
      #expect(findings(script).contains { $0.kind == .leakedObject } == !usedAfter, "\(usedAfter)")
    }
  }

  @Test("a run's end is a turn: objects separated only by a run's end were not created together")
  func runEndIsATurn() {
    var script = EventScript()
    script.begin(100, label: 2)
    for serial in UInt32(1)...11 {
      if serial == 11 { script.end(100) }
      script.created(serial)
    }
    let (replay, _) = script.replay()
    #expect(replay.machine.turns(ofObject: 1)?.created == 1)
    #expect(replay.machine.turns(ofObject: 11)?.created == 2)
    #expect(findings(script).contains { $0.kind == .leakedObject })
  }

  @Test("one object a loop still reads is alive at the end, with the loop named: nothing shows the loop alone holds it")
  func loopAlone() throws {
    var script = EventScript()
    script.created(1)
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    script.write(1, 1, firing: [10])
    let findings = findings(script)
    #expect(!findings.contains { $0.kind == .leakedObject })
    let alive = try #require(findings.first { $0.kind == .aliveAtEnd })
    #expect(alive.isInformational)
    #expect(
      alive.message
        == "1 Row object was alive when the trace ended, still read by the Observations loop at main.swift:20, which never ended"
    )
  }

  @Test("an object a loop still reads, left behind by a newer one of its type, is kept alive by the loop: a leak")
  func loopLeftBehind() throws {
    var script = EventScript()
    script.created(1)
    script.observationsValue(scope: 10, sequence: 100, reading: 1)
    // The next screen's model, created after the first loop's run ended: the first model is not used again.
    script.created(2)
    script.observationsValue(scope: 11, sequence: 200, reading: 2)
    let findings = findings(script)
    let leak = try #require(findings.first { $0.kind == .leakedObject })
    #expect(
      leak.message
        == "1 Row object is kept alive by the Observations loop at main.swift:20, which still reads it and never "
        + "ended, though a newer Row replaced it")
    #expect(leak.count == 1)
    #expect(
      leak.evidence.hasSuffix(
        "never freed, nor read or written again, by the loop or anything else, after a newer Row was created, in a "
          + "later turn (a scope run began or ended between their creations)"))
    // The newer one, still read by its loop, is only alive at the end.
    let alive = try #require(findings.first { $0.kind == .aliveAtEnd })
    #expect(alive.count == 1)
    #expect(alive.message.hasSuffix("still read by the Observations loop at main.swift:20, which never ended"))
  }
}
