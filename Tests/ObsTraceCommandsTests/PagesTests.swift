import Foundation
import Testing

@testable import ObsTraceCommands
@testable import ObsTraceFormat

/// What the HTML page, the graph, the GitHub annotations and the exports say, against what the text report says of
/// the same trace (tryout17's Q1, Q3, Q8, Q10, Q11): each output says what the text says, and a cut says so.
@Suite("Pages say what the text says")
struct PagesTests {
  /// `labels` untraced scopes (`App/Row.swift:N`, tracking ObsTrace does not own), each running once and reading
  /// `App.Model.count`; then one write of it through `_modify`, not compared (not trivially copyable), which fires
  /// them all: predicted fires, not recorded.
  static func untracedTrace(labels: Int) throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Model" }, property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1),
      label: { "<call site of stack #\($0)>" })
    var trace = try SyntheticTrace("pages-untraced", definitions: definitions, seesUntracedTracking: true)
    var chunk = trace.chunk()
    var sequence: UInt64 = 0
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    for label in 1...UInt32(labels) {
      let scope = 1000 + label
      trace.next(&chunk, .scopeBegin, flags: ScopeKind.untraced.rawValue, object: scope, key: label, scope: scope)
      trace.next(&chunk, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: scope, aux: 1, depth: 1)
      trace.next(&chunk, .scopeEnd, scope: scope)
      if label % 200 == 0 {
        try trace.write(chunk, threadEnded: false)
        sequence += 1
        chunk = trace.chunk(sequence: sequence, firstTime: trace.lastTime)
      }
    }
    trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1)
    trace.next(
      &chunk, .didSet, flags: EventFlags.modify | UncomparedReason.notTriviallyCopyable.flags, object: 1, key: 1,
      aux: 1)
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Model", property: "count")]
    symbols.labelNames = Dictionary(uniqueKeysWithValues: (1...UInt32(labels)).map { ($0, "App/Row.swift:\($0)") })
    try trace.write(symbols)
    return try trace.finish()
  }

  /// Twelve properties `Model.p1` … `p12`; property k is written k times through `_modify` without change, each
  /// write firing an untraced scope that read it: twelve noop-write warnings, p12's the heaviest; and two more, the
  /// untracked-tracking (78 scopes) and the redundant runs (66: each run after the first re-ran for nothing).
  static func noopTrace() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Model" }, property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1),
      label: { "<call site of stack #\($0)>" })
    var trace = try SyntheticTrace("pages-noop", definitions: definitions, seesUntracedTracking: true)
    var chunk = trace.chunk()
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    var scope: UInt32 = 1000
    for property in 1...UInt32(12) {
      for _ in 0..<property {
        scope += 1
        trace.next(&chunk, .scopeBegin, flags: ScopeKind.untraced.rawValue, object: scope, key: 1, scope: scope)
        trace.next(
          &chunk, .access, flags: EventFlags.accessInScope, object: 1, key: property, scope: scope, aux: 1, depth: 1)
        trace.next(&chunk, .scopeEnd, scope: scope)
        trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: property, aux: 1)
        trace.next(&chunk, .didSet, flags: EventFlags.modify | EventFlags.unchanged, object: 1, key: property, aux: 1)
      }
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.propertyNames = Dictionary(
      uniqueKeysWithValues: (1...UInt32(12)).map {
        ($0, PropertyName(module: "App", type: "Model", property: "p\($0)"))
      })
    symbols.labelNames = [1: "App/Row.swift:1"]
    try trace.write(symbols)
    return try trace.finish()
  }

  static func page(_ trace: String) throws -> String {
    let page = trace + ".html"
    defer { try? FileManager.default.removeItem(atPath: page) }
    let result = Run.command(["report", trace, "--format", "html", "-o", page])
    #expect(result.status == 0, "\(result.standardError)")
    return try String(contentsOfFile: page, encoding: .utf8)
  }

  /// The text of `<section id="NAME">` in `html`.
  static func section(_ name: String, of html: String) throws -> String {
    let start = try #require(html.range(of: "<section id=\"\(name)\">"), "no section \(name)")
    let rest = html[start.upperBound...]
    return String(rest[..<(rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)])
  }

  @Test(
    "predicted invalidations are marked predicted in the page's tables and who read what, the graph's edges and both exports' invalidate instants, as in the text (tryout17's Q8)"
  )
  func predictedEverywhere() throws {
    let trace = try Self.untracedTrace(labels: 2)
    defer { try? FileManager.default.removeItem(atPath: trace) }
    let text = Run.command(["report", trace]).standardOutput
    #expect(text.contains("2 (2 predicted)"), "\(text)")
    let html = try Self.page(trace)
    let properties = try Self.section("properties", of: html)
    #expect(properties.contains(">2 <span class=\"predicted\">(2 predicted)</span></td>"), "\(properties)")
    let scopes = try Self.section("scopes", of: html)
    #expect(scopes.contains(">1 <span class=\"predicted\">(1 predicted)</span></td>"), "\(scopes)")
    let who = try Self.section("who-read-what", of: html)
    #expect(
      who.components(separatedBy: ": 1 <span class=\"predicted\">(all predicted, not recorded)</span>").count == 3,
      "\(who)")
    // The graph: the label says it, and an edge of predicted invalidations only is dotted.
    let graph = Run.command(["graph", "--dot", trace]).standardOutput
    let edges = graph.split(separator: "\n").filter { $0.contains("invalidated") }
    #expect(edges.count == 2, "\(graph)")
    for edge in edges {
      // Its write went through _modify, not compared: whether the invalidation was wasted is not known (≥0).
      #expect(
        edge.contains("style=dotted") && edge.contains("label=\"invalidated 1 (1 predicted, ≥0 wasted)\""), "\(edge)")
    }
    // Chrome JSON: each invalidate instant has predicted: true.
    let json = trace + ".json"
    defer { try? FileManager.default.removeItem(atPath: json) }
    let exported = Run.command(["export", trace, "--format", "chrome-json", "-o", json])
    #expect(exported.status == 0, "\(exported.standardError)")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))
    let events = try #require((object as? [String: Any])?["traceEvents"] as? [[String: Any]], "\(object)")
    let fires = events.filter { ($0["name"] as? String)?.hasPrefix("invalidate ") == true }
    #expect(fires.count == 2, "\(events)")
    for fire in fires {
      #expect((fire["args"] as? [String: Any])?["predicted"] as? Bool == true, "\(fire)")
    }
    // Perfetto, read with Perfetto's own schema: the instants' arguments.
    let python = Paths.root + "/.build/python/bin/python"
    try #require(
      FileManager.default.isExecutableFile(atPath: python), "\(python) is missing: run scripts/setup, which makes it")
    let perfetto = trace + ".pftrace"
    defer { try? FileManager.default.removeItem(atPath: perfetto) }
    #expect(Run.command(["export", trace, "--format", "perfetto", "-o", perfetto]).status == 0)
    let parsed = try Run.program(python, [Paths.root + "/scripts/perfetto-summary", perfetto])
    #expect(parsed.status == 0, "\(parsed.standardError)")
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as? [String: Any])
    let instants = try #require(summary["instantArguments"] as? [String: [[String: Any]]], "\(summary)")
    let invalidations = instants.filter { $0.key.hasPrefix("invalidate ") }.flatMap(\.value)
    #expect(invalidations.count == 2, "\(instants)")
    for arguments in invalidations {
      #expect(arguments["predicted"] as? Bool == true, "\(arguments)")
    }
  }

  @Test(
    "the page says which _modify writes were not compared, as the text does, and each finding's evidence (tryout17's Q10, Q1)"
  )
  func uncomparedAndEvidence() throws {
    let trace = try Self.untracedTrace(labels: 2)
    defer { try? FileManager.default.removeItem(atPath: trace) }
    let text = Run.command(["report", trace]).standardOutput
    let line = try #require(
      text.split(separator: "\n").first { $0.contains("writes through _modify:") }, "\(text)")
    let html = try Self.page(trace)
    let properties = try Self.section("properties", of: html)
    #expect(properties.contains("<th class=\"n\">writes not compared</th>"), "\(properties)")
    // Columns 5 and 6 of the property's row: no-op writes at least 0 (its write was not compared), 1 not compared.
    #expect(properties.contains("<td class=\"n\">≥0</td><td class=\"n warn\">1</td>"), "\(properties)")
    let sentence = line.drop { $0 == " " }
    #expect(
      properties.contains(
        "<p class=\"note\" id=\"comparison\">" + sentence.prefix(1).uppercased() + sentence.dropFirst() + ".</p>"),
      "\(properties)")
    // Evidence: every finding's, as the text gives it.
    let evidence = text.split(separator: "\n").filter { $0.hasPrefix("      evidence: ") }
    #expect(!evidence.isEmpty, "\(text)")
    let findings = try Self.section("findings", of: html)
    for line in evidence {
      let said = String(line.dropFirst("      evidence: ".count))
      #expect(
        findings.contains("<p class=\"evidence\"><b>Evidence:</b> \(HTMLReport.escape(said))</p>"),
        "\(said) in \(findings)")
    }
  }

  @Test(
    "the graph draws the --top scopes and sums up the rest in one node; the page cuts its tables and who read what, saying how many are left out and how to see them (tryout17's Q3)"
  )
  func capped() throws {
    let trace = try Self.untracedTrace(labels: 1_005)
    defer { try? FileManager.default.removeItem(atPath: trace) }
    let graph = Run.command(["graph", "--dot", "--top", "5", trace]).standardOutput
    #expect(graph.components(separatedBy: "[shape=ellipse, label=").count - 1 == 5, "\(graph)")
    #expect(
      graph.contains("… 1000 more scopes\\n1000 runs, 1000 invalidations (raise --top, or --scope LABEL"), "\(graph)")
    let html = try Self.page(trace)
    let scopes = try Self.section("scopes", of: html)
    #expect(scopes.components(separatedBy: "<tr>").count - 1 == 1_000 + 1, "a header and 1,000 rows")
    #expect(scopes.contains("5 more scopes not shown here: <code>obstrace report --top 1005 "), "\(scopes.suffix(400))")
    let who = try Self.section("who-read-what", of: html)
    #expect(who.components(separatedBy: "<details").count - 1 == 100)
    #expect(who.contains("905 more scopes not shown here"), "\(who.suffix(600))")
    #expect(who.contains("<code>obstrace timeline --scope LABEL "), "\(who.suffix(600))")
  }

  @Test(
    "report --format github: at most 10 warnings a step, the heaviest first, each with its evidence, then one notice of how many more and the rest in the log (tryout17's Q11, Q1)"
  )
  func githubCap() throws {
    let trace = try Self.noopTrace()
    defer { try? FileManager.default.removeItem(atPath: trace) }
    let result = Run.command(["report", trace, "--format", "github"])
    #expect(result.status == 0, "\(result.standardError)")
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    let warnings = lines.filter { $0.hasPrefix("::warning ") }
    #expect(warnings.count == 10, "\(lines)")
    // The heaviest first: the 78 untraced scopes, the 66 redundant runs, p12's 12 writes, p11's 11, … p5's 5.
    #expect(warnings[0].contains("title=obstrace untraced-tracking::78 scopes"), "\(warnings)")
    #expect(warnings[1].contains("title=obstrace redundant-run::66 runs"), "\(warnings)")
    #expect(warnings[2].contains("12 writes to Model.p12 left the value unchanged"), "\(warnings)")
    #expect(warnings[9].contains("5 writes to Model.p5 left"), "\(warnings)")
    for warning in warnings {
      #expect(warning.contains(". Evidence: "), "\(warning)")
      if warning.contains("title=obstrace noop-write::") {
        #expect(warning.contains(". Evidence: didSet events marked unchanged"), "\(warning)")
      }
    }
    let notices = lines.filter { $0.hasPrefix("::notice ") }
    #expect(notices.count == 1, "\(lines)")
    #expect(notices.first?.contains("4 more warnings than GitHub shows a step (10 of each kind)") == true, "\(notices)")
    #expect(notices.first?.contains("obstrace report ") == true, "\(notices)")
    // The four left, after the notice, as plain lines of the log: p4's … p1's.
    let rest = Array(lines.drop { !$0.hasPrefix("::notice ") }.dropFirst())
    #expect(rest.count == 4, "\(lines)")
    #expect(rest.first?.hasPrefix("warning (not annotated): obstrace noop-write: 4 writes to Model.p4") == true)
    #expect(rest.last?.hasPrefix("warning (not annotated): obstrace noop-write: 1 write to Model.p1") == true)
  }

  @Test(
    "check --format github: at most 10 errors a step, then one notice of how many more, the rest in the log, then FAILED (tryout17's Q11)"
  )
  func checkCap() throws {
    let trace = try Self.noopTrace()
    defer { try? FileManager.default.removeItem(atPath: trace) }
    let limits = (1...12).flatMap { ["--max", "Model.p\($0):noopWrites<=0"] }
    let result = Run.command(["check", trace, "--format", "github"] + limits)
    #expect(result.status == 1, "\(result.standardError)")
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.hasPrefix("::error ") }.count == 10, "\(lines)")
    let notices = lines.filter { $0.hasPrefix("::notice ") }
    #expect(notices.count == 1 && notices[0].contains("2 more errors than GitHub shows a step"), "\(lines)")
    let rest = lines.drop { !$0.hasPrefix("::notice ") }.dropFirst()
    #expect(rest.count == 3, "\(lines)")
    #expect(
      rest.prefix(2).allSatisfy { $0.hasPrefix("error (not annotated): obstrace check: limit Model.p") }, "\(rest)")
    #expect(lines.last == "FAILED")
  }
}
