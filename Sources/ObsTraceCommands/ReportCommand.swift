import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace report FILE`: totals, the properties that invalidate most, the scopes that re-run most, and the
/// findings with hints; `--format json` prints the same facts (schema `obstrace.report/1`).
enum ReportCommand: TraceCommand {
  static let name = "report"
  static let abstract = "Totals, hot properties and scopes, and findings with hints."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace report <file> [--format text|json|github|html] [--source-root <dir>] [--fan-out <n>] [--top <n>]
                           [-o <file>]

    OPTIONS:
      --format <format>   text (default), json (schema obstrace.report/1), or github: a GitHub Actions
                          ::warning annotation per warning finding, on its site's line when it has one; or
                          html: one self-contained page (summary, findings, sortable tables, the graph drawn
                          by Graphviz's dot when it is on PATH, who read what per scope).
      -o, --output <file> Where to write (default: standard output).
      --source-root <dir> github: files are written relative to this folder (default: the current one).
      --fan-out <n>       A write that invalidates more than n scopes is a fan-out finding (default 10).
      --top <n>           Rows per table in text (default 10; json has them all).
      -h, --help          Show this help.

    EXAMPLE:
      obstrace report run.trc
      obstrace report run.trc --format json | jq '.findings[] | select(.kind == "noop-write")'
      obstrace report run.trc --format html -o report.html

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: [
        "--format": "format", "--fan-out": "fan-out", "--top": "top", "-o": "output", "--output": "output",
        "--source-root": "source-root",
      ], command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let format = parsed.value("format") ?? "text"
    guard ["text", "json", "github", "html"].contains(format) else {
      throw CommandError("obstrace report: --format must be text, json, github or html, not '\(format)'")
    }
    let configuration = try TraceInput.replayConfiguration(parsed, command: name)
    let top = try TraceInput.positiveInteger(parsed, "top", flag: "--top", command: name) ?? 10
    let root = try TraceInput.sourceRoot(parsed, command: name, output: output)
    if format == "html" {
      // One pass over the trace gives the report, who read what per scope, and the graph's writes by site.
      let scopes = WhoReadWhat()
      let writes = GraphCommand.WriteTally()
      let analysis = try TraceInput.replay(path, configuration, command: name) { fact in
        scopes.note(fact)
        writes.note(fact)
      }
      let graph = GraphCommand.dot(
        analysis.replay, analysis.definitions, GraphCommand.Options(sites: true), writes: writes)
      let page = HTMLReport.page(
        analysis.report, graph: HTMLReport.render(dotText: graph), scopes: scopes.scopes(named: analysis.definitions),
        binariesWithoutSymbols: TraceAnalysis.binariesWithoutSymbols(analysis.definitions),
        fallbackNames: TraceAnalysis.propertiesWithFallbackNames(analysis.definitions))
      try TraceInput.write(
        page, to: parsed.value("output"), output: output, command: name, inputs: [(path, "the trace")])
      return 0
    }
    let analysis = try TraceInput.replay(path, configuration, command: name, collectsEdges: false)
    // The replay's state (per object, property and scope) and the report are never freed: the process exits once
    // they are printed, and freeing them one allocation at a time cost ≈ 8 % of a report of the bench's 100 k-object
    // trace (callgrind). See `KeptUntilExit`.
    KeptUntilExit.keep(analysis.replay)
    let report = analysis.report
    KeptUntilExit.keep(report)
    let unnamed = TraceAnalysis.binariesWithoutSymbols(analysis.definitions)
    let printed: String
    switch format {
    case "json": printed = ReportPrinter.json(report, binariesWithoutSymbols: unnamed)
    case "github": printed = GitHubAnnotations.report(report, root: root, definitions: analysis.definitions)
    default:
      printed = ReportPrinter.text(
        report, top: top, binariesWithoutSymbols: unnamed,
        fallbackNames: TraceAnalysis.propertiesWithFallbackNames(analysis.definitions))
    }
    try TraceInput.write(
      printed, to: parsed.value("output"), output: output, command: name, inputs: [(path, "the trace")])
    return 0
  }
}

extension TraceInput {
  static func analyze(
    _ path: String, _ configuration: Replay.Configuration, command: String,
    onFact: ((ReplayFact) -> Void)? = nil
  ) throws(CommandError) -> AnalysisReport {
    do {
      return try TraceAnalysis.analyze(path: path, configuration: configuration, onFact: onFact)
    } catch {
      throw CommandError("obstrace \(command): \(error.description)")
    }
  }

  /// `analyze`, keeping the replay and the definitions (see `TraceAnalysis.replay`).
  static func replay(
    _ path: String, _ configuration: Replay.Configuration, command: String, collectsEdges: Bool = true,
    onFact: ((ReplayFact) -> Void)? = nil
  ) throws(CommandError) -> (report: AnalysisReport, replay: Replay, definitions: TraceDefinitions) {
    do {
      return try TraceAnalysis.replay(
        path: path, configuration: configuration, collectsEdges: collectsEdges, onFact: onFact)
    } catch {
      throw CommandError("obstrace \(command): \(error.description)")
    }
  }

  static func replayConfiguration(_ parsed: ParsedArguments, command: String) throws(CommandError)
    -> Replay.Configuration
  {
    var configuration = Replay.Configuration()
    if let fanOut = try positiveInteger(parsed, "fan-out", flag: "--fan-out", command: command) {
      configuration.fanOutThreshold = fanOut
    }
    return configuration
  }

  /// Whether the trace holds every event its process recorded, said plainly: "complete" only when nothing was
  /// dropped, damaged or cut off (what `check` requires); otherwise what is missing.
  static func completeness(_ trace: AnalysisReport.Trace) -> (text: String, complete: Bool) {
    let verdict = completenessOfEvents(trace)
    // Bytes after the footer take nothing from the trace, and are said all the same.
    guard let extra = trace.afterFooter else { return verdict }
    return (verdict.text + "; \(extra)", verdict.complete)
  }

  private static func completenessOfEvents(_ trace: AnalysisReport.Trace) -> (text: String, complete: Bool) {
    // A footer that does not decode is said as that, not as a damaged chunk and a missing footer.
    let malformedFooter = trace.malformedFooter
    let copies = trace.damage.copies
    let damagedChunks = trace.damage.count - copies - (malformedFooter == nil ? 0 : 1)
    let damagedClause =
      damagedChunks == 0
      ? nil
      : "\(damagedChunks) damaged chunk\(damagedChunks == 1 ? "" : "s") skipped ("
        + (trace.readsEveryRecordedEvent
          ? "no recorded event is missing: the footer's counts are all read; the definitions they held, names or "
            + "sites, are lost)"
          : "their events are lost" + lostEventsDetail(trace) + ")")
    let copiesClause =
      copies == 0
      ? nil
      : "\(copies) cop\(copies == 1 ? "y" : "ies") of chunks already read skipped (their events were read once)"
    let skipped = [damagedClause, copiesClause].compactMap { $0 }
    let damaged = skipped.isEmpty ? nil : skipped.joined(separator: ", ")
    let lost =
      trace.lostAtStop > 0
      ? "\(trace.lostAtStop) event\(trace.lostAtStop == 1 ? "" : "s") lost at the stop (threads still running)" : nil
    let ringless =
      trace.ringless > 0
      ? "\(trace.ringless) events not recorded (threads that could not get a ring: memory could not be allocated)"
      : nil
    let handlers =
      trace.signalHandlerEvents > 0
      ? "\(trace.signalHandlerEvents) event\(trace.signalHandlerEvents == 1 ? "" : "s") from signal handlers not "
        + "recorded (a handler that interrupted the recorder on its thread)"
      : nil
    // Chunks gone without damage (cut out of the file): their threads' chunk numbers and the footer's counts say so.
    let gone = trace.missingWithoutDamage ? trace.missingEventsClauses : []
    let missing = [damaged].compactMap { $0 } + gone + [lost, ringless, handlers].compactMap { $0 }
    if trace.truncated, let holder = trace.recordingProcess {
      return (
        "TRUNCATED: still being recorded by process \(holder) (read up to the last whole chunk so far)"
          + missing.map { ", " + $0 }.joined(), false
      )
    }
    if let footer = malformedFooter {
      return (
        "INCOMPLETE: the footer at byte \(footer.offset) is \(footer.footerState) (what the recording lost is not known)"
          + missing.map { ", " + $0 }.joined(), false
      )
    }
    if trace.truncated {
      return ("TRUNCATED (read up to the last whole chunk)" + missing.map { ", " + $0 }.joined(), false)
    }
    if !missing.isEmpty { return ("INCOMPLETE: " + missing.joined(separator: ", "), false) }
    if trace.droppedEvents > 0 { return ("INCOMPLETE: events were dropped", false) }
    if !trace.runningAtStop.isEmpty {
      let count = trace.runningAtStop.count
      return (
        "complete up to the stop, \(count) thread\(count == 1 ? "" : "s") not exited at the stop (see running-at-stop)",
        true
      )
    }
    return ("complete", true)
  }

  /// What the footer's counts and the chunk numbers show the damage took, when they show it: ": 3802 events the
  /// footer counts as recorded are not in the file (T2: 3802 of 3802)". Before, the report said only "their events
  /// are lost", and its thread count was of the threads read (tryout18's R4); the timeline said how many.
  private static func lostEventsDetail(_ trace: AnalysisReport.Trace) -> String {
    let clauses = trace.missingEventsClauses
    return clauses.isEmpty ? "" : ": " + clauses.joined(separator: "; ")
  }

  /// How many findings, as the report and `record`'s summary both say it: "2 warnings, 3 informational".
  static func findingCounts(_ report: AnalysisReport) -> String {
    let warnings = report.findings.filter { !$0.isInformational }.count
    let information = report.findings.count - warnings
    return "\(warnings) warning\(warnings == 1 ? "" : "s"), \(information) informational"
  }

  static func positiveInteger(
    _ parsed: ParsedArguments, _ name: String, flag: String, command: String
  ) throws(CommandError) -> Int? {
    guard let text = parsed.value(name) else { return nil }
    guard let value = Int(text), value > 0 else {
      throw CommandError("obstrace \(command): \(flag) must be a positive number, not '\(text)'")
    }
    return value
  }
}

/// Renders an `AnalysisReport`; derives nothing.
enum ReportPrinter {
  /// How the recorder labels a scope by its stack until a symbol names its call site (`Interner`).
  static let stackLabelPrefix = "<call site of stack #"

  /// What the report says under its header of the properties the symbol table does not name.
  static func fallbackNamesLine(_ names: [String]) -> String {
    let one = names.count == 1
    return "\(names.count) propert\(one ? "y is" : "ies are") not named by the symbol table, \(one ? "its" : "their") "
      + "name\(one ? " is a fallback" : "s are fallbacks"): \(names.joined(separator: ", "))"
  }

  /// The writes the recording stopped inside, said once under the report's header (the timeline marks each).
  static func unfinishedWritesLine(_ properties: [String], traceLostEvents: Bool = false) -> String? {
    guard !properties.isEmpty else { return nil }
    let one = properties.count == 1
    // Each property once, with how many (a dropped stretch of a busy loop leaves many).
    var counts: [String: Int] = [:]
    var order: [String] = []
    for property in properties {
      if counts[property] == nil { order.append(property) }
      counts[property, default: 0] += 1
    }
    let listed = order.map { counts[$0]! == 1 ? $0 : "\($0) ×\(counts[$0]!)" }.joined(separator: ", ")
    // With events lost (dropped in the rings, damaged or cut out), a missing didSet may be one of them: nothing
    // shows the write was unfinished.
    if traceLostEvents {
      return "\(properties.count) write\(one ? " has" : "s have") no didSet in the trace (\(listed)): the trace lost "
        + "events, which may hold \(one ? "it" : "them") (else the recording stopped inside \(one ? "it" : "them")); "
        + "counted as written, \(one ? "its" : "their") fires as invalidations"
    }
    return "\(properties.count) write\(one ? " was" : "s were") unfinished when the recording stopped ("
      + listed + "): \(one ? "its" : "their") willSet is in the trace, not "
      + "\(one ? "its" : "their") didSet (exit() in an observer the write fired, a signal handler that exited on the "
      + "writing thread, the program exiting while another thread was inside the write, a crash, or a cut trace); "
      + "counted as written, \(one ? "its" : "their") fires as invalidations"
  }

  /// The report as text; `binariesWithoutSymbols` (`TraceAnalysis.binariesWithoutSymbols`) and `fallbackNames`
  /// (`TraceAnalysis.propertiesWithFallbackNames`) are said under the header.
  static func text(
    _ report: AnalysisReport, top: Int, binariesWithoutSymbols: [String] = [], fallbackNames: [String] = []
  ) -> String {
    var out = TextBuffer()
    let trace = report.trace
    out.line("ObsTrace report: \(trace.path)")
    out.line(
      "  \(trace.events) events, \(trace.threads) thread\(trace.threads == 1 ? "" : "s"), "
        + "\(Formatting.duration(trace.durationNanoseconds)), \(trace.droppedEvents) dropped, "
        + TraceInput.completeness(trace).text)
    out.line(
      "  call stacks: \(trace.backtraces)"
        + (trace.backtraces == "off" ? " (no sites: record with OBSTRACE_BACKTRACES=writes or all)" : "")
        + (trace.symbolized ? "" : "; no symbol table: names are fallbacks (run 'obstrace symbolize')"))
    if !binariesWithoutSymbols.isEmpty {
      let many = binariesWithoutSymbols.count > 1
      out.line(
        "  no symbols or debug info in \(binariesWithoutSymbols.joined(separator: ", ")) (stripped?): "
          + "sites in \(many ? "their" : "its") code and names of \(many ? "their" : "its") properties are not "
          + "known; record an unstripped build to see them")
    }
    if !fallbackNames.isEmpty {
      out.line("  " + ReportPrinter.fallbackNamesLine(fallbackNames))
    }
    // A scope labelled by a stack no symbol named: each path to its call site is a scope of its own (tryout18's R5:
    // a stripped program's re-tracks from onChange were other scopes, and the writes after them 13 coalesced writes
    // into an instance that nothing re-ran).
    let byStack = report.scopes.filter { $0.label.hasPrefix(Self.stackLabelPrefix) }.count
    if byStack > 0 {
      out.line(
        "  \(byStack) scope\(byStack == 1 ? " is" : "s are") labelled by \(byStack == 1 ? "its" : "their") stack "
          + "(<call site of stack #N>), not a call site: no symbol names it, so each path to one call site (a first "
          + "call, a re-track from onChange) is a scope of its own, and a re-track along another path is not seen "
          + "as one: the instances, coalesced writes and redundant runs of such scopes are not known; record an "
          + "unstripped build, or name the scopes (withObservationTracking(named:))")
    }
    if let line = unfinishedWritesLine(report.unfinishedWrites, traceLostEvents: report.trace.lostEvents) {
      out.line("  " + line)
    }
    out.line()

    out.line("Properties, by invalidations")
    if report.properties.isEmpty {
      out.line("  (no property was read or written)")
    } else {
      var table = Table(["property", "reads", "tracked", "writes", "no-op", "invalidations", "wasted", "coalesced"])
      for property in report.properties.prefix(top) {
        let s = property.statistics
        // At least: a write not compared may have changed nothing (tryout18's R3: these printed a plain 0).
        let least = s.uncomparedWrites > 0 ? "≥" : ""
        table.add([
          property.name, "\(s.reads)" + (s.accessesAtEnd > 0 ? " (+\(s.accessesAtEnd) at end)" : ""),
          "\(s.trackedReads)", "\(s.writes)", least + "\(s.noopWrites)",
          "\(s.invalidations)" + (s.predictedInvalidations > 0 ? " (\(s.predictedInvalidations) predicted)" : ""),
          least + "\(s.wastedInvalidations)", "\(s.coalescedWrites)",
        ])
      }
      table.render(into: &out, more: report.properties.count - top)
      if let line = comparisonLine(report) { out.line(line) }
      let atEnd = report.properties.prefix(top).reduce(0) { $0 + $1.statistics.accessesAtEnd }
      if atEnd > 0 {
        out.line(
          "  at end: \(atEnd) access\(atEnd == 1 ? "" : "es") outside any scope at the end of the recording, not "
            + "counted as reads: \(atEnd == 1 ? "a read" : "each a read"), or the start of a write through _modify "
            + "that the recording did not reach")
      }
      let least = report.properties.prefix(top).filter { $0.statistics.uncomparedWrites > 0 }
      if !least.isEmpty {
        let names = least.prefix(4).map(\.name).joined(separator: ", ") + (least.count > 4 ? ", …" : "")
        out.line(
          "  ≥: no-op and wasted are at least the counts shown for \(names): \(least.count == 1 ? "its" : "their") "
            + "writes not compared may have changed nothing")
      }
    }
    out.line()

    out.line("Scopes, by runs")
    if report.scopes.isEmpty {
      out.line("  (no tracking scope ran)")
    } else {
      var table = Table(
        ["scope", "kind", "instances", "runs", "invalidations", "wasted", "redundant", "reads"], leftAligned: [0, 7])
      for scope in report.scopes.prefix(top) {
        let s = scope.statistics
        table.add([
          scope.label, s.kind.description, "\(s.instances)", "\(s.runs)",
          "\(s.invalidations)" + (s.predictedInvalidations > 0 ? " (\(s.predictedInvalidations) predicted)" : ""),
          (s.uncomparedInvalidations > 0 ? "≥" : "") + "\(s.wastedInvalidations)",
          (s.possiblyRedundantRuns > 0 ? "≥" : "") + "\(s.redundantRuns)",
          scope.reads.prefix(4).joined(separator: ", ")
            + (scope.reads.count > 4 ? ", …" : ""),
        ])
      }
      table.render(into: &out, more: report.scopes.count - top)
      for scope in report.scopes.prefix(top) {
        if let line = Self.leastCountsLine(scope) { out.line(line) }
      }
      for scope in report.scopes.prefix(top) where scope.statistics.kind == .observations {
        var endings = scope.statistics.endings.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        let running = scope.statistics.sequencesRunningAtEnd
        if running > 0 { endings.append("\(running) still running at the end (no end recorded)") }
        out.line(
          "  \(scope.label): ran on \(scope.isolations.joined(separator: ", ")), "
            + "\(scope.statistics.coalescedWrites) write\(scope.statistics.coalescedWrites == 1 ? "" : "s") coalesced, "
            + "sequences: " + endings.joined(separator: ", "))
      }
    }
    out.line()

    out.line("Objects, by type")
    if report.objects.isEmpty {
      out.line("  (none)")
    } else {
      var table = Table(["type", "created", "freed", "alive at end", "from before", "of them freed"])
      // Cut at --top as the other tables are (tryout18's R12: every type was listed).
      for objects in report.objects.prefix(top) {
        let s = objects.statistics
        table.add([
          objects.type, "\(s.created)", "\(s.freed)", "\(s.created - s.freed)", "\(s.seenOnly)", "\(s.seenOnlyFreed)",
        ])
      }
      table.render(into: &out, more: report.objects.count - top)
    }
    let registrars = report.registrarsWithoutEvents
    if let summary = registrars.summary {
      out.line("  " + summary)
      for site in registrars.sites.prefix(top) {
        out.line("    " + AnalysisReport.RegistrarsWithoutEvents.describe(site, backtraces: report.trace.backtraces))
      }
      if registrars.sites.count > top {
        out.line("    … \(registrars.sites.count - top) more sites (see --format json)")
      }
    }
    out.line()

    let warnings = report.findings.filter { !$0.isInformational }
    let (information, left) = Self.shownInformation(report.findings.filter(\.isInformational), top: top)
    out.line("Findings: " + TraceInput.findingCounts(report))
    if report.findings.isEmpty { out.line("  none") }
    for finding in warnings + information {
      out.line("  \(finding.isInformational ? "info" : "warning") [\(finding.kind.rawValue)] \(finding.message)")
      if let site = finding.site { out.line("      at \(site)") }
      out.line("      hint: \(finding.hint)")
      if !finding.evidence.isEmpty { out.line("      evidence: \(finding.evidence)") }
    }
    if let more = Self.moreInformation(left) { out.line(more) }
    return out.text
  }

  /// The line under the findings that says what informational ones were left out, by kind; nil when none was.
  static func moreInformation(_ left: [Finding]) -> String? {
    guard !left.isEmpty else { return nil }
    var counts: [(kind: Finding.Kind, count: Int)] = []
    for finding in left {
      if let index = counts.firstIndex(where: { $0.kind == finding.kind }) {
        counts[index].count += 1
      } else {
        counts.append((finding.kind, 1))
      }
    }
    let kinds = counts.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", ")
    return "  … \(left.count) more informational: \(kinds) (see --top or --format json)"
  }

  /// Kinds of information about the trace as a whole, which the header's status line points to (`see
  /// running-at-stop`): shown whatever `--top` is.
  static let traceWideInformation: Set<Finding.Kind> = [.runningAtStop, .startedWhileRunning, .forked]

  /// The informational findings the text shows, and those it leaves out: every trace-wide one, then up to `top`
  /// others, the first of each kind before the second of any (134 `untracked-read` findings of a realistic app
  /// filled the first ten, and the `running-at-stop` the status line pointed to was the 13th: tryout15's K1).
  static func shownInformation(_ information: [Finding], top: Int) -> (shown: [Finding], left: [Finding]) {
    let traceWide = information.filter { traceWideInformation.contains($0.kind) }
    let others = information.filter { !traceWideInformation.contains($0.kind) }
    var seen: Set<Finding.Kind> = []
    var firsts: [Int] = []
    var rest: [Int] = []
    for (index, finding) in others.enumerated() {
      if seen.insert(finding.kind).inserted { firsts.append(index) } else { rest.append(index) }
    }
    let chosen = Set((firsts + rest).prefix(top))
    // In the report's order, so that findings of one kind stay together.
    let shown = others.indices.filter { chosen.contains($0) }.map { others[$0] }
    let left = others.indices.filter { !chosen.contains($0) }.map { others[$0] }
    return (traceWide + shown, left)
  }

  /// What the no-op column could see: writes through `_modify` compared and not compared, and how to compare
  /// them. Nil when there were none (or the trace is of version 1, which did not record it).
  /// Each reason the trace gives for writes not compared is said, with how to compare them where a setting can:
  /// ', 3 not compared (2 not trivially copyable or over 64 bytes: arrays, strings, …; 1 stored field not found:
  /// …): OBSTRACE_COMPARE=equatable compares the Equatable ones'.
  static func comparisonLine(_ report: AnalysisReport) -> String? {
    let (compared, uncompared) = writeComparison(report)
    guard compared + uncompared > 0 else { return nil }
    var line = "  writes through _modify: \(compared) compared"
    if uncompared > 0 {
      let reasons = uncomparedReasons(report).nonzero
      let whys = reasons.count == 1 ? [reasons[0].reason.why] : reasons.map { "\($0.count) \($0.reason.why)" }
      line += ", \(uncompared) not compared (" + whys.joined(separator: "; ") + ")"
      let remedies = reasons.compactMap { remedy(for: $0.reason) }
      if !remedies.isEmpty { line += ": " + remedies.joined(separator: "; ") }
    }
    return line
  }

  /// Why a scope's wasted and redundant counts are least values (marked `≥` in the table), when they are: writes
  /// through `_modify` not compared fired it, or may have changed nothing its runs read (see docs/analysis.md,
  /// "Writes compared"). The line under the properties says why they were not compared and how to compare them.
  static func leastCountsLine(_ scope: AnalysisReport.Scope) -> String? {
    let s = scope.statistics
    var clauses: [String] = []
    var counts: [String] = []
    if s.uncomparedInvalidations > 0 {
      counts.append("wasted")
      clauses.append(
        "\(s.uncomparedInvalidations) of its invalidations \(s.uncomparedInvalidations == 1 ? "was" : "were") by writes "
          + "through _modify not compared")
    }
    if s.possiblyRedundantRuns > 0 {
      counts.append("redundant")
      clauses.append(
        "\(s.possiblyRedundantRuns) of its runs would be redundant if the writes through _modify not compared before "
          + "\(s.possiblyRedundantRuns == 1 ? "it" : "them") changed nothing")
    }
    guard !counts.isEmpty else { return nil }
    return "  \(scope.label): \(counts.joined(separator: " and ")) \(counts.count == 1 ? "is" : "are") at least the "
      + "count\(counts.count == 1 ? "" : "s") shown: " + clauses.joined(separator: ", and ")
  }

  /// What setting would compare writes not compared for `reason`, if one would.
  static func remedy(for reason: UncomparedReason) -> String? {
    switch reason {
    case .comparisonOff: "OBSTRACE_COMPARE=trivial (the default) compares trivially copyable members"
    case .notTriviallyCopyable: "OBSTRACE_COMPARE=equatable compares the Equatable ones"
    default: nil
    }
  }

  static func writeComparison(_ report: AnalysisReport) -> (compared: Int, uncompared: Int) {
    report.properties.reduce((0, 0)) { ($0.0 + $1.statistics.comparedWrites, $0.1 + $1.statistics.uncomparedWrites) }
  }

  static func uncomparedReasons(_ report: AnalysisReport) -> UncomparedCounts {
    report.properties.reduce(UncomparedCounts()) { $0 + $1.statistics.uncomparedBecause }
  }

  /// The report as JSON (schema `obstrace.report/1`), written into one byte buffer (`JSONBuffer`).
  static func json(_ report: AnalysisReport, binariesWithoutSymbols: [String] = []) -> String {
    let trace = report.trace
    var out = JSONBuffer(capacity: 4096 + 320 * report.scopes.count + 400 * report.properties.count)
    out.raw("{\"schema\":\"obstrace.report/1\",\"trace\":{\"path\":")
    out.string(trace.path)
    out.raw(",\"events\":")
    out.number(trace.events)
    out.raw(",\"threads\":")
    out.number(trace.threads)
    out.raw(",\"droppedEvents\":")
    out.number(trace.droppedEvents)
    out.raw(",\"truncated\":")
    out.bool(trace.truncated)
    out.raw(",\"damagedChunks\":")
    out.number(trace.damage.count)
    out.raw(",\"runningAtStop\":")
    out.array(trace.runningAtStop) { $0.number($1) }
    out.raw(",\"lostAtStop\":")
    out.number(trace.lostAtStop)
    out.raw(",\"ringless\":")
    out.number(trace.ringless)
    out.raw(",\"signalHandlerEvents\":")
    out.number(trace.signalHandlerEvents)
    // The writes the recording stopped inside (their willSet in the trace, not their didSet), by property, one entry
    // a write (only when there are, as the text's line under its header).
    if !report.unfinishedWrites.isEmpty {
      out.raw(",\"unfinishedWrites\":")
      out.array(report.unfinishedWrites) { $0.string($1) }
    }
    // Chunks gone that their threads' numbers, or the footer's counts, show (only when there are: older readers'
    // traces and whole ones read as before).
    if !trace.missingChunks.isEmpty {
      out.raw(",\"missingChunks\":")
      out.number(trace.missingChunks.reduce(UInt64(0)) { $0 &+ $1.count })
    }
    if !trace.unreadRecordedEvents.isEmpty {
      out.raw(",\"unreadRecordedEvents\":")
      out.number(trace.unreadRecordedEvents.reduce(UInt64(0)) { $0 &+ $1.unread })
    }
    out.raw(",\"durationNanoseconds\":")
    out.number(trace.durationNanoseconds)
    out.raw(",\"backtraces\":")
    out.string(trace.backtraces)
    out.raw(",\"symbolized\":")
    out.bool(trace.symbolized)
    out.raw(",\"binariesWithoutSymbols\":")
    out.array(binariesWithoutSymbols) { $0.string($1) }
    out.raw("},\"properties\":")
    out.array(report.properties) { out, property in
      let s = property.statistics
      out.raw("{\"property\":")
      out.string(property.name)
      // Only for a name qualified with its module (another type has its type's name): other names print as they
      // did, and `module` is what tells such a property's module apart from a type's outer type in its name.
      if let module = property.qualifyingModule {
        out.raw(",\"module\":")
        out.string(module)
      }
      out.raw(",\"reads\":")
      out.number(s.reads)
      // Only when there are some: accesses at the end of the recording, not counted in `reads` (ReadFact.atEnd).
      if s.accessesAtEnd > 0 {
        out.raw(",\"accessesAtEnd\":")
        out.number(s.accessesAtEnd)
      }
      out.raw(",\"trackedReads\":")
      out.number(s.trackedReads)
      out.raw(",\"writes\":")
      out.number(s.writes)
      out.raw(",\"noopWrites\":")
      out.number(s.noopWrites)
      out.raw(",\"invalidations\":")
      out.number(s.invalidations)
      out.raw(",\"predictedInvalidations\":")
      out.number(s.predictedInvalidations)
      out.raw(",\"wastedInvalidations\":")
      out.number(s.wastedInvalidations)
      out.raw(",\"coalescedWrites\":")
      out.number(s.coalescedWrites)
      out.raw(",\"staleReads\":")
      out.number(s.staleReads)
      out.raw(",\"maximumFanOut\":")
      out.number(s.maximumFanOut)
      out.raw(",\"comparedWrites\":")
      out.number(s.comparedWrites)
      out.raw(",\"uncomparedWrites\":")
      out.number(s.uncomparedWrites)
      out.raw("}")
    }
    let (compared, uncompared) = writeComparison(report)
    out.raw(",\"modifyWrites\":{\"compared\":")
    out.number(compared)
    out.raw(",\"notCompared\":")
    out.number(uncompared)
    if uncompared > 0 {
      out.raw(",\"notComparedBecause\":{")
      for (index, entry) in uncomparedReasons(report).nonzero.enumerated() {
        if index > 0 { out.raw(",") }
        out.string(entry.reason.key)
        out.raw(":")
        out.number(entry.count)
      }
      out.raw("}")
    }
    out.raw("},\"scopes\":")
    out.array(report.scopes) { out, scope in
      let s = scope.statistics
      out.raw("{\"label\":")
      out.string(scope.label)
      out.raw(",\"kind\":")
      out.string(s.kind.description)
      out.raw(",\"instances\":")
      out.number(s.instances)
      out.raw(",\"runs\":")
      out.number(s.runs)
      out.raw(",\"invalidations\":")
      out.number(s.invalidations)
      out.raw(",\"predictedInvalidations\":")
      out.number(s.predictedInvalidations)
      out.raw(",\"wastedInvalidations\":")
      out.number(s.wastedInvalidations)
      out.raw(",\"redundantRuns\":")
      out.number(s.redundantRuns)
      // What makes the two counts above least values (not 0: they are).
      out.raw(",\"uncomparedInvalidations\":")
      out.number(s.uncomparedInvalidations)
      out.raw(",\"possiblyRedundantRuns\":")
      out.number(s.possiblyRedundantRuns)
      out.raw(",\"unexplainedInvalidations\":")
      out.number(s.unexplainedInvalidations)
      out.raw(",\"coalescedWrites\":")
      out.number(s.coalescedWrites)
      out.raw(",\"threads\":")
      out.number(s.threads.count)
      out.raw(",\"isolations\":")
      out.array(scope.isolations) { $0.string($1) }
      out.raw(",\"sequences\":")
      out.number(s.sequences)
      out.raw(",\"sequencesRunningAtEnd\":")
      out.number(s.sequencesRunningAtEnd)
      out.raw(",\"endings\":{")
      var first = true
      for (ending, count) in s.endings.sorted(by: { $0.key < $1.key }) {
        if !first { out.raw(",") }
        first = false
        out.string(ending)
        out.raw(":")
        out.number(count)
      }
      out.raw("},\"reads\":")
      out.array(scope.reads) { $0.string($1) }
      out.raw("}")
    }
    out.raw(",\"objects\":")
    out.array(report.objects) { out, objects in
      let s = objects.statistics
      out.raw("{\"type\":")
      out.string(objects.type)
      if let module = objects.qualifyingModule {
        out.raw(",\"module\":")
        out.string(module)
      }
      out.raw(",\"created\":")
      out.number(s.created)
      out.raw(",\"freed\":")
      out.number(s.freed)
      out.raw(",\"seenOnly\":")
      out.number(s.seenOnly)
      out.raw(",\"seenOnlyFreed\":")
      out.number(s.seenOnlyFreed)
      out.raw("}")
    }
    let registrars = report.registrarsWithoutEvents
    out.raw(",\"registrarsWithoutEvents\":{\"created\":")
    out.number(registrars.total.created)
    out.raw(",\"freed\":")
    out.number(registrars.total.freed)
    out.raw(",\"aliveAtEnd\":")
    out.number(registrars.total.aliveAtEnd)
    out.raw(",\"sites\":")
    out.array(registrars.sites) { out, site in
      out.raw("{\"site\":")
      out.string(site.site)
      out.raw(",\"created\":")
      out.number(site.statistics.created)
      out.raw(",\"freed\":")
      out.number(site.statistics.freed)
      out.raw("}")
    }
    out.raw("},\"findings\":")
    out.array(report.findings) { out, finding in
      out.raw("{\"kind\":")
      out.string(finding.kind.rawValue)
      // What the text says before the kind (`warning`, `info`): a script need not know which kinds inform.
      out.raw(finding.isInformational ? ",\"severity\":\"information\"" : ",\"severity\":\"warning\"")
      out.raw(",\"property\":")
      out.string(finding.property)
      out.raw(",\"scope\":")
      out.string(finding.scope)
      out.raw(",\"site\":")
      out.string(finding.site)
      // Only where it is so: `"siteApproximate":true`, the site's line is approximate (docs/symbols.md).
      if finding.location?.lineIsApproximate == true { out.raw(",\"siteApproximate\":true") }
      out.raw(",\"count\":")
      out.number(finding.count)
      out.raw(",\"message\":")
      out.string(finding.message)
      out.raw(",\"hint\":")
      out.string(finding.hint)
      out.raw(",\"evidence\":")
      out.string(finding.evidence)
      out.raw("}")
    }
    out.raw("}\n")
    return out.text
  }
}

/// A text table with aligned columns: the first left-aligned, the rest right-aligned except the last.
struct Table {
  var header: [String]
  var rows: [[String]] = []
  /// Columns aligned left (text); the others are numbers, aligned right.
  var leftAligned: Set<Int>

  init(_ header: [String], leftAligned: Set<Int> = [0]) {
    self.header = header
    self.leftAligned = leftAligned
  }

  mutating func add(_ row: [String]) { rows.append(row) }

  func render(into out: inout TextBuffer, more: Int) {
    let all = [header] + rows
    var widths = Array(repeating: 0, count: header.count)
    for row in all { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    for row in all {
      var line = "  "
      for (index, cell) in row.enumerated() {
        let last = index == row.count - 1
        if leftAligned.contains(index) {
          line += last ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
        } else {
          line += cell.leftPadded(widths[index])
        }
        if !last { line += "  " }
      }
      while line.hasSuffix(" ") { line.removeLast() }
      out.line(line)
    }
    if more > 0 { out.line("  … \(more) more (see --format json)") }
  }
}
