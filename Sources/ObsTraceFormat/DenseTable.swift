/// A table keyed by the small, dense integer ids a trace uses (properties, labels, threads, objects): an array,
/// not a hash table, because the replay touches it on every event and the printers on every line.
///
/// The ids come from a file, which may name any id up to 2^32: the array grows only as far as the entries put
/// in justify (`denseSlack` plus four slots per entry), and an id beyond that goes to a dictionary. A forged id
/// costs one dictionary entry, never an array of its size.
///
/// Inlinable, so that the modules that use it (the replay, the printers) compile its lookups for the value they
/// hold: unspecialized generic code across a module boundary costs a call and a metadata lookup per access.
public struct DenseTable<Value>: Sequence {
  /// Slots the array may always grow to, whatever was put in.
  @usableFromInline static var denseSlack: Int { 4096 }

  @usableFromInline var values: [Value?] = []
  @usableFromInline var sparse: [UInt32: Value] = [:]
  /// The id of the array's first slot: the first id placed in it. Object serials are numbered per process, not
  /// per recording, so a trace recorded after many objects were made starts far from 0; an array from 0 would
  /// be sized by the process's history (or leave the trace's objects in the dictionary), not by the trace.
  @usableFromInline var base = 0
  /// Entries ever put in (not decremented by removals): sequential ids of objects created and freed keep
  /// the array dense.
  @usableFromInline var insertions = 0
  @usableFromInline var entries = 0

  @inlinable public init() {}

  /// Entries in the table.
  @inlinable public var count: Int { entries }

  @inlinable public var isEmpty: Bool { entries == 0 }

  /// Slots of the array (for tests: what forged ids cost).
  var denseSlots: Int { values.count }
  /// Entries kept in the dictionary (for tests).
  var sparseCount: Int { sparse.count }

  @inlinable public subscript(id: UInt32) -> Value? {
    @inline(__always) get {
      let index = Int(id) &- base
      if index >= 0 && index < values.count { return values[index] }
      return sparse.isEmpty ? nil : sparse[id]
    }
    set {
      guard let newValue else {
        removeValue(id)
        return
      }
      if placeDensely(id) {
        let index = Int(id) - base
        if values[index] == nil {
          entries += 1
          insertions += 1
        }
        values[index] = newValue
      } else if sparse.updateValue(newValue, forKey: id) == nil {
        entries += 1
        insertions += 1
      }
    }
  }

  @inlinable public subscript(id: UInt32, default value: @autoclosure () -> Value) -> Value {
    get { self[id] ?? value() }
    _modify {
      // One yield, not one per storage: the optimizer inlines an accessor with a single yield into its caller,
      // while one with two stays a coroutine whose frame is allocated on every call (a malloc per event). The
      // value is moved out of its slot (no copy: what it holds stays uniquely referenced), then moved back.
      let dense = placeDensely(id)
      var current: Value
      if let existing = dense ? values[Int(id) - base].take() : sparse.removeValue(forKey: id) {
        current = existing
      } else {
        current = value()
        entries += 1
        insertions += 1
      }
      defer {
        if dense { values[Int(id) - base] = current } else { sparse[id] = current }
      }
      yield &current
    }
  }

  /// Removes the entry of `id` and returns it, if there is one: moved out of its slot, not copied (what it holds
  /// stays uniquely referenced). Never grows the array, nor places its start: removing what is not there (an object
  /// freed that no table entry names) costs a compare, not a hash or an array sized for it.
  @inlinable @discardableResult
  public mutating func removeValue(_ id: UInt32) -> Value? {
    let index = Int(id) &- base
    if index >= 0 && index < values.count {
      guard let value = values[index].take() else { return nil }
      entries -= 1
      return value
    }
    guard !sparse.isEmpty, let value = sparse.removeValue(forKey: id) else { return nil }
    entries -= 1
    return value
  }

  /// Mutates the value of `id` in place (created from `value` when absent).
  @inlinable @inline(__always)
  public mutating func withValue<Result>(
    _ id: UInt32, default value: @autoclosure () -> Value, _ body: (inout Value) -> Result
  ) -> Result {
    if placeDensely(id) {
      // One uniqueness check of the array, and the slot tested in place: `values[index] == nil` would copy the value
      // out (retaining what it holds) on every call.
      let index = Int(id) - base
      return values.withUnsafeMutableBufferPointer { slots in
        let slot = slots.baseAddress! + index
        if case .none = slot.pointee {
          slot.pointee = value()
          entries += 1
          insertions += 1
        }
        return body(&slot.pointee!)
      }
    }
    if sparse[id] == nil {
      entries += 1
      insertions += 1
    }
    return body(&sparse[id, default: value()])
  }

  /// Mutates the value of `id` in place if there is one; nil (and `body` not called) when there is none.
  @inlinable @inline(__always)
  public mutating func withExisting<Result>(_ id: UInt32, _ body: (inout Value) -> Result) -> Result? {
    let index = Int(id) &- base
    if index >= 0 && index < values.count { return values.withWrapped(at: index, body) }
    guard !sparse.isEmpty, sparse[id] != nil else { return nil }
    return body(&sparse[id]!)
  }

  /// Whether `id` lives in the array, growing it when the entries justify it.
  @inlinable @inline(__always)
  mutating func placeDensely(_ id: UInt32) -> Bool {
    let index = Int(id) &- base
    if index >= 0 && index < values.count { return true }
    if values.isEmpty && sparse.isEmpty {
      base = Int(id)
      return grow(toPlace: 0)
    }
    return index >= 0 ? grow(toPlace: index) : growDown(toPlace: id)
  }

  /// Moves the array's first slot down to `id`, when the entries justify the longer array: by at least the
  /// array's length (never below 0), so that ids met in descending order cost amortized O(1).
  @inlinable
  mutating func growDown(toPlace id: UInt32) -> Bool {
    let shift = Swift.max(base - Int(id), Swift.min(values.count, base))
    guard values.count + shift <= Self.denseSlack + 4 * insertions else { return false }
    values.insert(contentsOf: repeatElement(nil, count: shift), at: 0)
    base -= shift
    for (key, value) in sparse where Int(key) >= base && Int(key) - base < values.count {
      values[Int(key) - base] = value
      sparse[key] = nil
    }
    return true
  }

  @inlinable
  mutating func grow(toPlace index: Int) -> Bool {
    guard index < Self.denseSlack + 4 * insertions else { return false }
    let newCount = Swift.max(index + 1, Swift.min(values.count * 2, Self.denseSlack + 4 * insertions))
    // One empty slot at a time: `append(contentsOf: repeatElement(nil, …))` copied its `nil` into each slot through
    // the value's outlined copy (≈ 700 instructions a slot for a table of 100 k objects' states, callgrind).
    while values.count < newCount { values.append(nil) }
    if !sparse.isEmpty {
      // Entries the array now covers move into it, so that each id has one home.
      for (key, value) in sparse where Int(key) >= base && Int(key) - base < newCount {
        values[Int(key) - base] = value
        sparse[key] = nil
      }
    }
    return true
  }

  /// Calls `body` with each entry in id order: what `for (id, value) in table` gives, without the iterator's
  /// closure, copy of the array and sorted copy of the dictionary (a table of 100 k small tables iterated through
  /// theirs cost two allocations each).
  @inlinable public func forEachEntry(_ body: (UInt32, Value) throws -> Void) rethrows {
    try values.forEachEntry(base: base, outside: sparse, body)
  }

  /// Entries in id order.
  @inlinable public func makeIterator() -> AnyIterator<(key: UInt32, value: Value)> {
    var index = 0
    let values = self.values
    let base = self.base
    let sorted = sparse.sorted { $0.key < $1.key }
    var next = 0
    return AnyIterator {
      // The array's entries and the dictionary's, merged in id order (the dictionary holds ids on both sides).
      while index < values.count, values[index] == nil { index += 1 }
      if index < values.count, next == sorted.count || base + index < Int(sorted[next].key) {
        defer { index += 1 }
        return (UInt32(base + index), values[index]!)
      }
      guard next < sorted.count else { return nil }
      defer { next += 1 }
      return (key: sorted[next].key, value: sorted[next].value)
    }
  }
}

extension DenseTable: Sendable where Value: Sendable {}

extension Array {
  /// Calls `body` with each entry of a table kept in slots (this array: the entry of id `base + index`, or nil) and in
  /// a dictionary of the ids the slots do not cover, on either side of them, in id order: the walk of `DenseTable`
  /// and of the replay's `RecentTable`. The dictionary is sorted once (not at all when it is empty, the rule).
  @inlinable
  public func forEachEntry<Wrapped>(
    base: Int, outside: [UInt32: Wrapped], _ body: (UInt32, Wrapped) throws -> Void
  ) rethrows where Element == Wrapped? {
    try forEachEntry(base: base, sorted: outside.isEmpty ? [] : outside.sorted { $0.key < $1.key }, body)
  }

  /// The same walk, the ids outside the slots given already sorted by id (`RecentTable`'s `IDMap` sorts its own).
  @inlinable
  public func forEachEntry<Wrapped>(
    base: Int, sorted: [(key: UInt32, value: Wrapped)], _ body: (UInt32, Wrapped) throws -> Void
  ) rethrows where Element == Wrapped? {
    var next = 0
    for index in indices {
      guard let value = self[index] else { continue }
      let id = base + index
      // The sorted ids before this slot come first.
      while next < sorted.count && Int(sorted[next].key) < id {
        try body(sorted[next].key, sorted[next].value)
        next += 1
      }
      try body(UInt32(id), value)
    }
    while next < sorted.count {
      try body(sorted[next].key, sorted[next].value)
      next += 1
    }
  }

  /// Mutates the value in slot `index` (a valid index) in place, without copying it out; nil (and `body` not called)
  /// when the slot is empty. The slots of `DenseTable` and of the replay's `RecentTable`.
  @inlinable @inline(__always)
  public mutating func withWrapped<Wrapped, Result>(at index: Int, _ body: (inout Wrapped) -> Result) -> Result?
  where Element == Wrapped? {
    withUnsafeMutableBufferPointer { slots in
      let slot = slots.baseAddress! + index
      if case .none = slot.pointee { return nil }
      return body(&slot.pointee!)
    }
  }
}
