import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

// Ids used in the scripts: object 1 and 2; property 1; label 1.

/// A scope's wasted invalidations and redundant runs rest on the comparisons of the writes that fired it, as a
/// property's no-op writes do: a write through `_modify` not compared (an array under `OBSTRACE_COMPARE=trivial`)
/// may have changed nothing. Until this, such a scope said `wasted 0, redundant 0` as if known (the CI sample's
/// baseline pinned them at 0): now the invalidations by such writes are counted (`uncomparedInvalidations`), and the
/// runs that only such writes kept from being redundant (`possiblyRedundantRuns`), which make the counts least ones.
@Suite("A scope's counts that rest on writes not compared")
struct UncomparedScopeTests {
  /// Per run ended: (redundant, possibly redundant).
  static func judged(_ timeline: [ReplayFact]) -> [[Bool]] {
    timeline.compactMap { fact -> [Bool]? in
      if case .runEnded(let run) = fact { return [run.redundant, run.possiblyRedundant] }
      return nil
    }
  }

  @Test("an invalidation by a write not compared is counted apart, and the re-run it fired is possibly redundant")
  func firedByWriteNotCompared() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], modify: true)  // not compared
    script.run(2, label: 1, reads: [(1, 1)])  // redundant if that write changed nothing
    script.write(1, 1, firing: [2], unchanged: false, modify: true)  // compared: changed
    script.run(3, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [3], unchanged: true, modify: true)  // compared: unchanged
    script.run(4, label: 1, reads: [(1, 1)])  // redundant
    script.write(1, 1, firing: [4])  // through the setter: a change (the macro skips an equal value)
    script.run(5, label: 1, reads: [(1, 1)])
    let (replay, timeline) = script.replay()
    let scope = replay.scopes[1]
    #expect(scope?.invalidations == 4)
    #expect(scope?.wastedInvalidations == 1)
    #expect(scope?.uncomparedInvalidations == 1)
    #expect(scope?.redundantRuns == 1)
    #expect(scope?.possiblyRedundantRuns == 1)
    #expect(replay.properties[1]?.uncomparedWrites == 1)
    #expect(
      Self.judged(timeline) == [[false, false], [false, true], [false, false], [true, false], [false, false]])
  }

  @Test(
    "a run is possibly redundant only when no change known since its previous run began touched what it read, and it read nothing new"
  )
  func knownChangeSettlesIt() {
    var script = EventScript()
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], modify: true)
    script.run(2, label: 1, reads: [(1, 1)])  // possibly redundant
    script.write(1, 1, firing: [2], unchanged: false, modify: true)  // a known change …
    script.write(1, 1, modify: true)  // … behind two not compared (coalesced: the instance waits)
    script.write(1, 1, modify: true)
    script.run(3, label: 1, reads: [(1, 1)])  // not: the known change came since run 2 began
    script.write(1, 1, firing: [3], modify: true)
    script.run(4, label: 1, reads: [(1, 1)])  // possibly: the known change came before run 3 began
    script.write(1, 1, firing: [4], modify: true)
    script.run(5, label: 1, reads: [(1, 1), (2, 1)])  // not: it read something new, so something changed
    let (replay, timeline) = script.replay()
    #expect(
      Self.judged(timeline) == [[false, false], [false, true], [false, false], [false, true], [false, false]])
    #expect(replay.scopes[1]?.possiblyRedundantRuns == 2)
    #expect(replay.scopes[1]?.uncomparedInvalidations == 3)
    #expect(replay.scopes[1]?.redundantRuns == 0)
  }

  @Test("the last known change is kept in the padding of each object property's state: no byte more")
  func stateSize() {
    // 32 bytes before the lag was added (a UInt64, four UInt32 and a UInt8: 25 bytes, padded); 29 with it.
    #expect(MemoryLayout<ReplayMachine.KeyState>.stride == 32)
    var state = ReplayMachine.KeyState()
    state.noteChange(10, known: true)
    state.noteChange(15, known: false)
    #expect((state.lastRealChange, state.lastKnownChange) == (15, 10))
    state.noteChange(1 << 40, known: false)  // past 2^32 events after the known change: taken as none known
    #expect((state.lastRealChange, state.lastKnownChange) == (1 << 40, 0))
    state.noteChange((1 << 40) + 5, known: true)
    #expect(state.lastKnownChange == (1 << 40) + 5)
  }

  @Test("two labels of one scope add their counts of writes not compared")
  func merging() {
    var first = ScopeStatistics(kind: .tracking)
    first.uncomparedInvalidations = 2
    first.possiblyRedundantRuns = 1
    var second = ScopeStatistics(kind: .tracking)
    second.uncomparedInvalidations = 3
    second.possiblyRedundantRuns = 4
    let sum = first.merging(second)
    #expect(sum.uncomparedInvalidations == 5)
    #expect(sum.possiblyRedundantRuns == 5)
  }
}
