/// A table keyed by the small, dense integer ids a trace uses (properties, labels, threads, objects): an array,
/// not a hash table, because the replay touches it on every event.
///
/// The ids come from a file, which may name any id up to 2^32: the array grows only as far as the entries put
/// in justify (`denseSlack` plus four slots per entry), and an id beyond that goes to a dictionary. A forged id
/// costs one dictionary entry, never an array of its size.
public struct DenseTable<Value>: Sequence {
  /// Slots the array may always grow to, whatever was put in.
  static var denseSlack: Int { 4096 }

  private var values: [Value?] = []
  private var sparse: [UInt32: Value] = [:]
  /// Entries ever put in (not decremented by removals): sequential ids of objects created and freed keep
  /// the array dense.
  private var insertions = 0
  public private(set) var count = 0

  public init() {}

  public var isEmpty: Bool { count == 0 }

  /// Slots of the array (for tests: what forged ids cost).
  var denseSlots: Int { values.count }

  public subscript(id: UInt32) -> Value? {
    @inline(__always) get {
      let index = Int(id)
      if index < values.count { return values[index] }
      return sparse.isEmpty ? nil : sparse[id]
    }
    set {
      if placeDensely(id) {
        let index = Int(id)
        if values[index] == nil && newValue != nil {
          count += 1
          insertions += 1
        }
        if values[index] != nil && newValue == nil { count -= 1 }
        values[index] = newValue
      } else {
        let old = sparse[id]
        sparse[id] = newValue
        if old == nil && newValue != nil {
          count += 1
          insertions += 1
        }
        if old != nil && newValue == nil { count -= 1 }
      }
    }
  }

  public subscript(id: UInt32, default value: @autoclosure () -> Value) -> Value {
    get { self[id] ?? value() }
    _modify {
      // One yield, not one per storage: the optimizer inlines an accessor with a single yield into its caller,
      // while one with two stays a coroutine whose frame is allocated on every call (a malloc per event). The
      // value is moved out of its slot (no copy: what it holds stays uniquely referenced), then moved back.
      let dense = placeDensely(id)
      var current: Value
      if let existing = dense ? values[Int(id)].take() : sparse.removeValue(forKey: id) {
        current = existing
      } else {
        current = value()
        count += 1
        insertions += 1
      }
      defer {
        if dense { values[Int(id)] = current } else { sparse[id] = current }
      }
      yield &current
    }
  }

  /// Mutates the value of `id` in place (created from `value` when absent).
  @inline(__always)
  public mutating func withValue<Result>(
    _ id: UInt32, default value: @autoclosure () -> Value, _ body: (inout Value) -> Result
  ) -> Result {
    if placeDensely(id) {
      // One uniqueness check of the array, and the slot tested in place: `values[index] == nil` would copy the value
      // out (retaining what it holds) on every call.
      let index = Int(id)
      return values.withUnsafeMutableBufferPointer { slots in
        let slot = slots.baseAddress! + index
        if case .none = slot.pointee {
          slot.pointee = value()
          count += 1
          insertions += 1
        }
        return body(&slot.pointee!)
      }
    }
    if sparse[id] == nil {
      count += 1
      insertions += 1
    }
    return body(&sparse[id, default: value()])
  }

  /// Mutates the value of `id` in place if there is one; nil (and `body` not called) when there is none.
  @inline(__always)
  public mutating func withExisting<Result>(_ id: UInt32, _ body: (inout Value) -> Result) -> Result? {
    let index = Int(id)
    if index < values.count {
      return values.withUnsafeMutableBufferPointer { slots in
        let slot = slots.baseAddress! + index
        if case .none = slot.pointee { return nil }
        return body(&slot.pointee!)
      }
    }
    guard !sparse.isEmpty, sparse[id] != nil else { return nil }
    return body(&sparse[id]!)
  }

  /// Whether `id` lives in the array, growing it when the entries justify it.
  @inline(__always)
  private mutating func placeDensely(_ id: UInt32) -> Bool {
    let index = Int(id)
    if index < values.count { return true }
    return grow(toPlace: index)
  }

  private mutating func grow(toPlace index: Int) -> Bool {
    guard index < Self.denseSlack + 4 * insertions else { return false }
    let newCount = Swift.max(index + 1, Swift.min(values.count * 2, Self.denseSlack + 4 * insertions))
    values.append(contentsOf: repeatElement(nil, count: newCount - values.count))
    if !sparse.isEmpty {
      // Entries the array now covers move into it, so that each id has one home.
      for (key, value) in sparse where Int(key) < newCount {
        values[Int(key)] = value
        sparse[key] = nil
      }
    }
    return true
  }

  /// Entries in id order.
  public func makeIterator() -> AnyIterator<(key: UInt32, value: Value)> {
    var index = 0
    let values = self.values
    var sparseEntries = sparse.sorted { $0.key < $1.key }.makeIterator()
    return AnyIterator {
      while index < values.count {
        defer { index += 1 }
        if let value = values[index] { return (UInt32(index), value) }
      }
      return sparseEntries.next().map { (key: $0.key, value: $0.value) }
    }
  }
}
