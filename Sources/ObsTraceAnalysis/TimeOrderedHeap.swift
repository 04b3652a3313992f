/// A binary min-heap of items by (time, order): the one merge that both orderings use (`TimeOrderedEvents` across
/// threads' chunks, `TimeOrderedFacts` across nested runs and writes).
///
/// The order breaks ties between equal times. A heap is used one of two ways, not both: `push(_:time:)` numbers its
/// items in the order they were pushed; `push(_:time:order:)` takes the caller's order (an event's arrival in the
/// trace), and `replaceFirst(time:order:)` moves the first item to its next key in place (a queue whose head was
/// taken), one sift instead of a pop and a push.
struct TimeOrderedHeap<Element> {
  private var items: [(time: UInt64, order: UInt64, element: Element)] = []
  private var nextOrder: UInt64 = 0

  var isEmpty: Bool { items.isEmpty }
  var count: Int { items.count }
  /// The earliest time held.
  var firstTime: UInt64? {
    // Read in place: `items.first?.time` copies the whole first item out (a fact holds arrays: retained, released)
    // on every call, and the timeline asks after every fact.
    items.isEmpty ? nil : items[0].time
  }
  /// The earliest item; the heap must not be empty.
  var first: Element { items[0].element }
  /// The key of the earliest item after the first (the smaller of the first's two children), if any.
  var secondKey: (time: UInt64, order: UInt64)? {
    switch items.count {
    case 0, 1: return nil
    case 2: return (items[1].time, items[1].order)
    default: return less(1, 2) ? (items[1].time, items[1].order) : (items[2].time, items[2].order)
    }
  }

  /// Adds an item, ordered after every item of its time pushed before it.
  mutating func push(_ element: Element, time: UInt64) {
    push(element, time: time, order: nextOrder)
    nextOrder += 1
  }

  /// Adds an item whose ties are broken by `order`.
  mutating func push(_ element: Element, time: UInt64, order: UInt64) {
    items.append((time, order, element))
    var child = items.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard less(child, parent) else { break }
      items.swapAt(child, parent)
      child = parent
    }
  }

  /// Removes and returns the earliest item; the heap must not be empty.
  mutating func pop() -> Element {
    items.swapAt(0, items.count - 1)
    let top = items.removeLast()
    siftDown()
    return top.element
  }

  /// Gives the earliest item a new, later key and puts it in its place; the heap must not be empty.
  mutating func replaceFirst(time: UInt64, order: UInt64) {
    items[0].time = time
    items[0].order = order
    siftDown()
  }

  /// Removes the items `shouldRemove` names and puts the rest back in heap order (for a heap whose items go stale:
  /// dropped in one pass once they are many, in time linear in the items).
  mutating func removeAll(where shouldRemove: (_ time: UInt64, _ element: Element) -> Bool) {
    items.removeAll { shouldRemove($0.time, $0.element) }
    var parent = items.count / 2
    while parent > 0 {
      parent -= 1
      siftDown(from: parent)
    }
  }

  private mutating func siftDown(from start: Int = 0) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < items.count && less(left, smallest) { smallest = left }
      if right < items.count && less(right, smallest) { smallest = right }
      if smallest == parent { break }
      items.swapAt(parent, smallest)
      parent = smallest
    }
  }

  @inline(__always) private func less(_ a: Int, _ b: Int) -> Bool {
    // Fields read in place: no copy of the element (a fact holds arrays).
    let timeA = items[a].time
    let timeB = items[b].time
    return timeA != timeB ? timeA < timeB : items[a].order < items[b].order
  }
}

// `TimeOrderedEvents` runs on the thread that decodes the chunks (`TraceReader.forEachStretch`).
extension TimeOrderedHeap: Sendable where Element: Sendable {}
