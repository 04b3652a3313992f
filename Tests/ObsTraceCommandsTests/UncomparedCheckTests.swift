import Foundation
import ObsTraceAnalysis
import Testing

/// tryout17's Q7: a property's no-op count (and its wasted invalidations) is not known when some of its writes
/// through `_modify` were not compared (an array under the default `OBSTRACE_COMPARE=trivial`), yet `check --max
/// 'P:noopWrites<=0'` said `ok (0)` and PASSED, a passing JUnit case, and `baseline` wrote `"noopWrites": 0`, a bar
/// a later run's real no-ops could never cross. Now a limit on such a count fails (UNKNOWN) saying why and how to
/// compare, the baseline writes it `null` with the writes not compared and says so, and `check` against a baseline
/// fails a count it knew that is not known now. `obstrace-scenarios noop-modify` writes `TodoStore.items` (an
/// array) twice through `_modify`, one of them changing nothing.
@Suite("Check and baseline of writes not compared")
struct UncomparedCheckTests {
  static let why =
    "2 writes of TodoStore.items through _modify were not compared (not trivially copyable or over 64 bytes: "
    + "arrays, strings, …), so its noopWrites and wastedInvalidations are not known: OBSTRACE_COMPARE=equatable "
    + "compares the Equatable ones"

  /// The scenario recorded with `OBSTRACE_COMPARE=mode`.
  static func record(_ mode: String, _ name: String, worse: Bool = false) throws -> String {
    let trace = Paths.temporary(name)
    let run = try Run.program(
      "obstrace-scenarios", ["noop-modify"] + (worse ? ["worse"] : []),
      environment: ["OBSTRACE_OUTPUT": trace, "OBSTRACE_COMPARE": mode])
    #expect(run.status == 0, "\(run.standardError)")
    return trace
  }

  @Test("a limit on a no-op count not known fails, saying why and how to compare, in text, GitHub and JUnit")
  func limitOnUnknownCount() throws {
    let trace = try Self.record("trivial", "uncompared-limit.trc")
    let limits = [
      "--max", "TodoStore.items:noopWrites<=0", "--max", "TodoStore.items:wastedInvalidations<=0", "--max",
      "TodoStore.items:writes<=2",
    ]
    let text = Run.command(["check", trace] + limits)
    #expect(text.status == 1, "\(text.standardOutput)\(text.standardError)")
    let lines = text.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.contains("  limit TodoStore.items:noopWrites<=0: UNKNOWN (\(Self.why))"), "\(text.standardOutput)")
    #expect(
      lines.contains("  limit TodoStore.items:wastedInvalidations<=0: UNKNOWN (\(Self.why))"), "\(text.standardOutput)")
    // A count the writes not compared take nothing from is checked as before.
    #expect(lines.contains("  limit TodoStore.items:writes<=2: ok (2)"), "\(text.standardOutput)")
    #expect(
      lines.last
        == "FAILED: TodoStore.items:noopWrites<=0 (not known: 2 writes of TodoStore.items not compared); "
        + "TodoStore.items:wastedInvalidations<=0 (not known: 2 writes of TodoStore.items not compared)",
      "\(text.standardOutput)")
    let github = Run.command(["check", trace, "--format", "github"] + limits)
    #expect(github.status == 1)
    #expect(
      github.standardOutput.contains(
        "::error title=obstrace check%3A limit TodoStore.items%3AnoopWrites<=0::limit TodoStore.items:noopWrites<=0 not "
          + "known: \(Self.why)\n"), "\(github.standardOutput)")
    #expect(github.standardOutput.hasSuffix("FAILED\n"), "\(github.standardOutput)")
    let junit = Run.command(["check", trace, "--format", "junit"] + limits)
    #expect(junit.status == 1)
    #expect(junit.standardOutput.contains("failures=\"2\""), "\(junit.standardOutput)")
    #expect(
      junit.standardOutput.contains(
        "<testcase classname=\"obstrace.limits\" name=\"TodoStore.items:noopWrites&lt;=0\" time=\"0\">\n"
          + "      <failure message=\"unknown: not known\" type=\"obstrace.check\">limit TodoStore.items:noopWrites&lt;=0: "
          + "not known: 2 writes of TodoStore.items through _modify were not compared"), "\(junit.standardOutput)")
    // Compared (`equatable`), the same limit is checked: the one no-op write breaks it, a limit of one keeps it.
    let compared = try Self.record("equatable", "compared-limit.trc")
    let known = Run.command([
      "check", compared, "--max", "TodoStore.items:noopWrites<=0", "--max", "TodoStore.items:wastedInvalidations<=1",
    ])
    #expect(known.status == 1)
    #expect(known.standardOutput.contains("  limit TodoStore.items:noopWrites<=0: EXCEEDED (1)\n"), "\(known.standardOutput)")
    #expect(
      known.standardOutput.contains("  limit TodoStore.items:wastedInvalidations<=1: ok (1)\n"), "\(known.standardOutput)")
  }

  @Test("a baseline writes a count not known as null with the writes not compared, says so, and check holds a known one to it")
  func baselineOfUnknownCounts() throws {
    let unknown = try Self.record("trivial", "uncompared-base.trc")
    let compared = try Self.record("equatable", "compared-base.trc")
    let made = Run.command(["baseline", unknown])
    #expect(made.status == 0, "\(made.standardError)")
    let entry = try #require(
      made.standardOutput.split(separator: "\n").first { $0.contains("\"TodoStore.items\"") }, "\(made.standardOutput)")
    #expect(entry.contains("\"noopWrites\": null,"), "\(entry)")
    #expect(entry.contains("\"wastedInvalidations\": null,"), "\(entry)")
    #expect(entry.hasSuffix("\"uncomparedWrites\": 2}"), "\(entry)")
    // The property's note, then the scope's two (see `scopeBaseline`).
    #expect(
      made.errorLines.first
        == "obstrace baseline: note: TodoStore.items: \(Self.why); written as unknown (null), which 'check' does not "
        + "hold the property's later counts to")
    #expect(made.errorLines.count == 3, "\(made.standardError)")
    // A baseline that knew the count (compared), and a run whose writes were not compared: it fails, in every format.
    let knownBaseline = Paths.temporary("compared-base.json")
    #expect(Run.command(["baseline", compared, "-o", knownBaseline]).status == 0)
    let text = Run.command(["check", unknown, "--baseline", knownBaseline])
    #expect(text.status == 1, "\(text.standardOutput)")
    #expect(
      text.standardOutput.contains(
        "  unknown: \(Self.why); the baseline knew them, so the check cannot pass on them\n"), "\(text.standardOutput)")
    #expect(text.standardOutput.contains("property TodoStore.items noopWrites 1 → unknown"), "\(text.standardOutput)")
    let row = text.standardOutput.split(separator: "\n").first {
      $0.contains("TodoStore.items") && $0.contains("noopWrites")
    }.map { $0.split(separator: " ").map(String.init) }
    #expect(row == ["UNKNOWN", "(fail)", "property", "TodoStore.items", "noopWrites", "1", "unknown"], "\(text.standardOutput)")
    let junit = Run.command(["check", unknown, "--baseline", knownBaseline, "--format", "junit"])
    #expect(junit.status == 1)
    #expect(
      junit.standardOutput.contains(
        "name=\"TodoStore.items noopWrites\" time=\"0\">\n      <failure message=\"unknown: 1 → unknown\""),
      "\(junit.standardOutput)")
    let github = Run.command(["check", unknown, "--baseline", knownBaseline, "--format", "github"])
    #expect(github.status == 1)
    #expect(
      github.standardOutput.contains(
        "::error title=obstrace check%3A property TodoStore.items not known::property TodoStore.items: \(Self.why)"),
      "\(github.standardOutput)")
    // The baseline that did not know it: not checked, and said, in every format; the check of the same run passes,
    // and so does the compared run's. (Until the scope's counts were marked unknown too, the compared run failed on
    // the scope TodoList.body, whose wasted invalidations and redundant runs that baseline had at 0, although every
    // write that fired it was not compared.)
    let unknownBaseline = Paths.temporary("uncompared-base.json")
    #expect(Run.command(["baseline", unknown, "-o", unknownBaseline]).status == 0)
    for trace in [unknown, compared] {
      let again = Run.command(["check", trace, "--baseline", unknownBaseline])
      #expect(again.status == 0, "\(again.standardOutput)")
      #expect(again.standardOutput.hasSuffix("PASSED\n"), "\(again.standardOutput)")
      #expect(again.standardOutput.contains("\n  unknown: "), "\(again.standardOutput)")
      let skipped = Run.command(["check", trace, "--baseline", unknownBaseline, "--format", "junit"])
      #expect(
        skipped.standardOutput.contains("name=\"TodoStore.items noopWrites\" time=\"0\">\n      <skipped message="),
        "\(skipped.standardOutput)")
      let warned = Run.command(["check", trace, "--baseline", unknownBaseline, "--format", "github"])
      #expect(
        warned.standardOutput.contains("::warning title=obstrace check%3A property TodoStore.items not checked::"),
        "\(warned.standardOutput)")
    }
    let sameAgain = Run.command(["check", unknown, "--baseline", unknownBaseline]).standardOutput
    #expect(sameAgain.contains("\n  unknown: \(Self.why) (nor in the baseline: not checked)\n"), "\(sameAgain)")
    let nowKnown = Run.command(["check", compared, "--baseline", unknownBaseline]).standardOutput
    #expect(
      nowKnown.contains(
        "\n  unknown: the baseline does not know TodoStore.items's noopWrites and wastedInvalidations (its writes "
          + "through _modify were not all compared when it was made), so they are not checked; a new baseline "
          + "('obstrace baseline') pins them\n"), "\(nowKnown)")
  }

  @Test("a baseline's null is read only for the counts that rest on compared writes, both or neither")
  func parsesUnknown() throws {
    func parse(_ counts: String) -> (baseline: Baseline?, error: String?) {
      let text = "{\"schema\": \"obstrace.baseline/1\", \"properties\": {\"M.p\": {\(counts)}}, \"scopes\": {}}"
      do {
        return (try Baseline.parse(Data(text.utf8)), nil)
      } catch {
        return (nil, error.description)
      }
    }
    let read = try #require(
      parse("\"writes\": 3, \"noopWrites\": null, \"wastedInvalidations\": null, \"uncomparedWrites\": 3").baseline)
    #expect(read.uncompared == ["M.p": 3])
    #expect(read.isUnknown(property: "M.p", "noopWrites") && !read.isUnknown(property: "M.p", "writes"))
    // Written back the same.
    #expect(read.json().contains("\"M.p\": {\"writes\": 3, \"noopWrites\": null, \"invalidations\": 0, "
      + "\"wastedInvalidations\": null, \"maximumFanOut\": 0, \"uncomparedWrites\": 3}"))
    for (counts, error) in [
      ("\"writes\": null", "has \"writes\": null for \"M.p\", which is not a count"),
      ("\"noopWrites\": null", "has \"M.p\" with \"noopWrites\" and \"wastedInvalidations\" not both null"),
      ("\"noopWrites\": 0, \"uncomparedWrites\": 2", "not both null"),
      ("\"noopWrites\": null, \"wastedInvalidations\": null, \"uncomparedWrites\": \"2\"",
        "has \"uncomparedWrites\": \"2\" for \"M.p\", which is not a count"),
    ] {
      let parsed = parse(counts)
      #expect(parsed.baseline == nil, "\(counts) was read")
      #expect(parsed.error?.contains(error) == true, "\(counts): \(parsed.error ?? "")")
    }
  }

  @Test("a limit on a count not known is exceeded when what the compared writes made already breaks it")
  func leastValue() {
    var current = Baseline()
    current.properties["M.p"] = [
      "writes": 5, "noopWrites": 2, "invalidations": 2, "wastedInvalidations": 1, "maximumFanOut": 1,
    ]
    current.uncompared["M.p"] = 3
    let limits = ["M.p:noopWrites<=1", "M.p:noopWrites<=2", "M.p:noopWrites==2", "M.p:writes<=5"].compactMap(
      BaselineComparison.Limit.parse)
    let results = BaselineComparison(current: current, baseline: nil, tolerance: 0, limits: limits).limits
    #expect(results.map(\.passed) == [false, false, false, true])
    #expect(results.map(\.exceeded) == [true, false, false, false])
    #expect(results.map(\.uncompared) == [3, 3, 3, nil])
  }

  static let wastedWhy =
    "2 of TodoList.body's invalidations were by writes through _modify not compared (TodoStore.items: not trivially "
    + "copyable or over 64 bytes: arrays, strings, …), so its wastedInvalidations is not known: "
    + "OBSTRACE_COMPARE=equatable compares the Equatable ones"
  static let redundantWhy =
    "2 runs of TodoList.body would be redundant if the writes through _modify not compared before them changed "
    + "nothing (TodoStore.items: not trivially copyable or over 64 bytes: arrays, strings, …), so its redundantRuns "
    + "is not known: OBSTRACE_COMPARE=equatable compares the Equatable ones"

  /// The scenario's scope `TodoList.body` is fired by both writes of the array; compared, one is a no-op (a wasted
  /// invalidation, a redundant run); not compared, neither count is known. Until this, the report said `wasted 0,
  /// redundant 0`, `check --max 'TodoList.body:wastedInvalidations<=0'` passed, and the baseline pinned them at 0.
  @Test("a scope fired by writes not compared has least wasted and redundant counts: the report says so, and a limit on them fails")
  func scopeLimitsAndReport() throws {
    let unknown = try Self.record("trivial", "uncompared-scope.trc")
    let compared = try Self.record("equatable", "compared-scope.trc")
    func scopeRow(_ text: String) -> [String]? {
      text.split(separator: "\n").first { $0.hasPrefix("  TodoList.body ") }?.split(separator: " ").map(String.init)
    }
    let report = Run.command(["report", unknown])
    #expect(report.status == 0)
    #expect(
      scopeRow(report.standardOutput) == ["TodoList.body", "tracking", "1", "3", "2", "≥0", "≥0", "TodoStore.items"],
      "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains(
        "\n  TodoList.body: wasted and redundant are at least the counts shown: 2 of its invalidations were by "
          + "writes through _modify not compared, and 2 of its runs would be redundant if the writes through _modify "
          + "not compared before them changed nothing\n"), "\(report.standardOutput)")
    let known = Run.command(["report", compared]).standardOutput
    #expect(scopeRow(known) == ["TodoList.body", "tracking", "1", "3", "2", "1", "1", "TodoStore.items"], "\(known)")
    #expect(!known.contains("at least"), "\(known)")
    // The property's own no-op and wasted counts are least counts too, marked in its row (tryout18's R3: a plain 0).
    func propertyCells(_ text: String) -> [String] {
      let row = text.split(separator: "\n").first { $0.hasPrefix("  TodoStore.items ") }
      let cells = row?.split(separator: " ").map(String.init) ?? []
      return cells.count >= 8 ? [cells[4], cells[6]] : cells
    }
    #expect(propertyCells(report.standardOutput) == ["≥0", "≥0"], "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains(
        "\n  ≥: no-op and wasted are at least the counts shown for TodoStore.items: its writes not compared may have "
          + "changed nothing\n"), "\(report.standardOutput)")
    #expect(propertyCells(known).allSatisfy { !$0.hasPrefix("≥") && Int($0) != nil }, "\(known)")
    #expect(!known.contains("≥"), "\(known)")
    // The HTML report says it under its scopes table; the timeline on each run that rests on such writes.
    let page = Run.command(["report", unknown, "--format", "html"]).standardOutput
    #expect(
      page.contains(
        "<p class=\"note\" id=\"least-counts\">TodoList.body: wasted and redundant are at least the counts shown: "),
      "\(page)")
    #expect(!Run.command(["report", compared, "--format", "html"]).standardOutput.contains("least-counts"))
    let marker = "  [redundant if the writes not compared since its previous run changed nothing]"
    let timeline = Run.command(["timeline", unknown]).standardOutput
    #expect(timeline.components(separatedBy: marker).count - 1 == 2, "\(timeline)")
    #expect(!Run.command(["timeline", compared]).standardOutput.contains(marker))
    for (trace, expected) in [
      (unknown, [0, 0, 2, 2]), (compared, [1, 1, 0, 0]),
    ] {
      let json = Run.command(["report", trace, "--format", "json"])
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
      let scope = try #require((object["scopes"] as? [[String: Any]])?.first)
      let counts = ["wastedInvalidations", "redundantRuns", "uncomparedInvalidations", "possiblyRedundantRuns"].map {
        scope[$0] as? Int
      }
      #expect(counts == expected, "\(scope)")
    }

    let limits = [
      "--max", "TodoList.body:wastedInvalidations<=0", "--max", "TodoList.body:redundantRuns<=0", "--max",
      "TodoList.body:runs<=3",
    ]
    let text = Run.command(["check", unknown] + limits)
    #expect(text.status == 1, "\(text.standardOutput)")
    let lines = text.standardOutput.split(separator: "\n").map(String.init)
    #expect(
      lines.contains("  limit TodoList.body:wastedInvalidations<=0: UNKNOWN (\(Self.wastedWhy))"),
      "\(text.standardOutput)")
    #expect(
      lines.contains("  limit TodoList.body:redundantRuns<=0: UNKNOWN (\(Self.redundantWhy))"),
      "\(text.standardOutput)")
    #expect(lines.contains("  limit TodoList.body:runs<=3: ok (3)"), "\(text.standardOutput)")
    #expect(
      lines.last
        == "FAILED: TodoList.body:wastedInvalidations<=0 (not known: 2 invalidations by writes not compared); "
        + "TodoList.body:redundantRuns<=0 (not known: 2 runs possibly redundant for writes not compared)",
      "\(text.standardOutput)")
    let github = Run.command(["check", unknown, "--format", "github"] + limits)
    #expect(github.status == 1)
    #expect(
      github.standardOutput.contains(
        "::error title=obstrace check%3A limit TodoList.body%3AredundantRuns<=0::limit TodoList.body:redundantRuns<=0 "
          + "not known: \(Self.redundantWhy)\n"), "\(github.standardOutput)")
    let junit = Run.command(["check", unknown, "--format", "junit"] + limits)
    #expect(junit.status == 1)
    #expect(junit.standardOutput.contains("failures=\"2\""), "\(junit.standardOutput)")
    #expect(
      junit.standardOutput.contains(
        "<testcase classname=\"obstrace.limits\" name=\"TodoList.body:wastedInvalidations&lt;=0\" time=\"0\">\n"
          + "      <failure message=\"unknown: not known\" type=\"obstrace.check\">"), "\(junit.standardOutput)")
    // Compared, the same limits are checked: the no-op write's invalidation and its re-run break them.
    let checked = Run.command(["check", compared] + limits)
    #expect(checked.status == 1)
    #expect(
      checked.standardOutput.contains("  limit TodoList.body:wastedInvalidations<=0: EXCEEDED (1)\n"),
      "\(checked.standardOutput)")
    #expect(
      checked.standardOutput.contains("  limit TodoList.body:redundantRuns<=0: EXCEEDED (1)\n"),
      "\(checked.standardOutput)")
  }

  @Test("a baseline writes a scope's counts not known as null with what makes them so, and check holds a known one to it")
  func scopeBaseline() throws {
    let unknown = try Self.record("trivial", "uncompared-scope-base.trc")
    let compared = try Self.record("equatable", "compared-scope-base.trc")
    let made = Run.command(["baseline", unknown])
    #expect(made.status == 0, "\(made.standardError)")
    let entry = made.standardOutput.split(separator: "\n").map(String.init).first {
      $0.contains("\"TodoList.body\": {\"runs\"")
    }
    let expected: String =
      "    \"TodoList.body\": {\"runs\": 3, \"invalidations\": 2, \"wastedInvalidations\": null, "
      + "\"redundantRuns\": null, \"uncomparedInvalidations\": 2, \"possiblyRedundantRuns\": 2}"
    #expect(entry == expected, "\(made.standardOutput)")
    let scopeNote = { (why: String) in
      "obstrace baseline: note: TodoList.body: \(why); written as unknown (null), which 'check' does not hold the "
        + "scope's later count to"
    }
    #expect(made.errorLines.contains(scopeNote(Self.wastedWhy)), "\(made.standardError)")
    #expect(made.errorLines.contains(scopeNote(Self.redundantWhy)), "\(made.standardError)")
    // Compared, they are numbers (and nothing is said).
    let knownBaseline = Paths.temporary("compared-scope-base.json")
    let knownMade = Run.command(["baseline", compared, "-o", knownBaseline])
    #expect(knownMade.status == 0)
    #expect(!knownMade.standardError.contains("TodoList.body"), "\(knownMade.standardError)")
    let knownText = try String(contentsOfFile: knownBaseline, encoding: .utf8)
    #expect(
      knownText.contains(
        "    \"TodoList.body\": {\"runs\": 3, \"invalidations\": 2, \"wastedInvalidations\": 1, "
          + "\"redundantRuns\": 1}\n"),
      "\(knownText)")
    // Known in the baseline, not known now: fails, in every format.
    let text = Run.command(["check", unknown, "--baseline", knownBaseline])
    #expect(text.status == 1, "\(text.standardOutput)")
    #expect(
      text.standardOutput.contains(
        "\n  unknown: \(Self.redundantWhy); the baseline knew it, so the check cannot pass on it\n"),
      "\(text.standardOutput)")
    #expect(
      text.standardOutput.contains(
        "scope TodoList.body wastedInvalidations 1 → unknown; scope TodoList.body redundantRuns 1 → unknown"),
      "\(text.standardOutput)")
    let junit = Run.command(["check", unknown, "--baseline", knownBaseline, "--format", "junit"])
    #expect(junit.status == 1)
    #expect(
      junit.standardOutput.contains(
        "name=\"TodoList.body redundantRuns\" time=\"0\">\n      <failure message=\"unknown: 1 → unknown\""),
      "\(junit.standardOutput)")
    let github = Run.command(["check", unknown, "--baseline", knownBaseline, "--format", "github"])
    #expect(github.status == 1)
    #expect(
      github.standardOutput.contains(
        "::error title=obstrace check%3A scope TodoList.body not known::scope TodoList.body: \(Self.wastedWhy); the "
          + "baseline knew it, so the check cannot pass on it\n"), "\(github.standardOutput)")
    // Not known in the baseline: said, not checked; the compared run passes against it.
    let unknownBaseline = Paths.temporary("uncompared-scope-base.json")
    #expect(Run.command(["baseline", unknown, "-o", unknownBaseline]).status == 0)
    let nowKnown = Run.command(["check", compared, "--baseline", unknownBaseline])
    #expect(nowKnown.status == 0, "\(nowKnown.standardOutput)")
    #expect(
      nowKnown.standardOutput.contains(
        "\n  unknown: the baseline does not know TodoList.body's redundantRuns (when it was made, runs of it rested "
          + "on writes through _modify not compared), so it is not checked; a new baseline ('obstrace baseline') pins "
          + "it\n"), "\(nowKnown.standardOutput)")
    let skipped = Run.command(["check", compared, "--baseline", unknownBaseline, "--format", "junit"])
    #expect(
      skipped.standardOutput.contains(
        "name=\"TodoList.body wastedInvalidations\" time=\"0\">\n      <skipped message="),
      "\(skipped.standardOutput)")
  }

  @Test("a baseline's null for a scope's count is read with what makes it so, each count on its own")
  func parsesUnknownScope() throws {
    func parse(_ counts: String) -> (baseline: Baseline?, error: String?) {
      let text = "{\"schema\": \"obstrace.baseline/1\", \"properties\": {}, \"scopes\": {\"S.body\": {\(counts)}}}"
      do {
        return (try Baseline.parse(Data(text.utf8)), nil)
      } catch {
        return (nil, error.description)
      }
    }
    let read = try #require(
      parse("\"runs\": 3, \"redundantRuns\": null, \"possiblyRedundantRuns\": 2, \"wastedInvalidations\": 1").baseline)
    #expect(read.uncomparedScopes == ["S.body": ["redundantRuns": 2]])
    #expect(read.isUnknown(kind: "scope", "S.body", "redundantRuns"))
    #expect(!read.isUnknown(kind: "scope", "S.body", "wastedInvalidations"))
    #expect(read.scopes["S.body"]?["wastedInvalidations"] == 1)
    // Written back the same.
    #expect(
      read.json().contains(
        "\"S.body\": {\"runs\": 3, \"invalidations\": 0, \"wastedInvalidations\": 1, \"redundantRuns\": null, "
          + "\"possiblyRedundantRuns\": 2}"), "\(read.json())")
    for (counts, error) in [
      ("\"runs\": null", "has \"runs\": null for \"S.body\", which is not a count"),
      (
        "\"wastedInvalidations\": 0, \"uncomparedInvalidations\": 2",
        "with \"uncomparedInvalidations\": 2 and \"wastedInvalidations\" not null"
      ),
      (
        "\"redundantRuns\": null, \"possiblyRedundantRuns\": -1",
        "has \"possiblyRedundantRuns\": -1 for \"S.body\", which is not a count"
      ),
      ("\"uncomparedWrites\": 2", "has an unknown metric \"uncomparedWrites\" for \"S.body\""),
    ] {
      let parsed = parse(counts)
      #expect(parsed.baseline == nil, "\(counts) was read")
      #expect(parsed.error?.contains(error) == true, "\(counts): \(parsed.error ?? "")")
    }
  }

  @Test("a limit on a scope's count not known is exceeded when what the compared writes made already breaks it")
  func scopeLeastValue() {
    var current = Baseline()
    current.scopes["S.body"] = ["runs": 5, "invalidations": 4, "wastedInvalidations": 2, "redundantRuns": 1]
    current.uncomparedScopes["S.body"] = ["wastedInvalidations": 2]
    let limits = ["S.body:wastedInvalidations<=1", "S.body:wastedInvalidations<=2", "S.body:redundantRuns<=1"]
      .compactMap(BaselineComparison.Limit.parse)
    let results = BaselineComparison(current: current, baseline: nil, tolerance: 0, limits: limits).limits
    #expect(results.map(\.passed) == [false, false, true])
    #expect(results.map(\.exceeded) == [true, false, false])
    #expect(results.map(\.uncompared) == [2, 2, nil])
  }
}
