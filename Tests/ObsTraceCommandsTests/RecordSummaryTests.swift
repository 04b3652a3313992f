import Foundation
import ObsTraceFormat
import Testing

@testable import ObsTraceCommands

/// `obstrace record`'s summary and what it costs (a fresh-clone try-out's G12: it replayed a 70 M-event trace, ≈ 8 s
/// of CPU, for one line, with no way to skip it): the findings are counted for a trace up to a size, or when asked
/// (--findings); otherwise, or with --no-findings, the summary is its footer's counts, said as such.
@Suite("record's summary")
struct RecordSummaryTests {
  static let traces = ["guide", "stale-read", "fan-out", "noop-modify", "threads", "observations"]

  @Test("the footer's summary counts what the replay's does: events, threads, duration, drops", arguments: traces)
  func footerCountsAsTheReplay(trace: String) throws {
    let path = Paths.root + "/traces/\(trace).trc"
    let replayed = RecordCommand.summary(path: path, ending: .exited(0), findings: .always)
    let footer = RecordCommand.summary(path: path, ending: .exited(0), findings: .never)
    // "obstrace: recorded N events from T threads over D into PATH (SIZE)", then what each adds.
    let head = try #require(replayed.components(separatedBy: "): ").first) + ")"
    #expect(head.hasPrefix("obstrace: recorded ") && head.hasSuffix(" into \(path) (\(Self.size(path)))"), "\(head)")
    let dropped = try #require(replayed.components(separatedBy: "; ").last?.components(separatedBy: ". Findings").first)
    #expect(dropped.hasSuffix(" dropped"), "\(replayed)")
    #expect(
      footer
        == head + ", as its footer counts them; " + dropped + ". Not read back (--no-findings): 'obstrace report "
        + path + "' says its objects, properties and findings.")
    #expect(replayed.contains(". Findings: "))
  }

  static func size(_ path: String) -> String {
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return Formatting.bytes(UInt64(bytes))
  }

  @Test("by default a trace over the limit is not replayed, and the summary says so and how to count its findings")
  func overTheLimit() {
    let path = Paths.root + "/traces/guide.trc"
    let under = RecordCommand.summary(path: path, ending: .exited(0), findings: .belowLimit, limit: 1 << 20)
    #expect(under.contains(". Findings: ") && !under.contains("as its footer counts them"), "\(under)")
    let over = RecordCommand.summary(path: path, ending: .exited(0), findings: .belowLimit, limit: 100)
    #expect(!over.contains("Findings"), "\(over)")
    #expect(
      over.hasSuffix(
        ", as its footer counts them; 0 dropped. Not read back (a trace over 100 bytes, which takes a while to replay): "
          + "'obstrace report \(path)' says its objects, properties and findings, as 'record --findings' would here."),
      "\(over)")
    // --findings replays whatever the size.
    let asked = RecordCommand.summary(path: path, ending: .exited(0), findings: .always, limit: 100)
    #expect(asked == under)
  }

  @Test("record --no-findings and --findings: the summary as asked; both at once is an error naming them")
  func options() throws {
    let trace = Paths.temporary("record.trc")
    let skipped = try Run.program(
      "obstrace", ["record", "--no-findings", "-o", trace, "--", Paths.binary("obstrace-demo")])
    #expect(skipped.status == 0)
    #expect(skipped.errorLines.count == 1, "\(skipped.standardError)")
    #expect(skipped.standardError.contains(" events from 1 thread over "), "\(skipped.standardError)")
    #expect(skipped.standardError.contains("as its footer counts them; 0 dropped. Not read back (--no-findings)"))
    let counted = try Run.program(
      "obstrace", ["record", "--findings", "-o", trace, "--", Paths.binary("obstrace-demo")])
    #expect(counted.standardError.contains(". Findings: "), "\(counted.standardError)")
    let both = Run.command(["record", "--findings", "--no-findings", "-o", trace, "--", "/bin/true"])
    #expect(both.status == 2)
    #expect(both.standardError == "obstrace record: --findings and --no-findings exclude each other; give one\n")
    #expect(Run.command(["record", "--help"]).standardOutput.contains("--no-findings"))
  }

  @Test("a trace with no footer, over the limit: said as truncated, with how to name it, not counted")
  func noFooter() throws {
    // The guide's bytes up to its footer: a trace whose process was killed.
    let (bytes, chunks) = try GuideTrace.read()
    let footer = try #require(chunks.first { $0.type == .footer })
    let path = try GuideTrace.write(bytes.prefix(Int(footer.range.lowerBound)), "killed.trc")
    let summary = RecordCommand.summary(path: path, ending: .signalled(SIGKILL), findings: .never)
    #expect(
      summary
        == "obstrace: \(path) (\(Self.size(path))) has no footer to count its events; the trace is truncated: the "
        + "process that recorded it ended without stopping the recording (killed or crashed), so the events it had "
        + "not yet written are not in it. Not read back (--no-findings): 'obstrace report \(path)' says its objects, "
        + "properties and findings.")
  }
}
