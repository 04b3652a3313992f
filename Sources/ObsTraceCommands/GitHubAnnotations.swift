import ObsTraceAnalysis
import ObsTraceFormat

/// GitHub Actions workflow commands (`::warning file=…,line=…,title=…::message`): what `report --format github`
/// and `check --format github` print, so that findings and failed checks show on the pull request's lines.
/// A site's file is written relative to the source root (by default the current directory, where a workflow
/// runs), since GitHub places annotations by repository-relative paths.
enum GitHubAnnotations {
  /// One workflow command line. `file` and `line` are left out when the place is not known; GitHub then shows
  /// the annotation on the run's summary.
  static func command(
    _ level: String, file: String?, line: UInt32?, title: String, message: String
  ) -> String {
    var properties: [String] = []
    if let file, !file.isEmpty {
      properties.append("file=" + escapeProperty(file))
      if let line, line > 0 { properties.append("line=\(line)") }
    }
    properties.append("title=" + escapeProperty(title))
    return "::\(level) \(properties.joined(separator: ","))::\(escapeData(message))\n"
  }

  /// One annotation, before it is written (`render`).
  struct Annotation {
    var level: String
    var file: String?
    var line: UInt32?
    var title: String
    var message: String
  }

  /// GitHub shows at most this many annotations of a level (error, warning, notice) a step, 50 a job (actions/toolkit,
  /// docs/problem-matchers.md, Limitations); the rest never appear on the pull request.
  static let shownPerStep = 10

  /// The workflow commands of `annotations`, in their order, at most `shownPerStep` of each level. The others are
  /// not dropped unsaid (tryout17's Q11: 12 warnings, the last two never on the pull request, and nothing said so):
  /// one `::notice` (a level of its own, which nothing else here uses) says how many more of each level there are
  /// and where to read them (`whereElse`), and they follow it as plain lines of the step's log.
  static func render(_ annotations: [Annotation], whereElse: String) -> String {
    var out = ""
    var shown: [String: Int] = [:]
    var left: [Annotation] = []
    for annotation in annotations {
      if shown[annotation.level, default: 0] < shownPerStep {
        shown[annotation.level, default: 0] += 1
        out += command(
          annotation.level, file: annotation.file, line: annotation.line, title: annotation.title,
          message: annotation.message)
      } else {
        left.append(annotation)
      }
    }
    guard !left.isEmpty else { return out }
    var counts: [String] = []
    for level in ["error", "warning", "notice"] {
      let count = left.count { $0.level == level }
      if count > 0 { counts.append("\(count) more \(level)\(count == 1 ? "" : "s")") }
    }
    out += command(
      "notice", file: nil, line: nil, title: "obstrace: \(left.count) more not shown",
      message: counts.joined(separator: " and ") + " than GitHub shows a step (\(shownPerStep) of each kind) are not "
        + "annotated: they are the lines after this one in this step's log, and " + whereElse)
    for annotation in left {
      let place = annotation.file.map { file in annotation.line.map { "\(file):\($0): " } ?? "\(file): " } ?? ""
      let text = "\(annotation.level) (not annotated): \(place)\(annotation.title): \(annotation.message)"
      out += text.replacing("\r", with: " ").replacing("\n", with: " ") + "\n"
    }
    return out
  }

  /// The message part: `%`, CR and LF are escaped, as the runner expects.
  static func escapeData(_ text: String) -> String {
    var result = ""
    for character in text.unicodeScalars {
      switch character {
      case "%": result += "%25"
      case "\r": result += "%0D"
      case "\n": result += "%0A"
      default: result.unicodeScalars.append(character)
      }
    }
    return result
  }

  /// A property value (file, title): also `:` and `,`, which separate properties.
  static func escapeProperty(_ text: String) -> String {
    escapeData(text).replacing(":", with: "%3A").replacing(",", with: "%2C")
  }

  /// A frame's file relative to `root` when it lies under it; otherwise as recorded.
  static func path(_ frame: SymbolizedFrame, root: String) -> String? {
    guard !frame.file.isEmpty else { return nil }
    let prefix = root.hasSuffix("/") ? root : root + "/"
    return frame.file.hasPrefix(prefix) ? String(frame.file.dropFirst(prefix.count)) : frame.file
  }

  /// `report --format github`: a warning per warning finding, on its site's line when it has one. A finding about
  /// a scope labelled by its call site (a redundant run, untraced tracking) is on that call's line, as the trace
  /// recorded it (`callSite(ofScope:)`). Any other finding is an annotation of the run that says it has no line
  /// and why, with its evidence, as the text report gives it. Informational findings are left out: they are not
  /// something to fix.
  /// Each says the evidence it rests on, as the text report does (tryout17's Q1). They come in the report's order,
  /// the most (writes, reads, runs) first, and GitHub shows the first `shownPerStep` (`render`).
  static func report(_ report: AnalysisReport, root: String, definitions: TraceDefinitions? = nil) -> String {
    var annotations: [Annotation] = []
    for finding in report.findings where !finding.isInformational {
      var message = finding.message + ". Hint: " + finding.hint
      if let site = finding.site { message += " (at \(site))" }
      var place = finding.location
      if place == nil, let scope = finding.scope, let definitions {
        place = callSite(ofScope: scope, definitions)
      }
      let file = place.flatMap { path($0, root: root) }
      if file == nil { message += ". No file or line: the trace names no place in the code for this finding" }
      if !finding.evidence.isEmpty { message += ". Evidence: \(finding.evidence)" }
      annotations.append(
        Annotation(
          level: "warning", file: file, line: place?.line, title: "obstrace \(finding.kind.rawValue)",
          message: message))
    }
    return render(
      annotations,
      whereElse: "obstrace report \(HTMLReport.shellQuoted(report.trace.path)) lists every finding")
  }

  /// Where the scope named `name` (as every command prints it) is called, when it is labelled by its call site and
  /// the trace's symbols place that call: the frame of the stack the label was named from whose
  /// `Module/File.swift:line` is the name. Nil for a named scope, or without symbols.
  static func callSite(ofScope name: String, _ definitions: TraceDefinitions) -> SymbolizedFrame? {
    let prefix = "<call site of stack #"
    for (label, text) in definitions.labels.sorted(by: { $0.key < $1.key }) where text.hasPrefix(prefix) {
      guard definitions.labelName(label) == name,
        let stack = UInt32(text.dropFirst(prefix.count).prefix { $0.isNumber })
      else { continue }
      // An untraced scope's label names the closure when no caller is on the stack: `… (Observations closure)`.
      if let frame = definitions.frames(ofStack: stack).first(where: { frame in
        guard !frame.file.isEmpty else { return false }
        let site = SiteFilter.callSiteLabel(frame)
        return name == site || name.hasPrefix(site + " (")
      }) {
        return frame
      }
    }
    return nil
  }

  /// `check --format github`: an error per count that grew beyond the tolerance (or is new, with
  /// `--fail-on-new`) and per limit exceeded, on each known site of the writes behind it (the most frequent
  /// first, at most `maximumSites`); then the verdict line. `refusal` (the trace's name and why it cannot be
  /// trusted) is an error of the run, first, and fails the check whatever the counts say; `allowance` (the same,
  /// checked anyway with `--allow-incomplete`) is a warning of the run, so a pass on such a trace says what it
  /// rests on.
  /// With a `baseline` that keeps its places (`Baseline.propertySites`), a count that grew is pinned only on the
  /// places whose share of it grew (each said with the baseline's share), not on every place that made it.
  static func check(
    _ comparison: BaselineComparison, sites: WriteSites, root: String, refusal: String? = nil,
    allowance: String? = nil, maximumSites: Int = 5, baseline: Baseline? = nil, report: AnalysisReport
  ) -> String {
    var annotations: [Annotation] = []
    func add(_ level: String, file: String?, line: UInt32?, title: String, message: String) {
      annotations.append(Annotation(level: level, file: file, line: line, title: title, message: message))
    }
    if let refusal {
      add("error", file: nil, line: nil, title: "obstrace check: incomplete trace", message: refusal)
    }
    if let allowance {
      add("warning", file: nil, line: nil, title: "obstrace check: incomplete trace", message: allowance)
    }
    /// One error per site where writes behind `changes` (each a metric's row: the count that failed, said as
    /// `text`) were made, naming only the counts those writes made there, with how many; a count no known site
    /// made (reads, a scope's first run, writes without a call stack) is an error of its own, on no file.
    func annotate(
      kind: String, name: String, title: String, prefix: String, _ changes: [(metric: String, text: String)],
      against baseline: Baseline? = nil
    ) {
      var atSite: [String: (frame: SymbolizedFrame, total: Int, changes: [String], counts: [String])] = [:]
      var nowhere: [String] = []
      for change in changes {
        var places = sites.places(kind: kind, name: name, metric: change.metric)
        // The places that made no more of the count than in the baseline did not make it grow: an error on their
        // lines would point a pull request at code it did not touch (a fresh-clone try-out's N4).
        var was: [String: Int] = [:]
        if let baseline {
          places = places.filter { place in
            let key = SiteFormatting.place(place.frame)
            guard let old = baseline.count(kind: kind, name: name, metric: change.metric, place: key) else {
              return true
            }
            was[key] = old
            return place.count > old
          }
        }
        if places.isEmpty { nowhere.append(change.text) }
        for place in places {
          let key = "\(place.frame.file):\(place.frame.line)"
          var entry = atSite[key] ?? (place.frame, 0, [], [])
          entry.total += place.count
          entry.changes.append(change.text)
          var count = WriteSites.describe(place.count, metric: change.metric, kind: kind)
          if let old = was[SiteFormatting.place(place.frame)] { count += " (\(old) in the baseline)" }
          if !entry.counts.contains(count) { entry.counts.append(count) }
          atSite[key] = entry
        }
      }
      let ordered = atSite.values.sorted {
        ($1.total, $0.frame.file, $0.frame.line) < ($0.total, $1.frame.file, $1.frame.line)
      }
      for entry in ordered.prefix(maximumSites) {
        add(
          "error", file: path(entry.frame, root: root), line: entry.frame.line, title: title,
          message: prefix + entry.changes.joined(separator: ", ") + " (here: \(entry.counts.joined(separator: ", "))"
            + (entry.frame.lineIsApproximate ? "; the line is approximate" : "") + ")")
      }
      // The sites past the first `maximumSites` (GitHub shows few annotations a step): named in one more error, on
      // no file, so that no site of what grew goes unsaid.
      if ordered.count > maximumSites {
        let rest = ordered.dropFirst(maximumSites)
        add(
          "error", file: nil, line: nil, title: title,
          message: prefix + changes.map(\.text).joined(separator: ", ") + ", and \(rest.count) more site"
            + (rest.count == 1 ? "" : "s") + ": "
            + WriteSites.list(rest.map { ($0.frame, $0.counts.joined(separator: ", ")) }))
      }
      if !nowhere.isEmpty || ordered.isEmpty {
        add(
          "error", file: nil, line: nil, title: title,
          message: prefix + (ordered.isEmpty ? changes.map(\.text) : nowhere).joined(separator: ", "))
      }
    }
    // One annotation per property or scope and site, naming every count of it that failed and was made there.
    var order: [String] = []
    var failed: [String: [BaselineComparison.Row]] = [:]
    // Counts not known (some writes not compared): an error of the run where the baseline knew them, else a warning
    // of the run, once per property (its two counts have one reason) and scope count, saying why; no site is pinned
    // (the writes not compared made no count).
    var saidUnknown: Set<String> = []
    for row in comparison.rows where row.change == .unknown {
      let why = CheckCommand.unknownRow(row, report)
      guard saidUnknown.insert("\(row.kind) \(row.name): \(why)").inserted else { continue }
      let failed = row.failed
      add(
        failed ? "error" : "warning", file: nil, line: nil,
        title: "obstrace check: \(row.kind) \(row.name) \(failed ? "not known" : "not checked")",
        message: "\(row.kind) \(row.name): " + why)
    }
    for row in comparison.rows where row.failed && row.change != .unknown {
      let key = "\(row.kind) \(row.name)"
      if failed[key] == nil { order.append(key) }
      failed[key, default: []].append(row)
    }
    for key in order {
      let rows = failed[key]!
      let changes = rows.map { row in
        (
          row.metric,
          "\(row.metric) \(row.change == .new ? "is new" : "grew") \(row.baseline.map(String.init) ?? "-") → \(row.current ?? 0)"
        )
      }
      annotate(
        kind: rows[0].kind, name: rows[0].name, title: "obstrace check: \(key) grew", prefix: "\(key): ", changes,
        against: baseline)
    }
    for result in comparison.limits where !result.passed {
      if let uncompared = result.uncompared {
        let why = CheckCommand.unknownCount(
          kind: result.kind ?? "property", result.limit.name, result.limit.metric, uncompared, report)
        let actual = result.actual ?? 0
        add(
          "error", file: nil, line: nil, title: "obstrace check: limit \(result.limit)",
          message: result.exceeded
            ? "limit \(result.limit) exceeded: at least \(actual); \(why)" : "limit \(result.limit) not known: \(why)")
        continue
      }
      let text = "limit \(result.limit) exceeded: \(result.actual.map(String.init) ?? "0 (no such property or scope)")"
      annotate(
        kind: result.kind ?? "property", name: result.limit.name, title: "obstrace check: limit \(result.limit)",
        prefix: "", [(result.limit.metric, text)])
    }
    return render(annotations, whereElse: "obstrace check --format text (the same arguments) says every count")
      + (comparison.failed || refusal != nil ? "FAILED\n" : "PASSED\n")
  }
}

/// Where the writes were made, by property and by the scope they invalidated, and which counts they made there:
/// the places `check` points at. Filled as the replay meets each write (a consumer of the timeline), resolved to
/// frames at the end. A count is pinned only on the writes that made it: a property's `noopWrites` on its no-op
/// writes, its `invalidations` on the writes that fired a scope, `wastedInvalidations` on no-op writes that did,
/// `maximumFanOut` on the writes that fired the most; a scope's counts on the writes that invalidated it (its
/// `wastedInvalidations` on the no-op ones).
final class WriteSites {
  struct Place {
    var frame: SymbolizedFrame
    var count: Int
  }

  /// Per call stack of the writes: how many, and what they made.
  private struct Counts {
    var writes: [UInt32: Int] = [:]
    var noopWrites: [UInt32: Int] = [:]
    var invalidations: [UInt32: Int] = [:]
    var wastedInvalidations: [UInt32: Int] = [:]
    /// The most scopes one write of that stack fired.
    var fanOut: [UInt32: Int] = [:]

    mutating func add(stack: UInt32, noop: Bool, fired: Int) {
      writes[stack, default: 0] += 1
      if noop { noopWrites[stack, default: 0] += 1 }
      if fired > 0 {
        invalidations[stack, default: 0] += fired
        if noop { wastedInvalidations[stack, default: 0] += fired }
        fanOut[stack] = max(fanOut[stack] ?? 0, fired)
      }
    }
  }

  private var byProperty: [UInt32: Counts] = [:]
  private var byLabel: [UInt32: Counts] = [:]
  /// What names the ids: the trace's definitions, set once the replay is done (`TraceAnalysis.replay`).
  var definitions = TraceDefinitions()

  func note(_ entry: ReplayFact) {
    guard case .write(let write) = entry, write.stack != 0 else { return }
    let stack = write.stack
    let noop = write.outcome == .unchanged
    let fired = write.fired.count
    byProperty[write.key.property, default: Counts()].add(stack: stack, noop: noop, fired: fired)
    for fire in write.fired { byLabel[fire.label, default: Counts()].add(stack: stack, noop: noop, fired: 1) }
  }

  /// The sites of the writes that made `metric` of the property or scope (`kind`) `name`, with how much of it
  /// each made; most first. A scope's `runs` are pinned on the writes that invalidated it, its `redundantRuns` on
  /// the no-op writes that did.
  func places(kind: String, name: String, metric: String) -> [Place] {
    var stacks: [UInt32: Int] = [:]
    let tables =
      kind == "scope"
      ? byLabel.filter { definitions.labelName($0.key) == name }.map(\.value)
      : byProperty.filter { definitions.propertyName($0.key) == name }.map(\.value)
    for counts in tables {
      let table: [UInt32: Int]
      switch metric {
      case "writes": table = counts.writes
      case "noopWrites": table = counts.noopWrites
      // A scope's redundant runs: the invalidations by no-op writes (a run that read nothing really changed was
      // woken by a write that changed nothing, or by a change undone before it ran: then no site is known).
      case "wastedInvalidations", "redundantRuns": table = counts.wastedInvalidations
      case "maximumFanOut": table = counts.fanOut
      default: table = counts.invalidations  // invalidations; a scope's runs (each after its first was woken)
      }
      stacks.merge(table, uniquingKeysWith: metric == "maximumFanOut" ? max : (+))
    }
    if metric == "maximumFanOut" {
      // The writes that fired the most, not every write.
      let most = stacks.values.max() ?? 0
      stacks = stacks.filter { $0.value == most && most > 0 }
    }
    var byPlace: [String: Place] = [:]
    for (stack, count) in stacks where count > 0 {
      guard let frame = definitions.site(ofStack: stack), !frame.file.isEmpty else { continue }
      let key = "\(frame.file):\(frame.line)"
      let previous = byPlace[key]?.count ?? 0
      byPlace[key] = Place(frame: frame, count: metric == "maximumFanOut" ? max(previous, count) : previous + count)
    }
    return byPlace.values.sorted {
      ($1.count, $0.frame.file, $0.frame.line) < ($0.count, $1.frame.file, $1.frame.line)
    }
  }

  /// Every property's and scope label's counts by place (`Module/File.swift:line`), as a baseline keeps them: a
  /// property's `writes`, `noopWrites`, `invalidations`, `wastedInvalidations` and `maximumFanOut` (the most one
  /// write there fired), a scope's `invalidations` and `wastedInvalidations`. Writes without a site are left out.
  func byPlace() -> (properties: [String: [String: [String: Int]]], scopes: [String: [String: [String: Int]]]) {
    var sites: [UInt32: String?] = [:]
    func place(_ stack: UInt32) -> String? {
      if let known = sites[stack] { return known }
      let frame = definitions.site(ofStack: stack)
      let text = frame.flatMap { $0.file.isEmpty ? nil : SiteFormatting.place($0) }
      sites[stack] = text
      return text
    }
    func add(
      _ counts: Counts, into table: inout [String: [String: Int]], metrics: [(String, KeyPath<Counts, [UInt32: Int]>)]
    ) {
      for (metric, path) in metrics {
        for (stack, count) in counts[keyPath: path] where count > 0 {
          guard let place = place(stack) else { continue }
          let previous = table[place]?[metric] ?? 0
          table[place, default: [:]][metric] = metric == "maximumFanOut" ? max(previous, count) : previous + count
        }
      }
    }
    var properties: [String: [String: [String: Int]]] = [:]
    for (id, counts) in byProperty {
      add(
        counts, into: &properties[definitions.propertyName(id), default: [:]],
        metrics: [
          ("writes", \.writes), ("noopWrites", \.noopWrites), ("invalidations", \.invalidations),
          ("wastedInvalidations", \.wastedInvalidations), ("maximumFanOut", \.fanOut),
        ])
    }
    var scopes: [String: [String: [String: Int]]] = [:]
    for (label, counts) in byLabel {
      add(
        counts, into: &scopes[definitions.labelName(label), default: [:]],
        metrics: [("invalidations", \.invalidations), ("wastedInvalidations", \.wastedInvalidations)])
    }
    return (properties.filter { !$0.value.isEmpty }, scopes.filter { !$0.value.isEmpty })
  }

  /// What a place's count is, for `metric` of a `kind`: "2 no-op writes", "3 invalidations of it" (a scope's).
  /// Sites as `main.swift:15 (App.run()) (1 write)`, comma-separated, at most `limit` of them and then `…`.
  static func list(_ sites: [(frame: SymbolizedFrame, counts: String)], limit: Int = 20) -> String {
    sites.prefix(limit).map { "\(SiteFormatting.describe($0.frame)) (\($0.counts))" }.joined(separator: ", ")
      + (sites.count > limit ? ", …" : "")
  }

  static func describe(_ count: Int, metric: String, kind: String) -> String {
    func plural(_ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
    switch (kind, metric) {
    case ("scope", "wastedInvalidations"), ("scope", "redundantRuns"): return plural("wasted invalidation") + " of it"
    case ("scope", _): return plural("invalidation") + " of it"  // its invalidations and runs
    case (_, "writes"): return plural("write")
    case (_, "noopWrites"): return plural("no-op write")
    case (_, "wastedInvalidations"): return plural("wasted invalidation")
    case (_, "maximumFanOut"): return "a write that fired \(count) scope\(count == 1 ? "" : "s")"
    default: return plural("invalidation")
    }
  }
}
