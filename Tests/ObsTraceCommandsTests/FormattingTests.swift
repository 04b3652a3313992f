import ObsTraceAnalysis
import ObsTraceTestSupport
import Testing

@testable import ObsTraceCommands

@Suite("Formatting")
struct FormattingTests {
  /// What `milliseconds` printed before it took integer arithmetic: the double, rounded to 3 decimals.
  func throughDouble(_ nanoseconds: UInt64) -> String { Formatting.fixed(Double(nanoseconds) / 1e6, 3) }

  @Test("milliseconds are printed as the double rounded to three decimals always printed them, ties included")
  func millisecondsAsBefore() {
    var cases: [UInt64] = [0, 1, 499, 500, 501, 999, 1000, 1_000_500, 1_234_500, 999_999_500, 1 << 50, (1 << 50) + 500]
    let bases: [UInt64] = [0, 1_000_000, 123_456_789_000, 86_400_000_000_000, (1 << 50) - 10_000]
    for base in bases {
      for remainder in UInt64(0)..<2000 { cases.append(base + remainder) }
    }
    var generator = SeededGenerator()
    for _ in 0..<20_000 { cases.append(UInt64.random(in: 0...(1 << 52), using: &generator)) }
    for nanoseconds in cases {
      #expect(
        Formatting.milliseconds(nanoseconds) == throughDouble(nanoseconds),
        "\(nanoseconds) ns, OBSTRACE_TEST_SEED=\(generator.seed)")
    }
  }
}

@Suite("Completeness")
struct CompletenessTests {
  @Test(
    "events of threads that could not get a ring make a trace incomplete (what check requires), said with their count")
  func ringless() {
    var trace = AnalysisReport.Trace(
      path: "t.trc", events: 10, threads: 1, droppedEvents: 0, truncated: false, damage: [], durationNanoseconds: 1,
      backtraces: "writes", symbolized: true)
    #expect(TraceInput.completeness(trace).complete)
    trace.ringless = 200
    let (text, complete) = TraceInput.completeness(trace)
    #expect(!complete)
    #expect(text.contains("200 events not recorded (threads that could not get a ring"), "\(text)")
  }
}
