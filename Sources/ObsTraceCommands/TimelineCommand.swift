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
    (whether it changed the value, and the scope runs it invalidated). Objects are named Type#serial. Names are
    taken back as the lines print them: 'FirstView.body (#3)' is that run (its line, the writes that invalidated
    it, its fire or end), 'Model#1.items' the property of that object, 'Model#1' the object, 'T2' the thread.

    OPTIONS:
      --scope <label>       Only runs of this scope, and writes that invalidated it (or one run: Label (#3)).
      --property <name>     Only lines that involve this property (Type.name), or this object's (Type#n.name).
      --object <n>          Only lines that involve object #n (also Type#n).
      --thread <n>          Only thread Tn.
      --from <ms>, --to <ms>  Only this time window.
      -h, --help            Show this help.

    EXAMPLE:
      obstrace timeline run.trc --scope FirstView.body

    """

  struct Filter {
    var scope: String?
    /// A run named as the timeline prints it (`FirstView.body (#3)`): its label and its number. A label named `scope`
    /// matches whole; one named `scopeOfRun`, in that run only.
    var scopeOfRun: String?
    var scopeRun: UInt32?
    var property: String?
    /// With `property` given as one object's (`Model#1.items`): that object, and the text given.
    var propertyObject: UInt32?
    /// With `propertyObject`: the type written before its `#`.
    var propertyObjectType: String?
    var givenProperty: String?
    var object: UInt32?
    /// With `object` given as `Type#n`: the type object n must have (serials are counted across types).
    var objectType: String?
    var givenObject: String?
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
    if let scope = filter.scope, let run = PrintedNames.run(scope) {
      filter.scopeOfRun = run.label
      filter.scopeRun = run.run
    }
    filter.givenProperty = filter.property
    if let property = filter.property, let named = PrintedNames.objectProperty(property) {
      filter.property = named.property
      filter.propertyObject = named.object
      filter.propertyObjectType = named.type
    }
    if let text = parsed.value("object") {
      guard let object = PrintedNames.object(text) else {
        throw CommandError("obstrace timeline: --object must be a number or Type#n, not '\(text)'")
      }
      filter.object = object.object
      filter.objectType = object.type
      filter.givenObject = text
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
    try TraceInput.printLines(of: path, command: name, to: output) { reader, writer, names throws(CommandError) in
      try print(reader, path: path, filter: filter, into: writer, names, output: output)
    }
    return 0
  }

  private static func print(
    _ reader: TraceReader, path: String, filter: Filter, into writer: LineWriter, _ names: ResolvedNames,
    output: CommandOutput
  ) throws(CommandError) {
    writer.append("time (ms)  thread  what")
    writer.endLine()
    var consumer = TimelineConsumer(printer: TimelinePrinter(filter: filter, names: names, writer: writer))
    // A write's beginning is never a line: the instances it is coalesced into are not worked out; nor are the
    // accounts of objects, which no line shows.
    let machine = TraceAnalysis.replay(reader, into: &consumer, listsCoalescedWrites: false, accountsObjects: false)
    // Its state (per object and per scope: many small allocations) is not freed one allocation at a time just
    // before the process exits.
    KeptUntilExit.keep(machine)
    consumer.finish()
    let loss = TraceLoss(reader)
    if writer.lines == 1 {
      // A name or number the trace does not have is a mistake (a typo shows nothing, which reads as "nothing
      // happened"), not an empty answer. Nothing was written yet: the error is the only output.
      let definitions = reader.definitions
      if let scope = filter.scope {
        let known = Set(consumer.seenLabels.map { definitions.labelName($0) }).union(
          definitions.labels.keys.map { definitions.labelName($0) })
        if !known.contains(scope), !known.contains(filter.scopeOfRun ?? scope) {
          throw CommandError(
            "obstrace timeline: --scope '\(scope)' names no scope of \(path); "
              + NameSuggestions.describe(scope, in: known.sorted()))
        }
        if !known.contains(scope), let label = filter.scopeOfRun, let run = filter.scopeRun,
          !consumer.seenRuns.contains(run)
        {
          throw CommandError("obstrace timeline: --scope '\(scope)': \(label) has no run #\(run) in \(path)")
        }
      }
      if let property = filter.property {
        let known = Set(consumer.seenProperties.map { definitions.propertyName($0) }).union(
          definitions.properties.keys.map { definitions.propertyName($0) })
        if !known.contains(property) {
          throw CommandError(
            "obstrace timeline: --property '\(filter.givenProperty ?? property)' names no property of \(path); "
              + NameSuggestions.describe(property, in: known.sorted()))
        }
        if let object = filter.propertyObject, !consumer.seenObjects.contains(object) {
          throw CommandError(
            "obstrace timeline: --property '\(filter.givenProperty ?? property)' names object #\(object), "
              + "which is not an object of \(path)")
        }
        if let object = filter.propertyObject, let type = filter.propertyObjectType,
          let why = PrintedNames.wrongType(type, object: object, in: definitions)
        {
          throw CommandError(
            "obstrace timeline: --property '\(filter.givenProperty ?? property)' names \(type)#\(object), "
              + "which is not an object of \(path) \(why)")
        }
      }
      if let thread = filter.thread, !consumer.seenThreads.contains(thread) {
        throw CommandError(
          "obstrace timeline: --thread \(thread) is not a thread of \(path) (its threads: "
            + consumer.seenThreads.sorted().map { "T\($0)" }.joined(separator: ", ") + ")")
      }
      if let object = filter.object, let type = filter.objectType,
        let why = PrintedNames.wrongType(type, object: object, in: definitions)
      {
        throw CommandError("obstrace timeline: --object \(filter.givenObject ?? "") is not an object of \(path) \(why)")
      }
      if let object = filter.object, !consumer.seenObjects.contains(object) {
        throw CommandError("obstrace timeline: --object \(object) is not an object of \(path)")
      }
      writer.append("(nothing matches)")
      writer.endLine()
    }
    if reader.header.startedWhileRunning {
      writer.append(
        contentsOf: "! the recording started while the program ran (Recorder.start): tracking begun before it is "
          + "not seen; a write of an object made before the start that \"invalidated nothing\" may have invalidated "
          + "such tracking")
      writer.endLine()
    }
    if let note = loss.afterFooterNote(path, command: name) { output.writeError(note) }
    guard let verdict = loss.verdict else { return }
    // Said where the user reads, after the lines (damage is found while reading), and once on standard error.
    writer.append(
      contentsOf: "! \(verdict): this trace lost events (below); lines that rest on them may be wrong or missing: "
        + "a run \"ended … without a fire\", a fire \"with no write in progress\", INCONSISTENT lines"
        + (consumer.printer.markedLines > 0 ? " (\(consumer.printer.markedLines) marked above)" : ""))
    writer.endLine()
    for clause in loss.clauses {
      writer.append(contentsOf: "!   " + clause)
      writer.endLine()
    }
    writer.flush()
    output.writeError("obstrace timeline: note: \(path) is \(loss.briefSummary) (said at the end of the timeline)\n")
  }
}

/// The timeline's consumer of the replay's facts: puts them in order of beginning (`TimeOrderedFacts`) and prints
/// each that has a line. It also notes what a filter that matched nothing is checked against (only what is
/// asked: the threads and objects seen for --thread and --object, the labels and properties for --scope and
/// --property, as the report would list them).
struct TimelineConsumer: ReplayConsumer {
  let printer: TimelinePrinter
  private var ordered = TimeOrderedFacts()
  private let noteThreadsAndObjects: Bool
  private let noteLabels: Bool
  private let noteProperties: Bool
  private(set) var seenThreads = Set<UInt32>()
  private(set) var seenObjects = Set<UInt32>()
  private(set) var seenLabels = Set<UInt32>()
  /// With --scope naming a run: the runs that began.
  private(set) var seenRuns = Set<UInt32>()
  private(set) var seenProperties = Set<UInt32>()

  init(printer: TimelinePrinter) {
    self.printer = printer
    noteThreadsAndObjects =
      printer.filter.thread != nil || printer.filter.object != nil || printer.filter.propertyObject != nil
    noteLabels = printer.filter.scope != nil
    noteProperties = printer.filter.property != nil
  }

  mutating func consume(_ fact: ReplayFact) {
    if noteThreadsAndObjects { fact.note(threads: &seenThreads, objects: &seenObjects) }
    if noteLabels, case .runBegan(let run) = fact {
      seenLabels.insert(run.label)
      if printer.filter.scopeRun != nil { seenRuns.insert(run.scope) }
    }
    if noteProperties {
      switch fact {
      case .read(let read): seenProperties.insert(read.key.property)
      case .writeBegan(let write): seenProperties.insert(write.key.property)
      case .write(let write): seenProperties.insert(write.key.property)
      case .fire(let fire): if let cause = fire.cause { seenProperties.insert(cause.property) }
      default: break
      }
    }
    let printer = self.printer
    ordered.consume(fact) { printer.print($0) }
  }

  /// Prints what is still held, at the end of the trace.
  mutating func finish() {
    let printer = self.printer
    ordered.finish { printer.print($0) }
  }
}

/// Prints timeline lines into a `LineWriter`, resolving each name once: an object's `Type#serial`, a property's
/// short name, a label's text, a stack's site and how a write was made are formatted the first time a line needs
/// them, kept as bytes, and copied into later lines (a trace repeats a few of them millions of times). An id is only
/// kept once the trace has defined it, so a name never freezes as unknown. The reader's definitions are looked at
/// only for what is not kept yet.
final class TimelinePrinter {
  typealias Filter = TimelineCommand.Filter
  let filter: Filter
  private let writer: LineWriter
  private let names: ResolvedNames
  /// By stack: `  at File.swift:12 (function)`, or nothing when the stack has no user frame.
  @exclusivity(unchecked) private var sites = DenseTable<NameSpan>()
  /// With --scope and --property: whether a label or property id has the name asked for.
  @exclusivity(unchecked) private var labelMatches = DenseTable<LabelMatch>()
  @exclusivity(unchecked) private var propertyMatches = DenseTable<Bool>()
  /// With --object Type#n: by type id, whether the type's name is the one asked for.
  @exclusivity(unchecked) private var objectTypeMatches = DenseTable<Bool>()

  /// The last prefix printed (time and thread), reused while the next line's time is in the same millisecond on
  /// the same thread: its three digits of microseconds are rewritten in place (and not even that within the same
  /// microsecond: writes come several to one). Formatting the time was most of a short line's work.
  @exclusivity(unchecked) private var prefixBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: prefixCapacity)
  @exclusivity(unchecked) private var prefixCount = 0
  @exclusivity(unchecked) private var prefixMicroseconds = UInt64.max
  @exclusivity(unchecked) private var prefixThread: UInt32 = 0
  /// Where the three digits of microseconds are in `prefixBytes`.
  @exclusivity(unchecked) private var prefixFractionAt = 0
  private static let prefixCapacity = 64

  /// Lines that may come from events the trace lost, marked as such (`markIfLost`).
  @exclusivity(unchecked) private(set) var markedLines = 0
  /// Whether the trace is known to have lost events before its chunks are read (no footer, or a footer that counts
  /// a loss); damage is learnt while reading.
  private let lostAtOpen: Bool

  init(filter: Filter, names: ResolvedNames, writer: LineWriter) {
    self.filter = filter
    self.names = names
    self.writer = writer
    lostAtOpen = TraceLoss.knownAtOpen(names.reader)
  }

  /// Marks a line that a loss can produce (a run ended because its objects were freed, a fire with no write in
  /// progress, an event the replay could not place: a lost fire, write or begin leaves these) when the trace is known
  /// by now to have lost events. A loss found later is said at the end of the timeline.
  private func markIfLost() {
    guard lostAtOpen || !reader.damage.isEmpty || reader.droppedEvents > 0 else { return }
    writer.append("  [the trace lost events: this may come from the loss]")
    markedLines += 1
  }

  deinit { prefixBytes.deallocate() }

  private var reader: TraceReader { names.reader }

  // MARK: Names, resolved once

  /// `Type#serial.property`.
  private func appendObject(_ key: PropertyKey) {
    names.appendObject(key.object, to: writer)
    writer.append(UInt8(ascii: "."))
    names.appendShortProperty(key.property, to: writer)
  }

  private func appendLabel(_ id: UInt32) {
    names.appendLabel(id, to: writer)
  }

  /// A line's start that names a run: its time and thread, `verb`, and `Label (#scope)`.
  private func appendRunLine(_ verb: StaticString, _ label: UInt32, _ scope: UInt32, _ time: UInt64, _ thread: UInt32) {
    appendPrefix(time, thread)
    writer.append(verb)
    appendLabel(label)
    writer.append(" (#")
    writer.appendDecimal(scope)
    writer.append(")")
  }

  /// How label `id` is the one asked for: by its name, or as the label of the run asked for (`Label (#3)`).
  enum LabelMatch {
    case none, name, labelOfRun
  }

  private func labelMatch(_ id: UInt32, _ wanted: String) -> LabelMatch {
    labelMatches.value(id) {
      let definitions = reader.definitions
      let name = definitions.labelName(id)
      let match: LabelMatch = name == wanted ? .name : name == filter.scopeOfRun ? .labelOfRun : .none
      return (match, definitions.labels[id] != nil)
    }
  }

  /// Whether run `scope` of label `label` is asked for (`scope` nil: a line about the label, not about a run).
  private func scopeMatches(_ label: UInt32, _ scope: UInt32?, _ wanted: String) -> Bool {
    switch labelMatch(label, wanted) {
    case .name: true
    case .labelOfRun: scope != nil && scope == filter.scopeRun
    case .none: false
    }
  }

  private func propertyMatches(_ id: UInt32, _ wanted: String) -> Bool {
    propertyMatches.value(id) {
      let definitions = reader.definitions
      return (definitions.propertyName(id) == wanted, definitions.properties[id] != nil)
    }
  }

  private func writeKind(_ flags: UInt8, _ stack: UInt32) -> WriteKind { names.writeKind(flags: flags, stack: stack) }

  /// `  at File.swift:12 (function)`; `  (no site: …)` when the stack's frames are named and none is the user's
  /// code (the site could not be placed); nothing when the event has no stack or its frames are not named.
  private func appendSite(_ stack: UInt32) {
    if stack == 0 { return }
    if let span = sites[stack] { return writer.append(span, in: names.arena) }
    names.appendName(stack, cachedIn: &sites, defined: { $0.stacks[stack] != nil }, to: writer) {
      if let site = $0.site(ofStack: stack) { return "  at \(SiteFormatting.describe(site))" }
      return $0.frames(ofStack: stack).contains { !$0.function.isEmpty } ? "  (\(SiteFormatting.notPlaced))" : ""
    }
  }

  /// `time(ms)  Tn     `: the time right-aligned in 9 columns, then the thread left-aligned in 6 and a space.
  private func appendPrefix(_ time: UInt64, _ thread: UInt32) {
    let microseconds = LineWriter.shownMicroseconds(time)
    if let microseconds, microseconds / 1000 == prefixMicroseconds / 1000, thread == prefixThread {
      if microseconds != prefixMicroseconds {
        LineWriter.writeDecimal(microseconds % 1000, digits: 3, endingAt: prefixBytes + prefixFractionAt + 3)
        prefixMicroseconds = microseconds
      }
      return writer.append(UnsafeBufferPointer(start: prefixBytes, count: prefixCount))
    }
    let start = writer.position
    defer {
      // Kept only when the time took the integer path (a time near a half microsecond is formatted apart): then
      // the time is right-aligned in 9 columns and ends with its three digits of microseconds.
      if let microseconds,
        let count = writer.copyBytes(from: start, into: prefixBytes, capacity: Self.prefixCapacity)
      {
        (prefixMicroseconds, prefixThread, prefixCount) = (microseconds, thread, count)
        prefixFractionAt = max(9, LineWriter.digitCount(microseconds / 1000) + 4) - 3
      } else {
        prefixMicroseconds = .max
      }
    }
    writer.appendMilliseconds(time, width: 9)
    writer.append("  T")
    writer.appendDecimal(thread)
    let width = 1 + LineWriter.digitCount(UInt64(thread))
    writer.appendSpaces(width >= 6 ? 2 : 7 - width)
  }

  // MARK: Lines

  private func matches<Keys: Collection<PropertyKey>>(
    time: UInt64, thread: UInt32, keys: Keys, label: UInt32?, scope: UInt32? = nil,
    labels: [(scope: UInt32, label: UInt32)] = []
  ) -> Bool {
    if time < filter.from || time > filter.to { return false }
    if let wanted = filter.thread, wanted != thread { return false }
    if let wanted = filter.object, !keys.contains(where: { $0.object == wanted }) || !objectHasWantedType(wanted) {
      return false
    }
    if let wanted = filter.property,
      !keys.contains(where: {
        propertyMatches($0.property, wanted) && (filter.propertyObject == nil || filter.propertyObject == $0.object)
      })
    {
      return false
    }
    if let wanted = filter.scope {
      if let label { return scopeMatches(label, scope, wanted) }
      return labels.contains { scopeMatches($0.label, $0.scope, wanted) }
    }
    return true
  }

  /// Whether an object has the type --object named it with (`Holder#3`), or --object gave a bare number. An object
  /// of another type with that serial matches nothing: serials are counted across types.
  private func objectHasWantedType(_ serial: UInt32) -> Bool {
    guard let wanted = filter.objectType else { return true }
    let definitions = names.reader.definitions
    guard let type = definitions.objects[serial] else { return false }
    if let known = objectTypeMatches[type] { return known }
    let matches = PrintedNames.isType(type, named: wanted, in: definitions)
    // A match is kept; a mismatch is not (a property defined later may qualify the type's name: isType).
    if matches { objectTypeMatches[type] = true }
    return matches
  }

  /// Prints the line of a fact, if it has one and the filter lets it through.
  func print(_ fact: ReplayFact) {
    switch fact {
    case .runEnded(let ended):
      let run = ended.run
      guard matches(time: run.time, thread: run.thread, keys: ended.reads, label: run.label, scope: run.scope) else {
        return
      }
      appendPrefix(run.time, run.thread)
      writer.append("run ")
      appendLabel(run.label)
      writer.append(" (")
      names.appendDescription(of: run.kind, to: writer)
      writer.append(", #")
      writer.appendDecimal(run.scope)
      writer.append(")")
      if ended.reads.isEmpty {
        writer.append(" read nothing ObsTrace records")
      } else {
        writer.append(" read ")
        for (index, key) in ended.reads.enumerated() {
          if index > 0 { writer.append(", ") }
          appendObject(key)
        }
      }
      if ended.redundant { writer.append("  [redundant: nothing it read changed]") }
      if ended.readRacing { writer.append("  [raced a write on another thread: may have read the old value]") }
      if ended.endedAtTraceEnd {
        writer.append(
          run.kind == .untraced
            ? "  [its end is not in the trace: its thread recorded nothing after it; counted as a run]"
            : "  [its end is not in the trace: its closure had not returned when the trace ended; counted as a run]")
      }
    case .write(let write):
      guard
        matches(
          time: write.time, thread: write.thread, keys: CollectionOfOne(write.key), label: nil, labels: write.fired)
      else { return }
      appendPrefix(write.time, write.thread)
      writer.append("write ")
      appendObject(write.key)
      let kind = writeKind(write.writeKind, write.stack)
      if kind != .unknown {
        writer.append(" by ")
        names.appendDescription(of: kind, to: writer)
      }
      switch write.outcome {
      case _ where write.unfinished:
        writer.append(" UNFINISHED (the recording stopped inside it: its didSet is not in the trace)")
      case .changed: writer.append(" changed")
      case .unchanged: writer.append(" UNCHANGED")
      // Through the setter the macro already skipped an equal Equatable value; through _modify, a write the
      // recorder did not compare (OBSTRACE_COMPARE) says so.
      case .unknown:
        if !write.throughModify {
          writer.append(" written")
        } else if write.uncompared == .notRecorded {
          writer.append(" written (not compared)")
        } else {
          writer.append(contentsOf: " written (not compared: \(write.uncompared.name))")
        }
      }
      if write.fired.isEmpty {
        writer.append(" → invalidated nothing")
      } else {
        writer.append(" → invalidated ")
        for (index, fired) in write.fired.enumerated() {
          if index > 0 { writer.append(", ") }
          appendLabel(fired.label)
          writer.append(" (#")
          writer.appendDecimal(fired.scope)
          if write.predicted.contains(fired.scope) { writer.append(", predicted") }
          writer.append(")")
        }
      }
      if write.outcome == .unchanged && !write.fired.isEmpty { writer.append("  [wasted]") }
      appendSite(write.stack)
      // A didSet the trace lost leaves a write that looks unfinished.
      if write.unfinished { markIfLost() }
    case .read(let read):
      guard read.stale, matches(time: read.time, thread: read.thread, keys: CollectionOfOne(read.key), label: nil)
      else { return }
      appendPrefix(read.time, read.thread)
      writer.append("STALE read ")
      appendObject(read.key)
      writer.append(" inside its own willSet: saw the old value")
      appendSite(read.stack)
    case .fire(let fire) where fire.afterSequenceEnded:
      guard
        matches(
          time: fire.time, thread: fire.thread, keys: fire.cause.map { [$0] } ?? [], label: fire.label,
          scope: fire.scope)
      else { return }
      appendRunLine("fired ", fire.label, fire.scope, fire.time, fire.thread)
      writer.append(" after its sequence ended: its tracking outlives the iterator")
      if let cause = fire.cause {
        writer.append(" (by ")
        appendObject(cause)
        writer.append(")")
      }
      writer.append("; no value follows")
    case .fire(let fire):
      guard fire.cause == nil, filter.object == nil, filter.property == nil,
        matches(time: fire.time, thread: fire.thread, keys: EmptyCollection(), label: fire.label, scope: fire.scope)
      else { return }
      appendRunLine("fired ", fire.label, fire.scope, fire.time, fire.thread)
      writer.append(
        " with no write in progress: by a write ObsTrace did not record (an @Observable without `import ObsTrace`?)")
      markIfLost()
    case .cancel(let cancel):
      guard cancel.reason != .fired, filter.object == nil, filter.property == nil,
        matches(
          time: cancel.time, thread: cancel.thread, keys: EmptyCollection(), label: cancel.label, scope: cancel.scope)
      else { return }
      appendRunLine("ended ", cancel.label, cancel.scope, cancel.time, cancel.thread)
      switch cancel.reason {
      case .sequenceEnded:
        // Not "without a fire": Observation keeps the tracking, and a later change may still fire it.
        writer.append(" with its sequence, unfired: Observation keeps its tracking until a change fires it,")
        writer.append(" into nothing")
      case .objectsFreed:
        writer.append(" without a fire: every object it read was freed, nothing can fire it")
      default:
        writer.append(" without a fire: ")
        writer.append(contentsOf: cancel.reason.description)
      }
      markIfLost()
    case .anomaly(let anomaly):
      guard filter.scope == nil,
        matches(
          time: anomaly.time, thread: anomaly.thread, keys: anomaly.key.map { [$0] } ?? [], label: nil)
      else { return }
      appendPrefix(anomaly.time, anomaly.thread)
      writer.append("INCONSISTENT: ")
      writer.append(contentsOf: anomaly.kind.rawValue)
      if anomaly.scope != 0 {
        writer.append(" (#")
        writer.appendDecimal(anomaly.scope)
        writer.append(")")
      }
      if let key = anomaly.key {
        writer.append(" ")
        appendObject(key)
      }
      markIfLost()
    case .sequenceEnded(let ended):
      guard let ending = ended.ending, filter.object == nil, filter.property == nil,
        matches(time: ended.time, thread: ended.thread, keys: EmptyCollection(), label: ended.label)
      else { return }
      appendPrefix(ended.time, ended.thread)
      writer.append("sequence ")
      appendLabel(ended.label)
      writer.append(" (iterator #")
      writer.appendDecimal(ended.sequence)
      writer.append(") ended: ")
      writer.append(contentsOf: ending.description)
    case .objectCreated, .objectFreed, .writeBegan, .runBegan:
      return
    }
    writer.endLine()
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
