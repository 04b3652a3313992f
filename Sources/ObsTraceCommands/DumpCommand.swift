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
    let reader = try TraceInput.open(path, command: name)
    var buffer = TextBuffer()
    buffer.line(
      "# \(path): format \(reader.header.version), pid \(reader.header.processID), \(reader.header.executable)")
    let printer = DumpPrinter()
    reader.forEachChunk { chunk in
      buffer.line(
        "# chunk at byte \(chunk.offset): thread T\(chunk.thread) (tid \(chunk.osThreadID)), sequence \(chunk.sequence), "
          + "\(chunk.events.count) events, \(chunk.droppedSinceLastChunk) dropped\(chunk.threadEnded ? ", thread ended" : "")"
      )
      for event in chunk.events {
        buffer.line(printer.describe(event, reader))
        if stacks && event.stack != 0 {
          for frame in reader.definitions.frames(ofStack: event.stack) {
            let name = frame.function.isEmpty ? "0x" + String(frame.address, radix: 16) : SiteFormatting.describe(frame)
            buffer.line("              \(SiteFilter.isMachinery(frame) ? "  " : "▸ ")\(name)  [\(frame.module)]")
          }
        }
      }
      if buffer.text.utf8.count > 1 << 16 {
        output.write(buffer.text)
        buffer.text = ""
      }
    }
    for damage in reader.damage { buffer.line("# damage \(damage)") }
    if let first = reader.firstUnknownID {
      buffer.line(
        "# inconsistent: \(reader.unknownIDEvents) reference\(reader.unknownIDEvents == 1 ? "" : "s") to ids no "
          + "definition states (first: \(first)); kept under those ids")
    }
    if let cut = reader.cutAt {
      buffer.line("# truncated \(cut); read up to the last whole chunk")
    } else if reader.truncated {
      buffer.line("# truncated: no footer; read up to the last whole chunk")
    }
    if let footer = reader.footer {
      buffer.line("# footer: \(footer.recorded) recorded, \(footer.dropped) dropped, \(footer.chunks) chunks")
    }
    output.write(buffer.text)
    return 0
  }

  static func describe(_ event: TraceEvent, _ definitions: TraceDefinitions) -> String {
    DumpPrinter().describe(event, definitions)
  }
}

/// Prints `dump` lines, resolving each name once: an object's `Type#serial`, a property's name, a label, a stack's
/// site and how a write was made are worked out the first time a line needs them and reused (a trace repeats a
/// few of them millions of times). A name is only kept once the trace has defined its id, so it never freezes as
/// unknown.
final class DumpPrinter {
  private var objects: [UInt32: String] = [:]
  private var properties: [UInt32: String] = [:]
  private var labels: [UInt32: String] = [:]
  private var types: [UInt32: String] = [:]
  /// By stack: the line's ending (` at File.swift:12 (function)` or ` stack #n`).
  private var sites: [UInt32: String] = [:]
  /// By willSet flags and stack: how the write was made.
  private var writeKinds: [UInt64: WriteKind] = [:]

  /// With the reader's definitions, looked up only for what is not cached yet (they are not copied per line).
  func describe(_ event: TraceEvent, _ reader: TraceReader) -> String {
    describe(event, Definitions(reader: reader))
  }

  func describe(_ event: TraceEvent, _ definitions: TraceDefinitions) -> String {
    describe(event, Definitions(fixed: definitions))
  }

  /// The definitions, from a reader (read when needed) or given.
  struct Definitions {
    var reader: TraceReader?
    var fixed: TraceDefinitions?

    init(reader: TraceReader) { self.reader = reader }
    init(fixed: TraceDefinitions) { self.fixed = fixed }

    func callAsFunction<Result>(_ body: (TraceDefinitions) -> Result) -> Result {
      if let reader { return body(reader.definitions) }
      return body(fixed!)
    }
  }

  private func object(_ serial: UInt32, _ definitions: Definitions) -> String {
    if let text = objects[serial] { return text }
    let (text, known) = definitions { ("\($0.typeName(ofObject: serial))#\(serial)", $0.objects[serial] != nil) }
    if known { objects[serial] = text }
    return text
  }

  private func property(_ id: UInt32, _ definitions: Definitions) -> String {
    if let text = properties[id] { return text }
    let (text, known) = definitions { ($0.propertyName(id), $0.properties[id] != nil) }
    if known { properties[id] = text }
    return text
  }

  private func label(_ id: UInt32, _ definitions: Definitions) -> String {
    if let text = labels[id] { return text }
    let (text, known) = definitions { ($0.labelName(id), $0.labels[id] != nil) }
    if known { labels[id] = text }
    return text
  }

  private func typeName(_ id: UInt32, _ definitions: Definitions) -> String {
    if let text = types[id] { return text }
    let (text, known) = definitions { ($0.typeName(id), $0.types[id] != nil) }
    if known { types[id] = text }
    return text
  }

  private func site(_ stack: UInt32, _ definitions: Definitions) -> String {
    if let text = sites[stack] { return text }
    let (text, known) = definitions { definitions in
      let text =
        definitions.site(ofStack: stack).map { " at \(SiteFormatting.describe($0))" } ?? " stack #\(stack)"
      return (text, definitions.stacks[stack] != nil)
    }
    if known { sites[stack] = text }
    return text
  }

  private func writeKind(_ event: TraceEvent, _ definitions: Definitions) -> WriteKind {
    let key = UInt64(event.flags) << 32 | UInt64(event.stack)
    if let kind = writeKinds[key] { return kind }
    let (kind, known) = definitions { ($0.writeKind(of: event), event.stack == 0 || $0.stacks[event.stack] != nil) }
    if known { writeKinds[key] = kind }
    return kind
  }

  private func describe(_ event: TraceEvent, _ definitions: Definitions) -> String {
    var line = Formatting.milliseconds(event.time).leftPadded(10) + "  T\(event.thread)  " + event.kind.description
    func object() -> String { self.object(event.object, definitions) }
    switch event.kind {
    case .access, .willSet, .didSet:
      line += " \(object()) \(property(event.key, definitions))"
      if event.scope != 0 { line += " in scope #\(event.scope)" }
      if event.kind == .access && event.flags & EventFlags.staleRead != 0 { line += " STALE" }
      if event.kind == .willSet, case let kind = writeKind(event, definitions), kind != .unknown {
        line += " (\(kind))"
      }
      if event.kind == .didSet && event.flags & EventFlags.unchanged != 0 { line += " unchanged" }
      if event.kind == .didSet && event.flags & EventFlags.changed != 0 { line += " changed" }
      if event.kind == .didSet && event.flags & EventFlags.modify != 0
        && event.flags & (EventFlags.unchanged | EventFlags.changed) == 0
      {
        line += " not compared"
      }
    case .objectCreated, .objectFreed:
      line += " \(object())"
    case .objectBound:
      line += " registrar #\(event.object) is a level of \(self.object(event.aux, definitions))"
    case .scopeBegin:
      let kind = ScopeKind(rawValue: event.flags)?.description ?? "?"
      line += " #\(event.scope) \(kind) \"\(label(event.key, definitions))\""
      if event.aux != 0 { line += " inside #\(event.aux)" }
    case .scopeEnd, .trackingInstalled:
      line += " #\(event.scope)"
    case .trackingCancelled:
      line += " #\(event.scope)" + (event.flags & EventFlags.cancelledByFire != 0 ? " (fired)" : "")
    case .observationsRun:
      line += " #\(event.scope) of sequence #\(event.key) on "
      line += event.aux == 0 ? "no actor" : typeName(event.aux, definitions)
    case .observationsEnd:
      line += " sequence #\(event.key) " + (SequenceEnding(rawValue: event.flags)?.description ?? "?")
      line += " after #\(event.scope)"
    case .trackingFired:
      line += " #\(event.scope)"
      line += event.object != 0 ? " by \(object()) \(property(event.key, definitions))" : " (no write in progress)"
    }
    if event.depth != 0 { line += " depth=\(event.depth)" }
    if event.stack != 0 { line += site(event.stack, definitions) }
    return line
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
}
