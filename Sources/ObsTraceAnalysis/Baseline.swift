import Foundation
import ObsTraceFormat

/// The counts a CI gate compares: per property and per scope label, the numbers that grow when a change makes
/// views re-render more. Written as stable, diff-friendly JSON (sorted, one entry per line).
public struct Baseline: Equatable, Sendable {
  public static let schema = "obstrace.baseline/1"
  public static let propertyMetrics = ["writes", "noopWrites", "invalidations", "wastedInvalidations", "maximumFanOut"]
  public static let scopeMetrics = ["runs", "invalidations", "wastedInvalidations", "redundantRuns"]
  /// The property metrics that rest on comparing each write through `_modify` with the value before it: of a
  /// property some of whose writes were not compared they are not known (`uncompared`), not 0.
  public static let comparedMetrics = ["noopWrites", "wastedInvalidations"]
  /// The scope metrics that rest on the same comparisons, each with the count that says how much of it is not known
  /// (`ScopeStatistics.uncomparedInvalidations`, `possiblyRedundantRuns`): of a scope where that count is not 0,
  /// the metric is not known, not what was counted.
  public static let comparedScopeMetrics = [
    (metric: "wastedInvalidations", reason: "uncomparedInvalidations"),
    (metric: "redundantRuns", reason: "possiblyRedundantRuns"),
  ]

  /// Property name → metric → count.
  public var properties: [String: [String: Int]] = [:]
  /// Scope label → metric → count.
  public var scopes: [String: [String: Int]] = [:]
  /// Property name → how many of its writes through `_modify` were not compared, for a property that has such
  /// writes: its `comparedMetrics` are not known (what `properties` holds for them is what the compared writes made,
  /// at least the count). Written as `null` with `"uncomparedWrites": N`; 0 for a baseline's `null` without it.
  public var uncompared: [String: Int] = [:]
  /// Scope label → metric of `comparedScopeMetrics` not known → the count that makes it so (the invalidations by
  /// writes not compared, the runs possibly redundant), for a scope that has such: `scopes` holds what was counted
  /// for it, a least value. Written as `null` with `"uncomparedInvalidations": N` or `"possiblyRedundantRuns": N`;
  /// 0 for a baseline's `null` without it.
  public var uncomparedScopes: [String: [String: Int]] = [:]
  /// Property name → place (`Module/File.swift:line`) → metric → how much of the count the writes made there:
  /// what lets `check` put its errors only on the places whose counts grew. Empty in a baseline made without
  /// symbols or by an earlier obstrace (`check` then points at every place). A property's `maximumFanOut` there is
  /// the most scopes one write of that place fired.
  public var propertySites: [String: [String: [String: Int]]] = [:]
  /// Scope label → place → `invalidations` and `wastedInvalidations` of it by the writes made there.
  public var scopeSites: [String: [String: [String: Int]]] = [:]

  public init() {}

  public init(_ report: AnalysisReport) {
    for property in report.properties {
      let s = property.statistics
      properties[property.name] = [
        "writes": s.writes, "noopWrites": s.noopWrites, "invalidations": s.invalidations,
        "wastedInvalidations": s.wastedInvalidations, "maximumFanOut": s.maximumFanOut,
      ]
      if s.uncomparedWrites > 0 { uncompared[property.name] = s.uncomparedWrites }
    }
    for scope in report.scopes {
      let s = scope.statistics
      scopes[scope.label] = [
        "runs": s.runs, "invalidations": s.invalidations, "wastedInvalidations": s.wastedInvalidations,
        "redundantRuns": s.redundantRuns,
      ]
      var unknown: [String: Int] = [:]
      if s.uncomparedInvalidations > 0 { unknown["wastedInvalidations"] = s.uncomparedInvalidations }
      if s.possiblyRedundantRuns > 0 { unknown["redundantRuns"] = s.possiblyRedundantRuns }
      if !unknown.isEmpty { uncomparedScopes[scope.label] = unknown }
    }
  }

  /// Whether `metric` of the property or scope (`kind`) `name` is not known: it rests on writes through `_modify`
  /// that were not compared.
  public func isUnknown(kind: String, _ name: String, _ metric: String) -> Bool {
    kind == "property" ? isUnknown(property: name, metric) : uncomparedScopes[name]?[metric] != nil
  }

  /// Whether `metric` of the property `name` is not known: its writes through `_modify` were not all compared.
  public func isUnknown(property name: String, _ metric: String) -> Bool {
    uncompared[name] != nil && Self.comparedMetrics.contains(metric)
  }

  /// The JSON text: keys sorted, one property or scope per line, so that a change reads well in a diff. A count
  /// that is not known is `null`, and what makes it so is said (`"uncomparedWrites": 4` for a property,
  /// `"uncomparedInvalidations": 2` and `"possiblyRedundantRuns": 2` for a scope).
  public func json() -> String {
    func section(_ name: String, _ entries: [String: [String: Int]], _ metrics: [String]) -> String {
      let lines = entries.keys.sorted().map { key -> String in
        let kind = name == "properties" ? "property" : "scope"
        var counts = metrics.map { metric in
          "\"\(metric)\": " + (isUnknown(kind: kind, key, metric) ? "null" : "\(entries[key]?[metric] ?? 0)")
        }
        if kind == "property", let uncompared = uncompared[key] {
          counts.append("\"uncomparedWrites\": \(uncompared)")
        }
        if kind == "scope", let unknown = uncomparedScopes[key] {
          for (metric, reason) in Self.comparedScopeMetrics {
            if let count = unknown[metric] { counts.append("\"\(reason)\": \(count)") }
          }
        }
        return "    \(jsonString(key)): {\(counts.joined(separator: ", "))}"
      }
      return "  \"\(name)\": {" + (lines.isEmpty ? "}" : "\n" + lines.joined(separator: ",\n") + "\n  }")
    }
    // Places per name on one line: a name whose places changed is one line of the diff.
    func places(_ name: String, _ entries: [String: [String: [String: Int]]], _ metrics: [String]) -> String {
      let lines = entries.keys.sorted().map { key -> String in
        let byPlace = entries[key] ?? [:]
        let places = byPlace.keys.sorted().map { place -> String in
          let counts = metrics.compactMap { metric in byPlace[place]?[metric].map { "\"\(metric)\": \($0)" } }
          return "\(jsonString(place)): {\(counts.joined(separator: ", "))}"
        }
        return "      \(jsonString(key)): {\(places.joined(separator: ", "))}"
      }
      return "    \"\(name)\": {" + (lines.isEmpty ? "}" : "\n" + lines.joined(separator: ",\n") + "\n    }")
    }
    let sites =
      propertySites.isEmpty && scopeSites.isEmpty
      ? ""
      : ",\n  \"sites\": {\n" + places("properties", propertySites, Self.propertyMetrics) + ",\n"
        + places("scopes", scopeSites, Self.siteScopeMetrics) + "\n  }"
    return "{\n  \"schema\": \"\(Self.schema)\",\n"
      + section("properties", properties, Self.propertyMetrics) + ",\n"
      + section("scopes", scopes, Self.scopeMetrics) + sites + "\n}\n"
  }

  /// A JSON value as a count, when it is one: a number, not a boolean, whole, from 0 to 2^53 (beyond which a
  /// double's whole numbers are not all there, and no count of a recording gets).
  static func count(_ value: Any) -> Int? {
    guard let number = value as? NSNumber, !(number is NSDecimalNumber), String(cString: number.objCType) != "c"
    else { return nil }
    let double = number.doubleValue
    guard double >= 0, double <= 9_007_199_254_740_992, double.rounded(.towardZero) == double else { return nil }
    return Int(double)
  }

  /// A name or key of a baseline as an error line quotes it (`quote` around it): on one line, and at most 200
  /// characters of it, then how long it is.
  public static func quoted(_ name: String, quote: String = "\"") -> String {
    let printable = TraceDefinitions.escapingControls(name)
    let characters = printable.unicodeScalars
    guard characters.count > 200 else { return quote + printable + quote }
    return quote + String(String.UnicodeScalarView(characters.prefix(200))) + "…" + quote
      + " (\(characters.count) characters)"
  }

  /// A JSON value as an error line shows it: `"2"`, `null`, `-5`, `true`.
  static func describe(_ value: Any) -> String {
    switch value {
    case let text as String: return quoted(text)
    case is NSNull: return "null"
    case let number as NSNumber where String(cString: number.objCType) == "c": return number.boolValue ? "true" : "false"
    case let number as NSNumber: return number.description
    case is [Any]: return "an array"
    default: return "an object"
    }
  }

  /// A scope's counts by place: its runs are pinned on the writes that invalidated it, its redundant runs on the
  /// no-op writes that did.
  public static let siteScopeMetrics = ["invalidations", "wastedInvalidations"]

  /// How much of `metric` of the property or scope (`kind`) `name` the writes at `place` made in this baseline: 0
  /// for a place it does not have, nil when it has no places for that name (made without them).
  public func count(kind: String, name: String, metric: String, place: String) -> Int? {
    let sites = kind == "scope" ? scopeSites : propertySites
    guard let byPlace = sites[name] else { return nil }
    let stored =
      kind == "scope"
      ? (metric == "wastedInvalidations" || metric == "redundantRuns" ? "wastedInvalidations" : "invalidations")
      : metric
    return byPlace[place]?[stored] ?? 0
  }

  /// Reads a baseline; the error says what is wrong with it.
  public static func parse(_ data: Data) throws(BaselineError) -> Baseline {
    // Said as it is: `[]`, `42` or `null` is JSON, only not an object (tryout18's R10: they were "not JSON").
    guard let json = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) else {
      throw BaselineError("could not be read as JSON (not JSON, or a number past what a double holds)")
    }
    guard let object = json as? [String: Any] else {
      throw BaselineError("is JSON but not an ObsTrace baseline: its top level is \(describe(json)), not an object")
    }
    guard object["schema"] as? String == schema else {
      throw BaselineError("is not an ObsTrace baseline (schema \(schema)); make one with 'obstrace baseline'")
    }
    // A name given twice would be read as one of its entries, silently (the JSON reader keeps one).
    if let duplicate = firstDuplicateName(in: data) {
      throw BaselineError(
        "gives the \(duplicate.kind) \(quoted(duplicate.name)) twice, on lines \(duplicate.first) and "
          + "\(duplicate.second): one of the two would be taken and the other ignored; keep one (make the baseline "
          + "again with 'obstrace baseline')")
    }
    var baseline = Baseline()
    // Every count is read as what it says or refused: a count that is not one ("2", null, -5, 2.5, past 2^53)
    // was read as 0 or wrapped (a fresh-clone try-out's J7), and the check then failed or passed on a line that
    // is not so. A metric the entry does not have counts 0, as a baseline without that metric meant.
    // A count that rests on compared writes may be `null`: not known, as `baseline` writes it for a property whose
    // writes were not all compared, with how many were not (`uncomparedWrites`), and for a scope fired by such
    // writes (`uncomparedInvalidations`) or whose runs may be redundant for them (`possiblyRedundantRuns`).
    // `unknowable`: such metric → the count that says why.
    var unknown: Set<String> = []
    var reasons: [String: Int] = [:]
    func counts(
      _ value: Any, of name: String, in section: String, metrics: [String], unknowable: [String: String] = [:]
    ) throws(BaselineError) -> [String: Int] {
      guard let counts = value as? [String: Any] else {
        throw BaselineError("has a malformed entry \(quoted(name)) (not an object of counts)")
      }
      unknown = []
      reasons = [:]
      var parsed: [String: Int] = [:]
      for (metric, value) in counts {
        if value is NSNull, unknowable[metric] != nil {
          unknown.insert(metric)
          continue
        }
        if unknowable.values.contains(metric) {
          guard let count = count(value) else {
            throw BaselineError(
              "has \(quoted(metric)): \(describe(value)) for \(quoted(name)), which is not a count (a whole number from "
                + "0 to 2^53)")
          }
          reasons[metric] = count
          continue
        }
        guard metrics.contains(metric) else {
          throw BaselineError(
            "has an unknown metric \(quoted(metric)) for \(quoted(name)) (the \(section)' metrics are "
              + metrics.joined(separator: ", ") + ")")
        }
        guard let count = count(value) else {
          throw BaselineError(
            "has \(quoted(metric)): \(describe(value)) for \(quoted(name)), which is not a count (a whole number from 0 "
              + "to 2^53)")
        }
        parsed[metric] = count
      }
      return parsed
    }
    let propertyUnknowable = Dictionary(uniqueKeysWithValues: comparedMetrics.map { ($0, "uncomparedWrites") })
    let scopeUnknowable = Dictionary(uniqueKeysWithValues: comparedScopeMetrics.map { ($0.metric, $0.reason) })
    for (section, metrics) in [("properties", propertyMetrics), ("scopes", scopeMetrics)] {
      guard let value = object[section] else { throw BaselineError("has no \"\(section)\"") }
      guard let entries = value as? [String: Any] else {
        throw BaselineError("has \"\(section)\": \(describe(value)), not an object of names")
      }
      for (name, value) in entries {
        var parsed = try counts(
          value, of: name, in: section, metrics: metrics,
          unknowable: section == "properties" ? propertyUnknowable : scopeUnknowable)
        for metric in metrics where parsed[metric] == nil { parsed[metric] = 0 }
        if section == "properties" {
          baseline.properties[name] = parsed
          // Both counts are known, or neither: the writes not compared make both unknown.
          if !unknown.isEmpty || reasons["uncomparedWrites"].map({ $0 > 0 }) == true {
            guard unknown.count == comparedMetrics.count else {
              throw BaselineError(
                "has \(quoted(name)) with \(comparedMetrics.map { quoted($0) }.joined(separator: " and ")) not both "
                  + "null: the writes not compared make both unknown")
            }
            baseline.uncompared[name] = reasons["uncomparedWrites"] ?? 0
          }
        } else {
          baseline.scopes[name] = parsed
          // Each on its own: a scope's wasted invalidations are not known for the invalidations by writes not
          // compared, its redundant runs for the runs those writes may have left redundant.
          for (metric, reason) in comparedScopeMetrics {
            if unknown.contains(metric) {
              baseline.uncomparedScopes[name, default: [:]][metric] = reasons[reason] ?? 0
            } else if let count = reasons[reason], count > 0 {
              throw BaselineError(
                "has \(quoted(name)) with \(quoted(reason)): \(count) and \(quoted(metric)) not null: what \(quoted(reason)) "
                  + "counts makes \(quoted(metric)) unknown")
            }
          }
        }
      }
    }
    // Optional: a baseline made by an earlier obstrace, or without symbols, has no places.
    if let sites = object["sites"] {
      guard let sites = sites as? [String: Any] else { throw BaselineError("has a malformed \"sites\"") }
      for (section, metrics) in [("properties", propertyMetrics), ("scopes", siteScopeMetrics)] {
        guard let entries = sites[section] else { continue }
        guard let entries = entries as? [String: Any] else {
          throw BaselineError("has a malformed \"sites\" entry \(quoted(section))")
        }
        for (name, value) in entries {
          guard let places = value as? [String: Any] else {
            throw BaselineError("has a malformed \"sites\" entry \(quoted(name))")
          }
          var parsed: [String: [String: Int]] = [:]
          for (place, value) in places {
            parsed[place] = try counts(value, of: name + " at " + place, in: section, metrics: metrics)
          }
          if section == "properties" { baseline.propertySites[name] = parsed } else { baseline.scopeSites[name] = parsed }
        }
      }
    }
    return baseline
  }
}

extension Baseline {
  /// The property names of `report` that more than one property has (types of one name in two modules: names drop
  /// the module), each with its candidates (`Model.count of module Demo`). A baseline and a limit are keyed by
  /// name, so such a name would silently stand for one of them: the commands refuse it instead.
  public static func ambiguousPropertyNames(_ report: AnalysisReport) -> [(name: String, candidates: [String])] {
    var byName: [String: [AnalysisReport.Property]] = [:]
    for property in report.properties { byName[property.name, default: []].append(property) }
    return byName.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { name, properties in
      (
        name,
        properties.map { property in
          property.module.map { "\(name) of module \($0)" } ?? "\(name) (property #\(property.id))"
        }.sorted()
      )
    }
  }
}

public struct BaselineError: Error, CustomStringConvertible {
  public var description: String
  init(_ description: String) { self.description = description }
}

/// How a report compares with a baseline and with limits.
public struct BaselineComparison: Sendable {
  /// `unknown`: a count that rests on compared writes (`Baseline.comparedMetrics`, `comparedScopeMetrics`) is not
  /// known now or in the baseline, so whether it grew is not known either.
  public enum Change: String, Sendable { case grew, shrank, new, gone, unknown }

  public struct Row: Sendable, Equatable {
    public var change: Change
    /// `property` or `scope`.
    public var kind: String
    public var name: String
    public var metric: String
    public var baseline: Int?
    public var current: Int?
    /// Grew beyond the tolerance; or not known now where the baseline knew it (`unknown`).
    public var failed: Bool
    /// `unknown`: the count is not known now (some writes of the property, or some that fired the scope, were not
    /// compared; `current` is then nil) …
    public var currentUnknown = false
    /// … or was not known when the baseline was made (`baseline` is then nil).
    public var baselineUnknown = false
  }

  public struct Limit: Sendable, Equatable, CustomStringConvertible {
    public enum Comparison: String, Sendable { case atMost = "<=", below = "<", exactly = "==" }
    public var name: String
    public var metric: String
    public var comparison: Comparison
    public var value: Int

    public var description: String { "\(name):\(metric)\(comparison.rawValue)\(value)" }

    /// `Model.items:invalidations<=3`; nil when it does not parse.
    public static func parse(_ text: String) -> Limit? {
      guard let colon = text.lastIndex(of: ":") else { return nil }
      let name = String(text[..<colon])
      let rest = text[text.index(after: colon)...]
      for comparison in [Comparison.atMost, .exactly, .below] {
        guard let range = rest.firstRange(of: comparison.rawValue) else { continue }
        let metric = String(rest[..<range.lowerBound])
        guard !name.isEmpty, Baseline.propertyMetrics.contains(metric) || Baseline.scopeMetrics.contains(metric),
          let value = Int(rest[range.upperBound...])
        else { return nil }
        return Limit(name: name, metric: metric, comparison: comparison, value: value)
      }
      return nil
    }
  }

  public struct LimitResult: Sendable, Equatable {
    public var limit: Limit
    /// The count found, or nil when neither a property nor a scope has that name.
    public var actual: Int?
    public var passed: Bool
    /// `property` or `scope`: what the name named (a property first, as `actual` is looked up), nil for neither.
    public var kind: String? = nil
    /// For a property's count that rests on compared writes (`Baseline.comparedMetrics`): how many of its writes
    /// were not compared, when some were; for a scope's (`Baseline.comparedScopeMetrics`): its invalidations by
    /// such writes, or its runs possibly redundant. The count is then not known (`actual` is what the compared
    /// writes made, a least value), and the limit does not pass: it is `exceeded` when that least value already
    /// breaks it.
    public var uncompared: Int? = nil

    /// Whether the count is known to break the limit (not only not known to keep it).
    public var exceeded: Bool {
      guard uncompared != nil else { return !passed }
      let least = actual ?? 0
      return switch limit.comparison {
      case .atMost: least > limit.value
      case .below: least >= limit.value
      case .exactly: least > limit.value
      }
    }
  }

  public var rows: [Row] = []
  public var limits: [LimitResult] = []

  public var failed: Bool { rows.contains(where: \.failed) || limits.contains { !$0.passed } }

  /// Compares `current` with `baseline` (when given), growth beyond `tolerance` (0.1 = 10%) failing, and checks
  /// `limits`. A count that was 0 and grew fails whatever the tolerance; `failOnNew` makes new names fail too.
  public init(current: Baseline, baseline: Baseline?, tolerance: Double, limits: [Limit], failOnNew: Bool = false) {
    if let baseline {
      for (kind, now, before, metrics) in [
        ("property", current.properties, baseline.properties, Baseline.propertyMetrics),
        ("scope", current.scopes, baseline.scopes, Baseline.scopeMetrics),
      ] {
        for name in Set(now.keys).union(before.keys).sorted() {
          for metric in metrics {
            let value = now[name]?[metric]
            let old = before[name]?[metric]
            // A count not known now or then is not compared: not known now where the baseline knew it fails (it may
            // have grown, and nothing can tell); not known then is said, and passes (the baseline pinned nothing).
            let currentUnknown = value != nil && current.isUnknown(kind: kind, name, metric)
            let baselineUnknown = old != nil && baseline.isUnknown(kind: kind, name, metric)
            if currentUnknown || baselineUnknown {
              if let value, old != nil {
                rows.append(
                  Row(
                    change: .unknown, kind: kind, name: name, metric: metric, baseline: baselineUnknown ? nil : old,
                    current: currentUnknown ? nil : value, failed: currentUnknown && !baselineUnknown,
                    currentUnknown: currentUnknown, baselineUnknown: baselineUnknown))
              }
              continue
            }
            switch (old, value) {
            case (nil, let value?) where value > 0:
              rows.append(
                Row(
                  change: .new, kind: kind, name: name, metric: metric, baseline: nil, current: value, failed: failOnNew
                ))
            case (let old?, nil) where old > 0:
              rows.append(
                Row(change: .gone, kind: kind, name: name, metric: metric, baseline: old, current: nil, failed: false))
            case (let old?, let value?) where value > old:
              let failed = Double(value) > Double(old) * (1 + tolerance) || old == 0
              rows.append(
                Row(
                  change: .grew, kind: kind, name: name, metric: metric, baseline: old, current: value, failed: failed))
            case (let old?, let value?) where value < old:
              rows.append(
                Row(
                  change: .shrank, kind: kind, name: name, metric: metric, baseline: old, current: value, failed: false)
              )
            default:
              break
            }
          }
        }
      }
    }
    for limit in limits {
      let actual = current.properties[limit.name]?[limit.metric] ?? current.scopes[limit.name]?[limit.metric]
      let passed: Bool
      switch limit.comparison {
      case .atMost: passed = (actual ?? 0) <= limit.value
      case .below: passed = (actual ?? 0) < limit.value
      case .exactly: passed = (actual ?? 0) == limit.value
      }
      let kind =
        current.properties[limit.name]?[limit.metric] != nil
        ? "property" : current.scopes[limit.name]?[limit.metric] != nil ? "scope" : nil
      // A count not known is not within a limit: it fails, saying so (`check` says why and how to know it).
      let uncompared: Int? =
        switch kind {
        case "property" where current.isUnknown(property: limit.name, limit.metric): current.uncompared[limit.name]
        case "scope": current.uncomparedScopes[limit.name]?[limit.metric]
        default: nil
        }
      self.limits.append(
        LimitResult(
          limit: limit, actual: actual, passed: passed && uncompared == nil, kind: kind, uncompared: uncompared))
    }
  }
}

/// A string as a JSON literal: the one quoting every JSON printer uses.
public func jsonString(_ string: String) -> String {
  // Most names need no escape: then the string is quoted as it is, not rebuilt scalar by scalar.
  if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
    return "\"" + string + "\""
  }
  var result = "\""
  for scalar in string.unicodeScalars {
    switch scalar {
    case "\"": result += "\\\""
    case "\\": result += "\\\\"
    case "\n": result += "\\n"
    case "\r": result += "\\r"
    case "\t": result += "\\t"
    default:
      if scalar.value < 0x20 {
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
  }
  return result + "\""
}
