import Foundation
import Testing

/// A one-shot tracking that fires again before Observation cancels it: a write inside its own onChange, and two
/// models kept in sync through onChange (tryout14's H5). Observation calls the handler from the willSet, then cancels
/// the tracking; a write of what it read made meanwhile fires the same handler again, nested. The trace is whole
/// and true: each such fire is an invalidation, and none is an inconsistency.
@Suite("Fires again before the cancel")
struct ReentrantFireTests {
  static let source = Paths.root + "/Tests/Fixtures/Reentrant/main.swift"

  /// Compiles the fixture with and without the import, runs both (the traced one recording), checks that they print
  /// the same, and returns the trace.
  func tracedSideBySide(optimization: String) throws -> String {
    let program = try FixtureBuild.compile([Self.source], module: "Reentrant", optimization: optimization)
    let trace = Paths.temporary("Reentrant\(optimization).trc")
    let traced = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 0, "\(traced.standardError)")
    #expect(traced.standardError.isEmpty, "\(traced.standardError)")
    let text = try String(contentsOfFile: Self.source, encoding: .utf8)
    let untracedSource = Paths.temporary("main.swift")
    try text.replacingOccurrences(of: "import ObsTrace\n", with: "").write(
      toFile: untracedSource, atomically: true, encoding: .utf8)
    let untraced = try Run.program(
      try FixtureBuild.compile([untracedSource], module: "ReentrantUntraced", optimization: optimization), [])
    #expect(untraced.status == 0)
    // Observation's own order, untraced: the nested handler call, and six handler calls of the two in sync.
    #expect(untraced.standardOutput.contains("reentry again, nested: value still "), "\(untraced.standardOutput)")
    #expect(untraced.standardOutput.contains("pings 6 "), "\(untraced.standardOutput)")
    #expect(traced.standardOutput == untraced.standardOutput)
    return trace
  }

  @Test(
    "a write inside onChange and two models kept in sync through onChange fire their scopes again: each fire an invalidation, no inconsistency, and the timeline says what it was",
    arguments: ["-Onone", "-O"])
  func firesAgainAreInvalidations(optimization: String) throws {
    let trace = try tracedSideBySide(optimization: optimization)
    let marks = try FixtureBuild.siteMarks(Self.source)
    let result = Run.command(["report", "--format", "json", trace])
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    var scopes: [String: [String: Any]] = [:]
    for scope in report["scopes"] as? [[String: Any]] ?? [] { scopes[scope["label"] as? String ?? ""] = scope }
    func scope(_ mark: String) throws -> [String: Any] {
      try #require(scopes["Reentrant/main.swift:\(marks[mark] ?? 0)"], "\(mark): \(scopes.keys)")
    }
    // Invalidations as the handlers ran: the reentry's twice (the outer write, then the nested one), a's and b's
    // three times each. Before, each scope's first fire only (1, 1, 1), and 4 fires of an unknown scope.
    #expect(try scope("reentry")["invalidations"] as? Int == 2, "\(scopes)")
    #expect(try scope("watch a")["invalidations"] as? Int == 3, "\(scopes)")
    #expect(try scope("watch b")["invalidations"] as? Int == 3, "\(scopes)")
    // Runs: a re-tracked after each of its three handler calls, b after two (the sixth call writes nothing). In an
    // optimized build the re-track inlined into its own handler is a call site of its own (its label and instances
    // are the site naming's, not this rule's).
    if optimization == "-Onone" {
      #expect(try scope("watch a")["runs"] as? Int == 4 && scope("watch a")["instances"] as? Int == 1, "\(scopes)")
      #expect(try scope("watch b")["runs"] as? Int == 3 && scope("watch b")["instances"] as? Int == 1, "\(scopes)")
    }
    let properties = report["properties"] as? [[String: Any]] ?? []
    let value = try #require(properties.first { $0["property"] as? String == "Counter.value" }, "\(properties)")
    #expect(value["invalidations"] as? Int == 8, "\(value)")
    let findings = report["findings"] as? [[String: Any]] ?? []
    #expect(!findings.contains { $0["kind"] as? String == "inconsistent-trace" }, "\(findings)")

    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(!timeline.contains("INCONSISTENT"), "\(timeline)")
    let nested = timeline.split(separator: "\n").filter {
      $0.contains("again, nested: Observation cancels it only after its onChange returns")
    }
    // The reentry's nested write, and a's and b's second and third fires.
    #expect(nested.count == 5, "\(timeline)")
    #expect(
      nested.contains {
        $0.contains("→ invalidated Reentrant/main.swift:\(marks["reentry"] ?? 0) (#")
          && $0.contains("at Reentrant/main.swift:\(marks["nested write"] ?? 0)")
      }, "\(timeline)")
    #expect(!timeline.contains("→ invalidated nothing"), "\(timeline)")
    // check counts them too.
    #expect(Run.command(["check", trace, "--max", "Counter.value:invalidations<=8"]).status == 0)
    #expect(Run.command(["check", trace, "--max", "Counter.value:invalidations<=7"]).status == 1)
  }
}
