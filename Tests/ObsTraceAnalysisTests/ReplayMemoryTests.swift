import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

@Suite("Replay memory")
struct ReplayMemoryTests {
  @Test("an object read by ten thousand runs that fired, one after another, holds the live ones, not all of them")
  func subscriberListsAreCompacted() {
    var replay = Replay()
    var time: UInt64 = 0
    func consume(_ kind: EventKind, flags: UInt8 = 0, object: UInt32 = 0, key: UInt32 = 0, scope: UInt32 = 0) {
      time += 1
      replay.consume(
        TraceEvent(kind: kind, flags: flags, thread: 1, time: time, object: object, key: key, scope: scope))
    }
    consume(.objectCreated, object: 1)
    for scope in UInt32(1)...10_000 {
      consume(.scopeBegin, object: 1_000_000, key: 1, scope: scope)
      consume(.access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: scope)
      consume(.scopeEnd, scope: scope)
      consume(.trackingInstalled, scope: scope)
      consume(.willSet, object: 1, key: 1)
      consume(.trackingFired, object: 1, key: 1, scope: scope)
      consume(.didSet, object: 1, key: 1)
    }
    #expect(replay.statistics.scopes[1]?.runs == 10_000)
    #expect(replay.statistics.scopes[1]?.invalidations == 10_000)
    #expect(replay.machine.subscriptionCount < 20)
  }

  /// One label re-tracked `perRound` times a round, then written twice: the first write fires every run installed,
  /// the second fires nothing (it is coalesced into every instance still waiting). Instances as the recorder
  /// chooses them (`ScopeInstances`): a re-track continues the first of the label's fired instances, of which it
  /// keeps the last 1024 fired, else it is a new instance (its id taken after its scope's). Returns the script, how
  /// many instances it made, and how many of them waited (fired, not re-tracked since) when it ended.
  static func retracking(rounds: Int, perRound: Int) -> (script: EventScript, instances: Int, waiting: Int) {
    var script = EventScript()
    script.created(1)
    var serial: UInt32 = 0
    var recorderQueue: [UInt32] = []
    var made = 0
    var waiting: Set<UInt32> = []
    for _ in 0..<rounds {
      var installed: [(scope: UInt32, instance: UInt32)] = []
      for _ in 0..<perRound {
        serial += 1
        let scope = serial
        let instance: UInt32
        if recorderQueue.isEmpty {
          serial += 1
          instance = serial
          made += 1
        } else {
          instance = recorderQueue.removeFirst()
        }
        waiting.remove(instance)
        script.run(scope, label: 1, reads: [(1, 1)], instance: instance)
        installed.append((scope, instance))
      }
      script.write(1, 1, firing: installed.map(\.scope), unchanged: false)
      for (_, instance) in installed {
        recorderQueue.append(instance)
        if recorderQueue.count > 1024 { recorderQueue.removeFirst() }
        waiting.insert(instance)
      }
      script.write(1, 1, unchanged: false)
    }
    return (script, made, waiting.count)
  }

  @Test("one label re-tracked past the recorder's 1024 fired instances (tryout13 G15): the replay keeps 2048 waiting, forgets the rest and counts them; every other count stays whole")
  func retrackingForgetsWhatNoRunContinues() throws {
    let rounds = 6
    let perRound = 3000
    let (script, made, waiting) = Self.retracking(rounds: rounds, perRound: perRound)
    let kept = ReplayMachine.waitingKeptPerLabel
    try #require(waiting > kept)
    let (replay, facts) = script.replay()
    let scope = try #require(replay.scopes[1])
    #expect(scope.runs == rounds * perRound)
    #expect(scope.instances == made)
    #expect(scope.invalidations == rounds * perRound)
    #expect(replay.machine.forgottenInstances == [1: waiting - kept])
    // The last write fired nothing: coalesced into the instances the replay still keeps waiting, not every one the
    // trace ever left behind.
    let lastCoalesced = facts.last { fact in
      if case .writeBegan = fact { return true }
      return false
    }
    guard case .writeBegan(let last) = lastCoalesced else { Issue.record("no write"); return }
    #expect(last.coalescedInto == [CoalescedInstances(label: 1, instances: kept)])
    // What it holds per instance follows the instances that may still run: those waiting, not all it met.
    let sizes = replay.machine.instanceTableSizes
    #expect(sizes.instances == kept)
    #expect(sizes.awaiting == kept)
    #expect(sizes.firedSinceRun == kept)
    #expect(sizes.queued <= 2 * kept + 64)
    // Said in the report, with the count.
    let findings = Findings.derive(replay, TraceDefinitions(), nil).filter { $0.kind == .forgottenInstances }
    #expect(findings.count == 1)
    #expect(findings.first?.count == waiting - kept)
    #expect(findings.first?.isInformational == true)
    #expect(
      findings.first?.message.hasPrefix(
        "\(waiting - kept) instances of <label #1> fired and were not re-tracked while \(kept) later-fired ones waited")
        == true, "\(findings)")
    #expect(replay.machine.runsOfForgottenInstances.isEmpty)
  }

  @Test("a run that continues an instance the replay forgot (the recorder queued it again after a late second fire) is a run of that instance, not a new one")
  func runOfAForgottenInstance() throws {
    let (retracking, made, waiting) = Self.retracking(rounds: 4, perRound: 3000)
    var script = retracking
    // The first instance made (id 2, its run scope 1) fired in the first round and was never re-tracked (the
    // recorder kept the last 1024 of that round's 3000): the replay forgot it. A run continues it now.
    script.run(1_000_001, label: 1, reads: [(1, 1)], instance: 2)
    let (replay, _) = script.replay()
    #expect(replay.machine.forgottenInstances == [1: waiting - ReplayMachine.waitingKeptPerLabel])
    #expect(replay.scopes[1]?.instances == made)
    #expect(replay.scopes[1]?.runs == 4 * 3000 + 1)
    #expect(replay.machine.runsOfForgottenInstances == [1: 1])
    let finding = Findings.derive(replay, TraceDefinitions(), nil).first { $0.kind == .forgottenInstances }
    #expect(
      finding?.message.hasSuffix(
        "; 1 later run continued one of them (a fire of it came late, and the recorder queued it again): counted as "
          + "a run of its instance, not judged redundant") == true, "\(String(describing: finding))")
  }

  @Test("a label re-tracked no faster than its writes fire it keeps every instance and forgets none")
  func retrackingThatKeepsUpForgetsNothing() throws {
    let (script, made, waiting) = Self.retracking(rounds: 5, perRound: 1000)
    let (replay, facts) = script.replay()
    #expect(made == 1000)
    #expect(waiting == 1000)
    #expect(replay.scopes[1]?.instances == 1000)
    #expect(replay.scopes[1]?.runs == 5000)
    // Each round's second write is coalesced into the 1000 waiting instances.
    #expect(replay.scopes[1]?.coalescedWrites == 5 * 1000)
    #expect(replay.properties[1]?.coalescedWrites == 5)
    #expect(replay.machine.forgottenInstances.isEmpty)
    #expect(Findings.derive(replay, TraceDefinitions(), nil).allSatisfy { $0.kind != .forgottenInstances })
    #expect(facts.count > 5000)
  }
}

@Suite("Replay state")
struct ReplayStateTests {
  @Test("runs subscribed to one object past the ones its list holds in place are all ended, in order, when it is freed")
  func subscribersPastTheInlinedOnes() {
    var script = EventScript()
    script.created(1)
    let runs = UInt32(1)...UInt32(3 * ReplayMachine.SubscriberList.inlined)
    for scope in runs {
      script.begin(scope, label: 1, instance: 100 + scope)
      script.read(1, 1, in: scope)
      script.end(scope)
      script.install(scope)
    }
    script.freed(1)
    let (replay, facts) = script.replay()
    let ended = facts.compactMap { fact -> UInt32? in
      if case .cancel(let cancel) = fact, cancel.reason == .objectsFreed { return cancel.scope }
      return nil
    }
    #expect(ended == Array(runs))
    #expect(replay.liveRunCount == 0)
  }

  @Test("a subscriber list's compaction keeps what an array's filter keeps, in order, across its inlined part")
  func subscriberListRemoveAll() {
    // Every length up to three times the inlined part, with removal patterns that take from the inlined part, from
    // the rest, from both and none: the list against a plain array filtered the same way.
    for length in 0...(3 * ReplayMachine.SubscriberList.inlined) {
      for pattern in 0..<6 {
        var list = ReplayMachine.SubscriberList()
        let scopes = (0..<length).map { UInt32(100 + $0) }
        for scope in scopes { list.append(scope) }
        let removed: (UInt32) -> Bool = { scope in
          let index = Int(scope) - 100
          switch pattern {
          case 0: return false
          case 1: return true
          case 2: return index % 2 == 0
          case 3: return index < ReplayMachine.SubscriberList.inlined
          case 4: return index >= 3 && index % 3 != 0
          default: return index == length - 1
          }
        }
        var calls: [UInt32] = []
        list.removeAll { scope in
          calls.append(scope)
          return removed(scope)
        }
        let expected = scopes.filter { !removed($0) }
        #expect(calls == scopes, "length \(length), pattern \(pattern): each asked once, in order")
        #expect(list.scopes == expected, "length \(length), pattern \(pattern)")
        #expect(list.count == expected.count)
        // Appending after a compaction goes on from the kept ones.
        list.append(7)
        #expect(list.scopes == expected + [7])
        var visited: [UInt32] = []
        list.forEach { visited.append($0) }
        #expect(visited == expected + [7])
      }
    }
  }

  @Test("a scope's reads by property count every read, the latest ones too, whenever the statistics are read")
  func scopeReadsCounted() {
    var script = EventScript()
    script.created(1)
    script.created(2)
    script.begin(1, label: 1)
    script.read(1, 1, in: 1)
    script.read(2, 1, in: 1)
    script.read(1, 2, in: 1)
    script.read(2, 2, in: 1)
    script.read(1, 1, in: 1)
    script.end(1)
    var replay = Replay()
    for (index, event) in script.events.enumerated() {
      replay.consume(event)
      if index == 4 { #expect(replay.scopes[1]?.reads == [1: 2]) }
    }
    #expect(replay.scopes[1]?.reads == [1: 3, 2: 2])
    #expect(replay.statistics.scopes[1]?.reads == [1: 3, 2: 2])
  }

  @Test("a replay that keeps no graph edges gives the same statistics and findings, and no edges")
  func withoutEdges() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1), (1, 2)])
    script.write(1, 1, firing: [1], unchanged: true)
    script.run(2, label: 1, reads: [(1, 1)])
    script.write(1, 2, unchanged: false)
    var with = Replay()
    var without = Replay(collectsEdges: false)
    for event in script.events {
      with.consume(event)
      without.consume(event)
    }
    #expect(!with.readEdges.isEmpty && !with.invalidationEdges.isEmpty)
    #expect(without.readEdges.isEmpty && without.invalidationEdges.isEmpty)
    #expect(Array(with.properties.map(\.value)) == Array(without.properties.map(\.value)))
    #expect(Array(with.scopes.map(\.value)) == Array(without.scopes.map(\.value)))
    let definitions = TraceDefinitions()
    let findings = (
      TraceAnalysis.findings(of: with, definitions: definitions),
      TraceAnalysis.findings(of: without, definitions: definitions)
    )
    #expect(findings.0 == findings.1 && !findings.0.isEmpty)
  }
}

@Suite("Replay memory of freed objects and ended instances")
struct ChurnMemoryTests {
  /// `count` short-lived models, as tryout14's Churn makes them: each created, tracked once by one call, every
  /// other one written (which fires its tracking), then freed. Instances as the recorder gives them: a run after a
  /// fire continues the fired instance, any other is a new one.
  static func churn(_ count: Int) -> EventScript {
    var script = EventScript()
    var nextSerial: UInt32 = 1
    var waiting: UInt32?
    for index in 0..<count {
      let object = UInt32(1_000 + index)
      script.created(object)
      let scope = nextSerial
      let instance: UInt32
      if let fired = waiting {
        instance = fired
        waiting = nil
        nextSerial += 1
      } else {
        instance = scope + 1
        nextSerial += 2
      }
      script.run(scope, label: 1, reads: [(object, 1)], instance: instance)
      if index % 2 == 0 {
        script.write(object, 1, firing: [scope])
        waiting = instance
      }
      script.freed(object)
    }
    return script
  }

  @Test("short-lived models, each tracked once and freed (tryout14's H18): what the replay holds stays flat, every count whole")
  func freedObjectsAndEndedInstancesAreDropped() {
    let count = 40_000
    let (replay, _) = Self.churn(count).replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    let scope = replay.scopes[1]
    #expect(scope?.runs == count && scope?.instances == count / 2 && scope?.invalidations == count / 2)
    #expect(replay.properties[1]?.writes == count / 2 && replay.properties[1]?.invalidations == count / 2)
    #expect(replay.typeStatistics[1]?.created == count && replay.typeStatistics[1]?.freed == count)
    // Before: every freed object's property state (and array slots over every serial), every ended instance.
    let objects = replay.machine.perObjectSizes
    #expect(objects.objects == 0 && objects.keyObjects == 0 && objects.subscribers == 0, "\(objects)")
    #expect(objects.slots <= 2 * RecentTable<Int>.window + RecentTable<Int>.step, "\(objects)")
    let instances = replay.machine.instanceTableSizes
    #expect(instances.instances <= 1 && instances.awaiting <= 1, "\(instances)")
    #expect(replay.machine.instanceSlots <= 2 * RecentTable<Int>.window + RecentTable<Int>.step)
    #expect(replay.machine.liveRunCount == 0)
  }
}
