import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

/// Observation calls a one-shot tracking's onChange from the willSet that fires it and cancels the tracking after
/// the handler returns; each willSet takes the observers under the registrar's lock and calls them outside it. So
/// the tracking fires again at a willSet that comes while its handler runs (a write in the handler: nested) or that
/// took the observers before the cancel (another thread's write at once: concurrent). Each is an invalidation; a
/// fire that Observation could not have made is still an anomaly.
@Suite("Fires again of one-shot tracking")
struct RepeatedFireTests {
  func fires(_ facts: [ReplayFact]) -> [FireFact] {
    facts.compactMap { fact -> FireFact? in
      if case .fire(let fire) = fact { return fire }
      return nil
    }
  }

  func writes(_ facts: [ReplayFact]) -> [WriteFact] {
    facts.compactMap { fact -> WriteFact? in
      if case .write(let write) = fact { return write }
      return nil
    }
  }

  func cancel(_ scope: UInt32, thread: UInt32 = 1) -> TraceEvent {
    TraceEvent(kind: .trackingCancelled, flags: EventFlags.cancelledByFire, thread: thread, time: 0, scope: scope)
  }

  func fire(_ scope: UInt32, by object: UInt32, _ property: UInt32, thread: UInt32) -> TraceEvent {
    TraceEvent(kind: .trackingFired, thread: thread, time: 0, object: object, key: property, scope: scope)
  }

  @Test("a write inside the handler to what the scope read fires it again, nested: two invalidations, no anomaly")
  func nestedWriteInTheHandler() throws {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)], instance: 2)
    // The outer write fires scope 1; its handler writes the same property, which fires it again before the cancel.
    script.beginWrite(1, 1, firing: [1], oneShot: false)
    script.beginWrite(1, 1, firing: [1], oneShot: true)
    script.finishWrite(1, 1, unchanged: false)
    script.events.append(cancel(1))
    script.finishWrite(1, 1, unchanged: false)
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    #expect(replay.scopes[1]?.invalidations == 2)
    #expect(replay.properties[1]?.invalidations == 2)
    #expect(fires(facts).map(\.again) == [nil, .nested])
    #expect(fires(facts).map(\.cause) == [PropertyKey(object: 1, property: 1), PropertyKey(object: 1, property: 1)])
    // The inner write (stated first: its didSet came first) fired the scope again; the outer fired it first.
    let stated = writes(facts)
    try #require(stated.count == 2)
    #expect(stated[0].fired.map(\.scope) == [1] && stated[0].firedAgain.map(\.how) == [.nested])
    #expect(stated[1].fired.map(\.scope) == [1] && stated[1].firedAgain.isEmpty)
    let findings = TraceAnalysis.findings(of: replay, definitions: TraceDefinitions())
    #expect(!findings.contains { $0.kind == .inconsistentTrace })
  }

  @Test(
    "two threads writing at once fire one tracking twice: the second thread's write began before the cancel, whether its fire comes before or after the cancel, or after the first thread moved on",
    arguments: ["during the handler", "before the next event", "after the next event"])
  func concurrentWrites(when: String) {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)], instance: 2)
    // Thread 2's willSet takes the observers; thread 1's write fires the scope first.
    script.beginWrite(1, 1, thread: 2)
    script.beginWrite(1, 1, firing: [1], oneShot: false, thread: 1)
    switch when {
    case "during the handler":
      script.events.append(fire(1, by: 1, 1, thread: 2))
      script.events.append(cancel(1, thread: 1))
    case "before the next event":
      script.events.append(cancel(1, thread: 1))
      script.events.append(fire(1, by: 1, 1, thread: 2))
    default:
      script.events.append(cancel(1, thread: 1))
      script.finishWrite(1, 1, unchanged: false, thread: 1)
      script.events.append(fire(1, by: 1, 1, thread: 2))
    }
    script.events.append(cancel(1, thread: 2))
    if when != "after the next event" { script.finishWrite(1, 1, unchanged: false, thread: 1) }
    script.finishWrite(1, 1, unchanged: false, thread: 2)
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    #expect(replay.scopes[1]?.invalidations == 2)
    #expect(replay.properties[1]?.invalidations == 2)
    #expect(fires(facts).map(\.again) == [nil, .concurrent])
    #expect(fires(facts).map(\.thread) == [1, 2])
    #expect(writes(facts).first { $0.thread == 2 }?.firedAgain.map(\.how) == [.concurrent])
  }

  @Test(
    "a fire Observation could not have made is still a fire of an unknown scope: by a write begun after the cancel, on another thread or the same"
  )
  func fireAfterTheCancelIsAnAnomaly() {
    for thread: UInt32 in [1, 2] {
      var script = EventScript()
      script.created(1)
      script.run(1, label: 1, reads: [(1, 1)], instance: 2)
      script.write(1, 1, firing: [1])
      // A later write: its willSet came after the cancel, which Observation made before thread 1's didSet.
      script.beginWrite(1, 1, thread: thread)
      script.events.append(fire(1, by: 1, 1, thread: thread))
      script.finishWrite(1, 1, thread: thread)
      let (replay, facts) = script.replay()
      #expect(replay.anomalies == [.fireOfUnknownScope: 1], "thread \(thread)")
      #expect(replay.scopes[1]?.invalidations == 1, "thread \(thread)")
      #expect(fires(facts).map(\.again) == [nil], "thread \(thread)")
    }
    // And one of a scope that never fired (nor began).
    var script = EventScript()
    script.created(1)
    script.beginWrite(1, 1)
    script.events.append(fire(9, by: 1, 1, thread: 1))
    script.finishWrite(1, 1)
    #expect(script.replay().0.anomalies == [.fireOfUnknownScope: 1])
  }

  @Test(
    "an outer write whose willSet took the observers before a nested write fired the scope fires it again after the cancel, on the same thread"
  )
  func outerWriteAfterTheNestedFire() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1), (1, 2)], instance: 3)
    script.run(2, label: 2, reads: [(1, 1)], instance: 4)
    // Property 1's willSet takes both observers; scope 2's handler, called first, writes property 2, which fires
    // scope 1 (its handler returns, the cancel follows); then the outer willSet calls scope 1's observer it took.
    script.beginWrite(1, 1, firing: [2], oneShot: false)
    script.write(1, 2, firing: [1])
    script.events.append(cancel(2))
    script.events.append(fire(1, by: 1, 1, thread: 1))
    script.events.append(cancel(1))
    script.finishWrite(1, 1)
    let (replay, facts) = script.replay()
    #expect(replay.anomalies.isEmpty, "\(replay.anomalies)")
    #expect(replay.scopes[1]?.invalidations == 2 && replay.scopes[2]?.invalidations == 1)
    #expect(fires(facts).map(\.again) == [nil, nil, .nested])
  }

  @Test("what the replay keeps of fired trackings goes once no write in progress may still fire them")
  func firedTrackingsAreDropped() {
    var script = EventScript()
    script.created(1)
    for scope in UInt32(1)...5_000 {
      script.run(scope, label: 1, reads: [(1, 1)], instance: scope + 100_000)
      script.write(1, 1, firing: [scope])
    }
    let (replay, _) = script.replay()
    #expect(replay.anomalies.isEmpty)
    #expect(replay.scopes[1]?.invalidations == 5_000)
    #expect(replay.machine.firedTrackingCount == 0)
  }
}
