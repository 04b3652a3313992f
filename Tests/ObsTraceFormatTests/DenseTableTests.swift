import Testing

@testable import ObsTraceFormat

@Suite("Dense table")
struct DenseTableTests {
  @Test("an id near 2^32 from a file costs one entry, not an array of its size")
  func forgedIDs() {
    var table = DenseTable<Int>()
    table[UInt32.max - 1] = 1
    table[1 << 28, default: 0] += 2
    table[1 << 24] = 3
    table[5] = 4
    #expect(table.count == 4)
    #expect(table.denseSlots < 10_000)
    #expect(table[UInt32.max - 1] == 1 && table[1 << 28] == 2 && table[1 << 24] == 3 && table[5] == 4)
    #expect(table.map(\.key) == [5, 1 << 24, 1 << 28, UInt32.max - 1])
    table[1 << 28] = nil
    #expect(table.count == 3 && table[1 << 28] == nil)
  }

  @Test("ids that entries justify stay in the array, and ids met early in the dictionary move into it")
  func denseIDs() {
    var table = DenseTable<Int>()
    table[20_000] = 7  // beyond what one entry justifies: kept aside
    #expect(table.denseSlots < 20_000)
    for id in UInt32(1)...30_000 where id != 20_000 { table[id] = Int(id) }
    #expect(table.count == 30_000)
    #expect(table.denseSlots > 25_000)
    #expect(table[20_000] == 7)
    #expect(Array(table.map(\.key)) == Array(UInt32(1)...30_000))
  }

  @Test(
    "ids that start far from 0 (object serials of a process that made many objects before recording) fill an array from the first of them, not from 0"
  )
  func idsFarFromZero() {
    var table = DenseTable<Int>()
    let first: UInt32 = 700_000
    for id in first..<(first + 100_000) { table[id] = Int(id) }
    #expect(table.count == 100_000)
    #expect(table.denseSlots >= 100_000 && table.denseSlots < 200_000)
    #expect(table.sparseCount == 0)
    // Ids below the first, met later and in descending order, move the array's start down once justified.
    for id in stride(from: first - 1, through: first - 30_000, by: -1) { table[id] = Int(id) }
    #expect(table.count == 130_000 && table.sparseCount == 0)
    #expect(table[first - 30_000] == Int(first - 30_000) && table[first + 99_999] == Int(first + 99_999))
    #expect(table[first - 30_001] == nil && table[first + 100_000] == nil && table[3] == nil)
    #expect(Array(table.map(\.key)) == Array((first - 30_000)..<(first + 100_000)))
  }

  @Test("removing an id that is not there places nothing: no array is sized for it, no start is fixed by it")
  func removingWhatIsNotThere() {
    var table = DenseTable<Int>()
    table[700_000] = nil
    table[UInt32.max] = nil
    #expect(table.isEmpty && table.denseSlots == 0 && table.sparseCount == 0)
    // The first entry still fixes the array's start; removals count down once.
    table[5] = 1
    table[1 << 30] = 2
    table[6] = nil
    table[5] = nil
    table[5] = nil
    table[1 << 30] = nil
    #expect(table.isEmpty && table[5] == nil && table[1 << 30] == nil)
    table[7] = 3
    #expect(table.count == 1 && table[7] == 3 && table.sparseCount == 0)
  }

  @Test("forEachEntry gives what iterating gives: array and dictionary entries merged in id order")
  func forEachEntryInIDOrder() {
    var table = DenseTable<Int>()
    table[50_000] = 1  // kept aside (one entry justifies no array that long)
    for id in UInt32(100)..<UInt32(400) where id % 3 != 0 { table[id] = Int(id) }
    table[3] = 2  // below the array's start, not justified: the dictionary
    table[UInt32.max] = 3
    table[250] = nil
    #expect(table.sparseCount >= 2)
    var visited: [(UInt32, Int)] = []
    table.forEachEntry { visited.append(($0, $1)) }
    let iterated = table.map { ($0.key, $0.value) }
    #expect(visited.map(\.0) == iterated.map(\.0) && visited.map(\.1) == iterated.map(\.1))
    #expect(visited.map(\.0) == visited.map(\.0).sorted() && visited.count == table.count)
    #expect(visited.first?.0 == 3 && visited.last?.0 == UInt32.max && !visited.contains { $0.0 == 250 })
    var dense = DenseTable<Int>()
    for id in UInt32(10)..<20 { dense[id] = Int(id) * 2 }
    var keys: [UInt32] = []
    dense.forEachEntry { id, value in
      keys.append(id)
      #expect(value == Int(id) * 2)
    }
    #expect(keys == Array(UInt32(10)..<20))
  }

  @Test("mutating in place counts an entry once, in the array and in the dictionary; withExisting creates nothing")
  func mutationInPlace() {
    var table = DenseTable<[Int]>()
    for id in [UInt32(3), 1 << 30] {
      table[id, default: []].append(1)
      table[id, default: []].append(2)
      table.withValue(id, default: []) { $0.append(3) }
      #expect(table.withExisting(id) { $0.append(4) } != nil)
      #expect(table[id] == [1, 2, 3, 4])
    }
    #expect(table.count == 2)
    #expect(table.withExisting(4) { $0.append(1) } == nil)
    #expect(table.withExisting(1 << 29) { $0.append(1) } == nil)
    #expect(table.count == 2 && table[4] == nil && table[1 << 29] == nil)
  }
}
