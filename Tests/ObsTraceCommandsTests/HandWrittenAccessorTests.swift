import Foundation
import ObsTraceFormat
import Testing

/// A property whose accessors are written by hand (a `_modify` or `set` that calls the registrar's `willSet` and
/// `didSet` itself) keeps its value where its author chose; a field `_name` of its type may be something else. The
/// recorder compared that field (its name rule) and called a real change unchanged: a false noop-write warning and
/// false no-op and wasted counts (a fresh-clone try-out's H4). It compares a field only when the line table shows the
/// property's getter to be the `@Observable` macro's: the fixture Tests/Fixtures/HandWritten.
@Suite("Hand-written accessors")
struct HandWrittenAccessorTests {
  @Test(
    "a hand-written accessor's writes are not compared (hand-written accessor), the macro's are, in debug and release",
    arguments: ["-Onone", "-O"])
  func notComparedOnAnotherField(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/HandWritten"
    let source = folder + "/main.swift"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [source, folder + "/Models.swift"], module: "HandWritten", optimization: optimization,
      trace: "hand-written\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(
      run.standardOutput
        == "percent fired\npercent 5 cache 0\ncents fired\ncents 7\ndegrees fired\nreading fired\n"
        + "degrees 21 reading 0 cache 0\n")
    let report = Run.command(["report", trace]).standardOutput
    func row(_ property: String) -> [String] {
      let line = report.split(separator: "\n").first { $0.hasPrefix("  \(property) ") } ?? ""
      return line.split(separator: " ").dropFirst().map(String.init)
    }
    // Columns: reads, tracked, writes, no-op, invalidations, wasted, coalesced. Before: percent's `+= 5` (0 → 5)
    // and `+= 0` were both no-ops (its cache `_percent` stayed 0), one of them wasted; degrees' `= 21` a no-op.
    // Not compared, their no-op and wasted counts are least counts (≥0), not 0.
    #expect(row("Ledger.percent").dropFirst(2).prefix(4) == ["2", "≥0", "1", "≥0"], "\(report)")
    #expect(row("Thermometer.degrees").dropFirst(2).prefix(4) == ["1", "≥0", "1", "≥0"], "\(report)")
    // The macro's properties are still compared: `+= 0` a no-op, and wasted when it fired a scope.
    #expect(row("Ledger.cents").dropFirst(2).prefix(4) == ["2", "1", "1", "1"], "\(report)")
    #expect(row("Thermometer.reading").dropFirst(2).prefix(4) == ["1", "1", "1", "1"], "\(report)")
    #expect(
      report.contains(
        "\n  writes through _modify: 3 compared, 3 not compared (hand-written accessor: its getter is not the "
          + "@Observable macro's, so its value may be kept anywhere, not known to be in a field _name)\n"),
      "\(report)")
    #expect(!report.contains("write to Ledger.percent left") && !report.contains("write to Thermometer.degrees left"))
    let marks = try FixtureBuild.siteMarks(source)
    for (property, mark) in [("Ledger.cents", "cents unchanged"), ("Thermometer.reading", "reading unchanged")] {
      let finding = report.components(separatedBy: "[noop-write] 1 write to \(property) left the value unchanged")
      #expect(finding.count == 2, "no finding for \(property):\n\(report)")
      if finding.count == 2 {
        let place = finding[1].split(separator: "\n").dropFirst().first ?? ""
        // Top-level code's site names its module (recorded: the symbols' 0x97 record).
        #expect(place.hasPrefix("      at HandWritten/main.swift:\(marks[mark] ?? 0) ("), "\(report)")
      }
    }
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.components(separatedBy: "written (not compared: hand-written accessor)").count == 4, "\(timeline)")
    #expect(!timeline.contains(".percent by _modify UNCHANGED") && !timeline.contains(".degrees by set UNCHANGED"))
    #expect(timeline.contains(".cents by _modify UNCHANGED") && timeline.contains(".reading by _modify UNCHANGED"))
    // JSON names the reason by its key.
    let json = Run.command(["report", "--format", "json", trace]).standardOutput
    #expect(json.contains("\"handWrittenAccessor\":3"), "\(json)")
  }
}
