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
