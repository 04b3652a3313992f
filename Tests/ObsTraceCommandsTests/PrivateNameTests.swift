import Foundation
import ObsTraceFormat
import Testing

/// Private and fileprivate models (a fresh-clone try-out's J13). Their symbols carry the file's discriminator,
/// `Counter.(secret in _8AAE…)`, `(Model in _11E4…).count`, and the stored field lookup looked for a field
/// `_(secret in _8AAE…)` and compared `Odd.(unknown context at $…).Model` with `Odd.(Model in _11E4…)`: every write of
/// such a property was "not compared (stored field not found)", so no no-op write of a private model was ever found.
/// And the names were the symbol's in report, JSON and baseline and the type's in the timeline, two private `Model`s of
/// two files the same `Model` in the objects table. The fixture Tests/Fixtures/Private.
@Suite("Private models")
struct PrivateNameTests {
  @Test(
    "private members and private classes are compared, and each type and property has one readable name everywhere",
    arguments: ["-Onone", "-O"])
  func privateModels(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/Private"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift", folder + "/PrivB.swift"], module: "Private",
      optimization: optimization, trace: "private\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(run.standardOutput == "A fired\nA 1\nB fired\nB 3\ntotal fired\ntotal 0\n")
    let report = Run.command(["report", trace]).standardOutput
    func row(_ property: String) -> [String] {
      let line = report.split(separator: "\n").first { $0.hasPrefix("  \(property) ") } ?? ""
      return Array(line.dropFirst(2 + property.count).split(separator: " ").map(String.init))
    }
    // Columns: reads, tracked, writes, no-op, invalidations, wasted, coalesced. Before: no-op 0 for every one of them.
    #expect(row("Model (main.swift).count").dropFirst(2).prefix(4) == ["2", "1", "1", "1"], "\(report)")
    #expect(row("Model (PrivB.swift).count").dropFirst(2).prefix(4) == ["4", "1", "1", "0"], "\(report)")
    #expect(row("Counter.secret").dropFirst(2).prefix(4) == ["1", "1", "1", "1"], "\(report)")
    #expect(row("Counter.semi").dropFirst(2).prefix(4) == ["1", "1", "0", "0"], "\(report)")
    #expect(row("Counter.visible").dropFirst(2).prefix(4) == ["1", "1", "0", "0"], "\(report)")
    #expect(report.contains("\n  writes through _modify: 9 compared\n"), "\(report)")
    #expect(!report.contains(" in _") && !report.contains("unknown context"), "\(report)")
    // The objects table: one row per type, told apart by file.
    #expect(row("Model (main.swift)") == ["1", "1", "0", "0", "0"], "\(report)")
    #expect(row("Model (PrivB.swift)") == ["1", "1", "0", "0", "0"], "\(report)")
    // The headline finding, at the user's lines.
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let wasted = report.components(
      separatedBy: "warning [noop-write] 1 write to Counter.secret left the value unchanged and still invalidated")
    #expect(wasted.count == 2, "\(report)")
    if wasted.count == 2 {
      let place = wasted[1].split(separator: "\n").dropFirst().first ?? ""
      #expect(place.hasPrefix("      at Private/main.swift:\(marks["secret unchanged"] ?? 0) ("), "\(report)")
    }
    #expect(
      report.contains("warning [noop-write] 1 write to Model (main.swift).count left the value unchanged"),
      "\(report)")
    // The timeline names objects and properties as the report does.
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains("write Model (main.swift)#1.count by _modify UNCHANGED"), "\(timeline)")
    #expect(timeline.contains("write Model (PrivB.swift)#2.count by _modify UNCHANGED"), "\(timeline)")
    #expect(timeline.contains("write Counter#3.secret by _modify UNCHANGED"), "\(timeline)")
    #expect(!timeline.contains(" in _") && !timeline.contains("not compared"), "\(timeline)")
    let byProperty = Run.command(["timeline", trace, "--property", "Model (PrivB.swift).count"])
    #expect(byProperty.status == 0 && byProperty.standardOutput.contains("Model (PrivB.swift)#2.count"))
    #expect(!byProperty.standardOutput.contains("main.swift)#"), "\(byProperty.standardOutput)")
    // JSON, baseline, graph and check: the same names; a limit takes them.
    let json = Run.command(["report", "--format", "json", trace]).standardOutput
    #expect(json.contains("\"property\":\"Model (main.swift).count\""), "\(json)")
    #expect(json.contains("\"property\":\"Counter.secret\""), "\(json)")
    let baseline = Run.command(["baseline", trace]).standardOutput
    for key in [
      "Counter.secret", "Counter.semi", "Counter.visible", "Model (main.swift).count", "Model (PrivB.swift).count",
    ] {
      #expect(baseline.contains("\n    \"\(key)\": {\"writes\""), "\(key): \(baseline)")
    }
    #expect(!baseline.contains(" in _"), "\(baseline)")
    let graph = Run.command(["graph", trace]).standardOutput
    #expect(graph.contains("label=\"Model (PrivB.swift).count\\n"), "\(graph)")
    let check = Run.command([
      "check", trace, "--max", "Model (PrivB.swift).count:writes<=4", "--max", "Counter.secret:noopWrites<=0",
    ])
    #expect(check.status == 1, "\(check.standardError)")
    #expect(
      check.standardOutput.contains("limit Model (PrivB.swift).count:writes<=4: ok (4)"), "\(check.standardOutput)")
    #expect(
      check.standardOutput.contains("limit Counter.secret:noopWrites<=0: EXCEEDED (1)"), "\(check.standardOutput)")
    // A baseline key of an earlier build, the symbol's spelling, is said to be that.
    let old = Run.command(["check", trace, "--max", "(Model in _\(Self.discriminator("PrivB.swift"))).count:writes<=4"])
    #expect(old.status == 2)
    #expect(
      old.standardError.contains(
        "is what earlier builds of obstrace called Model (PrivB.swift).count, naming a private declaration with its "
          + "file's discriminator: --max 'Model (PrivB.swift).count:writes<=4'"), "\(old.standardError)")
  }

  /// The discriminator of `file` in the fixture's module, as Swift computes it.
  static func discriminator(_ file: String) -> String {
    PrivateNames.discriminator(ofFile: file, module: "Private")
  }
}
