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
    The number of a run (#3) is its serial in the whole trace, not its rank: one count numbers every scope run,
    tracking instance and Observations iterator, so one scope's runs skip numbers (#1, #5, #6). With --object, the object's
    creation and free are lines too.

    OPTIONS:
    \(TimelineFilter.help)
      -h, --help            Show this help.

    EXAMPLE:
      obstrace timeline run.trc --scope FirstView.body

    """

  typealias Filter = TimelineFilter

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(options: TimelineFilter.options, command: name).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let filter = try TimelineFilter(parsed, command: name)
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
      try consumer.evidence.check(reader, path: path, command: name)
      writer.append(
        filter.isEmpty ? "(nothing to show: the trace has no scope run, write or fire)" : "(nothing matches)")
      writer.endLine()
    }
    if reader.header.startedWhileRunning {
      writer.append(
        contentsOf: "! the recording started while the program ran (Recorder.start): tracking begun before it is "
          + "not seen; a write of an object made before the start that \"invalidated nothing\" may have invalidated "
          + "such tracking")
      if machine.writesBegunBeforeStart > 0 {
        let count = machine.writesBegunBeforeStart
        let threads = machine.threadsWritingAtStart.sorted().map { "T\($0)" }.joined(separator: ", ")
        writer.append(
          contentsOf: "; \(count) write\(count == 1 ? " was" : "s were") in progress at the start (\(threads)): "
            + "\(count == 1 ? "its willSet came" : "their willSets came") before it, and no line shows "
            + (count == 1 ? "it" : "them"))
      }
      writer.endLine()
    }
    // A damaged or forged file's ids: said where the lines that name them are read (the report says them as
    // inconsistent-trace).
    if let first = reader.firstUnknownID {
      writer.append(
        contentsOf: "! the trace is inconsistent: \(reader.unknownIDEvents) reference\(reader.unknownIDEvents == 1 ? "" : "s") "
          + "to ids no definition states (first: \(first)): lines name them by their ids")
      writer.endLine()
    }
    if let first = reader.firstRedefinition {
      writer.append(
        contentsOf: "! the trace is inconsistent: \(reader.redefinitions) definition\(reader.redefinitions == 1 ? "" : "s") "
          + "gave an id already defined another meaning (first: \(first)): a line may name such an id by either "
          + "meaning")
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
/// each that has a line. It also notes what a filter that matched nothing is checked against (`TimelineFilter.Evidence`).
struct TimelineConsumer: ReplayConsumer {
  let printer: TimelinePrinter
  private var ordered: TimeOrderedFacts
  private(set) var evidence: TimelineFilter.Evidence
  private let notesEvidence: Bool

  init(printer: TimelinePrinter) {
    self.printer = printer
    ordered = TimeOrderedFacts(passesObjects: printer.filter.object != nil)
    evidence = TimelineFilter.Evidence(filter: printer.filter)
    notesEvidence = !printer.filter.isEmpty
  }

  mutating func consume(_ fact: ReplayFact) {
    if notesEvidence { evidence.note(fact) }
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
  /// What the filter lets through (its tables of names resolved once).
  @exclusivity(unchecked) private var matcher: TimelineFilter.Matcher

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
    matcher = TimelineFilter.Matcher(filter: filter, reader: names.reader)
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

  /// What a fire again of a one-shot tracking was (`RepeatedFire`): Observation still held the tracking.
  private func appendAgain(_ how: RepeatedFire) {
    switch how {
    case .nested: writer.append("again, nested: Observation cancels it only after its onChange returns")
    case .concurrent: writer.append("again, concurrent: this write began before Observation cancelled it")
    }
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
    matcher.matches(time: time, thread: thread, keys: keys, label: label, scope: scope, labels: labels)
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
      if ended.possiblyRedundant {
        writer.append("  [redundant if the writes not compared since its previous run changed nothing]")
      }
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
          if !write.firedAgain.isEmpty, let again = write.firedAgain.first(where: { $0.scope == fired.scope }) {
            writer.append(", ")
            appendAgain(again.how)
          }
          writer.append(")")
        }
      }
      if write.outcome == .unchanged && !write.fired.isEmpty { writer.append("  [wasted]") }
      appendSite(write.stack)
      // A didSet the trace lost leaves a write that looks unfinished.
      if write.unfinished { markIfLost() }
    case .read(let read) where read.atEnd:
      guard matches(time: read.time, thread: read.thread, keys: CollectionOfOne(read.key), label: nil) else { return }
      appendPrefix(read.time, read.thread)
      writer.append("access of ")
      appendObject(read.key)
      writer.append(" outside any scope, its thread's last event at the end of the recording: a read, or the start")
      writer.append(" of a write through _modify that the recording did not reach")
      appendSite(read.stack)
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
      if let again = fire.again {
        writer.append(" (")
        appendAgain(again)
        writer.append(")")
      }
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
    // An object's creation and free, when --object names it: what became of it.
    case .objectCreated(let object), .objectFreed(let object):
      guard filter.object != nil, matcher.matchesObject(object.object, time: object.time, thread: object.thread)
      else { return }
      appendPrefix(object.time, object.thread)
      if case .objectCreated = fact { writer.append("created ") } else { writer.append("freed ") }
      names.appendObject(object.object, to: writer)
    case .writeBegan, .runBegan:
      return
    }
    writer.endLine()
  }
}
