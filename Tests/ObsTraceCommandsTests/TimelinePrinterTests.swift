import Foundation
import Testing

@testable import ObsTraceAnalysis
@testable import ObsTraceCommands
@testable import ObsTraceFormat

@Suite("Timeline printer")
struct TimelinePrinterTests {
  /// A trace of one object, for a printer's names.
  func reader() throws -> (TraceReader, String) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "obstrace-printer-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).trc"
    ).path
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    // A footer: a trace that stopped cleanly, whose lines nothing marks as possibly due to a loss.
    try writer.writeChunk(
      .footer, payload: ChunkPayload.footer(TraceFooter(durationNanoseconds: 0, chunks: 1, threads: [])))
    writer.close()
    return (try TraceReader(path: path), path)
  }

  @Test(
    "a line's time and thread are printed as formatted on their own, when a prefix is reused for the same millisecond or microsecond and thread and when it is not"
  )
  func prefixes() throws {
    let (reader, path) = try reader()
    defer { try? FileManager.default.removeItem(atPath: path) }
    var cases: [(time: UInt64, thread: UInt32)] = []
    // Several lines to a microsecond, on one thread and alternating between two; times within a few nanoseconds of
    // a half microsecond (formatted through a double) between times of the same microsecond; long times and threads.
    for base: UInt64 in [0, 1_000_000, 12_345_678_000, 86_400_000_000_000, (1 << 50) - 2_000] {
      for offset: UInt64 in [
        0, 1, 100, 496, 497, 499, 500, 501, 503, 504, 999, 1000, 1001, 1499, 1500, 1502, 2000, 10_000, 999_000,
        999_499, 999_500, 1_000_000, 1_001_000,
      ] {
        for thread: UInt32 in [1, 1, 2, 1, 123_456] { cases.append((base + offset, thread)) }
      }
    }
    // One thread, a microsecond after another in the same millisecond, and across milliseconds.
    for base: UInt64 in [0, 5_000_000, 86_400_000_000_000] {
      for offset in stride(from: UInt64(0), to: 3_000_000, by: 997) { cases.append((base + offset, 7)) }
    }
    cases += [(1 << 50, 1), ((1 << 50) + 1, 1), (.max, 1), (.max, 99_999_999)]
    let output = LineWriterTests.CountingOutput()
    let writer = LineWriter(output: output)
    let printer = TimelinePrinter(
      filter: TimelineCommand.Filter(), names: ResolvedNames(reader: reader), writer: writer)
    for (time, thread) in cases {
      printer.print(.anomaly(AnomalyFact(kind: .unknownEvent, time: time, thread: thread, scope: 0, key: nil)))
    }
    writer.flush()
    let expected = cases.map { time, thread in
      let digits = String(thread).count + 1
      return Formatting.milliseconds(time).leftPadded(9) + "  T\(thread)"
        + String(repeating: " ", count: digits >= 6 ? 2 : 7 - digits) + "INCONSISTENT: event of an unknown kind\n"
    }
    #expect(output.text.split(separator: "\n").count == cases.count)
    #expect(output.text == expected.joined())
  }
}

@Suite("Kept until exit")
struct KeptUntilExitTests {
  final class Tracked {}

  @Test("what a command keeps until exit is never destroyed")
  func kept() {
    weak var watched: Tracked?
    do {
      let value = Tracked()
      watched = value
      KeptUntilExit.keep(value)
    }
    #expect(watched != nil)
  }
}
