import Testing

@testable import ObsTraceBenchStatistics

@Suite("The bench's medians, ranges and verdicts")
struct VerdictTests {
  @Test("a median is the middle value, or the mean of the two middle ones; the range is the lowest to the highest")
  func medianAndRange() {
    let odd = Spread([3, 1, 2, 9, 4])
    #expect(odd.median == 3 && odd.low == 1 && odd.high == 9 && odd.count == 5)
    let even = Spread([4, 1, 3, 2])
    #expect(even.median == 2.5 && even.low == 1 && even.high == 4)
    #expect(Spread([7]) == Spread([7, 7, 7]).withCount(1))
  }

  @Test("a ratio's range is that of the repetitions' ratios, not the ratio of the medians")
  func ratiosRepetitionByRepetition() {
    // Repetition 2 was slow on both sides (a burst of load): its ratio is 1.1, as the others'.
    let ratios = Spread.ofRatios(measured: [110, 220, 110], baseline: [100, 200, 100])
    #expect(ratios.low == 1.1 && ratios.high == 1.1 && ratios.median == 1.1)
    // Repetition 3's case alone was slow: the median stays, the range shows it.
    let apart = Spread.ofRatios(measured: [110, 110, 300], baseline: [100, 100, 100])
    #expect(apart.median == 1.1 && apart.high == 3)
  }

  @Test("a rate from times: the range's ends swap")
  func mappedRange() {
    let seconds = Spread([0.5, 0.4, 0.8])
    let rates = seconds.map { 8 / $0 }
    #expect(rates.median == 16 && rates.low == 10 && rates.high == 20)
  }

  @Test(
    "met only when the whole range meets the target, no when none of it does, on the line otherwise",
    arguments: [
      // s10's three runs of one build, CPU of all threads, stacks on writes, against 2.5×: the old verdict, from one
      // run's figure, said yes, no, yes.
      ([2.36, 2.73, 2.24], BenchTarget.atMost(2.5), Verdict.onTheLine),
      ([1.39, 1.46, 1.57], .atMost(1.4), .onTheLine),
      ([1.80, 2.06, 1.73], .atMost(1.6), .no),
      ([1.00, 1.02, 1.05], .atMost(1.05), .met),
      ([1.051, 1.2], .atMost(1.05), .no),
      // Rates: s10's sustained one writer, against 25 M/s.
      ([22.9, 18.0, 15.3], .atLeast(25), .no),
      ([16.1, 16.3, 19.6], .atLeast(20), .no),
      ([19.9, 20.0, 24.0], .atLeast(20), .onTheLine),
      ([20.0, 21.0], .atLeast(20), .met),
      ([0.95, 1.00, 0.98], .atLeast(1), .onTheLine),
    ])
  func verdicts(values: [Double], target: BenchTarget, expected: Verdict) {
    #expect(target.verdict(Spread(values)) == expected)
  }

  @Test("a single figure on the line's wrong side is no, on its right side met: one run has no range")
  func singleFigure() {
    #expect(BenchTarget.atMost(3).verdict(Spread([2.68])) == .met)
    #expect(BenchTarget.atMost(3).verdict(Spread([3.01])) == .no)
  }
}

extension Spread {
  fileprivate func withCount(_ count: Int) -> Spread {
    var copy = self
    copy.count = count
    return copy
  }
}
