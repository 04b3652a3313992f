import Testing

@testable import ObsTraceAnalysis

@Suite("Recent table")
struct RecentTableTests {
  @Test("ids that come and go in increasing order are held in a window the size of the live ones, not of all ids")
  func windowSlides() {
    var table = RecentTable<Int>()
    var largest = 0
    for id in UInt32(1)...200_000 {
      table[id] = Int(id)
      // A few live at a time: each entry goes ten ids later.
      if id > 10 { #expect(table.remove(id - 10) == Int(id - 10)) }
      largest = max(largest, table.slots)
    }
    #expect(table.count == 10)
    #expect(largest <= 2 * RecentTable<Int>.window + RecentTable<Int>.step)
    for id in UInt32(199_991)...200_000 { #expect(table[id] == Int(id)) }
    #expect(table[199_990] == nil && table[5] == nil)
  }

  @Test("an entry that outlives the window (a long-lived run) stays, found and changed in place, and goes when removed")
  func longLivedEntry() {
    var table = RecentTable<[Int]>()
    table[3] = [3]
    for id in UInt32(4)...50_000 {
      table[id] = [Int(id)]
      table.remove(id)
    }
    #expect(table.count == 1)
    #expect(table.contains(3) && table[3] == [3])
    #expect(table.withExisting(3) { $0.append(4) } != nil)
    #expect(table[3] == [3, 4])
    #expect(table.remove(3) == [3, 4])
    #expect(table.count == 0 && !table.contains(3) && table.withExisting(3) { _ in 1 } == nil)
  }

  @Test("a forged id far past the others costs no slots, and ids before the window are still placed")
  func forgedAndEarlierIDs() {
    var table = RecentTable<Int>()
    table[100] = 1
    table[4_000_000_000] = 2
    table[7] = 3
    #expect(table.slots < 1_000)
    #expect(table[100] == 1 && table[4_000_000_000] == 2 && table[7] == 3 && table.count == 3)
    table[4_000_000_000] = nil
    #expect(table[4_000_000_000] == nil && table.count == 2)
  }

  @Test(
    "a table that holds nothing starts its window again at an id far past it, not in the dictionary (the fired trackings': each kept a short while, ids far apart)"
  )
  func emptyTableStartsAgain() {
    var table = RecentTable<Int>()
    var id: UInt32 = 1
    for round in 0..<100 {
      table[id] = round
      // In the array: before, every id after the first went to the dictionary (a hash per look).
      #expect(table.outsideCount == 0 && table.slots <= RecentTable<Int>.step + 1)
      #expect(table.withExisting(id) { $0 += 1 } != nil)
      #expect(table[id] == round + 1 && table.count == 1)
      #expect(table.remove(id) == round + 1 && table.isEmpty)
      id += 10_000
    }
    // An earlier id with one entry live is still placed (aside), and found.
    table[id] = 1
    table[5] = 2
    #expect(table[id] == 1 && table[5] == 2 && table.count == 2)
  }

  @Test(
    "an entry placed far past the window's end is found after the window grows over it, and goes when removed (replay17's placement bug)"
  )
  func entryCoveredByGrowth() {
    var table = RecentTable<Int>()
    table[1] = 1
    // Past the end by more than the window: kept aside, not in the array.
    let far: UInt32 = 5_000
    table[far] = -1
    #expect(table.contains(far) && table[far] == -1)
    // Ids placed one after another grow the array over it (all live: no cut).
    for id in UInt32(2)...6_000 where id != far { table[id] = Int(id) }
    #expect(table.count == 6_000)
    #expect(table.slots >= 6_000 - 1)
    // Found, changed in place and removed in its slot; before, the array's empty slot shadowed it.
    #expect(table.contains(far) && table[far] == -1)
    #expect(table.withExisting(far) { $0 -= 1 } != nil)
    #expect(table[far] == -2)
    #expect(table.ids.filter { $0 == far }.count == 1)
    #expect(table.remove(far) == -2)
    #expect(!table.contains(far) && table[far] == nil && table.count == 5_999)
    // Put again: one entry, in one place.
    table[far] = 7
    #expect(table.count == 6_000 && table[far] == 7 && table.remove(far) == 7 && table.count == 5_999)
  }

  @Test(
    "forEachEntry and ids give each entry once, in id order: the window's and those aside on both sides of it, merged")
  func entriesInIDOrder() {
    var table = RecentTable<Int>()
    var expected: [UInt32: Int] = [:]
    func put(_ id: UInt32, _ value: Int) {
      table[id] = value
      expected[id] = value
    }
    // A long-lived entry left before the window, a forged one far past it, and the window's own.
    put(3, -3)
    for id in UInt32(4)...20_000 {
      put(id, Int(id))
      if id % 50 != 0 {
        table.remove(id)
        expected[id] = nil
      }
    }
    put(4_000_000_000, 1)
    #expect(table.outsideCount >= 2 && table.slots > 0)
    var visited: [(UInt32, Int)] = []
    table.forEachEntry { visited.append(($0, $1)) }
    let sorted = expected.sorted { $0.key < $1.key }
    #expect(visited.map(\.0) == sorted.map(\.key) && visited.map(\.1) == sorted.map(\.value))
    #expect(table.ids == sorted.map(\.key))
    // Nothing aside: the window alone.
    var window = RecentTable<Int>()
    for id in UInt32(10)..<20 { window[id] = Int(id) }
    #expect(window.outsideCount == 0 && window.ids == Array(UInt32(10)..<20))
  }

  @Test(
    "ids met out of order below the window's start (a fan-out's trackings, fired in Observation's order) and live entries spread over many ids (instances waiting to be re-tracked) stay in the array, not aside"
  )
  func outOfOrderAndSpreadIDs() {
    // 4,096 scopes fired in an order of their own: the first is in the middle, half of them come before it.
    var fired = RecentTable<Int>()
    let ids = (0..<4_096).map { UInt32(1_000 + ($0 * 1_237 + 2_048) % 4_096) }
    for id in ids { fired[id] = Int(id) }
    // Before: the 2,048 below the first id went to the dictionary (a hash for each look).
    #expect(fired.outsideCount == 0 && fired.count == 4_096)
    #expect(fired.slots <= 2 * RecentTable<Int>.window + RecentTable<Int>.step)
    #expect(ids.allSatisfy { fired[$0] == Int($0) } && fired.ids == ids.sorted())
    // Live entries one in ten ids: before, the window was cut at four slots a live entry, the rest aside.
    var spread = RecentTable<Int>()
    for id in stride(from: UInt32(1), to: 200_000, by: 10) { spread[id] = Int(id) }
    #expect(spread.outsideCount == 0 && spread.count == 20_000)
    #expect(spread.slots <= 200_000 + RecentTable<Int>.step)
    // Once an entry was cut off, ids before the window go aside as before (a long-lived run is not moved back).
    var cut = RecentTable<Int>()
    cut[10] = 10
    for id in UInt32(11)...100_000 {
      cut[id] = Int(id)
      cut.remove(id)
    }
    #expect(cut.outsideCount == 1)
    cut[50_000] = 1
    #expect(cut.outsideCount == 2 && cut[50_000] == 1 && cut[10] == 10)
  }
}

@Suite("Finding order")
struct FindingOrderTests {
  @Test("findings equal in all but their message are ordered by it, whatever order they came in")
  func tiesByMessage() {
    func alive(_ type: String) -> Finding {
      Finding(
        kind: .aliveAtEnd, property: nil, scope: nil, site: nil, count: 1,
        message: "1 \(type) object was alive at the end", hint: "")
    }
    let dog = alive("Dog")
    let shop = alive("Shop")
    // The two orders the dictionaries they were gathered in could give: one answer.
    #expect(Findings.sorted([shop, dog]).map(\.message) == Findings.sorted([dog, shop]).map(\.message))
    #expect(Findings.sorted([shop, dog]).map(\.message) == [dog.message, shop.message])
  }
}
