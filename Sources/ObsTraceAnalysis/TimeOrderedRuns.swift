/// Items held until they may be released, released by (time, order): the order they were pushed breaks ties, as
/// `TimeOrderedHeap.push(_:time:)` does, and a pop gives the same item as that heap would.
///
/// Held items stay in runs, as `TimeOrderedEvents` keeps events: a run is a queue of items in (time, order) order
/// (one lane's items, a thread's, while their times do not go back; an item earlier than its lane's last starts a new
/// run), and a small heap of runs by their first item picks the next to pop. A push or a pop costs a comparison or
/// two among the runs (about one per lane), not a move of the item through a heap of every held item: with many
/// threads the timeline holds every other thread's lines behind a thread preempted inside a write, until it runs
/// again.
struct TimeOrderedRuns<Element> {
  private typealias Item = (time: UInt64, order: UInt64, element: Element?)

  /// Items in (time, order) order, appended at the back and taken from the front, in blocks of `blockSize`: a block
  /// is freed once its items are taken, so the memory held is that of the items held (a block a run), not the most
  /// a run ever held.
  private struct Run {
    static var blockSize: Int { 256 }
    /// An item is nil once taken (moved out: a copy would retain what it holds, and keep it until freed).
    var blocks: [[Item]] = []
    var headBlock = 0  // blocks before it are taken (and empty)
    var headIndex = 0  // the first item of the head block not yet taken
    var count = 0
    /// The lane whose items it holds.
    var lane: UInt32 = 0
    /// The time of the last item, when not empty.
    var lastTime: UInt64 = 0
    var isEmpty: Bool { count == 0 }

    mutating func append(_ item: Item) {
      if blocks.isEmpty {
        // The first block grows as it fills (a run of one item is the rule where times go back: one a nesting level
        // of a deep trace), the next ones take their whole room at once.
        blocks.append([])
      } else if blocks[blocks.count - 1].count == Self.blockSize {
        var block: [Item] = []
        block.reserveCapacity(Self.blockSize)
        blocks.append(block)
      }
      blocks[blocks.count - 1].append(item)
      lastTime = item.time
      count += 1
    }

    /// Removes the first item; returns it and the (time, order) of the one after it, if any.
    mutating func takeFirst() -> (Element, (time: UInt64, order: UInt64)?) {
      let element = blocks[headBlock][headIndex].element.take()!
      headIndex += 1
      count -= 1
      if count == 0 {
        // Its last block is kept for the next items.
        blocks[headBlock].removeAll(keepingCapacity: true)
        if headBlock > 0 { blocks.removeFirst(headBlock) }
        (headBlock, headIndex) = (0, 0)
        return (element, nil)
      }
      if headIndex == blocks[headBlock].count {
        blocks[headBlock] = []
        headBlock += 1
        headIndex = 0
        if headBlock >= 64 && headBlock * 2 >= blocks.count {
          blocks.removeFirst(headBlock)
          headBlock = 0
        }
      }
      return (element, (blocks[headBlock][headIndex].time, blocks[headBlock][headIndex].order))
    }
  }

  private var runs: [Run] = []
  private var freeRuns: [Int] = []
  /// The run a lane's next items join while their times do not go back: only lanes with items held have one (a run
  /// is given up, to `freeRuns`, when its last item is taken), so what is kept is bounded by what is held, not by the
  /// threads a trace ever had.
  private var runOfLane: [UInt32: Int] = [:]
  /// Runs holding items, by their first item's (time, order).
  private var heap = TimeOrderedHeap<Int>()
  private var nextOrder: UInt64 = 0

  var isEmpty: Bool { heap.isEmpty }
  /// Room for items in the runs' blocks, used or not (for tests).
  var room: Int { runs.reduce(0) { $0 + $1.blocks.reduce(0) { $0 + $1.capacity } } }
  /// Runs made, and lanes that have one (for tests: bounded by what is held at once, not by the lanes ever seen).
  var runsMade: Int { runs.count }
  var lanesWithRun: Int { runOfLane.count }
  /// The earliest time held.
  var firstTime: UInt64? { heap.firstTime }

  /// Adds an item, ordered after every item of its time pushed before it. `lane` only chooses where it is kept.
  mutating func push(_ element: Element, time: UInt64, lane: UInt32) {
    let order = nextOrder
    nextOrder += 1
    if let index = runOfLane[lane], runs[index].lastTime <= time {
      runs[index].append((time, order, element))
      return
    }
    let index: Int
    if let free = freeRuns.popLast() {
      index = free
    } else {
      index = runs.count
      runs.append(Run())
    }
    runs[index].append((time, order, element))
    runs[index].lane = lane
    // A run the lane's items left behind (their times went back) stays in the heap until emptied.
    runOfLane[lane] = index
    heap.push(index, time: time, order: order)
  }

  /// Removes and returns the earliest item; one must be held.
  mutating func pop() -> Element {
    let index = heap.first
    let (element, next) = runs[index].takeFirst()
    if let next {
      heap.replaceFirst(time: next.time, order: next.order)
    } else {
      _ = heap.pop()
      // An emptied run is free again; if it was its lane's current one, the lane has none until its next items.
      let lane = runs[index].lane
      if runOfLane[lane] == index { runOfLane[lane] = nil }
      freeRuns.append(index)
    }
    return element
  }
}
