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
    #expect(
      made.errorLines == [
        "obstrace baseline: note: TodoStore.items: \(Self.why); written as unknown (null), which 'check' does not "
          + "hold the property's later counts to"
      ])
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
    // The baseline that did not know it: not checked, and said, in every format; the check of the same run passes.
    // (Checked against it, the compared run fails on the scope TodoList.body, whose wasted invalidations and
    // redundant runs the baseline has at 0: a scope's counts rest on the writes that fired it, compared or not, and
    // are not marked unknown.)
    let unknownBaseline = Paths.temporary("uncompared-base.json")
    #expect(Run.command(["baseline", unknown, "-o", unknownBaseline]).status == 0)
    for trace in [unknown, compared] {
      let again = Run.command(["check", trace, "--baseline", unknownBaseline])
      #expect(again.status == (trace == unknown ? 0 : 1), "\(again.standardOutput)")
      #expect(again.standardOutput.hasSuffix("PASSED\n") == (trace == unknown), "\(again.standardOutput)")
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
}
