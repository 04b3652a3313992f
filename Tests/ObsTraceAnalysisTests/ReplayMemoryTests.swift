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
