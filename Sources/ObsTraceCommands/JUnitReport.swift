import ObsTraceAnalysis

/// `check --format junit`: the check as JUnit XML, which GitLab, Jenkins and most CI systems read. One test case
/// per checked count (each metric of each property and scope in the trace or the baseline, and each limit); a
/// failure for each that grew beyond the tolerance, is new with `--fail-on-new`, or broke its limit. A trace that
/// cannot be trusted for a verdict (`completeness`: why, whether that fails the check, and the sentence saying
/// so) adds a first case, `obstrace.trace` "<file> is complete": failed, or skipped with `--allow-incomplete`.
enum JUnitReport {
  static func xml(
    _ comparison: BaselineComparison, current: Baseline, baseline: Baseline?, path: String, tolerance: Double,
    sites: WriteSites, completeness: (reason: String, refused: Bool, explanation: String)? = nil,
    report: AnalysisReport
  ) -> String {
    var cases: [String] = []
    var failures = 0
    var skipped = 0
    func testCase(
      classname: String, name: String, failure: (message: String, detail: String)?, skip: String? = nil
    ) {
      var text = "    <testcase classname=\"\(escape(classname))\" name=\"\(escape(name))\" time=\"0\""
      if let failure {
        failures += 1
        text +=
          ">\n      <failure message=\"\(escape(failure.message))\" type=\"obstrace.check\">"
          + escape(failure.detail, attribute: false) + "</failure>\n    </testcase>"
      } else if let skip {
        skipped += 1
        text += ">\n      <skipped message=\"\(escape(skip))\"/>\n    </testcase>"
      } else {
        text += "/>"
      }
      cases.append(text)
    }
    if let completeness {
      let message = "\(path): \(completeness.explanation)"
      testCase(
        classname: "obstrace.trace", name: "\(path) is complete",
        failure: completeness.refused ? ("incomplete: \(completeness.reason)", message) : nil,
        skip: completeness.refused ? nil : message)
    }
    /// The summary, then the sites of the writes that made the count (see `WriteSites`), with how much each made.
    func detail(kind: String, name: String, metric: String, _ summary: String) -> String {
      let all = sites.places(kind: kind, name: name, metric: metric)
      let places = all.prefix(5).map {
        "  at \(SiteFormatting.describe($0.frame)) (\(WriteSites.describe($0.count, metric: metric, kind: kind)))"
      }
      // The others said too, not left out (a growth may come from exactly those).
      let rest = all.dropFirst(5)
      let more =
        rest.isEmpty
        ? []
        : [
          "  and \(rest.count) more site\(rest.count == 1 ? "" : "s"): "
            + WriteSites.list(rest.map { ($0.frame, WriteSites.describe($0.count, metric: metric, kind: kind)) })
        ]
      return ([summary] + places + more).joined(separator: "\n")
    }
    if let baseline {
      let rows = Dictionary(
        comparison.rows.map { ("\($0.kind)\u{0}\($0.name)\u{0}\($0.metric)", $0) }, uniquingKeysWith: { a, _ in a })
      for (kind, now, before, metrics) in [
        ("property", current.properties, baseline.properties, Baseline.propertyMetrics),
        ("scope", current.scopes, baseline.scopes, Baseline.scopeMetrics),
      ] {
        for name in Set(now.keys).union(before.keys).sorted() {
          for metric in metrics {
            var failure: (String, String)?
            var skip: String?
            // A count not known: a failure where the baseline knew it, else skipped, saying why either way.
            if let row = rows["\(kind)\u{0}\(name)\u{0}\(metric)"], row.change == .unknown {
              let why = CheckCommand.unknownRow(row, report)
              if row.failed {
                failure = (
                  "unknown: \(row.baseline.map(String.init) ?? "-") → unknown",
                  "\(kind) \(name) \(metric): baseline \(row.baseline.map(String.init) ?? "-"), now unknown: \(why)"
                )
              } else {
                skip = why
              }
            } else if let row = rows["\(kind)\u{0}\(name)\u{0}\(metric)"], row.failed {
              let old = row.baseline.map(String.init) ?? "not in the baseline"
              let summary =
                "\(kind) \(name) \(metric): baseline \(old), now \(row.current ?? 0) "
                + "(tolerance \(Formatting.fixed(tolerance * 100, 0))%)"
              failure = (
                "\(row.change == .new ? "new" : "grew"): \(old) → \(row.current ?? 0)",
                detail(kind: kind, name: name, metric: metric, summary)
              )
            }
            testCase(
              classname: "obstrace.\(kind == "property" ? "properties" : "scopes")",
              name: "\(name) \(metric)", failure: failure, skip: skip)
          }
        }
      }
    }
    for result in comparison.limits {
      let actual = result.actual.map(String.init) ?? "0 (no such property or scope)"
      if let uncompared = result.uncompared {
        let why = CheckCommand.unknownCount(
          kind: result.kind ?? "property", result.limit.name, result.limit.metric, uncompared, report)
        testCase(
          classname: "obstrace.limits", name: result.limit.description,
          failure: result.exceeded
            ? ("exceeded: at least \(actual)", "limit \(result.limit): at least \(actual); \(why)")
            : ("unknown: not known", "limit \(result.limit): not known: \(why)"))
        continue
      }
      testCase(
        classname: "obstrace.limits", name: result.limit.description,
        failure: result.passed
          ? nil
          : (
            "exceeded: \(actual)",
            detail(
              kind: result.kind ?? "property", name: result.limit.name, metric: result.limit.metric,
              "limit \(result.limit): \(actual)")
          ))
    }
    let suite = "obstrace check \(path)"
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <testsuites name="obstrace" tests="\(cases.count)" failures="\(failures)" errors="0">
        <testsuite name="\(escape(suite))" tests="\(cases.count)" failures="\(failures)" errors="0" skipped="\(skipped)">
      \(cases.joined(separator: "\n"))
        </testsuite>
      </testsuites>

      """
  }

  /// Text as XML character data or an attribute value.
  static func escape(_ text: String, attribute: Bool = true) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&apos;"
      case "\n": result += attribute ? "&#10;" : "\n"
      default:
        // XML 1.0 has no place for the other control characters.
        if scalar.value < 0x20 && scalar != "\t" { result += "?" } else { result.unicodeScalars.append(scalar) }
      }
    }
    return result
  }
}
