import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

/// A fixed generator, so that a failure repeats.
private struct SplitMix {
  var state: UInt64
  mutating func next(_ bound: Int) -> Int {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Int((z ^ (z >> 31)) % UInt64(bound))
  }
}

@Suite("Time-ordered runs")
struct TimeOrderedRunsTests {
  @Test(
    "runs by lane pop what one heap of every item pops: by time, ties in the order pushed, whatever the lanes",
    arguments: [1, 4, 32])
  func sameAsOneHeap(lanes: Int) {
    var random = SplitMix(state: UInt64(lanes))
    var runs = TimeOrderedRuns<Int>()
    var heap = TimeOrderedHeap<Int>()
    var laneTime = [UInt64](repeating: 1_000_000, count: lanes)
    var popped: [Int] = []
    var expected: [Int] = []
    var newRuns = 0
    for item in 0..<20_000 {
      if random.next(10) < 6 {
        let lane = random.next(lanes)
        // Mostly later on its lane, often the same time as other lanes (ties), sometimes earlier than its lane's
        // last (a nested run's end, a damaged trace): a new run.
        if random.next(20) == 0 {
          laneTime[lane] -= UInt64(random.next(200))
          newRuns += 1
        } else {
          laneTime[lane] += UInt64(random.next(3))
        }
        runs.push(item, time: laneTime[lane], lane: UInt32(lane))
        heap.push(item, time: laneTime[lane])
      } else if !heap.isEmpty {
        #expect(runs.firstTime == heap.firstTime)
        popped.append(runs.pop())
        expected.append(heap.pop())
      }
      #expect(runs.isEmpty == heap.isEmpty)
    }
    while !heap.isEmpty {
      #expect(runs.firstTime == heap.firstTime)
      popped.append(runs.pop())
      expected.append(heap.pop())
    }
    #expect(runs.isEmpty)
    #expect(popped.count > 7_000)
    #expect(newRuns > 100)
    #expect(popped == expected)
  }
}

@Suite("Timeline order across threads")
struct TimelineOrderAcrossThreadsTests {
  @Test(
    "writes on many threads at once, one thread's write held open across many others: each is shown by its willSet")
  func manyThreads() {
    var script = EventScript()
    let threads = UInt32(12)
    for thread in 1...threads { script.created(thread, thread: thread) }
    var random = SplitMix(state: 7)
    var open = Set<UInt32>()
    var willSetTimes: [UInt64] = []
    for step in 0..<3_000 {
      // Thread 1 stays inside its write for a long stretch (a thread preempted there).
      let thread = step % 500 == 0 ? 1 : UInt32(2 + random.next(Int(threads) - 1))
      if open.contains(thread) {
        script.finishWrite(thread, 1, unchanged: false, thread: thread)
        open.remove(thread)
      } else {
        script.beginWrite(thread, 1, thread: thread)
        willSetTimes.append(script.events.last!.time)
        open.insert(thread)
      }
    }
    for thread in open.sorted() { script.finishWrite(thread, 1, unchanged: false, thread: thread) }
    let (_, facts) = script.replay()
    var ordered = TimeOrderedFacts()
    var shown: [UInt64] = []
    func note(_ fact: ReplayFact) {
      if case .write(let write) = fact { shown.append(write.time) }
    }
    for fact in facts { ordered.consume(fact, note) }
    ordered.finish(note)
    #expect(willSetTimes.count > 1_000)
    #expect(shown == willSetTimes)
  }
}
