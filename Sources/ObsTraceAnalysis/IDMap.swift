/// A table of values by `UInt32` id, the entries `RecentTable` keeps out of its array (long-lived ones, ids far
/// from the window): open addressing over a power-of-two array of ids, probed linearly, and deletion by shifting
/// the entries after a hole back (no tombstones, so a table that entries pass through does not fill with them).
///
/// Not `Dictionary`: a re-tracking trace passes ≈ 2 million entries through these tables, and each lookup of a
/// `[UInt32: Value]` hashed the id with SipHash (`Hasher._hash`, ≈ 75 instructions) and then searched: 14 % of the
/// replaying thread's instructions on the re-track trace (callgrind). Here an id is mixed by a bijective 64-bit
/// finalizer with a seed drawn when the table first allocates, so that ids a forged trace picks cannot be made to
/// collide without knowing it; ids met in sequence spread over the slots.
///
/// Entries have no order: `sortedEntries` walks them by id.
struct IDMap<Value> {
  /// `UInt64(id)` of each slot's entry, or `empty`.
  private var ids: [UInt64] = []
  /// The entry of each slot whose id is not `empty`.
  private var values: [Value?] = []
  /// Entries in the table.
  private(set) var count = 0
  /// 64 minus the base-2 logarithm of the slots: the mixed id's top bits are its home slot.
  private var shift: UInt64 = 64
  private var seed: UInt64 = 0

  private static var empty: UInt64 { .max }

  var isEmpty: Bool { count == 0 }

  /// The slot an id is looked for from.
  @inline(__always)
  private func home(_ id: UInt64) -> Int {
    var mixed = id ^ seed
    mixed ^= mixed >> 33
    mixed &*= 0xFF51_AFD7_ED55_8CCD
    mixed ^= mixed >> 33
    mixed &*= 0xC4CE_B9FE_1A85_EC53
    mixed ^= mixed >> 33
    return Int(truncatingIfNeeded: mixed >> shift)
  }

  /// The slot holding `id`, or nil.
  @inline(__always)
  private func slot(of id: UInt32) -> Int? {
    guard count > 0 else { return nil }
    let key = UInt64(id)
    let mask = ids.count - 1
    return ids.withUnsafeBufferPointer { ids in
      var index = home(key)
      while true {
        let found = ids[index]
        if found == key { return index }
        if found == Self.empty { return nil }
        index = (index + 1) & mask
      }
    }
  }

  subscript(id: UInt32) -> Value? {
    get {
      guard let index = slot(of: id) else { return nil }
      return values[index]
    }
    set {
      guard let newValue else {
        removeValue(forKey: id)
        return
      }
      insert(id, newValue)
    }
  }

  /// Puts `value` in as the entry of `id` (replacing the one it had).
  mutating func insert(_ id: UInt32, _ value: consuming Value) {
    if let index = slot(of: id) {
      values[index] = consume value
      return
    }
    if (count + 1) * 4 > ids.count * 3 { grow() }
    let key = UInt64(id)
    let mask = ids.count - 1
    var index = home(key)
    while ids[index] != Self.empty { index = (index + 1) & mask }
    ids[index] = key
    values[index] = consume value
    count += 1
  }

  /// Mutates the value of `id` in place; nil (and `body` not called) when there is none.
  mutating func withExisting<Result>(_ id: UInt32, _ body: (inout Value) -> Result) -> Result? {
    guard let index = slot(of: id) else { return nil }
    return values.withWrapped(at: index, body)
  }

  /// Mutates the value of `id` in place, created from `value` when absent.
  mutating func withValue<Result>(_ id: UInt32, default value: () -> Value, _ body: (inout Value) -> Result) -> Result
  {
    if slot(of: id) == nil { insert(id, value()) }
    return values.withWrapped(at: slot(of: id)!, body)!
  }

  /// Removes the entry of `id` and returns it (moved out), if there is one.
  @discardableResult
  mutating func removeValue(forKey id: UInt32) -> Value? {
    guard var hole = slot(of: id) else { return nil }
    let removed = values[hole].take()
    let mask = ids.count - 1
    // The entries after the hole, up to an empty slot, that may live in it (their home is not between the hole and
    // them) move back into it; the last hole is emptied.
    var next = (hole + 1) & mask
    while ids[next] != Self.empty {
      let wanted = home(ids[next])
      if (next &- wanted) & mask >= (next &- hole) & mask {
        ids[hole] = ids[next]
        values[hole] = values[next].take()
        hole = next
      }
      next = (next + 1) & mask
    }
    ids[hole] = Self.empty
    count -= 1
    return removed
  }

  /// The ids with an entry, in no order.
  var keys: [UInt32] {
    var result: [UInt32] = []
    result.reserveCapacity(count)
    for id in ids where id != Self.empty { result.append(UInt32(id)) }
    return result
  }

  /// The entries in increasing order of id.
  func sortedEntries() -> [(key: UInt32, value: Value)] {
    var result: [(key: UInt32, value: Value)] = []
    result.reserveCapacity(count)
    for index in ids.indices where ids[index] != Self.empty { result.append((UInt32(ids[index]), values[index]!)) }
    result.sort { $0.key < $1.key }
    return result
  }

  /// Twice the slots (16 at first), every entry placed again.
  private mutating func grow() {
    if ids.isEmpty { seed = UInt64.random(in: 0...UInt64.max) }
    let slots = Swift.max(16, ids.count * 2)
    let oldIDs = ids
    var oldValues = values
    ids = Array(repeating: Self.empty, count: slots)
    values = Array(repeating: nil, count: slots)
    shift = UInt64(64 - slots.trailingZeroBitCount)
    count = 0
    for index in oldIDs.indices where oldIDs[index] != Self.empty {
      insert(UInt32(oldIDs[index]), oldValues[index].take()!)
    }
  }
}
