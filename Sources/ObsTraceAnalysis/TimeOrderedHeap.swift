/// A binary min-heap of items by time, ties in the order they were pushed: the one merge that both orderings use
/// (`TimeOrderedEvents` across threads' chunks, `TimeOrderedFacts` across nested runs and writes).
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

  mutating func push(_ element: Element, time: UInt64) {
    items.append((time, nextOrder, element))
    nextOrder += 1
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
    var parent = 0
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
    return top.element
  }

  @inline(__always) private func less(_ a: Int, _ b: Int) -> Bool {
    // Fields read in place: no copy of the element (a fact holds arrays).
    let timeA = items[a].time
    let timeB = items[b].time
    return timeA != timeB ? timeA < timeB : items[a].order < items[b].order
  }
}
