import Foundation
import ObsTraceAnalysis
import Testing

/// The CI gate, run as CI runs it: a baseline from one trace, checks of the same and of a worse one, limits.
@Suite("Baseline and check")
struct CheckTests {
  let trace = Paths.root + "/traces/noop-modify.trc"
  let worse = Paths.root + "/traces/noop-modify-worse.trc"
  let committedBaseline = Paths.root + "/traces/noop-modify.baseline.json"

  @Test("the baseline is stable: made again from the same trace it is byte for byte the committed one")
  func baselineIsStable() throws {
    let path = Paths.temporary("baseline.json")
    let result = Run.command(["baseline", trace, "-o", path])
    #expect(result.status == 0)
    #expect(
      try String(contentsOfFile: path, encoding: .utf8) == String(contentsOfFile: committedBaseline, encoding: .utf8))
    let printed = Run.command(["baseline", trace])
    #expect(printed.standardOutput.contains("\"TodoStore.items\": {\"writes\": 2, \"noopWrites\": 1"))
  }

  @Test("--max with a metric check does not count names it and lists the metrics; --help lists the same")
  func unknownMetric() {
    let metrics =
      "a property's: writes, noopWrites, invalidations, wastedInvalidations, maximumFanOut; "
      + "a scope's: runs, invalidations, wastedInvalidations, redundantRuns"
    #expect(metrics.contains(Baseline.propertyMetrics.joined(separator: ", ")))
    #expect(metrics.contains(Baseline.scopeMetrics.joined(separator: ", ")))
    let reads = Run.command(["check", trace, "--max", "Model.property:reads<=1"])
    #expect(reads.status == 2)
    #expect(
      reads.errorLines == [
        "obstrace check: --max 'Model.property:reads<=1': 'reads' is not a metric check counts (\(metrics))"
      ])
    let malformed = Run.command(["check", trace, "--max", "Model.property<=1"])
    #expect(malformed.status == 2)
    #expect(
      malformed.errorLines == [
        "obstrace check: --max 'Model.property<=1' is not of the form 'Name:metric<=N' (also < and ==) with a metric "
          + "of 'obstrace baseline' (\(metrics))"
      ])
    let help = Run.command(["check", "--help"]).standardOutput.split(separator: "\n").joined(separator: " ")
      .split(separator: " ").joined(separator: " ")
    for metric in Baseline.propertyMetrics + Baseline.scopeMetrics { #expect(help.contains(metric)) }
  }

  @Test("--max with a number too large for a count says so, naming the flag; a negative one that overflows can never pass")
  func numberTooLarge() {
    let large = Run.command(["check", trace, "--max", "TodoStore.items:writes<=99999999999999999999999"])
    #expect(large.status == 2)
    #expect(
      large.errorLines == [
        "obstrace check: --max 'TodoStore.items:writes<=99999999999999999999999': 99999999999999999999999 is too "
          + "large for a count (at most 9223372036854775807)"
      ])
    let below = Run.command(["check", trace, "--max", "TodoStore.items:writes<99999999999999999999999"])
    #expect(below.errorLines.first?.hasSuffix(": 99999999999999999999999 is too large for a count (at most 9223372036854775807)") == true)
    let negative = Run.command(["check", trace, "--max", "TodoStore.items:writes==-99999999999999999999999"])
    #expect(negative.status == 2)
    #expect(
      negative.errorLines == [
        "obstrace check: --max 'TodoStore.items:writes==-99999999999999999999999' can never pass: counts are 0 or more "
          + "(use '<=0' for none at all)"
      ])
    // Not a number at all: the form, as before.
    let word = Run.command(["check", trace, "--max", "TodoStore.items:writes<=many"])
    #expect(word.errorLines.first?.contains("is not of the form 'Name:metric<=N'") == true)
  }

  @Test(
    "a baseline's count that is not one is refused, naming it, not read as 0 or wrapped; unknown metrics too (a fresh-clone try-out's J7)",
    arguments: [
      (#""writes": "2""#, #"has "writes": "2" for "TodoStore.items", which is not a count"#),
      (#""writes": null"#, #"has "writes": null for "TodoStore.items", which is not a count"#),
      (#""writes": -5"#, #"has "writes": -5 for "TodoStore.items", which is not a count"#),
      (#""writes": 2.5"#, #"has "writes": 2.5 for "TodoStore.items", which is not a count"#),
      (#""writes": true"#, #"has "writes": true for "TodoStore.items", which is not a count"#),
      (#""writes": 184467440737095516150"#, #"has "writes": 184467440737095516150 for "TodoStore.items""#),
      (#""writes": 2, "bogus": 7"#, #"has an unknown metric "bogus" for "TodoStore.items""#),
    ])
  func hostileCounts(replacement: String, error: String) throws {
    let text = try String(contentsOfFile: committedBaseline, encoding: .utf8)
    #expect(text.contains(#""writes": 2"#))
    let path = Paths.temporary("hostile-count.json")
    try text.replacingOccurrences(of: #""writes": 2"#, with: replacement).write(
      toFile: path, atomically: true, encoding: .utf8)
    let result = Run.command(["check", trace, "--baseline", path])
    #expect(result.status == 2, "\(result.standardOutput)")
    #expect(result.errorLines.count == 1 && result.standardError.contains(error), "\(result.standardError)")
    #expect(result.standardOutput.isEmpty)
  }

  @Test(
    "a baseline that is JSON of another shape is said as such, not as 'not JSON' (tryout18's R10)",
    arguments: [
      ("[]", "is JSON but not an ObsTrace baseline: its top level is an array, not an object"),
      ("42", "is JSON but not an ObsTrace baseline: its top level is 42, not an object"),
      ("null", "is JSON but not an ObsTrace baseline: its top level is null, not an object"),
      (#""x""#, #"is JSON but not an ObsTrace baseline: its top level is "x", not an object"#),
      (#"{"schema": "obstrace.baseline/1", "properties": [], "scopes": {}}"#, #"has "properties": an array, not an object of names"#),
      (#"{"schema": "obstrace.baseline/1", "scopes": {}}"#, #"has no "properties""#),
      ("{not json", "could not be read as JSON"),
    ])
  func baselineOfAnotherShape(text: String, error: String) throws {
    let path = Paths.temporary("shape-baseline.json")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let result = Run.command(["check", trace, "--baseline", path])
    #expect(result.status == 2, "\(result.standardOutput)")
    #expect(result.errorLines.count == 1 && result.standardError.contains(error), "\(result.standardError)")
    #expect(result.standardOutput.isEmpty)
  }

  @Test(
    "a name given twice in a baseline is an error naming the file, both lines and the name, not one entry taken silently",
    arguments: [
      // The property again on a line of its own, with other counts (the later was the one checked, silently).
      (
        #"    "TodoStore.items": {"writes": 2"#,
        "    \"TodoStore.items\": {\"writes\": 9},\n    \"TodoStore.items\": {\"writes\": 2",
        #"gives the property "TodoStore.items" twice, on lines 4 and 5"#
      ),
      // Spelled with an escape: the same name once decoded.
      (
        #"    "TodoList.body": {"runs": 3"#,
        "    \"TodoList\\u002ebody\": {\"runs\": 1},\n    \"TodoList.body\": {\"runs\": 3",
        #"gives the scope "TodoList.body" twice, on lines 7 and 8"#
      ),
      // A metric twice in one entry.
      (
        #""writes": 2, "noopWrites": 1"#, #""writes": 2, "writes": 7, "noopWrites": 1"#,
        #"gives the metric "writes" twice, on lines 4 and 4"#
      ),
    ])
  func duplicateNames(original: String, replacement: String, error: String) throws {
    let text = try String(contentsOfFile: committedBaseline, encoding: .utf8)
    #expect(text.contains(original))
    let path = Paths.temporary("duplicate-name.json")
    try text.replacingOccurrences(of: original, with: replacement).write(
      toFile: path, atomically: true, encoding: .utf8)
    // The same JSON, read as JSONSerialization reads it, is taken without a word: one entry of the two.
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
    #expect(object != nil)
    let result = Run.command(["check", trace, "--baseline", path])
    #expect(result.status == 2, "\(result.standardOutput)")
    #expect(
      result.errorLines == [
        "obstrace check: \(path) " + error + ": one of the two would be taken and the other "
          + "ignored; keep one (make the baseline again with 'obstrace baseline')"
      ], "\(result.standardError)")
    #expect(result.standardOutput.isEmpty)
  }

  @Test("a baseline over 8 MiB is refused before it is parsed; a name is cut in the error that quotes it")
  func hostileSizes() throws {
    let large = Paths.temporary("large.json")
    try String(repeating: " ", count: 9 << 20).write(toFile: large, atomically: true, encoding: .utf8)
    let refused = Run.command(["check", trace, "--baseline", large])
    #expect(refused.status == 2 && refused.errorLines.count == 1, "\(refused.standardError)")
    #expect(refused.standardError.contains("over the 8.0 MiB a baseline of a program's counts takes"), "\(refused.standardError)")
    let text = try String(contentsOfFile: committedBaseline, encoding: .utf8)
    let long = Paths.temporary("long-name.json")
    let name = String(repeating: "N", count: 100_000) + "\n::error x"
    try text.replacingOccurrences(of: "TodoList.body", with: name.replacingOccurrences(of: "\n", with: "\\n")).write(
      toFile: long, atomically: true, encoding: .utf8)
    let result = Run.command(["check", trace, "--baseline", long])
    #expect(result.status == 2 && result.errorLines.count == 1, "\(result.standardError)")
    #expect(result.standardError.utf8.count < 1_000, "\(result.standardError.utf8.count)")
    #expect(result.standardError.contains("…' (100011 characters), which"), "\(result.standardError.suffix(300))")
  }

  @Test("checking the baseline's own trace passes")
  func samePasses() {
    let result = Run.command(["check", trace, "--baseline", committedBaseline])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("PASSED"))
  }

  @Test("a worse trace fails, naming the property and the scope that grew")
  func worseFails() {
    let result = Run.command(["check", worse, "--baseline", committedBaseline, "--tolerance", "10%"])
    #expect(result.status == 1)
    let failed = result.standardOutput.split(separator: "\n").last { $0.hasPrefix("FAILED") } ?? ""
    #expect(failed.contains("property TodoStore.items wastedInvalidations 1 → 3"))
    #expect(failed.contains("scope TodoList.body runs 3 → 5"))
  }

  @Test("a tolerance wide enough lets the growth pass")
  func tolerance() {
    let result = Run.command(["check", worse, "--baseline", committedBaseline, "--tolerance", "250%"])
    #expect(result.status == 0)
  }

  @Test(
    "limits pass and fail with or without a baseline",
    arguments: [
      (["--max", "TodoStore.items:wastedInvalidations<=1"], Int32(1)),
      (["--max", "TodoStore.items:wastedInvalidations<=3"], Int32(0)),
      (["--max", "TodoList.body:runs<6", "--max", "TodoStore.items:noopWrites==3"], Int32(0)),
      (["--max", "TodoList.body:runs<5"], Int32(1)),
    ])
  func limits(arguments: [String], status: Int32) {
    let result = Run.command(["check", worse] + arguments)
    #expect(result.status == status, "\(result.standardOutput)")
  }

  @Test(
    "a name the trace does not know is an error naming the closest ones, not a count of 0",
    arguments: [
      (["--max", "TodoStore.itemz:invalidations<=3"], "closest: TodoStore.items"),
      (["--max", "TodoList.bdy:runs<=3"], "closest: TodoList.body"),
    ])
  func unknownNames(arguments: [String], closest: String) {
    let result = Run.command(["check", trace] + arguments)
    #expect(result.status == 2)
    #expect(result.standardError.contains("names no property or scope of"))
    #expect(result.standardError.contains(closest))
    #expect(result.standardError.split(separator: "\n").count == 1)
  }

  @Test("a baseline that names a property the trace does not have is an error, naming the closest")
  func unknownInBaseline() throws {
    let edited = try String(contentsOfFile: committedBaseline, encoding: .utf8)
      .replacingOccurrences(of: "\"TodoStore.items\"", with: "\"TodoStore.itemz\"")
    let path = Paths.temporary("typo-baseline.json")
    try edited.write(toFile: path, atomically: true, encoding: .utf8)
    let result = Run.command(["check", trace, "--baseline", path])
    #expect(result.status == 2)
    #expect(result.standardError.contains("names the property 'TodoStore.itemz'"))
    #expect(result.standardError.contains("closest: TodoStore.items"))
  }

  @Test("a limit fails the check even when the baseline passes")
  func limitWithBaseline() {
    let result = Run.command(["check", trace, "--baseline", committedBaseline, "--max", "TodoList.body:runs<=2"])
    #expect(result.status == 1)
    #expect(result.standardOutput.contains("limit TodoList.body:runs<=2: EXCEEDED (3)"))
  }

  @Test(
    "bad input to check is one line and exit 2",
    arguments: [
      (["check", "traces/noop-modify.trc"], "--baseline"),
      (["check", "traces/noop-modify.trc", "--max", "items<=3"], "--max"),
      (["check", "traces/noop-modify.trc", "--baseline", "/nonexistent.json"], "/nonexistent.json"),
      (["check", "traces/noop-modify.trc", "--max", "A:runs<=1", "--tolerance", "lots"], "--tolerance"),
    ])
  func badInput(arguments: [String], mention: String) {
    let result = Run.command(arguments.map { $0.hasPrefix("traces/") ? Paths.root + "/" + $0 : $0 })
    #expect(result.status == 2)
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains(mention))
  }

  @Test("a baseline that is not one is refused with its name")
  func notABaseline() throws {
    let path = Paths.temporary("bogus.json")
    try "{\"schema\": \"something/1\"}".write(toFile: path, atomically: true, encoding: .utf8)
    let result = Run.command(["check", trace, "--baseline", path])
    #expect(result.status == 2)
    #expect(result.standardError.contains(path))
  }
}
