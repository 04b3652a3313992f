import Testing

@testable import ObsTraceAnalysis

@Suite("ID map")
struct IDMapTests {
  @Test("inserts, replacements, in-place changes and removals in any order find what a dictionary finds")
  func sameAsDictionary() {
    var map = IDMap<[Int]>()
    var model: [UInt32: [Int]] = [:]
    // A fixed generator: the same sequence at every run; ids from a small range (collisions, clusters, removals
    // in the middle of runs of probed slots) and from the whole range.
    var state: UInt64 = 0x1234_5678
    func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state >> 33
    }
    for step in 0..<200_000 {
      let id = next() % 4 == 0 ? UInt32(truncatingIfNeeded: next()) : UInt32(next() % 3_000)
      switch next() % 5 {
      case 0, 1:
        map[id] = [step]
        model[id] = [step]
      case 2:
        #expect(map.removeValue(forKey: id) == model.removeValue(forKey: id))
      case 3:
        let changed = map.withExisting(id) { value -> Int in
          value.append(step)
          return value.count
        }
        if model[id] != nil { model[id]!.append(step) }
        #expect(changed == model[id]?.count)
      default:
        map.withValue(id, default: { [] }) { $0.append(-step) }
        model[id, default: []].append(-step)
      }
      #expect(map[id] == model[id])
      #expect(map.count == model.count)
    }
    // Every entry is found, none other, and the walk is in id order.
    for (id, value) in model { #expect(map[id] == value) }
    let sorted = map.sortedEntries()
    #expect(sorted.map(\.key) == model.keys.sorted())
    #expect(sorted.allSatisfy { model[$0.key] == $0.value })
    #expect(Set(map.keys) == Set(model.keys))
  }

  @Test("emptied by removals, it finds nothing and takes entries again")
  func emptied() {
    var map = IDMap<Int>()
    for id in UInt32(0)..<1_000 { map[id * 7919] = Int(id) }
    for id in UInt32(0)..<1_000 { #expect(map.removeValue(forKey: id * 7919) == Int(id)) }
    #expect(map.isEmpty && map.count == 0 && map[0] == nil && map.keys.isEmpty)
    map[UInt32.max] = 1
    #expect(map[UInt32.max] == 1 && map.count == 1)
  }
}
