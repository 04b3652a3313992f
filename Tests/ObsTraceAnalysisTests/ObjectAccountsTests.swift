import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

@Suite("Object accounts")
struct ObjectAccountsTests {
  /// Registrars named by their first read, bound to another object, freed unused or left unused; an object used
  /// without its creation in the trace; objects created, used on other threads, freed or left alive.
  static var script: EventScript {
    var script = EventScript()
    script.registrarCreated(10, stack: 7)
    script.read(10, 1)  // names it: an object of type 1, created with stack 7
    script.registrarCreated(11, stack: 8)
    script.bound(11, to: 10)  // a further level of object 10: not an object of its own
    script.freed(11, type: 0)
    script.registrarCreated(12, stack: 9)  // never used: a registrar without events, alive at the end
    script.registrarCreated(13, stack: 9)
    script.freed(13, type: 0)  // never used, freed
    script.read(20, 1, thread: 2)  // used, its creation not in the trace: from before
    script.created(30, type: 2, thread: 3)
    script.read(30, 1, thread: 3)
    script.freed(30, type: 2, thread: 3)
    script.created(40, type: 2)
    script.read(10, 1)  // object 10 used again, after object 40 was created
    return script
  }

  @Test("each object's type, creation stack, threads, turns and life are accounted as its events say")
  func accountsThroughAnObjectsLife() {
    var machine = ReplayMachine()
    var ignoring = IgnoringConsumer()
    for event in Self.script.events { machine.consume(event, into: &ignoring) }
    machine.finish(into: &ignoring)

    #expect(machine.liveObjectSerials.map(\.serial) == [10, 40])
    #expect(machine.liveObjectSerials.map(\.type) == [1, 2])
    #expect(machine.liveRegistrarsWithoutEvents.map(\.serial) == [12])
    #expect(machine.liveRegistrarsWithoutEvents.map(\.stack) == [9])
    #expect(machine.registrarsWithoutEvents == [9: RegistrarStatistics(created: 2, freed: 1)])
    #expect(
      machine.typeStatistics == [
        1: TypeStatistics(created: 1, freed: 0, seenOnly: 1), 2: TypeStatistics(created: 2, freed: 1),
      ])
    #expect(machine.objectsFromBefore == 1)
    #expect(machine.creationStack(ofObject: 10) == 7)
    #expect(machine.creationStack(ofObject: 11) == 0)
    #expect(machine.creationStack(ofObject: 40) == 0)
    #expect(machine.threadBits(ofObject: 10) == ReplayMachine.threadBit(1))
    #expect(machine.threadBits(ofObject: 20) == ReplayMachine.threadBit(2))
    #expect(machine.threadBits(ofObject: 30) == 0)
    #expect(machine.type(ofObject: 10) == 1)
    #expect(machine.type(ofObject: 20) == 1)
    #expect(machine.type(ofObject: 12) == 0)
    #expect(machine.type(ofObject: 30) == 0)
    // Moments: each creation is one (10, 11, 12, 13, 30, 40: 1 to 6); object 10 was last used after 40's creation.
    #expect(machine.turns(ofObject: 10) == ObjectTurns(created: 0, createdAt: 1, lastUsedAt: 6))
    #expect(machine.turns(ofObject: 40) == ObjectTurns(created: 0, createdAt: 6, lastUsedAt: 6))
    #expect(machine.turns(ofObject: 20) == nil)
    #expect(machine.turns(ofObject: 30) == nil)
    #expect(machine.turns(ofObject: 11) == nil)
  }

  @Test("without accounts (the timeline's machine), only types are kept, and every fact is the same")
  func withoutAccountsOnlyTypes() {
    var accounted = ReplayMachine()
    var unaccounted = ReplayMachine(accountsObjects: false)
    var accountedFacts: [String] = []
    var unaccountedFacts: [String] = []
    var first = ClosureConsumer { accountedFacts.append(String(describing: $0)) }
    var second = ClosureConsumer { unaccountedFacts.append(String(describing: $0)) }
    for event in Self.script.events {
      accounted.consume(event, into: &first)
      unaccounted.consume(event, into: &second)
    }
    #expect(accountedFacts == unaccountedFacts)
    #expect(unaccounted.type(ofObject: 10) == 1)
    #expect(unaccounted.type(ofObject: 20) == 1)
    #expect(unaccounted.type(ofObject: 40) == 2)
    #expect(unaccounted.liveObjectSerials.isEmpty)
    #expect(unaccounted.objectsFromBefore == 0)
    #expect(unaccounted.threadBits(ofObject: 10) == 0)
    #expect(unaccounted.turns(ofObject: 10) == nil)
  }
}
