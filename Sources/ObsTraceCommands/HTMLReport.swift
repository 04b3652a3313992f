import Foundation
import ObsTraceAnalysis
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// `report --format html`: one self-contained page (no network: styles, script and the graph's SVG are inline)
/// with the summary, the findings with their hints and sites, the hot properties and scopes in sortable tables,
/// the dependency graph, and per scope who read what. Renders the report's facts; derives nothing.
enum HTMLReport {
  /// The dependency graph for the page: the SVG Graphviz drew, or why there is none.
  enum Graph {
    case svg(String)
    case unavailable(String)
  }

  /// Draws `dotText` with Graphviz's `dot` (`dot`: its path; by default the first on PATH).
  ///
  /// A graph of more than `edgeLimit` edges is not given to dot, and dot is stopped after `seconds`: Graphviz lays
  /// out a graph of thousands of edges for many minutes (a cut 100 k-object trace's page, 12,951 edges: still laying
  /// out after 600 s, obstrace itself 0.4 s), and the page waited for it with no limit. The page then says so and
  /// gives the command that draws a part.
  static func render(dotText: String, dot: String? = nil, edgeLimit: Int = 2_000, seconds: Int = 60) -> Graph {
    // Edges are the lines `  "from" -> "to" [...]` (`GraphCommand.dot`).
    let edges = dotText.split(separator: "\n").count { $0.hasPrefix("  \"") && $0.contains("\" -> \"") }
    let part = "draw a part of it: obstrace graph --sites --scope LABEL run.trc | dot -Tsvg > graph.svg (or --property)"
    guard edges <= edgeLimit else {
      return .unavailable(
        "The graph has \(edges) edges, more than Graphviz lays out in reasonable time (\(edgeLimit) at most here), so it "
          + "is not drawn on this page; " + part)
    }
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    guard
      let dot = dot ?? paths.map({ $0 + "/dot" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
    else {
      return .unavailable(
        "Graphviz's dot is not on PATH, so the graph is not drawn here. Install Graphviz (apt-get install graphviz, "
          + "brew install graphviz) and run this report again, or draw it yourself: "
          + "obstrace graph --sites run.trc | dot -Tsvg > graph.svg")
    }
    let run: (status: Int32, output: [UInt8], timedOut: Bool)
    do {
      run = try draw(dotText, with: dot, seconds: seconds)
    } catch {
      return .unavailable("\(dot) could not be run (\(String(cString: strerror(error.code))))")
    }
    if run.timedOut {
      return .unavailable("\(dot) -Tsvg did not finish laying out the graph (\(edges) edges) in \(seconds) s; " + part)
    }
    let exited = run.status & 0x7f == 0
    guard exited, (run.status >> 8) & 0xff == 0, let text = String(validating: run.output, as: UTF8.self),
      let start = text.range(of: "<svg")
    else {
      return .unavailable(
        "\(dot) -Tsvg failed (" + (exited ? "exit \((run.status >> 8) & 0xff)" : "signal \(run.status & 0x7f)") + ")")
    }
    // Drop the XML prologue; the page's style shrinks a drawing wider than the page.
    var svg = String(text[start.lowerBound...])
    svg = "<svg class=\"graph\"" + svg.dropFirst(4)
    return .svg(svg)
  }

  /// An errno a system call failed with.
  struct SystemError: Error { let code: Int32 }

  /// Runs `dot -Tsvg` on `text` and reads what it draws: its wait status, its output, and whether it was killed
  /// after `seconds`.
  ///
  /// dot is started with posix_spawn in obstrace's own process group (Foundation's Process gives a child a group
  /// of its own), with no signal blocked (a child inherits its spawning thread's mask, and a Dispatch or
  /// concurrency thread blocks nearly all) and SIGPIPE at its default: so Ctrl-C (SIGINT to the foreground group),
  /// `timeout` (its signal, SIGKILL too, goes to the whole group) and a CI runner that ends the step's group end dot
  /// with obstrace; before, a killed `report --format html` left dot laying out a big graph for minutes, re-parented
  /// to init (tryout17's Q2). An obstrace killed alone (`kill -9 PID`) leaves dot to read the end of its input,
  /// finish its layout (of at most `edgeLimit` edges) and die of SIGPIPE when it writes the drawing.
  static func draw(_ text: String, with dot: String, seconds: Int) throws(SystemError) -> (
    status: Int32, output: [UInt8], timedOut: Bool
  ) {
    var input: [Int32] = [-1, -1]
    var output: [Int32] = [-1, -1]
    guard pipe(&input) == 0 else { throw SystemError(code: errno) }
    guard pipe(&output) == 0 else {
      let code = errno
      close(input[0])
      close(input[1])
      throw SystemError(code: code)
    }
    // Close-on-exec: dot holds only its copies (0 and 1), so that it sees its input end when obstrace closes it, and
    // a command another thread spawns does not hold either pipe open.
    for descriptor in input + output { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input[0], 0)
    posix_spawn_file_actions_adddup2(&actions, output[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup(dot), strdup("-Tsvg"), nil]
    defer { for pointer in argv { free(pointer) } }
    var process: pid_t = 0
    let spawned = posix_spawn(&process, argv[0]!, &actions, &attributes, argv, environ)
    close(input[0])
    close(output[1])
    guard spawned == 0 else {
      close(input[1])
      close(output[0])
      throw SystemError(code: spawned)
    }
    // Write on another thread: dot may fill its output pipe before it has read all its input. A dot that exits
    // before it has read it all (a syntax error, a crash) closes the pipe: the write then fails with EPIPE, and the
    // SIGPIPE it raises, which would end obstrace, is blocked on this thread alone (a signal a write raises is the
    // writing thread's, and one left pending there goes with the thread); the page says dot failed.
    let writing = input[1]
    let writer = Thread {
      var pipeSignal = sigset_t()
      sigemptyset(&pipeSignal)
      sigaddset(&pipeSignal, SIGPIPE)
      pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
      var text = text
      text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
          let written = Glibc.write(writing, bytes.baseAddress! + offset, bytes.count - offset)
          if written < 0 && errno == EINTR { continue }
          if written <= 0 { break }
          offset += written
        }
      }
      close(writing)
    }
    writer.start()
    // dot is ended after `seconds` (its output then ends, and the read returns). The limit kills under the lock,
    // and only until dot is known to have ended, which is before it is reaped: its process id is not reused then.
    let state = Mutex((ended: false, timedOut: false))
    let limit = DispatchWorkItem {
      state.withLock { state in
        guard !state.ended else { return }
        state.timedOut = true
        kill(process, SIGKILL)
      }
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds), execute: limit)
    var drawing: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(output[0], $0.baseAddress!, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      drawing += buffer[..<count]
    }
    close(output[0])
    // Until dot has ended, without reaping it (WNOWAIT); then the limit is off, and dot is reaped.
    var information = siginfo_t()
    while waitid(P_PID, id_t(process), &information, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    let timedOut = state.withLock { state in
      state.ended = true
      return state.timedOut
    }
    limit.cancel()
    var status: Int32 = 0
    while waitpid(process, &status, 0) < 0 && errno == EINTR {}
    return (status, drawing, timedOut)
  }

  /// The page shows at most `rowLimit` rows of the Properties, Scopes and Objects tables and `scopeLimit` scopes'
  /// who-read-what sections, each cut saying how many are left out and the command that shows them: the page of a
  /// trace of 10,000 scopes was 21 MB (10,000 sections, 60,005 table rows), with no word of it (tryout17's Q3).
  static func page(
    _ report: AnalysisReport, graph: Graph, scopes: [String: WhoReadWhat.Scope], binariesWithoutSymbols: [String] = [],
    fallbackNames: [String] = [], rowLimit: Int = 1_000, scopeLimit: Int = 100
  ) -> String {
    let trace = report.trace
    let tracePath = escape(shellQuoted(trace.path))
    let warnings = report.findings.filter { !$0.isInformational }
    let information = report.findings.filter(\.isInformational)
    var html = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>ObsTrace report: \(escape(trace.path))</title>
      <style>\(style)</style>
      </head>
      <body>
      <header>
      <h1>ObsTrace report</h1>
      <p class="path">\(escape(trace.path))</p>
      </header>
      <main>

      """

    // Summary: the few numbers that say whether to read on.
    let wasted = report.properties.reduce(0) { $0 + $1.statistics.wastedInvalidations }
    let invalidations = report.properties.reduce(0) { $0 + $1.statistics.invalidations }
    let redundant = report.scopes.reduce(0) { $0 + $1.statistics.redundantRuns }
    let runs = report.scopes.reduce(0) { $0 + $1.statistics.runs }
    let (status, complete) = TraceInput.completeness(trace)
    html += "<section id=\"summary\" class=\"cards\">\n"
    html += card(counted(warnings.count, "warning"), "\(warnings.count)", tone: warnings.isEmpty ? "good" : "bad")
    html += card("wasted invalidations", "\(wasted) of \(invalidations)", tone: wasted == 0 ? "good" : "bad")
    html += card("redundant runs", "\(redundant) of \(runs)", tone: redundant == 0 ? "good" : "warn")
    html += card(counted(trace.events, "event"), "\(trace.events)")
    html += card(counted(trace.threads, "thread"), "\(trace.threads)")
    html += card("duration", Formatting.duration(trace.durationNanoseconds))
    let dropped = trace.droppedEvents
    html += card(counted(dropped, "dropped event"), "\(dropped)", tone: dropped == 0 ? "" : "bad")
    html += card("trace", status, tone: complete ? "" : "bad")
    html += "</section>\n"
    var notes: [String] = []
    if trace.backtraces == "off" {
      notes.append("Recorded without call stacks: no sites (OBSTRACE_BACKTRACES=writes).")
    }
    if !trace.symbolized { notes.append("No symbol table: names are fallbacks (run obstrace symbolize).") }
    if !binariesWithoutSymbols.isEmpty {
      notes.append(
        "No symbols or debug info in \(binariesWithoutSymbols.joined(separator: ", ")) (stripped?): sites in "
          + "that code and names of its properties are not known.")
    }
    if !fallbackNames.isEmpty { notes.append(ReportPrinter.fallbackNamesLine(fallbackNames) + ".") }
    if !notes.isEmpty { html += "<p class=\"note\">\(notes.map(escape).joined(separator: " "))</p>\n" }

    // Findings.
    html += "<section id=\"findings\">\n<h2>Findings <span class=\"count\">\(warnings.count) warning"
    html += "\(warnings.count == 1 ? "" : "s"), \(information.count) informational</span></h2>\n"
    if report.findings.isEmpty { html += "<p class=\"empty\">Nothing to report.</p>\n" }
    for finding in warnings + information {
      let tone = finding.isInformational ? "info" : "warning"
      html += "<article class=\"finding \(tone)\" data-kind=\"\(escape(finding.kind.rawValue))\">\n"
      html += "<div class=\"kind\">\(tone) <code>\(escape(finding.kind.rawValue))</code></div>\n"
      html += "<p class=\"message\">\(escape(finding.message))</p>\n"
      if let site = finding.site {
        let title = finding.location.map { "\($0.file):\($0.line)" } ?? site
        html += "<p class=\"site\">at <code title=\"\(escape(title))\">\(escape(site))</code></p>\n"
      }
      html += "<p class=\"hint\"><b>Hint:</b> \(escape(finding.hint))</p>\n"
      // What the finding rests on, as the text report says it (tryout17's Q1).
      if !finding.evidence.isEmpty {
        html += "<p class=\"evidence\"><b>Evidence:</b> \(escape(finding.evidence))</p>\n"
      }
      html += "</article>\n"
    }
    html += "</section>\n"

    // The graph.
    html += "<section id=\"graph\">\n<h2>Dependency graph</h2>\n"
    html += """
      <p class="legend"><span class="sw site"></span>write site <span class="sw prop"></span>property
      <span class="sw noop"></span>property written without change <span class="sw scope"></span>scope
      <span class="sw redundant"></span>scope with redundant runs <span class="ln read"></span>read
      <span class="ln inval"></span>invalidated <span class="ln wasted"></span>invalidated, some wasted
      <span class="ln predicted"></span>invalidations predicted, not recorded (untraced scope)</p>

      """
    switch graph {
    case .svg(let svg): html += "<div class=\"figure\">\n\(svg)\n</div>\n"
    case .unavailable(let reason): html += "<p class=\"missing\" id=\"no-graph\">\(escape(reason))</p>\n"
    }
    html += "</section>\n"

    // Properties and scopes, sortable.
    html += "<section id=\"properties\">\n<h2>Properties <span class=\"count\">by invalidations; click a column "
    html += "to sort</span></h2>\n"
    // Writes through `_modify` not compared have no no-op count: a column of their own, and the text report's line
    // that says why and how to compare them, so that a 0 in "no-op writes" is not read as a compared 0 (Q10).
    html += table(
      [
        "property", "reads", "tracked reads", "writes", "no-op writes", "writes not compared", "invalidations",
        "wasted", "coalesced", "stale reads", "max fan-out",
      ],
      report.properties.prefix(rowLimit).map { property in
        let s = property.statistics
        return [
          .text(property.name), .number(s.reads), .number(s.trackedReads), .number(s.writes),
          .number(s.noopWrites, bad: true, least: s.uncomparedWrites > 0), .number(s.uncomparedWrites, warn: true),
          .number(s.invalidations, predicted: s.predictedInvalidations),
          .number(s.wastedInvalidations, bad: true, least: s.uncomparedWrites > 0), .number(s.coalescedWrites),
          .number(s.staleReads, bad: true),
          .number(s.maximumFanOut),
        ]
      }, empty: "No property was read or written.")
    html += left(
      report.properties.count - rowLimit, "propert", plural: "ies", singular: "y",
      command: "obstrace report --top \(report.properties.count) \(tracePath)")
    if let line = ReportPrinter.comparisonLine(report) {
      let trimmed = line.drop { $0 == " " }
      html += "<p class=\"note\" id=\"comparison\">"
      html += escape(trimmed.prefix(1).uppercased() + trimmed.dropFirst()) + ".</p>\n"
    }
    if report.properties.contains(where: { $0.statistics.predictedInvalidations > 0 }) {
      html += "<p class=\"note\" id=\"predicted\">Invalidations marked predicted are of untraced scopes (tracking "
      html += "ObsTrace does not own): predicted from Observation's rules, not recorded.</p>\n"
    }
    html += "</section>\n"
    html += "<section id=\"scopes\">\n<h2>Scopes <span class=\"count\">by runs</span></h2>\n"
    html += table(
      ["scope", "kind", "instances", "runs", "invalidations", "wasted", "redundant runs", "unexplained", "reads"],
      report.scopes.prefix(rowLimit).map { scope in
        let s = scope.statistics
        return [
          .text(scope.label), .text(s.kind.description), .number(s.instances), .number(s.runs),
          .number(s.invalidations, predicted: s.predictedInvalidations),
          .number(s.wastedInvalidations, bad: true, least: s.uncomparedInvalidations > 0),
          .number(s.redundantRuns, bad: true, least: s.possiblyRedundantRuns > 0),
          .number(s.unexplainedInvalidations, bad: true),
          .text(scope.reads.prefix(4).joined(separator: ", ") + (scope.reads.count > 4 ? ", …" : "")),
        ]
      }, empty: "No tracking scope ran.")
    html += left(
      report.scopes.count - rowLimit, "scope", command: "obstrace report --top \(report.scopes.count) \(tracePath)")
    // A scope's wasted and redundant counts that rest on writes not compared are least values: said under the
    // table, as the text report says them, so that a 0 there is not read as a known 0.
    let leastCounts = report.scopes.prefix(rowLimit).compactMap(ReportPrinter.leastCountsLine)
    if !leastCounts.isEmpty {
      html += "<p class=\"note\" id=\"least-counts\">"
      html += leastCounts.map { escape(String($0.drop { $0 == " " })) + "." }.joined(separator: "<br>\n")
      html += "</p>\n"
    }
    html += "</section>\n"

    // Who read what, per scope.
    html += "<section id=\"who-read-what\">\n<h2>Who read what</h2>\n"
    if report.scopes.isEmpty { html += "<p class=\"empty\">No tracking scope ran.</p>\n" }
    // The scopes with wasted invalidations or redundant runs first, then the others by runs (the report's order),
    // `scopeLimit` of them, shown in the report's order.
    let troubled = report.scopes.indices.filter {
      report.scopes[$0].statistics.wastedInvalidations > 0 || report.scopes[$0].statistics.redundantRuns > 0
    }
    let calm = report.scopes.indices.filter {
      report.scopes[$0].statistics.wastedInvalidations == 0 && report.scopes[$0].statistics.redundantRuns == 0
    }
    let shownScopes = (troubled + calm).prefix(scopeLimit).sorted().map { report.scopes[$0] }
    for scope in shownScopes {
      let detail = scopes[scope.label] ?? WhoReadWhat.Scope()
      let s = scope.statistics
      let open = s.wastedInvalidations > 0 || s.redundantRuns > 0 ? " open" : ""
      html += "<details class=\"scope\"\(open)>\n<summary><code>\(escape(scope.label))</code> "
      html += "<span class=\"count\">\(s.kind), \(s.runs) run\(s.runs == 1 ? "" : "s")"
      // Least counts (they rest on writes through `_modify` not compared) with "≥", as every table prints them.
      let leastRedundant = s.possiblyRedundantRuns > 0 ? "≥" : ""
      let leastWasted = s.uncomparedInvalidations > 0 ? "≥" : ""
      if s.redundantRuns > 0 {
        html += ", <b class=\"bad\">\(leastRedundant)\(s.redundantRuns) redundant</b>"
      } else if s.possiblyRedundantRuns > 0 {
        html += ", ≥0 redundant"
      }
      if s.wastedInvalidations > 0 {
        html += ", <b class=\"bad\">\(leastWasted)\(s.wastedInvalidations) wasted</b>"
      } else if s.uncomparedInvalidations > 0 {
        html += ", ≥0 wasted"
      }
      html += "</span></summary>\n<div class=\"columns\">\n<div>\n<h3>Read</h3>\n<ul class=\"bars\">\n"
      let maximum = max(1, detail.runs)
      for (property, count) in detail.reads.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
        let percent = count * 100 / maximum
        html += "<li><span class=\"bar\" style=\"width:\(percent)%\"></span><code>\(escape(property))</code> "
        html += "<span class=\"count\">in \(count) of \(detail.runs) run\(detail.runs == 1 ? "" : "s")</span></li>\n"
      }
      if detail.reads.isEmpty { html += "<li class=\"empty\">nothing</li>\n" }
      html += "</ul>\n</div>\n<div>\n<h3>Invalidated by</h3>\n<ul>\n"
      let causes = detail.invalidatedBy.sorted {
        ($1.value.all, $0.key.property, $0.key.site) < ($0.value.all, $1.key.property, $1.key.site)
      }
      for (cause, counts) in causes {
        html += "<li\(counts.wasted > 0 ? " class=\"bad\"" : "")>writes of <code>\(escape(cause.property))</code>"
        if !cause.site.isEmpty { html += " at <code>\(escape(cause.site))</code>" }
        html += ": \(counts.all)"
        if counts.predicted > 0 {
          html += " <span class=\"predicted\">(\(counts.predicted == counts.all ? "all" : "\(counts.predicted)") "
          html += "predicted, not recorded)</span>"
        }
        if counts.wasted > 0 { html += " (\(counts.wasted) changed nothing)" }
        if counts.uncompared > 0 {
          html += " <span class=\"warn\">(\(counts.uncompared) not compared: may have changed nothing)</span>"
        }
        html += "</li>\n"
      }
      if causes.isEmpty { html += "<li class=\"empty\">no write invalidated it</li>\n" }
      html += "</ul>\n</div>\n</div>\n"
      if !detail.firstRuns.isEmpty {
        html +=
          "<table class=\"runs\"><thead><tr><th class=\"n\">ms</th><th>thread</th><th>run</th><th>read</th></tr></thead>"
        html += "<tbody>\n"
        for run in detail.firstRuns {
          html += "<tr\(run.redundant ? " class=\"redundant\"" : "")><td class=\"n\">"
          html += "\(Formatting.milliseconds(run.time))</td><td>T\(run.thread)</td><td>#\(run.scope)"
          html += "\(run.redundant ? " <b class=\"bad\">redundant</b>" : "")"
          html +=
            "\(run.possiblyRedundant ? " <span class=\"warn\">redundant if the writes not compared changed nothing</span>" : "")</td>"
          html += "<td>\(run.reads.isEmpty ? "nothing" : run.reads.map(escape).joined(separator: ", "))</td></tr>\n"
        }
        html += "</tbody></table>\n"
        if detail.runs > detail.firstRuns.count {
          html += "<p class=\"count\">first \(detail.firstRuns.count) of \(detail.runs) runs; all of them: "
          html += "<code>obstrace timeline --scope \(escape(shellQuoted(scope.label)))</code></p>\n"
        }
      }
      html += "</details>\n"
    }
    if report.scopes.count > shownScopes.count {
      let more = report.scopes.count - shownScopes.count
      html += "<p class=\"note\" id=\"more-scopes\">\(more) more scope\(more == 1 ? "" : "s") not shown here (the page "
      html += "shows \(shownScopes.count): those with wasted invalidations or redundant runs first, then by runs); "
      html += "one scope's runs: <code>obstrace timeline --scope LABEL \(tracePath)</code>; all their counts: "
      html += "<code>obstrace report --top \(report.scopes.count) \(tracePath)</code></p>\n"
    }
    html += "</section>\n"

    // Objects.
    html += "<section id=\"objects\">\n<h2>Objects</h2>\n"
    html += table(
      ["type", "created", "freed", "alive at end", "from before", "of them freed"],
      report.objects.prefix(rowLimit).map { objects in
        let s = objects.statistics
        return [
          .text(objects.type), .number(s.created), .number(s.freed), .number(s.created - s.freed),
          .number(s.seenOnly), .number(s.seenOnlyFreed),
        ]
      }, empty: "No object.")
    html += left(report.objects.count - rowLimit, "type", command: "obstrace report --format json \(tracePath)")
    let registrars = report.registrarsWithoutEvents
    if let summary = registrars.summary {
      html += "<p class=\"note\" id=\"registrars-without-events\">\(escape(summary)).</p>\n"
      html += table(
        ["created at", "registrars", "freed", "alive at end"],
        registrars.sites.map { site in
          [
            .text(site.site ?? (trace.backtraces == "off" ? "(call stacks off)" : "(no frame resolved)")),
            .number(site.statistics.created),
            .number(site.statistics.freed), .number(site.statistics.aliveAtEnd),
          ]
        }, empty: "")
    }
    html += "</section>\n"
    html += """
      </main>
      <footer>Made by <code>obstrace report --format html</code>. The page needs no network.
      Call stacks: \(escape(trace.backtraces)).</footer>
      <script>\(script)</script>
      </body>
      </html>

      """
    return html
  }

  enum Cell {
    case text(String)
    /// A count; `bad` ones are highlighted when not zero, `warn` ones in the colour of a warning; `predicted`: how
    /// many of it were predicted, not recorded, said after it when not zero.
    /// `least`: the count is a least one (it rests on writes through `_modify` not compared), printed with "≥".
    case number(Int, bad: Bool = false, warn: Bool = false, predicted: Int = 0, least: Bool = false)
  }

  /// The line under a table cut at its limit: how many rows are left out, and the command that shows them.
  static func left(_ count: Int, _ noun: String, plural: String = "s", singular: String = "", command: String) -> String
  {
    guard count > 0 else { return "" }
    return "<p class=\"note more\">\(count) more \(noun)\(count == 1 ? singular : plural) not shown here: "
      + "<code>\(command)</code></p>\n"
  }

  static func table(_ header: [String], _ rows: [[Cell]], empty: String) -> String {
    guard !rows.isEmpty else { return "<p class=\"empty\">\(escape(empty))</p>\n" }
    var html = "<table class=\"sortable\"><thead><tr>"
    for (index, title) in header.enumerated() {
      let numeric = rows.first.map { if case .number = $0[index] { true } else { false } } ?? false
      html += "<th\(numeric ? " class=\"n\"" : "")>\(escape(title))</th>"
    }
    html += "</tr></thead><tbody>\n"
    for row in rows {
      html += "<tr>"
      for cell in row {
        switch cell {
        case .text(let text): html += "<td>\(escape(text))</td>"
        case .number(let value, let bad, let warn, let predicted, let least):
          html += "<td class=\"n\(bad && value > 0 ? " bad" : "")\(warn && value > 0 ? " warn" : "")"
          html += "\(value == 0 && !least ? " zero" : "")\">\(least ? "≥" : "")\(value)"
          if predicted > 0 { html += " <span class=\"predicted\">(\(predicted) predicted)</span>" }
          html += "</td>"
        }
      }
      html += "</tr>\n"
    }
    return html + "</tbody></table>\n"
  }

  /// A card's title for a count: singular for 1 ("1 warning", not "1 warnings").
  static func counted(_ count: some BinaryInteger, _ noun: String) -> String {
    count == 1 ? noun : noun + "s"
  }

  static func card(_ title: String, _ value: String, tone: String = "") -> String {
    "<div class=\"card \(tone)\"><div class=\"value\">\(escape(value))</div><div class=\"title\">\(escape(title))</div></div>\n"
  }

  static func shellQuoted(_ text: String) -> String {
    text.allSatisfy { $0.isLetter || $0.isNumber || "._/:-".contains($0) }
      ? text : "'" + text.replacing("'", with: "'\\''") + "'"
  }

  static func escape(_ text: String) -> String {
    var result = ""
    for character in text.unicodeScalars {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.unicodeScalars.append(character)
      }
    }
    return result
  }

  static let style = """
    :root { --ink:#1f2430; --muted:#5d6675; --line:#e2e6ee; --bg:#f6f7fa; --bad:#c62828; --warn:#d97706;
      --good:#2e7d32; --accent:#2f5d9f; }
    * { box-sizing: border-box; }
    body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color:var(--ink);
      background:var(--bg); }
    header { background:#1f2a44; color:#fff; padding:18px 32px; }
    header h1 { margin:0; font-size:22px; font-weight:600; }
    header .path { margin:4px 0 0; color:#c5cde0; font-family:ui-monospace, Menlo, monospace; font-size:13px; }
    main { max-width:1200px; margin:0 auto; padding:16px 32px 32px; }
    section { background:#fff; border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:16px 0; }
    h2 { margin:0 0 12px; font-size:17px; }
    h2 .count, .count { color:var(--muted); font-weight:normal; font-size:13px; }
    h3 { font-size:13px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); margin:8px 0; }
    code { font-family:ui-monospace, Menlo, Consolas, monospace; font-size:12.5px; }
    .cards { display:flex; flex-wrap:wrap; gap:10px; background:none; border:none; padding:0; }
    .card { flex:1 1 130px; background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px;
      border-top:4px solid var(--line); }
    .card .value { font-size:22px; font-weight:600; }
    .card .title { color:var(--muted); font-size:12px; }
    .card.bad { border-top-color:var(--bad); } .card.bad .value { color:var(--bad); }
    .card.warn { border-top-color:var(--warn); } .card.warn .value { color:var(--warn); }
    .card.good { border-top-color:var(--good); } .card.good .value { color:var(--good); }
    .note, .missing { background:#fff8e1; border:1px solid #f3d98b; border-radius:6px; padding:10px 14px; }
    .finding { border-left:4px solid var(--warn); background:#fffaf0; border-radius:4px; padding:8px 14px;
      margin:10px 0; }
    .finding.info { border-left-color:#9aa3b2; background:#f7f8fa; }
    .finding[data-kind="noop-write"], .finding[data-kind="stale-read"], .finding[data-kind="redundant-run"] {
      border-left-color:var(--bad); background:#fff5f5; }
    .finding .kind { font-size:12px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
    .finding .message { margin:4px 0; font-weight:600; }
    .finding .site, .finding .hint { margin:4px 0; color:#333b48; }
    .legend { color:var(--muted); font-size:12px; }
    .sw { display:inline-block; width:14px; height:10px; border:1px solid #555; margin:0 4px 0 12px;
      vertical-align:middle; }
    .sw.site { background:#eef2f7; } .sw.prop { background:#fff; } .sw.noop { background:#f8d0d0; }
    .sw.scope { background:#fff; border-radius:6px; } .sw.redundant { background:#fbd9a6; border-radius:6px; }
    .ln { display:inline-block; width:22px; margin:0 4px 0 12px; vertical-align:middle; border-top:2px solid #000; }
    .ln.read { border-top:2px dashed #666; } .ln.wasted { border-top-color:#d00; }
    .ln.predicted { border-top:2px dotted #000; }
    .predicted { color:var(--muted); font-weight:normal; font-style:italic; }
    .finding .evidence { margin:4px 0; color:var(--muted); font-size:13px; }
    td.warn { color:var(--warn); font-weight:600; } span.warn { color:var(--warn); }
    .figure { overflow:auto; text-align:center; }
    svg.graph { max-width:100%; height:auto; }
    table { border-collapse:collapse; width:100%; font-size:13px; }
    th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
    th { background:#f0f2f6; font-weight:600; white-space:nowrap; }
    table.sortable th { cursor:pointer; user-select:none; }
    table.sortable th:hover { background:#e4e8f0; }
    th.sorted-up::after { content:" ▲"; font-size:10px; } th.sorted-down::after { content:" ▼"; font-size:10px; }
    .n { text-align:right; font-variant-numeric:tabular-nums; }
    td.zero { color:#a0a7b4; }
    .bad, td.bad { color:var(--bad); font-weight:600; }
    details.scope { border:1px solid var(--line); border-radius:6px; margin:8px 0; padding:6px 12px; }
    details.scope summary { cursor:pointer; padding:4px 0; }
    .columns { display:grid; grid-template-columns:1fr 1fr; gap:16px; }
    ul { margin:0; padding-left:18px; }
    ul.bars { list-style:none; padding:0; }
    ul.bars li { position:relative; padding:3px 6px; margin:2px 0; }
    ul.bars .bar { position:absolute; left:0; top:0; bottom:0; background:#e3ecf9; border-radius:3px; z-index:0; }
    ul.bars li > code, ul.bars li > .count { position:relative; }
    table.runs { margin-top:10px; }
    tr.redundant td { background:#fff3e0; }
    .empty { color:var(--muted); font-style:italic; }
    footer { text-align:center; color:var(--muted); font-size:12px; padding:0 0 24px; }
    """

  static let script = """
    document.querySelectorAll("table.sortable").forEach(function (table) {
      table.querySelectorAll("th").forEach(function (th, column) {
        th.addEventListener("click", function () {
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          var down = !th.classList.contains("sorted-down");
          var numeric = th.classList.contains("n");
          rows.sort(function (a, b) {
            var x = a.cells[column].textContent, y = b.cells[column].textContent;
            var order = numeric ? parseFloat(x.replace("≥", "")) - parseFloat(y.replace("≥", "")) : x.localeCompare(y);
            return down ? -order : order;
          });
          table.querySelectorAll("th").forEach(function (h) { h.classList.remove("sorted-up", "sorted-down"); });
          th.classList.add(down ? "sorted-down" : "sorted-up");
          rows.forEach(function (row) { body.appendChild(row); });
        });
      });
    });
    """
}
