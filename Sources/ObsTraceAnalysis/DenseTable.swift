/// A table keyed by the small, dense integer ids a trace uses (properties, labels, threads): an array, not a
/// hash table, because the replay touches it on every event.
public struct DenseTable<Value>: Sequence {
  private var values: [Value?] = []
  public private(set) var count = 0

  public init() {}

  public var isEmpty: Bool { count == 0 }

  public subscript(id: UInt32) -> Value? {
    get { Int(id) < values.count ? values[Int(id)] : nil }
    set {
      grow(to: id)
      if values[Int(id)] == nil && newValue != nil { count += 1 }
      if values[Int(id)] != nil && newValue == nil { count -= 1 }
      values[Int(id)] = newValue
    }
  }

  public subscript(id: UInt32, default value: @autoclosure () -> Value) -> Value {
    get { self[id] ?? value() }
    _modify {
      grow(to: id)
      if values[Int(id)] == nil {
        values[Int(id)] = value()
        count += 1
      }
      yield &values[Int(id)]!
    }
  }

  private mutating func grow(to id: UInt32) {
    let index = Int(id)
    if index >= values.count { values.append(contentsOf: repeatElement(nil, count: index + 1 - values.count + 16)) }
  }

  public func makeIterator() -> AnyIterator<(key: UInt32, value: Value)> {
    var index = 0
    let values = self.values
    return AnyIterator {
      while index < values.count {
        defer { index += 1 }
        if let value = values[index] { return (UInt32(index), value) }
      }
      return nil
    }
  }
}
