import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

@Suite("Key table and label counts")
struct KeyTableTests {
  @Test("a key table keeps each property of an object apart, the first inline and the others beside it")
  func keyTableProperties() {
    var table = KeyTable<[Int]>()
    let a = PropertyKey(object: 7, property: 3)
    let b = PropertyKey(object: 7, property: 1)
    let c = PropertyKey(object: 9, property: 1)
    table.withState(a, default: []) { $0.append(1) }
    table.withState(b, default: []) { $0.append(2) }
    table.withState(a, default: []) { $0.append(3) }
    table.withState(c, default: []) { $0.append(4) }
    #expect(table[a] == [1, 3] && table[b] == [2] && table[c] == [4])
    #expect(table[PropertyKey(object: 7, property: 2)] == nil && table[PropertyKey(object: 8, property: 3)] == nil)
    #expect(table.withExisting(PropertyKey(object: 9, property: 3)) { $0.append(5) } == nil)
    #expect(table.withExisting(b) { $0.append(6) } != nil)
    var all: [String] = []
    table.forEach { key, state in all.append("\(key.object).\(key.property)=\(state)") }
    #expect(all == ["7.3=[1, 3]", "7.1=[2, 6]", "9.1=[4]"])
  }

  @Test("counts by label stay exact when a property is read by more labels than the short list holds")
  func labelCounts() {
    var counts = LabelCounts()
    var expected: [UInt32: Int] = [:]
    for step in 0..<400 {
      let label = UInt32(step * 7 % (LabelCounts.listed * 3)) + 1
      counts.add(label)
      expected[label, default: 0] += 1
      if step == 10 || step == 20 || step == 399 {
        var seen: [UInt32: Int] = [:]
        counts.forEach { seen[$0] = $1 }
        let reached = expected
        #expect(seen == reached)
      }
    }
    #expect(expected.count > LabelCounts.listed)
  }
}

@Suite("A run's read set and a property's readers")
struct ReadSetTests {
  @Test("a run's keys stay distinct and in first-read order below and past the listed count, objects once each")
  func orderedKeys() {
    for distinct in [3, OrderedKeySet.listed, OrderedKeySet.listed + 1, 200] {
      var set = OrderedKeySet()
      var expected: [PropertyKey] = []
      for step in 0..<(distinct * 3) {
        let key = PropertyKey(object: UInt32(step % distinct / 2 + 1), property: UInt32(step % distinct % 2))
        let fresh = !expected.contains(key)
        if fresh { expected.append(key) }
        #expect(set.insert(key) == fresh)
      }
      #expect(set.elements == expected && set.count == expected.count)
      for key in expected { #expect(set.contains(key)) }
      #expect(!set.contains(PropertyKey(object: 999_999, property: 0)))
      var objects: [UInt32] = []
      set.forEachObject { objects.append($0) }
      var firstSeen: [UInt32] = []
      for key in expected where !firstSeen.contains(key.object) { firstSeen.append(key.object) }
      #expect(objects == firstSeen)
    }
  }

  @Test("a property's waiting instances by label: the first label in its plain state, the others beside it, each counted, removal of either")
  func waitingByLabel() {
    var overflow = ReplayMachine.KeyOverflow()
    var state = ReplayMachine.KeyState()
    let key = PropertyKey(object: 3, property: 1)
    func all() -> [UInt32: UInt32] {
      var result: [UInt32: UInt32] = [:]
      overflow.forEachWaiting(key, state) { label, count in result[label, default: 0] += count }
      return result
    }
    #expect(all().isEmpty && !overflow.hasWaiting(state))
    for label: UInt32 in [7, 9, 7, 11, 9, 7] { overflow.addWaiting(label, key, &state) }
    #expect(all() == [7: 3, 9: 2, 11: 1] && overflow.hasWaiting(state))
    #expect(state.waitingLabel == 7 && state.overflow & ReplayMachine.KeyState.moreReaders != 0)
    for _ in 0..<3 { overflow.removeWaiting(7, key, &state) }
    #expect(all() == [9: 2, 11: 1])
    // The plain state is free: a label counted beside it goes on being counted there, not twice.
    overflow.addWaiting(9, key, &state)
    #expect(all() == [9: 3, 11: 1] && state.waitingInstances == 0)
    overflow.removeWaiting(42, key, &state)
    for _ in 0..<3 { overflow.removeWaiting(9, key, &state) }
    #expect(all() == [11: 1])
    overflow.removeWaiting(11, key, &state)
    #expect(all().isEmpty && !overflow.hasWaiting(state) && state.overflow == 0 && overflow.waiting.isEmpty)
  }

  @Test("a property's writers in progress: the first in its plain state, more at once beside it, in order")
  func writingThreads() {
    var overflow = ReplayMachine.KeyOverflow()
    var state = ReplayMachine.KeyState()
    let key = PropertyKey(object: 3, property: 1)
    #expect(!overflow.isWritten(byOtherThan: 1, key, state))
    overflow.beginWrite(on: 1, key, &state)
    #expect(!overflow.isWritten(byOtherThan: 1, key, state) && overflow.isWritten(byOtherThan: 2, key, state))
    overflow.beginWrite(on: 2, key, &state)
    overflow.beginWrite(on: 3, key, &state)
    #expect(overflow.isWritten(byOtherThan: 1, key, state))
    overflow.endWrite(on: 1, key, &state)
    #expect(state.writingThread == 2 && overflow.isWritten(byOtherThan: 2, key, state))
    overflow.endWrite(on: 3, key, &state)
    #expect(!overflow.isWritten(byOtherThan: 2, key, state) && state.overflow == 0)
    overflow.endWrite(on: 2, key, &state)
    #expect(state.writingThread == TraceFormat.reservedThread && overflow.writingThreads.isEmpty)
  }
}
