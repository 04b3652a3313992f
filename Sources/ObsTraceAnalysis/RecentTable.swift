import ObsTraceFormat

/// A table keyed by ids handed out in increasing order of which only the recent ones stay live (the runs of scopes:
/// a run is held from its begin until its observers are cancelled, and a trace has millions of them): an array
/// over a window of ids, not a hash table, and a window that slides forward, so that memory follows the live
/// entries, not every id the trace ever named.
///
/// The array covers the ids from `base`; when it would grow past `density` slots a live entry (and past twice
/// `window` slots), its older half is cut off and the entries still live there (a long-lived run: an
/// `Observations` loop's) move to a dictionary, as do ids too far past its end (a forged id costs one dictionary
/// entry, never an array of its size). An id before the window moves the array's start down to it while nothing was
/// cut off (ids met a little out of order: Observation fires a write's trackings in an order of its own), within the
/// same limit; else it goes to the dictionary too.
struct RecentTable<Value> {
  /// Slots the array may hold whatever its live entries.
  static var window: Int { 4096 }
  /// Slots added at a time past the end.
  static var step: Int { 256 }
  /// Slots the array may hold per live entry: live entries spread over at most this many ids each stay in it.
  static var density: Int { 16 }

  private var values: [Value?] = []
  /// The id of the array's first slot.
  private var base = 0
  /// Entries in the array.
  private var live = 0
  /// Entries outside the array: before its window (long-lived) or far past its end.
  private var outside = IDMap<Value>()

  /// Entries in the table.
  var count: Int { live + outside.count }

  var isEmpty: Bool { live == 0 && outside.isEmpty }

  /// Slots of the array (for tests: memory follows the live entries).
  var slots: Int { values.count }

  /// Entries outside the array (for tests).
  var outsideCount: Int { outside.count }

  subscript(id: UInt32) -> Value? {
    @inline(__always) get {
      let index = Int(id) &- base
      if index >= 0 && index < values.count { return values[index] }
      return outside.isEmpty ? nil : outside[id]
    }
    set {
      guard let newValue else {
        remove(id)
        return
      }
      put(id, newValue)
    }
  }

  /// Puts `value` in as the entry of `id`, moved into its slot: the slot is tested in place, and the value is not
  /// copied (`table[id] = value` copies it into the optional it takes, then into the slot, retaining
  /// what it holds twice: ≈ 540 instructions a run on the 100 k-object trace, callgrind).
  @inline(__always)
  mutating func put(_ id: UInt32, _ value: consuming Value) {
    // In the window (the rule), the slot is found inline; `place` (out of line) only extends or slides it.
    var index = Int(id) &- base
    if index < 0 || index >= values.count {
      guard let placed = place(id) else {
        outside.insert(id, value)
        return
      }
      index = placed
    }
    let empty = values.withUnsafeMutableBufferPointer { slots -> Bool in
      if case .none = slots[index] { return true }
      return false
    }
    if empty { live += 1 }
    values[index] = consume value
  }

  /// Mutates the value of `id` in place (created from `value` when absent), moved into its slot, not copied.
  @inline(__always)
  mutating func withValue<Result>(
    _ id: UInt32, default value: @autoclosure () -> Value, _ body: (inout Value) -> Result
  ) -> Result {
    // In the window (the rule), the slot is found inline, as `DenseTable.withValue` finds its own: a call to `place`
    // on every lookup cost the loop's report 8 % more instructions than `DenseTable` (callgrind).
    var index = Int(id) &- base
    if index < 0 || index >= values.count {
      guard let placed = place(id) else { return withOutside(id, default: value, body) }
      index = placed
    }
    return values.withUnsafeMutableBufferPointer { slots in
      let slot = slots.baseAddress! + index
      if case .none = slot.pointee {
        slot.pointee = value()
        live += 1
      }
      return body(&slot.pointee!)
    }
  }

  /// `withValue` for an id outside the array. Out of line: long-lived and forged ids only.
  @inline(never)
  private mutating func withOutside<Result>(
    _ id: UInt32, default value: () -> Value, _ body: (inout Value) -> Result
  ) -> Result {
    outside.withValue(id, default: value, body)
  }

  /// Removes the entry of `id` and returns it (`remove`, as `DenseTable` names it).
  @inline(__always) @discardableResult
  mutating func removeValue(_ id: UInt32) -> Value? { remove(id) }

  /// Calls `body` with each entry in id order (the array's and the dictionary's, merged).
  func forEachEntry(_ body: (UInt32, Value) throws -> Void) rethrows {
    try values.forEachEntry(base: base, sorted: outside.isEmpty ? [] : outside.sortedEntries(), body)
  }

  /// The ids with an entry, in increasing order: a walk of the whole table, for the end of a replay.
  var ids: [UInt32] {
    var result: [UInt32] = []
    result.reserveCapacity(count)
    forEachEntry { id, _ in result.append(id) }
    return result
  }

  /// Whether `id` has an entry (its value is not copied out).
  @inline(__always)
  func contains(_ id: UInt32) -> Bool {
    let index = Int(id) &- base
    if index >= 0 && index < values.count {
      if case .some = values[index] { return true }
      return false
    }
    return !outside.isEmpty && outside[id] != nil
  }

  /// Mutates the value of `id` in place if there is one; nil (and `body` not called) when there is none.
  @inline(__always)
  mutating func withExisting<Result>(_ id: UInt32, _ body: (inout Value) -> Result) -> Result? {
    let index = Int(id) &- base
    if index >= 0 && index < values.count { return values.withWrapped(at: index, body) }
    guard !outside.isEmpty else { return nil }
    return outside.withExisting(id, body)
  }

  /// Removes the entry of `id` and returns it, if there is one (moved out, not copied).
  @discardableResult
  mutating func remove(_ id: UInt32) -> Value? {
    let index = Int(id) &- base
    if index >= 0 && index < values.count {
      guard let value = values[index].take() else { return nil }
      live -= 1
      return value
    }
    return outside.isEmpty ? nil : outside.removeValue(forKey: id)
  }

  /// The array slot of `id`, extending (and sliding) the window to it when it lies just past the end; nil when
  /// the id belongs in `outside`.
  @inline(never)
  private mutating func place(_ id: UInt32) -> Int? {
    var index = Int(id) &- base
    if index >= 0 && index < values.count { return index }
    if values.isEmpty {
      base = Int(id)
      values.append(nil)
      return 0
    }
    if live == 0 && index >= values.count + Self.window {
      // Nothing in the array: it starts again at `id`, not left behind with `id` in the dictionary (a table whose
      // entries live a short while, the fired trackings', meets ids far apart).
      values.removeAll(keepingCapacity: true)
      base = Int(id)
      index = 0
    }
    if index < 0 {
      // Before the window: down to it when nothing was cut off (ids met out of order, as Observation fires one
      // write's trackings in its own order) and the array stays within its limit; else aside (a long-lived entry).
      let shift = Swift.min(base, Swift.max(-index, values.count))
      guard outside.isEmpty, -index <= shift, values.count + shift <= Swift.max(2 * Self.window, Self.density * live)
      else { return nil }
      values.insert(contentsOf: repeatElement(nil, count: shift), at: 0)
      base -= shift
      return index + shift
    }
    guard index < values.count + Self.window + Self.density * live else { return nil }
    let limit = Swift.max(2 * Self.window, Self.density * live)
    if index >= limit {
      // Cut off the older half of the window (or all of it, for an id far ahead): what is still live there moves
      // to `outside`. Each entry moves at most once, and the cut costs what the ids it passed over cost to place.
      let cut = Swift.min(values.count, Swift.max(values.count / 2, index + 1 - limit / 2))
      for slot in 0..<cut {
        if let value = values[slot].take() {
          outside.insert(UInt32(base + slot), value)
          live -= 1
        }
      }
      values.removeFirst(cut)
      base += cut
      index -= cut
    }
    // Slots for the next ids too, a few hundred at a time: ids come one by one, and growing by one costs a call
    // into the array's generic append per id.
    let end = index + Self.step
    let covered = values.count
    while values.count < end { values.append(nil) }
    if !outside.isEmpty { moveIn(from: covered) }
    return index
  }

  /// Entries of `outside` whose ids the array now covers, from slot `first` on, move into their slots, so that each
  /// id has one home: an id placed far past the end went to `outside`, and a lookup looks there only for an id the
  /// array does not cover (left there, it was shadowed by its empty slot once the array grew over it: contains,
  /// withExisting and remove missed it). Costs the fewer of the new slots and the entries outside.
  private mutating func moveIn(from first: Int) {
    let low = base + first
    let high = base + values.count
    let ids: [UInt32] =
      outside.count <= high - low
      ? outside.keys.filter { Int($0) >= low && Int($0) < high }
      : (low..<high).map { UInt32($0) }.filter { outside[$0] != nil }
    for id in ids {
      values[Int(id) - base] = outside.removeValue(forKey: id)
      live += 1
    }
  }
}
