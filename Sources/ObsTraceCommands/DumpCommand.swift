import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace dump FILE`: every event, one line each, in file order, for debugging ObsTrace itself.
enum DumpCommand: TraceCommand {
  static let name = "dump"
  static let abstract = "Print every event, one line each (for debugging the tool)."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace dump <file> [--stacks]

    Columns: time since start (ms), thread, event, then its fields with names resolved. Events are in file
    order: each thread's in the order it recorded them, threads' chunks as the flusher wrote them.

    OPTIONS:
      --stacks     Print every frame of each event's call stack, not only its site.
      -h, --help   Show this help.

    EXAMPLE:
      obstrace dump run.trc | grep willSet

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(flags: ["--stacks": "stacks"], command: name).parse(arguments)
    let stacks = parsed.has("stacks")
    let path = try TraceInput.singlePath(parsed, command: name)
    try TraceInput.printLines(of: path, command: name, to: output) { reader, writer, names throws(CommandError) in
      print(reader, path: path, stacks: stacks, into: writer, names)
      let loss = TraceLoss(reader)
      if let summary = loss.summary {
        writer.append(contentsOf: "# " + summary)
        writer.endLine()
        writer.flush()
        output.writeError("obstrace dump: note: \(path) is \(loss.briefSummary) (said at the end of the dump)\n")
      }
    }
    return 0
  }

  private static func print(
    _ reader: TraceReader, path: String, stacks: Bool, into writer: LineWriter, _ names: ResolvedNames
  ) {
    func line(_ text: String) {
      writer.append(contentsOf: text)
      writer.endLine()
    }
    line(
      "# \(path): format \(reader.header.version), pid \(reader.header.processID), \(reader.header.executable)"
        + (reader.header.startedWhileRunning ? ", started while the program ran (Recorder.start)" : ""))
    let printer = DumpPrinter(names: names, writer: writer)
    // A stack's frame lines, by stack id, with the frames they were made from: a trace repeats a few stacks for
    // millions of events, and describing a frame is string work. Reused only while the stack's frames (its
    // addresses and their symbols) are what they were, so the lines are always those of the frames printed.
    var stackLines: [UInt32: (frames: [SymbolizedFrame], lines: [String])] = [:]
    reader.forEachChunk { chunk in
      line(
        "# chunk at byte \(chunk.offset): thread T\(chunk.thread) (tid \(chunk.osThreadID)), sequence \(chunk.sequence), "
          + "\(chunk.events.count) events, \(chunk.droppedSinceLastChunk) dropped\(chunk.threadEnded ? ", thread ended" : "")"
      )
      for event in chunk.events {
        printer.print(event)
        if stacks && event.stack != 0 {
          // In place: `reader.definitions` is a copy of the whole struct, and this is asked for every event.
          let frames = reader.withDefinitions { $0.frames(ofStack: event.stack) }
          if let kept = stackLines[event.stack], kept.frames == frames {
            for text in kept.lines { line(text) }
            continue
          }
          let lines = frames.map { frame in
            let name = frame.function.isEmpty ? "0x" + String(frame.address, radix: 16) : SiteFormatting.describe(frame)
            // A frame the trace's symbol table does not cover (no table, or code it could not map) has no module.
            let module = frame.module.isEmpty && frame.function.isEmpty ? "not symbolized" : frame.module
            return "              \(SiteFilter.isMachinery(frame) ? "  " : "▸ ")\(name)  [\(module)]"
          }
          for text in lines { line(text) }
          stackLines[event.stack] = (frames, lines)
        }
      }
    }
    let malformedFooter = reader.truncated ? reader.malformedFooter : nil
    printDamage(reader, line)
    if let first = reader.firstUnknownID {
      line(
        "# inconsistent: \(reader.unknownIDEvents) reference\(reader.unknownIDEvents == 1 ? "" : "s") to ids no "
          + "definition states (first: \(first)); kept under those ids")
    }
    if let first = reader.firstRedefinition {
      line(
        "# inconsistent: \(reader.redefinitions) definition\(reader.redefinitions == 1 ? "" : "s") gave an id already "
          + "defined another meaning (first: \(first)); an event above may name such an id by either meaning")
    }
    if reader.truncated, let holder = reader.recordingProcess {
      line("# truncated: no footer yet: still being recorded by process \(holder); read up to the last whole chunk so far")
    } else if let zeros = reader.zeroTail {
      // After a footer nothing is missing; the zeros are said all the same.
      line("# \(reader.truncated ? "truncated" : "complete") \(zeros)")
    } else if let cut = reader.cutAt {
      line("# truncated \(cut); read up to the last whole chunk")
    } else if let footer = malformedFooter {
      line("# " + TraceLoss.malformedFooterClause(footer))
    } else if reader.truncated {
      line("# truncated: no footer; read up to the last whole chunk")
    }
    if let extra = reader.afterFooter { line("# \(extra)") }
    if let footer = reader.footer {
      line("# footer: \(footer.recorded) recorded, \(footer.dropped) dropped, \(footer.chunks) chunks")
    }
  }

  /// A line for every damaged spot but the footer (said apart). The reader keeps only the first ones (memory bounded
  /// whatever the file holds: a file of a million spots kept ≈ 450 bytes each); past them, the file is read again
  /// for them, up to as many as this reading counted (a trace still being written may have more by now).
  private static func printDamage(_ reader: TraceReader, _ line: @escaping (String) -> Void) {
    let damage = reader.damage
    guard damage.more > 0 else {
      for spot in damage.listed { line("# damage \(spot)") }
      return
    }
    var left = damage.chunks
    do {
      try reader.forEachDamage { spot in
        guard left > 0, !spot.isFooter else { return }
        left -= 1
        line("# damage \(spot)")
      }
    } catch {
      line("# damage: \(left) more damaged spots not listed (reading the file again: \(error.description))")
    }
  }
}

/// Prints `dump` lines into a `LineWriter`, resolving each name once: an object's `Type#serial`, a property's name,
/// a label, a type, a stack's site and how a write was made are worked out the first time a line needs them, kept
/// as bytes and copied into later lines (a trace repeats a few of them millions of times). A name is only kept once
/// the trace has defined its id, so it never freezes as unknown; the reader's definitions are looked at only for
/// what is not kept yet.
final class DumpPrinter {
  private let writer: LineWriter
  private let names: ResolvedNames
  /// By stack: the line's ending (` at File.swift:12 (function)` or ` stack #n`).
  @exclusivity(unchecked) private var sites = DenseTable<NameSpan>()

  init(names: ResolvedNames, writer: LineWriter) {
    self.names = names
    self.writer = writer
  }

  private func appendObject(_ serial: UInt32) { names.appendObject(serial, to: writer) }
  private func appendProperty(_ id: UInt32) { names.appendProperty(id, to: writer) }
  private func appendLabel(_ id: UInt32) { names.appendLabel(id, to: writer) }
  private func appendTypeName(_ id: UInt32) { names.appendType(id, to: writer) }

  private func appendSite(_ stack: UInt32) {
    if let span = sites[stack] { return writer.append(span, in: names.arena) }
    names.appendName(stack, cachedIn: &sites, defined: { $0.stacks[stack] != nil }, to: writer) {
      $0.site(ofStack: stack).map { " at \(SiteFormatting.describe($0))" } ?? " stack #\(stack)"
    }
  }

  private func writeKind(_ event: TraceEvent) -> WriteKind { names.writeKind(flags: event.flags, stack: event.stack) }

  /// Prints the event's line.
  func print(_ event: TraceEvent) {
    writer.appendMilliseconds(event.time, width: 10)
    writer.append("  T")
    writer.appendDecimal(event.thread)
    writer.append("  ")
    names.appendDescription(of: event.kind, to: writer)
    switch event.kind {
    case .access, .willSet, .didSet:
      writer.append(" ")
      appendObject(event.object)
      writer.append(" ")
      appendProperty(event.key)
      if event.scope != 0 {
        writer.append(" in scope #")
        writer.appendDecimal(event.scope)
      }
      if event.kind == .access && event.flags & EventFlags.staleRead != 0 { writer.append(" STALE") }
      if event.kind == .willSet, case let kind = writeKind(event), kind != .unknown {
        writer.append(" (")
        names.appendDescription(of: kind, to: writer)
        writer.append(")")
      }
      if event.kind == .didSet && event.flags & EventFlags.unchanged != 0 { writer.append(" unchanged") }
      if event.kind == .didSet && event.flags & EventFlags.changed != 0 { writer.append(" changed") }
      if event.kind == .didSet && event.flags & EventFlags.modify != 0
        && event.flags & (EventFlags.unchanged | EventFlags.changed) == 0
      {
        writer.append(" not compared")
        let reason = UncomparedReason(flags: event.flags)
        if reason != .notRecorded { writer.append(contentsOf: " (\(reason.name))") }
      }
    case .objectCreated, .objectFreed:
      writer.append(" ")
      appendObject(event.object)
    case .objectBound:
      writer.append(" registrar #")
      writer.appendDecimal(event.object)
      writer.append(" is a level of ")
      appendObject(event.aux)
    case .scopeBegin:
      writer.append(" #")
      writer.appendDecimal(event.scope)
      writer.append(" ")
      writer.append(contentsOf: ScopeKind(rawValue: event.flags)?.description ?? "?")
      writer.append(" \"")
      appendLabel(event.key)
      writer.append("\"")
      if event.aux != 0 {
        writer.append(" inside #")
        writer.appendDecimal(event.aux)
      }
    case .scopeEnd, .trackingInstalled:
      writer.append(" #")
      writer.appendDecimal(event.scope)
    case .trackingCancelled:
      writer.append(" #")
      writer.appendDecimal(event.scope)
      if event.flags & EventFlags.cancelledByFire != 0 { writer.append(" (fired)") }
    case .observationsRun:
      writer.append(" #")
      writer.appendDecimal(event.scope)
      writer.append(" of sequence #")
      writer.appendDecimal(event.key)
      writer.append(" on ")
      if event.aux == 0 { writer.append("no actor") } else { appendTypeName(event.aux) }
    case .observationsEnd:
      writer.append(" sequence #")
      writer.appendDecimal(event.key)
      writer.append(" ")
      writer.append(contentsOf: SequenceEnding(rawValue: event.flags)?.description ?? "?")
      writer.append(" after #")
      writer.appendDecimal(event.scope)
    case .trackingFired:
      writer.append(" #")
      writer.appendDecimal(event.scope)
      if event.object != 0 {
        writer.append(" by ")
        appendObject(event.object)
        writer.append(" ")
        appendProperty(event.key)
      } else {
        writer.append(" (no write in progress)")
      }
    }
    if event.depth != 0 {
      writer.append(" depth=")
      writer.appendDecimal(UInt64(event.depth))
    }
    if event.stack != 0 { appendSite(event.stack) }
    writer.endLine()
  }
}

extension String {
  func leftPadded(_ width: Int) -> String {
    count >= width ? self : String(repeating: " ", count: width - count) + self
  }
}

extension TraceInput {
  static func open(_ path: String, command: String) throws(CommandError) -> TraceReader {
    do {
      return try TraceReader(path: path)
    } catch {
      throw CommandError("obstrace \(command): \(error.description)")
    }
  }

  /// The frame of the commands that print a line per event (`dump`, `timeline`): opens `path`, lets `body` print
  /// into a line writer on `output` with the trace's names resolved once, and sends what is left at the end. When
  /// `body` throws, nothing it wrote is sent, unless it passed the writer's 256 KiB piece (so an error found before
  /// the first piece is the command's only output).
  static func printLines(
    of path: String, command: String, to output: CommandOutput,
    _ body: (TraceReader, LineWriter, ResolvedNames) throws(CommandError) -> Void
  ) throws(CommandError) {
    let reader = try open(path, command: command)
    let writer = LineWriter(output: output)
    try body(reader, writer, ResolvedNames(reader: reader))
    writer.flush()
  }
}
