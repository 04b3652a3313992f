import ObsTraceFormat

/// Turns the replay's aggregates into findings, each with a concrete hint. The heuristics are documented in
/// docs/analysis.md; keep the two together.
enum Findings {
  static func derive(
    _ replay: Replay, _ definitions: TraceDefinitions, _ trace: AnalysisReport.Trace?, mainThread: UInt32? = nil
  ) -> [Finding] {
    var findings: [Finding] = []
    func location(_ stack: UInt32) -> SymbolizedFrame? {
      stack == 0 ? nil : definitions.site(ofStack: stack)
    }
    func site(_ stack: UInt32) -> String? { location(stack).map(SiteFormatting.describe) }

    for (key, count) in replay.noopWrites {
      let property = definitions.propertyName(key.property)
      let wasted = replay.properties[key.property]?.wastedInvalidations ?? 0
      findings.append(
        Finding(
          kind: .noopWrite, property: property, scope: nil, site: site(key.stack), count: count,
          message: "\(count) write\(count == 1 ? "" : "s") to \(property) left the value unchanged"
            + (wasted > 0 ? " and still invalidated \(wasted) scope run\(wasted == 1 ? "" : "s")" : ""),
          hint: "writes through _modify (x.items[i].y = v, x.n += 0) notify even when nothing changes; "
            + "compare before writing, or assign the whole value so the setter's equality check applies",
          location: location(key.stack)))
    }
    for (key, count) in replay.staleReads {
      let property = definitions.propertyName(key.property)
      findings.append(
        Finding(
          kind: .staleRead, property: property, scope: nil, site: site(key.stack), count: count,
          message: "\(count) read\(count == 1 ? "" : "s") of \(property) inside its own willSet saw the old value",
          hint: "onChange runs before the value is stored; re-read after the write (DispatchQueue.main.async, "
            + "a Task, or Observations, which reads after the change)", location: location(key.stack)))
    }
    for (property, fanOut) in replay.fanOuts {
      let name = definitions.propertyName(property)
      findings.append(
        Finding(
          kind: .fanOut, property: name, scope: nil, site: nil, count: fanOut.count,
          message: "\(fanOut.count) write\(fanOut.count == 1 ? "" : "s") to \(name) each invalidated more than "
            + "\(replay.configuration.fanOutThreshold) scopes (largest: \(fanOut.largest))",
          hint: "many views read this one property; split it, or pass each view only the part it shows"))
    }
    var redundantByName: [String: Int] = [:]
    for (label, statistics) in replay.scopes where statistics.redundantRuns > 0 {
      redundantByName[definitions.labelName(label), default: 0] += statistics.redundantRuns
    }
    for (name, redundantRuns) in redundantByName {
      let statistics = (redundantRuns: redundantRuns, 0)
      findings.append(
        Finding(
          kind: .redundantRun, property: nil, scope: name, site: nil, count: statistics.redundantRuns,
          message: "\(statistics.redundantRuns) run\(statistics.redundantRuns == 1 ? "" : "s") of \(name) read only "
            + "values that no real change had touched since its previous run",
          hint: "the scope re-ran for a write that changed nothing it shows; see the noop-write findings, or "
            + "what invalidated it in `obstrace timeline --scope`"))
    }
    // Leaks: by type, and apart those that an Observations loop still running reads (its task holds the model).
    var leaked: [String: (count: Int, loops: Set<String>)] = [:]
    for (serial, type) in replay.leakedObjectSerials {
      let name = definitions.typeName(type)
      var entry = leaked[name] ?? (0, [])
      entry.count += 1
      entry.loops.formUnion(replay.liveLoops(reading: serial).map { definitions.labelName($0) })
      leaked[name] = entry
    }
    for (name, entry) in leaked {
      let count = entry.count
      var message =
        "\(count) \(name) object\(count == 1 ? " was" : "s were") created and never freed by the end of the trace"
      var hint =
        "a strong reference cycle keeps them alive (a Task or closure capturing self); "
        + "capture [weak self], or cancel the task when the owner goes away"
      if let loop = entry.loops.sorted().first {
        message += "; the Observations loop at \(loop) still reads \(count == 1 ? "it" : "them") and never ended"
        hint =
          "the loop's task holds the model (a strong self in the Task or in the Observations closure); "
          + "capture [weak self] in both, and cancel the task in deinit"
      }
      findings.append(
        Finding(
          kind: .leakedObject, property: nil, scope: entry.loops.sorted().first, site: nil, count: count,
          message: message, hint: hint))
    }
    for (property, writes) in replay.crossThreadWrites {
      let name = definitions.propertyName(property)
      findings.append(
        Finding(
          kind: .crossThreadWrite, property: name, scope: nil, site: nil, count: writes.objects,
          message:
            "\(writes.objects) object\(writes.objects == 1 ? "'s" : "s'") \(name) written from \(writes.threads) threads",
          hint: "a data-race smell for a model that is not isolated: confine it to an actor (@MainActor), "
            + "or make sure the writes are ordered"))
    }
    // Types used on the main thread and off it: for a @MainActor model each such access is an isolation
    // violation; for a model that is not isolated, a smell worth a look. (Isolation is not visible at run time,
    // so this says what happened and leaves the verdict to the reader.)
    if let mainThread {
      for (type, threads) in replay.threadsByType where threads.contains(mainThread) && threads.count > 1 {
        let name = definitions.typeName(type)
        let others = threads.count - 1
        findings.append(
          Finding(
            kind: .offMainThread, property: nil, scope: nil, site: nil, count: others,
            message:
              "\(name) objects were used on the main thread and on \(others) other thread\(others == 1 ? "" : "s")",
            hint: "if \(name) is @MainActor, every use off the main thread is an isolation violation (an "
              + "@unchecked Sendable or a nonisolated path let it through); if it is not isolated, make sure those "
              + "uses are ordered"))
      }
    }
    if let trace { findings += traceFindings(trace) }
    for (key, count) in replay.untrackedReads {
      let property = definitions.propertyName(key.property)
      findings.append(
        Finding(
          kind: .untrackedRead, property: property, scope: nil, site: site(key.stack), count: count,
          message: "\(count) read\(count == 1 ? "" : "s") of \(property) outside any tracking scope",
          hint: "information: such reads subscribe nothing (an action, a test assertion, a re-read)",
          location: location(key.stack)))
    }
    return sorted(findings)
  }

  static func traceFindings(_ trace: AnalysisReport.Trace) -> [Finding] {
    var findings: [Finding] = []
    if trace.droppedEvents > 0 {
      findings.append(
        Finding(
          kind: .droppedEvents, property: nil, scope: nil, site: nil, count: Int(clamping: trace.droppedEvents),
          message: "\(trace.droppedEvents) events were dropped because a ring was full; counts are lower bounds",
          hint: "record without OBSTRACE_DROP (lossless), or with a larger OBSTRACE_RING_CAPACITY"))
    }
    if trace.truncated {
      findings.append(
        Finding(
          kind: .truncated, property: nil, scope: nil, site: nil, count: 1,
          message: "the trace is truncated: the recording did not stop cleanly; read up to its last whole chunk",
          hint: "the process was killed or crashed; events of its last ~0.3 s may be missing"))
    }
    for damage in trace.damage {
      findings.append(
        Finding(
          kind: .damagedChunk, property: nil, scope: nil, site: nil, count: 1, message: "damaged chunk \(damage)",
          hint: "the events of that chunk are lost; the rest of the trace was read"))
    }
    return findings
  }

  static func sorted(_ findings: [Finding]) -> [Finding] {
    findings.sorted { a, b in
      if a.isInformational != b.isInformational { return !a.isInformational }
      if a.count != b.count { return a.count > b.count }
      return (a.kind.rawValue, a.property ?? "", a.scope ?? "", a.site ?? "") < (
        b.kind.rawValue, b.property ?? "", b.scope ?? "", b.site ?? ""
      )
    }
  }
}

/// How a code place is written in every output: `file.swift:12 (function)`.
public enum SiteFormatting {
  public static func describe(_ frame: SymbolizedFrame) -> String {
    let function = shortFunction(frame.function)
    guard !frame.file.isEmpty else { return function }
    let file = frame.file.split(separator: "/").last.map(String.init) ?? frame.file
    return "\(file):\(frame.line) (\(function))"
  }

  /// `Demo.FirstView.body.getter : Swift.String` → `FirstView.body.getter`; `Demo.render(model: Demo.Model) -> ()`
  /// → `render(model:)`.
  public static func shortFunction(_ function: String) -> String {
    let function = String(SiteFilter.withoutQualifiers(Substring(function)))
    // `closure #3 () -> () in Demo.Store.reload() -> ()` → `closure #3 in Store.reload()`.
    for closure in ["implicit closure #", "closure #"] where function.hasPrefix(closure) {
      let number = function.dropFirst(closure.count).prefix { $0.isNumber }
      if let enclosing = function.firstRange(of: " in ") {
        return "\(closure)\(number) in " + shortFunction(String(function[enclosing.upperBound...]))
      }
    }
    var name = Substring(function)
    if let colon = name.firstRange(of: " : ") { name = name[..<colon.lowerBound] }
    if let arrow = name.firstRange(of: " -> ") { name = name[..<arrow.lowerBound] }
    // Drop parameter types: `render(model: Demo.Model)` → `render(model:)`.
    if let open = name.firstIndex(of: "("), name.hasSuffix(")"), !name.hasPrefix("closure"), !name.contains(" in ") {
      let parameters = name[name.index(after: open)..<name.index(before: name.endIndex)]
      let labels = parameters.split(separator: ",").map { part -> String in
        let trimmed = part.drop { $0 == " " }
        if let colon = trimmed.firstIndex(of: ":") { return String(trimmed[..<colon]) + ":" }
        return "_:"
      }
      name = name[..<open] + "(" + labels.joined() + ")"
    }
    // Drop the module: the first component, when more follow.
    let text = String(name)
    if let dot = text.firstIndex(of: "."), !text.hasPrefix("closure"),
      text[..<dot].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
    {
      return String(text[text.index(after: dot)...])
    }
    return text
  }
}
