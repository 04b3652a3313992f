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

  init() {}

  /// An empty set that stores its keys in `elements` (an emptied list whose capacity is reused), if given.
  init(reusing elements: [PropertyKey]?) {
    if let elements { self.elements = elements }
  }

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
      if elements.capacity == 0 { elements.reserveCapacity(8) }
    } else {
      if index.isEmpty { index = Set(elements) }
      guard index.insert(key).inserted else { return false }
    }
    elements.append(key)
    return true
  }

  /// Takes the list of keys out (the set is left empty), if it ever held one: to reuse its capacity.
  mutating func takeElements() -> [PropertyKey]? {
    guard elements.capacity != 0 else { return nil }
    var taken: [PropertyKey] = []
    swap(&taken, &elements)
    index = []
    return taken
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
