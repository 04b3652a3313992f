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

  /// `report --format github`: a warning per warning finding, on its site's line when it has one; findings
  /// without a site (fan-out, leaks, redundant runs) are annotations of the run. Informational findings are left
  /// out: they are not something to fix.
  static func report(_ report: AnalysisReport, root: String) -> String {
    var out = ""
    for finding in report.findings where !finding.isInformational {
      var message = finding.message + ". Hint: " + finding.hint
      if let site = finding.site { message += " (at \(site))" }
      out += command(
        "warning", file: finding.location.flatMap { path($0, root: root) }, line: finding.location?.line,
        title: "obstrace \(finding.kind.rawValue)", message: message)
    }
    return out
  }

  /// `check --format github`: an error per count that grew beyond the tolerance (or is new, with
  /// `--fail-on-new`) and per limit exceeded, on each known site of the writes behind it (the most frequent
  /// first, at most `maximumSites`); then the verdict line. `refusal` (the trace's name and why it cannot be
  /// trusted) is an error of the run, first, and fails the check whatever the counts say; `allowance` (the same,
  /// checked anyway with `--allow-incomplete`) is a warning of the run, so a pass on such a trace says what it
  /// rests on.
  static func check(
    _ comparison: BaselineComparison, sites: WriteSites, root: String, refusal: String? = nil,
    allowance: String? = nil, maximumSites: Int = 5
  ) -> String {
    var out = ""
    if let refusal {
      out += command("error", file: nil, line: nil, title: "obstrace check: incomplete trace", message: refusal)
    }
    if let allowance {
      out += command("warning", file: nil, line: nil, title: "obstrace check: incomplete trace", message: allowance)
    }
    func annotate(kind: String?, name: String, title: String, message: String) {
      let places = sites.places(kind: kind, name: name).prefix(maximumSites)
      if places.isEmpty {
        out += command("error", file: nil, line: nil, title: title, message: message)
        return
      }
      for place in places {
        let writes = "\(place.count) write\(place.count == 1 ? "" : "s") here"
        out += command(
          "error", file: path(place.frame, root: root), line: place.frame.line, title: title,
          message: message + " (\(writes)\(kind == "scope" ? " invalidated it" : kind == "property" ? " to it" : ""))")
      }
    }
    // One annotation per property or scope (and site), naming every count of it that failed.
    var order: [String] = []
    var failed: [String: [BaselineComparison.Row]] = [:]
    for row in comparison.rows where row.failed {
      let key = "\(row.kind) \(row.name)"
      if failed[key] == nil { order.append(key) }
      failed[key, default: []].append(row)
    }
    for key in order {
      let rows = failed[key]!
      let changes = rows.map { row in
        "\(row.metric) \(row.change == .new ? "is new" : "grew") \(row.baseline.map(String.init) ?? "-") → \(row.current ?? 0)"
      }
      annotate(
        kind: rows[0].kind, name: rows[0].name, title: "obstrace check: \(key) grew",
        message: "\(key): " + changes.joined(separator: ", "))
    }
    for result in comparison.limits where !result.passed {
      annotate(
        kind: nil, name: result.limit.name, title: "obstrace check: limit \(result.limit)",
        message: "limit \(result.limit) exceeded: \(result.actual.map(String.init) ?? "0 (no such property or scope)")")
    }
    out += comparison.failed || refusal != nil ? "FAILED\n" : "PASSED\n"
    return out
  }
}

/// Where the writes were made, by property and by the scope they invalidated: the places `check` points at.
/// Filled as the replay meets each write (a consumer of the timeline), resolved to frames at the end.
final class WriteSites {
  struct Place {
    var frame: SymbolizedFrame
    var count: Int
  }

  private var byProperty: [UInt32: [UInt32: Int]] = [:]
  private var byLabel: [UInt32: [UInt32: Int]] = [:]
  private var definitions = TraceDefinitions()

  func note(_ entry: ReplayFact, _ definitions: TraceDefinitions) {
    guard case .write(let write) = entry, write.stack != 0 else { return }
    byProperty[write.key.property, default: [:]][write.stack, default: 0] += 1
    for fire in write.fired { byLabel[fire.label, default: [:]][write.stack, default: 0] += 1 }
    self.definitions = definitions
  }

  /// The sites of the writes of a property (`kind` "property"), or of the writes that invalidated a scope
  /// (`kind` "scope"), or either (nil, for a limit), by name; most writes first.
  func places(kind: String?, name: String) -> [Place] {
    var stacks: [UInt32: Int] = [:]
    if kind != "scope" {
      for (property, counts) in byProperty where definitions.propertyName(property) == name {
        stacks.merge(counts, uniquingKeysWith: +)
      }
    }
    if kind != "property" {
      for (label, counts) in byLabel where definitions.labelName(label) == name {
        stacks.merge(counts, uniquingKeysWith: +)
      }
    }
    var byPlace: [String: Place] = [:]
    for (stack, count) in stacks {
      guard let frame = definitions.site(ofStack: stack), !frame.file.isEmpty else { continue }
      let key = "\(frame.file):\(frame.line)"
      byPlace[key] = Place(frame: frame, count: (byPlace[key]?.count ?? 0) + count)
    }
    return byPlace.values.sorted {
      ($1.count, $0.frame.file, $0.frame.line) < ($0.count, $1.frame.file, $1.frame.line)
    }
  }
}
