import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace timeline FILE`: who read what, in time order, across threads.
enum TimelineCommand: TraceCommand {
  static let name = "timeline"
  static let abstract = "Who read what, in order: scope runs and what they read, writes and what they invalidated."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace timeline <file> [--scope <label>] [--property <Type.name>] [--object <n>] [--thread <n>]
                             [--from <ms>] [--to <ms>]

    Each line: milliseconds since the recording started, thread, then a scope run (what it read) or a write
    (whether it changed the value, and the scope runs it invalidated). Objects are named Type#serial.

    OPTIONS:
      --scope <label>       Only runs of this scope, and writes that invalidated it.
      --property <name>     Only lines that involve this property (Type.name).
      --object <n>          Only lines that involve object #n.
      --thread <n>          Only thread Tn.
      --from <ms>, --to <ms>  Only this time window.
      -h, --help            Show this help.

    EXAMPLE:
      obstrace timeline run.trc --scope FirstView.body

    """

  struct Filter {
    var scope: String?
    var property: String?
    var object: UInt32?
    var thread: UInt32?
    var from: UInt64 = 0
    var to: UInt64 = .max
  }

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: [
        "--scope": "scope", "--property": "property", "--object": "object", "--thread": "thread", "--from": "from",
        "--to": "to",
      ], command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    var filter = Filter(scope: parsed.value("scope"), property: parsed.value("property"))
    if let text = parsed.value("object") {
      guard let object = UInt32(text) else {
        throw CommandError("obstrace timeline: --object must be a number, not '\(text)'")
      }
      filter.object = object
    }
    if let text = parsed.value("thread") {
      let digits = text.hasPrefix("T") ? String(text.dropFirst()) : text
      guard let thread = UInt32(digits) else {
        throw CommandError("obstrace timeline: --thread must be a number, not '\(text)'")
      }
      filter.thread = thread
    }
    for (name, flag) in [("from", "--from"), ("to", "--to")] {
      guard let text = parsed.value(name) else { continue }
      // Finite and under 2^64 ns (about 584 years): a larger value cannot be converted without trapping.
      guard let milliseconds = Double(text), milliseconds >= 0, milliseconds < 1.8e13 else {
        throw CommandError("obstrace timeline: \(flag) must be milliseconds since the start, not '\(text)'")
      }
      if name == "from" { filter.from = UInt64(milliseconds * 1e6) } else { filter.to = UInt64(milliseconds * 1e6) }
    }
    guard filter.from <= filter.to else {
      throw CommandError("obstrace timeline: --from must not be later than --to")
    }
    var out = TextBuffer()
    out.line("time (ms)  thread  what")
    var lines = 0
    let printer = TimelinePrinter(filter: filter)
    // Facts come as the machine establishes them (a run when it ends); lines are shown in order of beginning.
    var ordered = TimeOrderedFacts()
    var lastDefinitions = TraceDefinitions()
    // Threads and objects seen, to tell a --thread or --object that names none of the trace's from one that
    // matches nothing (only when asked: it costs a set insert per fact).
    var seenThreads = Set<UInt32>()
    var seenObjects = Set<UInt32>()
    let noteSeen = filter.thread != nil || filter.object != nil
    func show(_ fact: ReplayFact, _ definitions: TraceDefinitions) {
      if noteSeen { fact.note(threads: &seenThreads, objects: &seenObjects) }
      guard let line = printer.describe(fact, definitions) else { return }
      out.line(line)
      lines += 1
      if out.text.utf8.count > 1 << 16 {
        output.write(out.text)
        out.text = ""
      }
    }
    let report = try TraceInput.analyze(path, Replay.Configuration(), command: name) { fact, definitions in
      lastDefinitions = definitions
      ordered.consume(fact) { show($0, definitions) }
    }
    ordered.finish { show($0, lastDefinitions) }
    if lines == 0 {
      // A name or number the trace does not have is a mistake (a typo shows nothing, which reads as "nothing
      // happened"), not an empty answer.
      let definitions = lastDefinitions
      if let scope = filter.scope {
        let known = Set(report.scopes.map(\.label)).union(definitions.labels.keys.map { definitions.labelName($0) })
        if !known.contains(scope) {
          throw CommandError(
            "obstrace timeline: --scope '\(scope)' names no scope of \(path); "
              + NameSuggestions.describe(scope, in: known.sorted()))
        }
      }
      if let property = filter.property {
        let known = Set(report.properties.map(\.name)).union(
          definitions.properties.keys.map { definitions.propertyName($0) })
        if !known.contains(property) {
          throw CommandError(
            "obstrace timeline: --property '\(property)' names no property of \(path); "
              + NameSuggestions.describe(property, in: known.sorted()))
        }
      }
      if let thread = filter.thread, !seenThreads.contains(thread) {
        throw CommandError(
          "obstrace timeline: --thread \(thread) is not a thread of \(path) (its threads: "
            + seenThreads.sorted().map { "T\($0)" }.joined(separator: ", ") + ")")
      }
      if let object = filter.object, !seenObjects.contains(object) {
        throw CommandError("obstrace timeline: --object \(object) is not an object of \(path)")
      }
      out.line("(nothing matches)")
    }
    output.write(out.text)
    return 0
  }

  static func describe(_ fact: ReplayFact, _ definitions: TraceDefinitions, _ filter: Filter) -> String? {
    TimelinePrinter(filter: filter).describe(fact, definitions)
  }
}

/// Prints timeline entries, resolving each name once: an object's `Type#serial.property`, a label's text, a stack's
/// site are looked up and formatted the first time a line needs them, then reused (a trace repeats a few of them
/// millions of times). An id is only cached once the trace has defined it, so a name never freezes as unknown.
final class TimelinePrinter {
  typealias Filter = TimelineCommand.Filter
  let filter: Filter
  private var objectProperties: [PropertyKey: String] = [:]
  private var propertyNames: [UInt32: String] = [:]
  private var labels: [UInt32: String] = [:]
  private var sites: [UInt32: String] = [:]
  /// By stack: how a write through the registrar's `withMutation` was made (the setter or an explicit
  /// `withMutation`), which takes a walk over the stack's frames.
  private var withMutationKinds: [UInt32: WriteKind] = [:]

  init(filter: Filter) {
    self.filter = filter
  }

  private func object(_ key: PropertyKey, _ definitions: TraceDefinitions) -> String {
    if let text = objectProperties[key] { return text }
    let property = definitions.propertyName(key.property)
    let name = property.firstIndex(of: ".").map { String(property[property.index(after: $0)...]) } ?? property
    let text = "\(definitions.typeName(ofObject: key.object))#\(key.object).\(name)"
    if definitions.objects[key.object] != nil, definitions.properties[key.property] != nil {
      objectProperties[key] = text
    }
    return text
  }

  private func propertyName(_ id: UInt32, _ definitions: TraceDefinitions) -> String {
    if let name = propertyNames[id] { return name }
    let name = definitions.propertyName(id)
    if definitions.properties[id] != nil { propertyNames[id] = name }
    return name
  }

  private func label(_ id: UInt32, _ definitions: TraceDefinitions) -> String {
    if let text = labels[id] { return text }
    let text = definitions.labelName(id)
    if definitions.labels[id] != nil { labels[id] = text }
    return text
  }

  /// How a write was made: from its willSet's flags, and for a write through `withMutation` from its stack, once.
  private func writeKind(_ flags: UInt8, _ stack: UInt32, _ definitions: TraceDefinitions) -> WriteKind {
    let willSet = TraceEvent(kind: .willSet, flags: flags, thread: 0, time: 0, stack: stack)
    guard flags & EventFlags.willSetInWithMutation != 0, flags & EventFlags.willSetDirect == 0 else {
      return definitions.writeKind(of: willSet)
    }
    if let kind = withMutationKinds[stack] { return kind }
    let kind = definitions.writeKind(of: willSet)
    if definitions.stacks[stack] != nil { withMutationKinds[stack] = kind }
    return kind
  }

  /// `  at File.swift:12 (function)`, or "" when the stack has no user frame.
  private func site(_ stack: UInt32, _ definitions: TraceDefinitions) -> String {
    if stack == 0 { return "" }
    if let text = sites[stack] { return text }
    let text = definitions.site(ofStack: stack).map { "  at \(SiteFormatting.describe($0))" } ?? ""
    if definitions.stacks[stack] != nil { sites[stack] = text }
    return text
  }

  func describe(_ fact: ReplayFact, _ definitions: TraceDefinitions) -> String? {
    func matches(time: UInt64, thread: UInt32, keys: [PropertyKey], labels: [UInt32]) -> Bool {
      if time < filter.from || time > filter.to { return false }
      if let wanted = filter.thread, wanted != thread { return false }
      if let wanted = filter.object, !keys.contains(where: { $0.object == wanted }) { return false }
      if let wanted = filter.property, !keys.contains(where: { propertyName($0.property, definitions) == wanted }) {
        return false
      }
      if let wanted = filter.scope, !labels.contains(where: { label($0, definitions) == wanted }) { return false }
      return true
    }
    func prefix(_ time: UInt64, _ thread: UInt32) -> String {
      Formatting.milliseconds(time).leftPadded(9) + "  " + "T\(thread)".padding(toLength: 6) + " "
    }
    switch fact {
    case .runEnded(let ended):
      let run = ended.run
      guard matches(time: run.time, thread: run.thread, keys: ended.reads, labels: [run.label]) else { return nil }
      let reads =
        ended.reads.isEmpty
        ? "read nothing" : "read " + ended.reads.map { object($0, definitions) }.joined(separator: ", ")
      return prefix(run.time, run.thread)
        + "run \(label(run.label, definitions)) (\(run.kind), #\(run.scope)) \(reads)"
        + (ended.redundant ? "  [redundant: nothing it read changed]" : "")
        + (ended.readRacing ? "  [raced a write on another thread: may have read the old value]" : "")
    case .write(let write):
      guard matches(time: write.time, thread: write.thread, keys: [write.key], labels: write.fired.map(\.label)) else {
        return nil
      }
      let outcome: String
      switch write.outcome {
      case .changed: outcome = "changed"
      case .unchanged: outcome = "UNCHANGED"
      // Through the setter the macro already skipped an equal Equatable value; through _modify, a write the
      // recorder did not compare (OBSTRACE_COMPARE) says so.
      case .unknown: outcome = write.throughModify ? "written (not compared)" : "written"
      }
      let fired =
        write.fired.isEmpty
        ? "invalidated nothing"
        : "invalidated "
          + write.fired.map {
            "\(label($0.label, definitions)) (#\($0.scope)\(write.predicted.contains($0.scope) ? ", predicted" : ""))"
          }
          .joined(separator: ", ")
      let kind = writeKind(write.writeKind, write.stack, definitions)
      let how = kind == .unknown ? "" : " by \(kind)"
      var line =
        prefix(write.time, write.thread) + "write \(object(write.key, definitions))\(how) \(outcome) → \(fired)"
      if write.outcome == .unchanged && !write.fired.isEmpty { line += "  [wasted]" }
      line += site(write.stack, definitions)
      return line
    case .read(let read):
      guard read.stale, matches(time: read.time, thread: read.thread, keys: [read.key], labels: []) else { return nil }
      var line =
        prefix(read.time, read.thread)
        + "STALE read \(object(read.key, definitions)) inside its own willSet: saw the old value"
      line += site(read.stack, definitions)
      return line
    case .fire(let fire):
      guard fire.cause == nil, matches(time: fire.time, thread: fire.thread, keys: [], labels: [fire.label]),
        filter.object == nil, filter.property == nil
      else { return nil }
      return prefix(fire.time, fire.thread)
        + "fired \(label(fire.label, definitions)) (#\(fire.scope)) with no write in progress (object freed?)"
    case .cancel(let cancel):
      guard cancel.reason != .fired,
        matches(time: cancel.time, thread: cancel.thread, keys: [], labels: [cancel.label]),
        filter.object == nil, filter.property == nil
      else { return nil }
      let reason =
        cancel.reason == .objectsFreed
        ? "every object it read was freed, nothing can fire it" : cancel.reason.description
      return prefix(cancel.time, cancel.thread)
        + "ended \(label(cancel.label, definitions)) (#\(cancel.scope)) without a fire: \(reason)"
    case .anomaly(let anomaly):
      guard matches(time: anomaly.time, thread: anomaly.thread, keys: anomaly.key.map { [$0] } ?? [], labels: []),
        filter.scope == nil
      else { return nil }
      return prefix(anomaly.time, anomaly.thread) + "INCONSISTENT: \(anomaly.kind.rawValue)"
        + (anomaly.scope != 0 ? " (#\(anomaly.scope))" : "")
        + (anomaly.key.map { " " + object($0, definitions) } ?? "")
    case .sequenceEnded(let ended):
      guard let ending = ended.ending,
        matches(time: ended.time, thread: ended.thread, keys: [], labels: [ended.label]),
        filter.object == nil, filter.property == nil
      else { return nil }
      return prefix(ended.time, ended.thread)
        + "sequence \(label(ended.label, definitions)) (iterator #\(ended.sequence)) ended: \(ending)"
    case .objectCreated, .objectFreed, .writeBegan, .runBegan:
      return nil
    }
  }
}

extension ReplayFact {
  /// Adds the thread this fact happened on and the objects it names.
  fileprivate func note(threads: inout Set<UInt32>, objects: inout Set<UInt32>) {
    switch self {
    case .objectCreated(let object), .objectFreed(let object):
      threads.insert(object.thread)
      objects.insert(object.object)
    case .read(let read):
      threads.insert(read.thread)
      objects.insert(read.key.object)
    case .writeBegan(let write):
      threads.insert(write.thread)
      objects.insert(write.key.object)
    case .write(let write):
      threads.insert(write.thread)
      objects.insert(write.key.object)
    case .runBegan(let run):
      threads.insert(run.thread)
    case .runEnded(let ended):
      threads.insert(ended.run.thread)
      for key in ended.reads { objects.insert(key.object) }
    case .fire(let fire):
      threads.insert(fire.thread)
      if let cause = fire.cause { objects.insert(cause.object) }
    case .cancel(let cancel):
      threads.insert(cancel.thread)
    case .sequenceEnded(let ended):
      threads.insert(ended.thread)
    case .anomaly(let anomaly):
      threads.insert(anomaly.thread)
      if let key = anomaly.key { objects.insert(key.object) }
    }
  }
}
