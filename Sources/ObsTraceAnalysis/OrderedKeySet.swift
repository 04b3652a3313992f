import ObsTraceFormat

/// The distinct object properties a run read, in the order first read. A run reads a handful: while they are few
/// (`listed`) the list is searched in place, with no hashing and no hash table allocated per run; past that a hash
/// set indexes it, so a run that reads thousands stays linear.
struct OrderedKeySet {
  static let listed = 16
  /// In the order first inserted, each once.
  private(set) var elements: [PropertyKey] = []
  /// Built when `elements` grows past `listed`; empty before.
  private var index: Set<PropertyKey> = []

  var isEmpty: Bool { elements.isEmpty }
  var count: Int { elements.count }

  @inline(__always)
  func contains(_ key: PropertyKey) -> Bool {
    elements.count <= Self.listed ? elements.contains(key) : index.contains(key)
  }

  /// Adds `key` if it is not there yet; whether it was added.
  @discardableResult @inline(__always)
  mutating func insert(_ key: PropertyKey) -> Bool {
    if elements.count < Self.listed {
      if elements.contains(key) { return false }
      // A run reads a handful: room for 8 at once, not regrown at 1, 2 and 4.
      if elements.isEmpty { elements.reserveCapacity(8) }
    } else {
      if index.isEmpty { index = Set(elements) }
      guard index.insert(key).inserted else { return false }
    }
    elements.append(key)
    return true
  }

  /// Calls `body` once for each distinct object among the keys, in the order first read.
  func forEachObject(_ body: (UInt32) -> Void) {
    if elements.count <= Self.listed {
      for (position, key) in elements.enumerated()
      where !elements[..<position].contains(where: { $0.object == key.object }) {
        body(key.object)
      }
    } else {
      var seen: Set<UInt32> = []
      for key in elements where seen.insert(key.object).inserted { body(key.object) }
    }
  }
}

/// The instances whose last run read one object property. Most properties are read by one instance at a time: the
/// first is held inline, so that a property costs no hash table until a second instance reads it.
struct InstanceSet {
  private var first: UInt32?
  private var others: Set<UInt32> = []

  var isEmpty: Bool { first == nil }

  mutating func insert(_ instance: UInt32) {
    if first == nil {
      first = instance
    } else if first != instance {
      others.insert(instance)
    }
  }

  mutating func remove(_ instance: UInt32) {
    if first == instance {
      first = others.popFirst()
    } else if !others.isEmpty {
      others.remove(instance)
    }
  }

  func forEach(_ body: (UInt32) -> Void) {
    guard let first else { return }
    body(first)
    // Not even an iterator over an empty set: one instance is the rule, and a write walks them.
    guard !others.isEmpty else { return }
    for instance in others { body(instance) }
  }
}
