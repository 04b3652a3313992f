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

extension TimeOrderedRunsTests {
  @Test("a lane's emptied run is given up: what is kept follows what is held at once, not every lane ever seen")
  func emptiedRunsAreFreed() {
    // A thread a job: 10,000 lanes, each holding two items a while. Before, each lane kept its emptied run (and its
    // block) for good: 10,000 runs and lanes at the end.
    var runs = TimeOrderedRuns<Int>()
    for lane in UInt32(0)..<10_000 {
      runs.push(Int(lane), time: UInt64(lane), lane: lane)
      runs.push(Int(lane), time: UInt64(lane), lane: lane)
      #expect(runs.pop() == Int(lane) && runs.pop() == Int(lane))
    }
    #expect(runs.isEmpty && runs.lanesWithRun == 0 && runs.runsMade == 1, "\(runs.runsMade) runs")
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

/// The timeline's order by its plain rule: every finished fact held in one list, released by (time, arrival) while
/// it is no later than the earliest time still open, that time looked for among every open run and write (what
/// `TimeOrderedFacts` did before it kept them by key).
private struct PlainFactOrder {
  var openRuns: [(scope: UInt32, time: UInt64)] = []
  var openWrites: [(key: TimeOrderedFacts.WriteKey, time: UInt64)] = []
  var held: [(time: UInt64, order: Int, fact: ReplayFact)] = []
  var arrived = 0

  var earliestOpen: UInt64 {
    min(openRuns.map(\.time).min() ?? .max, openWrites.map(\.time).min() ?? .max)
  }

  mutating func consume(_ fact: ReplayFact, _ out: inout [String]) {
    switch fact {
    case .runBegan(let run):
      if let index = openRuns.firstIndex(where: { $0.scope == run.scope }) {
        openRuns[index].time = run.time
      } else {
        openRuns.append((run.scope, run.time))
      }
    case .runEnded(let ended):
      openRuns.removeAll { $0.scope == ended.run.scope }
    case .writeBegan(let write):
      openWrites.append((TimeOrderedFacts.WriteKey(thread: write.thread, key: write.key), write.time))
    case .write(let write):
      let key = TimeOrderedFacts.WriteKey(thread: write.thread, key: write.key)
      if let index = openWrites.lastIndex(where: { $0.key == key && $0.time == write.time }) {
        openWrites.remove(at: index)
      }
    default: break
    }
    if let time = TimeOrderedFacts.time(of: fact) {
      held.append((time, arrived, fact))
      arrived += 1
    }
    release(upTo: earliestOpen, &out)
  }

  mutating func release(upTo limit: UInt64, _ out: inout [String]) {
    while let index = held.indices.min(by: { (held[$0].time, held[$0].order) < (held[$1].time, held[$1].order) }),
      held[index].time <= limit
    {
      out.append(String(describing: held.remove(at: index).fact))
    }
  }
}

@Suite("Timeline order, nesting")
struct TimelineNestingTests {
  /// `depth` runs each begun inside the one before, a read at the bottom, ended innermost first, then a write that
  /// fires the outermost (tryout15's deep-100k.trc, smaller).
  static func nested(_ depth: UInt32) -> EventScript {
    var script = EventScript()
    script.created(1)
    for scope in 1...depth { script.begin(scope, label: 1, parent: scope - 1) }
    script.read(1, 1, in: depth)
    for scope in (1...depth).reversed() {
      script.end(scope)
      script.install(scope)
    }
    script.write(1, 1, firing: [1])
    return script
  }

  @Test("runs nested thousands deep are shown outermost first, with work and memory linear in the depth")
  func deepNesting() {
    // tryout15's J3: each run's beginning looked through every open run (100,000 levels: 3.7 s, 400,000: 66 s), and
    // each level's held line took a queue with room for 256 (≈ 4.8 KB a level).
    let depth: UInt32 = 4_000
    let (_, facts) = Self.nested(depth).replay()
    var ordered = TimeOrderedFacts()
    var runs: [UInt32] = []
    var mostReserved = 0
    for (index, fact) in facts.enumerated() {
      ordered.consume(fact) { if case .runEnded(let ended) = $0 { runs.append(ended.run.scope) } }
      if index % 97 == 0 { mostReserved = max(mostReserved, ordered.heldRoom) }
    }
    ordered.finish { if case .runEnded(let ended) = $0 { runs.append(ended.run.scope) } }
    #expect(runs == Array(1...depth))
    // An entry pushed and popped a run: not a look at every open run.
    #expect(ordered.openWork <= 3 * Int(depth), "\(ordered.openWork)")
    // The held lines' room: a few items a level, not 256.
    #expect(mostReserved <= 4 * Int(depth), "\(mostReserved)")
  }

  /// Forty threads inside writes at once (more than `TimeOrderedFacts.searchedAtMost`: kept by key), ended mostly the
  /// oldest first, while one thread nests a few runs and unwinds them again and again: the by-key heap fills with
  /// the entries of runs that ended under older writes (stale: dropped all at once when they outnumber what is
  /// open), and a write whose beginning set off such a drop is as a rule still open once everything begun before it
  /// has ended. The first by-key form (perf19's 6e0b59f) counted that write as open only after the drop, so the drop
  /// took its entry too: the earliest open time then passed it while it was open, and later lines were shown before
  /// it (tryout15's thr2000.trc: one line 111 lines late). Compared with the plain rule after every fact: the
  /// earliest open time and every line shown.
  @Test("writes on forty threads at once, runs nested and unwound on another: as the plain rule says, fact by fact")
  func manyWritesAndUnwoundRuns() {
    var random = SplitMix(state: 0x3a20)
    var drops = 0
    for round in 0..<8 {
      var script = EventScript()
      let writers: UInt32 = 40
      for object in 1...(writers + 1) { script.created(object) }
      var nested: [UInt32] = []  // thread 1's open runs, outermost first
      var nextScope: UInt32 = 0
      var writing: [UInt32] = []  // threads 2... inside a write, the one that began first first
      func unwind() {
        for scope in nested.reversed() {
          script.end(scope)
          script.install(scope)
        }
        nested = []
      }
      for step in 0..<3_000 {
        if step % 50 == 49 { unwind() }
        switch random.next(100) {
        case 0..<30:
          guard nested.count < 10 else { continue }
          nextScope += 1
          script.begin(nextScope, label: 1 + UInt32(random.next(3)), parent: nested.last ?? 0)
          nested.append(nextScope)
        case 30..<60:
          guard let scope = nested.popLast() else { continue }
          script.read(1, 1, in: scope)
          script.end(scope)
          script.install(scope)
        case 60..<85:
          let idle = (2...(writers + 1)).filter { !writing.contains($0) }
          guard !idle.isEmpty else { continue }
          let thread = idle[random.next(idle.count)]
          script.beginWrite(thread, 1, thread: thread)
          writing.append(thread)
        case 85..<95:
          guard !writing.isEmpty else { continue }
          let thread = writing.remove(at: random.next(5) == 0 ? random.next(writing.count) : 0)
          script.finishWrite(thread, 1, unchanged: random.next(2) == 0, thread: thread)
        default:
          let thread = 2 + UInt32(random.next(Int(writers)))
          script.read(thread, 2, stale: true, thread: thread)
        }
      }
      unwind()
      for thread in writing { script.finishWrite(thread, 1, unchanged: false, thread: thread) }
      if round % 2 == 1 {
        // Ties: events that share a time.
        for index in script.events.indices { script.events[index].time = UInt64(index / 3) * 10 }
      }
      let (_, facts) = script.replay()
      var ordered = TimeOrderedFacts()
      var plain = PlainFactOrder()
      var got: [String] = []
      var expected: [String] = []
      var firstWrong: Int?
      for (index, fact) in facts.enumerated() {
        ordered.consume(fact) { got.append(String(describing: $0)) }
        plain.consume(fact, &expected)
        if firstWrong == nil && ordered.earliestOpenTime != plain.earliestOpen { firstWrong = index }
      }
      ordered.finish { got.append(String(describing: $0)) }
      plain.release(upTo: .max, &expected)
      #expect(firstWrong == nil, "round \(round): earliest open time wrong from fact \(firstWrong ?? 0)")
      #expect(got.count > 1_000, "round \(round)")
      #expect(got == expected, "round \(round)")
      drops += ordered.openDrops
    }
    // The stale entries were dropped all at once many times: a drop set off by a write's beginning is the case.
    #expect(drops >= 20, "\(drops) drops")
  }

  @Test("runs and writes on several threads, begun and ended in any order, ties among them: as the plain rule says")
  func sameAsThePlainRule() {
    var random = SplitMix(state: 0x4a33)
    var moves = 0
    for round in 0..<12 {
      var script = EventScript()
      let threads = UInt32(1 + random.next(4))
      for object in 1...threads { script.created(object) }
      var open: [[UInt32]] = Array(repeating: [], count: Int(threads) + 1)
      var writing = Set<UInt32>()
      var nextScope: UInt32 = 0
      for step in 0..<1_500 {
        if step % 500 == 499 {
          // Everything ends now and then: from many open (kept by key) back to few (searched).
          for thread in 1...threads {
            for scope in open[Int(thread)].reversed() {
              script.end(scope, thread: thread)
              script.install(scope, thread: thread)
            }
            open[Int(thread)] = []
            if writing.remove(thread) != nil { script.finishWrite(thread, 1, unchanged: false, thread: thread) }
          }
        }
        let thread = UInt32(1 + random.next(Int(threads)))
        switch random.next(10) {
        case 0..<4:
          nextScope += 1
          script.begin(
            nextScope, label: 1 + UInt32(random.next(3)), parent: open[Int(thread)].last ?? 0, thread: thread)
          open[Int(thread)].append(nextScope)
        case 4..<7:
          guard let scope = open[Int(thread)].last else { continue }
          script.read(thread, 1, in: scope, thread: thread)
          script.end(scope, thread: thread)
          script.install(scope, thread: thread)
          open[Int(thread)].removeLast()
        case 7, 8:
          if writing.remove(thread) != nil {
            script.finishWrite(thread, 1, unchanged: random.next(2) == 0, thread: thread)
          } else {
            script.beginWrite(thread, 1, thread: thread)
            writing.insert(thread)
          }
        default:
          script.read(thread, 2, stale: random.next(2) == 0, thread: thread)
        }
      }
      // Ties: runs of events that share a time.
      let share = 1 + random.next(4)
      for index in script.events.indices { script.events[index].time = UInt64(index / share) * 10 }
      let (_, facts) = script.replay()
      var ordered = TimeOrderedFacts()
      var plain = PlainFactOrder()
      var got: [String] = []
      var expected: [String] = []
      var wasIndexed = false
      for fact in facts {
        ordered.consume(fact) { got.append(String(describing: $0)) }
        plain.consume(fact, &expected)
        if ordered.isIndexed != wasIndexed {
          wasIndexed.toggle()
          moves += 1
        }
      }
      ordered.finish { got.append(String(describing: $0)) }
      plain.release(upTo: .max, &expected)
      #expect(got.count > 500, "round \(round)")
      #expect(got == expected, "round \(round)")
    }
    // Both ways of keeping what is open, and the moves between them, back and forth.
    #expect(moves >= 4, "\(moves) moves")
  }
}
