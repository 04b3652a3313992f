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
