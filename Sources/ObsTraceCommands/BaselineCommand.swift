import Foundation
import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace baseline FILE -o obstrace-baseline.json`: the counts a CI gate compares.
enum BaselineCommand: TraceCommand {
  static let name = "baseline"
  static let abstract = "Write the counts a CI check compares (per property and per scope) as JSON."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace baseline <file> [-o <baseline.json>] [--allow-incomplete]

    Per property: writes, noopWrites, invalidations, wastedInvalidations, maximumFanOut. Per scope label: runs,
    invalidations, wastedInvalidations, redundantRuns. Sorted, one entry per line: commit it, and review its diff
    when it changes. A property some of whose writes through _modify were not compared has its noopWrites and
    wastedInvalidations written as null (not known) with "uncomparedWrites": N, said on standard error; so has a
    scope its wastedInvalidations when such writes fired it ("uncomparedInvalidations": N), and its redundantRuns
    when runs of it would be redundant if they changed nothing ("possiblyRedundantRuns": N). A trace 'obstrace
    check' would not pass for being incomplete (dropped events, cut short,
    damaged or missing chunks, events naming ids it never defined) gives no baseline (exit 2): any of its counts
    may be off.

    OPTIONS:
      -o, --output <file>   Where to write (default: standard output).
      --allow-incomplete    Write it from an incomplete trace anyway (standard error says why it is incomplete).
      -h, --help            Show this help.

    EXAMPLE:
      obstrace baseline run.trc -o obstrace-baseline.json

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: ["-o": "output", "--output": "output"], flags: ["--allow-incomplete": "allow-incomplete"],
      command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let sites = WriteSites()
    let (report, _, definitions) = try TraceInput.replay(
      path, Replay.Configuration(), command: name, collectsEdges: false, onFact: sites.note)
    sites.definitions = definitions
    // What `check` refuses to pass, a baseline is not made from: counts that may be off would become the bar.
    if let reason = CheckCommand.incompleteness(report) {
      guard parsed.has("allow-incomplete") else {
        throw CommandError(
          "obstrace baseline: \(path): \(reason): any count may be off, so no baseline is written "
            + "(--allow-incomplete writes it anyway)")
      }
      output.writeError(
        "obstrace baseline: \(path): \(reason): any count may be off; written anyway (--allow-incomplete)\n")
    }
    if let extra = report.trace.afterFooter {
      output.writeError("obstrace baseline: note: \(path): \(extra)\n")
    }
    if let ambiguous = Baseline.ambiguousPropertyNames(report).first {
      throw CommandError(
        "obstrace baseline: \(path): \(ambiguous.candidates.count) properties are named '\(ambiguous.name)' ("
          + ambiguous.candidates.joined(separator: ", ")
          + "): a baseline keyed by name cannot tell them apart; rename one of the types")
    }
    var baseline = Baseline(report)
    (baseline.propertySites, baseline.scopeSites) = sites.byPlace()
    let json = baseline.json()
    if let destination = parsed.value("output") {
      try TraceInput.write(json, to: destination, output: output, command: name, inputs: [(path, "the trace")])
      let (properties, scopes) = (report.properties.count, report.scopes.count)
      output.writeError(
        "obstrace baseline: wrote \(destination) (\(properties) propert\(properties == 1 ? "y" : "ies"), \(scopes) "
          + "scope\(scopes == 1 ? "" : "s"))\n"
      )
    } else {
      output.write(json)
    }
    // Counts not known are written so (null), not as 0, and said: a check cannot hold them (tryout17's Q7).
    for name in baseline.uncompared.keys.sorted() {
      output.writeError(
        "obstrace baseline: note: \(name): "
          + CheckCommand.unknownCounts(name, baseline.uncompared[name] ?? 0, report)
          + "; written as unknown (null), which 'check' does not hold the property's later counts to\n")
    }
    for name in baseline.uncomparedScopes.keys.sorted() {
      for (metric, _) in Baseline.comparedScopeMetrics {
        guard let count = baseline.uncomparedScopes[name]?[metric] else { continue }
        output.writeError(
          "obstrace baseline: note: \(name): " + CheckCommand.unknownScopeCount(name, metric, count, report)
            + "; written as unknown (null), which 'check' does not hold the scope's later count to\n")
      }
    }
    return 0
  }
}

/// `obstrace check FILE --baseline B [--tolerance N%] [--max 'Name:metric<=N']`: the CI gate.
enum CheckCommand: TraceCommand {
  static let name = "check"
  static let abstract = "Compare a trace with a baseline and limits; exit 1 when something grew."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace check <file> [--baseline <baseline.json>] [--tolerance <n>%] [--max '<name>:<metric><=<n>'...] [--fail-on-new]
                          [--allow-incomplete] [--format text|github|junit] [--source-root <dir>] [-o <file>]

    Prints what grew, shrank, is new or gone, and the limits. Exits 1 when a count grew by more than the
    tolerance (a count that was 0 fails whatever the tolerance) or a limit is exceeded; 0 otherwise; 2 on bad
    input. Limits name a property (Type.name) or a scope label; metrics are those of 'obstrace baseline': a
    property's writes, noopWrites, invalidations, wastedInvalidations, maximumFanOut; a scope's runs,
    invalidations, wastedInvalidations, redundantRuns. A property's noopWrites and wastedInvalidations are not
    known when some of its writes through _modify were not compared, nor a scope's wastedInvalidations when such
    writes fired it, or its redundantRuns when runs of it would be redundant if they changed nothing: a limit on
    them fails (UNKNOWN, saying why and how to compare them), and so does a baseline's count of them; one the
    baseline did not know is not checked.

    OPTIONS:
      --baseline <file>     The baseline to compare with (from 'obstrace baseline').
      --tolerance <n>%      Growth allowed before failing (default 0%).
      --max <limit>         A limit such as 'Model.items:invalidations<=3' (also < and ==); repeatable.
      --fail-on-new         Fail when a property or scope not in the baseline has counts.
      --allow-incomplete    Check a trace that dropped events, was cut short (a killed process), has damaged
                            or missing chunks or events naming ids it never defined; without it such a trace
                            fails, since any of its counts may be off.
      --format <format>     text (default); github: a GitHub Actions ::error annotation for each count that grew
                            and each limit exceeded, at the sites of the writes behind it; junit: JUnit XML, one
                            test case per checked count, a failure for each that grew. An incomplete trace is an
                            ::error of the run, or a failed JUnit case '<file> is complete', saying why.
      -o, --output <file>   Where to write (default: standard output).
      --source-root <dir>   github: files are written relative to this folder (default: the current one).
      -h, --help            Show this help.

    EXAMPLE:
      obstrace check run.trc --baseline obstrace-baseline.json --tolerance 10%
      obstrace check run.trc --max 'Model.items:invalidations<=3' --max 'FirstView.body:runs<=5'
      obstrace check run.trc --baseline obstrace-baseline.json --format junit -o obstrace-junit.xml

    """

  /// Why `--max text` is not a limit: an unknown metric is named with the metrics there are (the report prints
  /// columns, such as reads, that check does not count); anything else gets the form.
  static func unparsedLimit(_ text: String) -> String {
    let metrics =
      "a property's: \(Baseline.propertyMetrics.joined(separator: ", ")); "
      + "a scope's: \(Baseline.scopeMetrics.joined(separator: ", "))"
    if let colon = text.lastIndex(of: ":"), colon != text.startIndex {
      let rest = text[text.index(after: colon)...]
      if let operatorIndex = rest.firstIndex(where: { "<=".contains($0) }), operatorIndex != rest.startIndex {
        let metric = rest[..<operatorIndex]
        if !Baseline.propertyMetrics.contains(String(metric)) && !Baseline.scopeMetrics.contains(String(metric)) {
          return "obstrace check: --max '\(text)': '\(metric)' is not a metric check counts (\(metrics))"
        }
      }
    }
    // The form is right and the number does not fit a count: said as that, not as a malformed limit.
    if let colon = text.lastIndex(of: ":"), colon != text.startIndex {
      let rest = text[text.index(after: colon)...]
      let comparisons: [BaselineComparison.Limit.Comparison] = [.atMost, .exactly, .below]
      if let comparison = comparisons.first(where: { rest.contains($0.rawValue) }),
        let range = rest.firstRange(of: comparison.rawValue)
      {
        let number = rest[range.upperBound...]
        let digits = number.hasPrefix("-") ? number.dropFirst() : number
        if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
          if number.hasPrefix("-") {
            return "obstrace check: --max '\(text)' can never pass: counts are 0 or more (use '<=0' for none at all)"
          }
          return "obstrace check: --max '\(text)': \(number) is too large for a count (at most \(Int.max))"
        }
      }
    }
    return "obstrace check: --max '\(text)' is not of the form 'Name:metric<=N' (also < and ==) with a metric of "
      + "'obstrace baseline' (\(metrics))"
  }

  /// The largest baseline `check` reads: ten thousand names with five sites each take about 4 MB.
  static let largestBaseline: Int = 8 << 20

  /// Why a file cannot be read, as the system says it (`No such file or directory`, `Permission denied`), or
  /// that it is a directory.
  static func unreadable(_ path: String) -> String {
    var status = stat()
    guard stat(path, &status) == 0 else { return String(cString: strerror(errno)) }
    if status.st_mode & S_IFMT == S_IFDIR { return "it is a directory" }
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return String(cString: strerror(errno)) }
    close(descriptor)
    return "it could not be read whole"
  }

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: [
        "--baseline": "baseline", "--tolerance": "tolerance", "--max": "max", "--format": "format", "-o": "output",
        "--output": "output", "--source-root": "source-root",
      ],
      flags: ["--fail-on-new": "fail-on-new", "--allow-incomplete": "allow-incomplete"], command: name,
      repeatable: ["max"]
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let format = parsed.value("format") ?? "text"
    guard ["text", "github", "junit"].contains(format) else {
      throw CommandError("obstrace check: --format must be text, github or junit, not '\(format)'")
    }
    var tolerance = 0.0
    if let text = parsed.value("tolerance") {
      let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
      guard let percent = Double(digits), percent >= 0, percent.isFinite else {
        throw CommandError("obstrace check: --tolerance must be a percentage such as 10%, not '\(text)'")
      }
      tolerance = percent / 100
    }
    var limits: [BaselineComparison.Limit] = []
    for text in parsed.values("max") {
      guard let limit = BaselineComparison.Limit.parse(text) else { throw CommandError(Self.unparsedLimit(text)) }
      // A count is never negative: `<=-1` or `<0` can never pass, which is a mistake, not a limit.
      guard limit.value >= (limit.comparison == .below ? 1 : 0) else {
        throw CommandError(
          "obstrace check: --max '\(text)' can never pass: counts are 0 or more (use '<=0' for none at all)")
      }
      limits.append(limit)
    }
    var baseline: Baseline?
    if let baselinePath = parsed.value("baseline") {
      // A baseline keeps a few counts per name of a program: megabytes at most. A larger file is not one, and
      // parsing it whole would take gigabytes (a 12 MB file of 500,000 names took 1.6 GB).
      var status = stat()
      if stat(baselinePath, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > Self.largestBaseline {
        throw CommandError(
          "obstrace check: the baseline \(baselinePath) is \(Formatting.bytes(UInt64(status.st_size))), over the "
            + "\(Formatting.bytes(UInt64(Self.largestBaseline))) a baseline of a program's counts takes; it is not one "
            + "'obstrace baseline' wrote")
      }
      guard let data = FileManager.default.contents(atPath: baselinePath) else {
        throw CommandError(
          "obstrace check: cannot read the baseline \(baselinePath) (\(Self.unreadable(baselinePath)))")
      }
      do {
        baseline = try Baseline.parse(data)
      } catch {
        throw CommandError("obstrace check: \(baselinePath) \(error.description)")
      }
    }
    guard baseline != nil || !limits.isEmpty else {
      throw CommandError("obstrace check: give --baseline <file> or at least one --max; see 'obstrace check --help'")
    }
    let sites = WriteSites()
    let (report, _, definitions) = try TraceInput.replay(
      path, Replay.Configuration(), command: name, collectsEdges: false, onFact: sites.note)
    sites.definitions = definitions
    let current = Baseline(report)
    // A name the trace does not know is a mistake (a typo passes every limit as 0), not a count of 0.
    let properties = report.properties.map(\.name)
    let scopes = report.scopes.map(\.label)
    // A name missing from a trace that lost events may be in what it lost: said with the name's error.
    let lost = incompleteness(report).map { "; \(path) is incomplete, so it may be in what was lost: \($0)" } ?? ""
    for limit in limits where current.properties[limit.name] == nil && current.scopes[limit.name] == nil {
      // A name as the timeline prints it names one run or one object's property; a limit counts a whole scope or
      // property, so the line says which name that is rather than 'unknown'.
      let value = "\(limit.metric)\(limit.comparison.rawValue)\(limit.value)"
      if let run = PrintedNames.run(limit.name), current.scopes[run.label] != nil {
        throw CommandError(
          "obstrace check: --max '\(limit)' names run #\(run.run) of the scope \(run.label), as the timeline prints "
            + "it; a limit counts every run of a scope: --max '\(run.label):\(value)'")
      }
      if let named = PrintedNames.objectProperty(limit.name), current.properties[named.property] != nil {
        throw CommandError(
          "obstrace check: --max '\(limit)' names the property \(named.property) of object #\(named.object), as the "
            + "timeline prints it; a limit counts every object's: --max '\(named.property):\(value)'")
      }
      let isProperty = Baseline.propertyMetrics.contains(limit.metric) && !Baseline.scopeMetrics.contains(limit.metric)
      // A trace whose properties are named by type and number (no symbol table, or one that does not name them)
      // cannot know the user's name: that is said, not that the name is wrong.
      if Baseline.propertyMetrics.contains(limit.metric), let unnamed = Self.unnamedProperties(report, definitions) {
        // A recording still going writes its table when it stops, and symbolize refuses a held file: the advice is
        // to wait, not to symbolize.
        let remedy =
          report.trace.recordingProcess != nil && definitions.symbols.isEmpty
          ? "check it once that process has stopped"
          : "'obstrace symbolize \(path)' names them from the binaries it was recorded from, if they are still there"
        throw CommandError(
          "obstrace check: --max '\(limit)' names no property or scope of \(path), whose property names are not "
            + "known: \(unnamed), so they are named by type and number ("
            + NameSuggestions.describe(limit.name, in: isProperty ? properties : properties + scopes)
            + "); " + remedy)
      }
      // `Model.count` of a trace with a `Model` in two modules, whose names are qualified with them.
      let qualified = Self.moduleQualifiedNames(limit.name, definitions)
      if !qualified.isEmpty {
        throw CommandError(
          "obstrace check: --max '\(limit)' is ambiguous in \(path): it names \(qualified.joined(separator: ", ")), "
            + "types of one name in \(qualified.count == 1 ? "another module" : "several modules") named with their module: "
            + "--max '\(qualified[0]):\(value)'")
      }
      if let renamed = Self.earlierName(limit.name, definitions) {
        throw CommandError(
          "obstrace check: --max '\(limit)' names no property or scope of \(path): '\(limit.name)' is what "
            + "earlier builds of obstrace called \(renamed.joined(separator: ", ")), \(Self.earlierSpelling(limit.name)): "
            + "--max '\(renamed[0]):\(value)'")
      }
      throw CommandError(
        "obstrace check: --max '\(limit)' names no property or scope of \(path); "
          + NameSuggestions.describe(limit.name, in: isProperty ? properties : properties + scopes) + lost)
    }
    // A name that stands for several properties would be checked against one of them, picked silently: refused,
    // with the candidates.
    let ambiguous = Baseline.ambiguousPropertyNames(report)
    for limit in limits {
      if let candidates = ambiguous.first(where: { $0.name == limit.name })?.candidates {
        throw CommandError(
          "obstrace check: --max '\(limit)' is ambiguous in \(path): it names \(candidates.joined(separator: ", "))")
      }
      // A metric both properties and scopes have, of a name both a property and a scope label have.
      if Baseline.propertyMetrics.contains(limit.metric), Baseline.scopeMetrics.contains(limit.metric),
        current.properties[limit.name] != nil, current.scopes[limit.name] != nil
      {
        throw CommandError(
          "obstrace check: --max '\(limit)' is ambiguous in \(path): it names the property \(limit.name) and the "
            + "scope \(limit.name), and both have \(limit.metric)")
      }
    }
    if baseline != nil, let first = ambiguous.first {
      throw CommandError(
        "obstrace check: \(path): \(first.candidates.count) properties are named '\(first.name)' ("
          + first.candidates.joined(separator: ", ") + "): a baseline keyed by name cannot tell them apart")
    }
    if let baseline, let baselinePath = parsed.value("baseline") {
      for (kind, names, known) in [
        ("property", baseline.properties.keys.sorted(), properties), ("scope", baseline.scopes.keys.sorted(), scopes),
      ] {
        for name in names where !known.contains(name) {
          if kind == "property", let renamed = Self.earlierName(name, definitions) {
            throw CommandError(
              "obstrace check: \(baselinePath) names the property '\(name)', which \(path) calls "
                + renamed.joined(separator: ", ") + ": the baseline was made by an earlier build of obstrace, which "
                + "\(Self.earlierSpelling(name).replacing("naming", with: "named", maxReplacements: 1)); make a new "
                + "baseline with 'obstrace baseline'")
          }
          // A name no program has (over 200 characters, or with control characters) is cut and escaped, and
          // not compared with the trace's names (a hostile baseline's 50 MB name was echoed whole).
          let suggestion =
            name.unicodeScalars.count <= 200 ? " (" + NameSuggestions.describe(name, in: known) + ")" : ""
          throw CommandError(
            "obstrace check: \(baselinePath) names the \(kind) \(Baseline.quoted(name, quote: "'")), which \(path) does not have"
              + suggestion + "; if it was renamed or removed, make a new baseline with 'obstrace baseline'" + lost)
        }
      }
    }
    let comparison = BaselineComparison(
      current: current, baseline: baseline, tolerance: tolerance, limits: limits, failOnNew: parsed.has("fail-on-new"))
    // A trace that lost events cannot pass: its counts may be off either way.
    let untrusted = incompleteness(report)
    let incomplete = parsed.has("allow-incomplete") ? nil : untrusted
    let printed: String
    // Bytes after the footer take nothing from the trace (its counts are whole), and are said all the same: in the
    // text's lines, or on standard error beside the other formats.
    if format != "text", let extra = report.trace.afterFooter {
      output.writeError("obstrace check: note: \(path): \(extra)\n")
    }
    switch format {
    case "github":
      printed = GitHubAnnotations.check(
        comparison, sites: sites, root: try TraceInput.sourceRoot(parsed, command: name, output: output),
        refusal: incomplete.map { "\(path): " + refusal($0) },
        allowance: incomplete == nil ? untrusted.map { "\(path): " + allowed($0) } : nil, baseline: baseline,
        report: report)
    case "junit":
      printed = JUnitReport.xml(
        comparison, current: current, baseline: baseline, path: path, tolerance: tolerance, sites: sites,
        completeness: untrusted.map { reason in
          (
            reason: reason, refused: incomplete != nil,
            explanation: incomplete != nil ? refusal(reason) : allowed(reason)
          )
        }, report: report)
    default:
      printed = text(
        comparison, path: path, baseline: parsed.value("baseline"), tolerance: tolerance, report: report,
        incomplete: incomplete, allowance: incomplete == nil ? untrusted : nil)
    }
    try TraceInput.write(
      printed, to: parsed.value("output"), output: output, command: name,
      inputs: [(path, "the trace")] + (parsed.value("baseline").map { [($0, "the baseline")] } ?? []))
    return comparison.failed || incomplete != nil ? 1 : 0
  }

  /// Why a property's counts that rest on compared writes (`Baseline.comparedMetrics`) are not known, and how to
  /// know them: "4 writes of Store.query through _modify were not compared (not trivially copyable or over 64 bytes:
  /// arrays, strings, …), so its noopWrites and wastedInvalidations are not known: OBSTRACE_COMPARE=equatable
  /// compares the Equatable ones". `count` is the trace's `uncomparedWrites`; the reasons are the report's.
  static func unknownCounts(_ name: String, _ count: Int, _ report: AnalysisReport) -> String {
    let reasons = report.properties.first { $0.name == name }?.statistics.uncomparedBecause.nonzero ?? []
    let whys = reasons.count == 1 ? [reasons[0].reason.why] : reasons.map { "\($0.count) \($0.reason.why)" }
    let remedies = reasons.compactMap { uncomparedRemedy($0.reason) }
    return "\(count) write\(count == 1 ? "" : "s") of \(name) through _modify \(count == 1 ? "was" : "were") not "
      + "compared" + (whys.isEmpty ? "" : " (" + whys.joined(separator: "; ") + ")")
      + ", so its \(Baseline.comparedMetrics.joined(separator: " and ")) are not known"
      + (remedies.isEmpty ? "" : ": " + remedies.joined(separator: "; "))
  }

  /// Why the count `metric` of the property or scope (`kind`) `name` is not known, and how to know it; `count` is
  /// what makes it so (`BaselineComparison.LimitResult.uncompared`).
  static func unknownCount(kind: String, _ name: String, _ metric: String, _ count: Int, _ report: AnalysisReport)
    -> String
  {
    kind == "property" ? unknownCounts(name, count, report) : unknownScopeCount(name, metric, count, report)
  }

  /// Why a scope's count that rests on compared writes (`Baseline.comparedScopeMetrics`) is not known, and how to
  /// know it: "2 of TodoList.body's invalidations were by writes through _modify not compared (TodoStore.items: not
  /// trivially copyable or over 64 bytes: arrays, strings, …), so its wastedInvalidations is not known:
  /// OBSTRACE_COMPARE=equatable compares the Equatable ones". `count` is the scope's
  /// `uncomparedInvalidations` (for `wastedInvalidations`) or `possiblyRedundantRuns` (for `redundantRuns`); the
  /// properties named are those it read whose writes were not all compared, with the reasons the trace gives.
  static func unknownScopeCount(_ name: String, _ metric: String, _ count: Int, _ report: AnalysisReport) -> String {
    let read = Set(report.scopes.first { $0.label == name }?.reads ?? [])
    let properties = report.properties.filter { read.contains($0.name) && $0.statistics.uncomparedWrites > 0 }
    let reasons = properties.reduce(UncomparedCounts()) { $0 + $1.statistics.uncomparedBecause }.nonzero
    let remedies = reasons.compactMap { uncomparedRemedy($0.reason) }
    let whys = reasons.map(\.reason.why).joined(separator: "; ")
    let named = properties.map(\.name).joined(separator: ", ")
    let detail = named.isEmpty || whys.isEmpty ? named + whys : named + ": " + whys
    let what =
      metric == "redundantRuns"
      ? "\(count) run\(count == 1 ? "" : "s") of \(name) would be redundant if the writes through _modify not "
        + "compared before \(count == 1 ? "it" : "them") changed nothing"
      : "\(count) of \(name)'s invalidations \(count == 1 ? "was" : "were") by writes through _modify not compared"
    return what + (detail.isEmpty ? "" : " (" + detail + ")")
      + ", so its \(metric) is not known" + (remedies.isEmpty ? "" : ": " + remedies.joined(separator: "; "))
  }

  /// A scope's count that makes its `metric` not known in `report` (see `unknownScopeCount`).
  static func scopeUncertainty(_ name: String, _ metric: String, _ report: AnalysisReport) -> Int {
    guard let statistics = report.scopes.first(where: { $0.label == name })?.statistics else { return 0 }
    return metric == "redundantRuns" ? statistics.possiblyRedundantRuns : statistics.uncomparedInvalidations
  }

  /// What would compare the writes not compared for `reason`, if anything would.
  static func uncomparedRemedy(_ reason: UncomparedReason) -> String? {
    switch reason {
    case .comparisonOff, .notTriviallyCopyable: ReportPrinter.remedy(for: reason)
    case .storedFieldNotFound, .handWrittenAccessor: "OBSTRACE_COMPARE=equatable compares it with == if it is Equatable"
    default: nil
    }
  }

  /// Why a row's count is not known, now or in the baseline.
  static func unknownRow(_ row: BaselineComparison.Row, _ report: AnalysisReport) -> String {
    if row.kind == "scope" {
      guard row.currentUnknown else {
        return "the baseline does not know \(row.name)'s \(row.metric) (when it was made, "
          + (row.metric == "redundantRuns"
            ? "runs of it rested on writes through _modify not compared"
            : "writes through _modify not compared fired it")
          + "), so it is not checked; a new baseline ('obstrace baseline') pins it"
      }
      return unknownScopeCount(row.name, row.metric, scopeUncertainty(row.name, row.metric, report), report)
        + (row.baselineUnknown
          ? " (nor in the baseline: not checked)" : "; the baseline knew it, so the check cannot pass on it")
    }
    guard row.currentUnknown else {
      return "the baseline does not know \(row.name)'s \(Baseline.comparedMetrics.joined(separator: " and ")) (its "
        + "writes through _modify were not all compared when it was made), so they are not checked; a new baseline "
        + "('obstrace baseline') pins them"
    }
    let count = report.properties.first { $0.name == row.name }?.statistics.uncomparedWrites ?? 0
    return unknownCounts(row.name, count, report)
      + (row.baselineUnknown
        ? " (nor in the baseline: not checked)" : "; the baseline knew them, so the check cannot pass on them")
  }

  /// How earlier builds spelled a name that is now spelled otherwise (`earlierName`): a private declaration with its
  /// file's discriminator (`(Model in _8AAE…).count`, before session 16), or a type without its outer types.
  static func earlierSpelling(_ name: String) -> String {
    PrivateNames.hasDiscriminator(name)
      ? "naming a private declaration with its file's discriminator" : "naming a type without its outer types"
  }

  /// The properties whose names are `name` qualified with their type's module (`ModA.Model.count` and
  /// `ModB.Model.count` for `Model.count`: `TraceDefinitions.unqualifiedPropertyName`), sorted; none for most names.
  static func moduleQualifiedNames(_ name: String, _ definitions: TraceDefinitions) -> [String] {
    definitions.properties.keys.filter { definitions.unqualifiedPropertyName($0) == name }
      .map { definitions.propertyName($0) }.sorted()
  }

  /// The properties (their names now) that earlier builds of obstrace named `name`, when they name them otherwise
  /// now: a type was printed by its simple name (`Box<Item>.value` for `Box<Shelf.Item>.value`), from the symbols
  /// chunk's display name, which every trace still has. Nil when none.
  static func earlierName(_ name: String, _ definitions: TraceDefinitions) -> [String]? {
    var renamed: Set<String> = []
    for id in definitions.properties.keys where definitions.earlierPropertyName(id) == name {
      let now = definitions.propertyName(id)
      if now != name { renamed.insert(now) }
    }
    return renamed.isEmpty ? nil : renamed.sorted()
  }

  /// Why some of the trace's properties have no names of the source's (`Type.<Int #4>`), or nil when all have.
  static func unnamedProperties(_ report: AnalysisReport, _ definitions: TraceDefinitions) -> String? {
    guard !report.properties.isEmpty else { return nil }
    guard definitions.symbols.isEmpty else {
      let count = TraceAnalysis.propertiesWithFallbackNames(definitions).count
      guard count > 0 else { return nil }
      return "\(count) of its \(definitions.properties.count) properties are not named by its symbol table"
    }
    let damage = report.trace.damage
    if let first = damage.listed.first ?? damage.malformedFooter, !report.trace.truncated {
      // A clean stop writes the symbol table just before the footer; the footer is here, the table is not.
      return "its symbol table is missing, and \(damage.count) damaged chunk\(damage.count == 1 ? " was" : "s were") "
        + "skipped (first at byte \(first.offset)): the recording stopped cleanly, which writes one, so it was "
        + "likely damaged"
    }
    if report.trace.truncated {
      if let holder = report.trace.recordingProcess {
        return "it has no symbol table yet (it is still being recorded by process \(holder), which writes the table "
          + "when it stops)"
      }
      return "it has no symbol table (the recording did not stop cleanly, and the table is written at the stop)"
    }
    return "it has no symbol table"
  }

  /// Why a trace cannot be trusted for a verdict, or nil.
  static func incompleteness(_ report: AnalysisReport) -> String? {
    var reasons: [String] = []
    let malformedFooter = report.trace.malformedFooter
    if let footer = malformedFooter {
      reasons.append(
        "its footer (at byte \(footer.offset)) is \(footer.footerState), so what the recording lost is not known")
    } else if report.trace.truncated {
      reasons.append(
        report.trace.recordingProcess.map { "the trace is still being recorded (by process \($0))" }
          ?? (report.trace.zeroTail != nil
            ? "the trace's end was never written (it ends in zero bytes)"
            : "the trace was cut short (the process was killed or crashed)"))
    }
    if report.trace.droppedEvents > 0 { reasons.append("\(report.trace.droppedEvents) events were dropped") }
    if report.trace.lostAtStop > 0 {
      reasons.append("\(report.trace.lostAtStop) events were lost as the recording stopped (threads still running)")
    }
    if report.trace.ringless > 0 {
      reasons.append("\(report.trace.ringless) events were not recorded (threads that could not get a ring)")
    }
    if report.trace.signalHandlerEvents > 0 {
      reasons.append(
        "\(report.trace.signalHandlerEvents) events from signal handlers were not recorded (a handler that "
          + "interrupted the recorder on its thread)")
    }
    // Copies of chunks already read (a file spliced together) are not damage: their events were read once; the
    // trace is still not one a recording wrote (tryout15's K3: they were said as damaged chunks).
    let copies = report.trace.damage.copies
    let damaged = report.trace.damage.count - copies - (malformedFooter == nil ? 0 : 1)
    if damaged > 0 { reasons.append("\(damaged) damaged chunk(s) were skipped") }
    if copies > 0 {
      reasons.append(
        "\(copies) cop\(copies == 1 ? "y" : "ies") of chunks already read \(copies == 1 ? "was" : "were") skipped (the "
          + "file is not what a recording wrote)")
    }
    // Chunks gone without damage (cut out of the file cleanly): the numbers their threads gave them, and the
    // footer's counts, still show them (what damage lost is said by the damage).
    if report.trace.missingWithoutDamage { reasons.append(contentsOf: report.trace.missingEventsClauses) }
    // Events that name an id no definition states come from a damaged trace (a recorder always defines an id
    // before its first use): the report shows them as inconsistent-trace, a verdict cannot rest on them.
    if report.trace.undefinedReferences > 0 {
      let count = report.trace.undefinedReferences
      reasons.append(
        "\(count) reference\(count == 1 ? "" : "s") to ids no definition states (first: "
          + "\(report.trace.firstUndefinedReference ?? "?")): the trace is damaged")
    }
    // So are definitions that give an id two meanings: its events are counted under one name or the other.
    if report.trace.redefinitions > 0 {
      let count = report.trace.redefinitions
      reasons.append(
        "\(count) definition\(count == 1 ? "" : "s") gave an id already defined another meaning (first: "
          + "\(report.trace.firstRedefinition ?? "?")): the trace is damaged")
    }
    return reasons.isEmpty ? nil : reasons.joined(separator: ", ")
  }

  /// Why the check fails on an incomplete trace, whatever the format says it in.
  static func refusal(_ reason: String) -> String {
    "\(reason): any count may be off, so the check cannot pass (--allow-incomplete checks it anyway)"
  }

  /// What an incomplete trace checked anyway with `--allow-incomplete` is.
  static func allowed(_ reason: String) -> String {
    "\(reason): any count may be off; checked anyway (--allow-incomplete)"
  }

  static func text(
    _ comparison: BaselineComparison, path: String, baseline: String?, tolerance: Double, report: AnalysisReport,
    incomplete: String? = nil, allowance: String? = nil
  ) -> String {
    var out = TextBuffer()
    let against = baseline.map { " against \($0) (tolerance \(Formatting.fixed(tolerance * 100, 0))%)" } ?? ""
    out.line("obstrace check: \(path)\(against)")
    if let extra = report.trace.afterFooter { out.line("  note: \(extra)") }
    if let allowance {
      // Checked anyway (--allow-incomplete): the verdict is the counts', and the output says what they rest on.
      out.line("  note: \(Self.allowed(allowance))")
    } else if report.trace.truncated || report.trace.droppedEvents > 0 {
      out.line(
        "  note: the trace is \(report.trace.truncated ? "truncated" : "missing \(report.trace.droppedEvents) dropped events"); any count may be off"
      )
    }
    if baseline != nil {
      if comparison.rows.isEmpty {
        out.line("  no count changed")
      } else {
        var table = Table(["change", "what", "metric", "baseline", "now", "delta"], leftAligned: [0, 1, 2])
        for row in comparison.rows {
          let delta: String
          switch (row.baseline, row.current) {
          case (let old?, let new?) where old > 0:
            delta = (new >= old ? "+" : "") + Formatting.fixed(Double(new - old) * 100 / Double(old), 0) + "%"
          default: delta = ""
          }
          table.add([
            row.failed ? "\(row.change.rawValue.uppercased()) (fail)" : row.change.rawValue, "\(row.kind) \(row.name)",
            row.metric,
            row.baselineUnknown ? "unknown" : row.baseline.map(String.init) ?? "-",
            row.currentUnknown ? "unknown" : row.current.map(String.init) ?? "-", delta,
          ])
        }
        table.render(into: &out, more: 0)
        // Why each count not known is not, once per property (its two counts have one reason) and scope count.
        var said: Set<String> = []
        for row in comparison.rows where row.change == .unknown {
          let why = unknownRow(row, report)
          if said.insert(why).inserted { out.line("  unknown: " + why) }
        }
      }
    }
    for result in comparison.limits {
      let actual = result.actual.map(String.init) ?? "0 (no such property or scope)"
      if let uncompared = result.uncompared {
        let why = unknownCount(
          kind: result.kind ?? "property", result.limit.name, result.limit.metric, uncompared, report)
        out.line(
          "  limit \(result.limit): "
            + (result.exceeded ? "EXCEEDED (at least \(actual); \(why))" : "UNKNOWN (\(why))"))
        continue
      }
      out.line("  limit \(result.limit): \(result.passed ? "ok" : "EXCEEDED") (\(actual))")
    }
    let failures = comparison.rows.filter(\.failed)
    let exceeded = comparison.limits.filter { !$0.passed }
    let refused = incomplete.map(Self.refusal)
    if failures.isEmpty && exceeded.isEmpty && refused == nil {
      out.line("PASSED")
    } else {
      let grew = failures.map {
        "\($0.kind) \($0.name) \($0.metric) \($0.baseline.map(String.init) ?? "new") → "
          + ($0.currentUnknown ? "unknown" : "\($0.current ?? 0)")
      }
      let limits = exceeded.map { result in
        guard let uncompared = result.uncompared else { return "\(result.limit) (is \(result.actual ?? 0))" }
        guard !result.exceeded else { return "\(result.limit) (is at least \(result.actual ?? 0))" }
        let why =
          switch (result.kind, result.limit.metric) {
          case ("scope", "redundantRuns"):
            "\(uncompared) run\(uncompared == 1 ? "" : "s") possibly redundant for writes not compared"
          case ("scope", _): "\(uncompared) invalidation\(uncompared == 1 ? "" : "s") by writes not compared"
          default: "\(uncompared) write\(uncompared == 1 ? "" : "s") of \(result.limit.name) not compared"
          }
        return "\(result.limit) (not known: \(why))"
      }
      out.line("FAILED: " + ((refused.map { [$0] } ?? []) + grew + limits).joined(separator: "; "))
    }
    return out.text
  }
}
