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
    reader.forEachChunk { chunk in
      buffer.line(
        "# chunk at byte \(chunk.offset): thread T\(chunk.thread) (tid \(chunk.osThreadID)), sequence \(chunk.sequence), "
          + "\(chunk.events.count) events, \(chunk.droppedSinceLastChunk) dropped\(chunk.threadEnded ? ", thread ended" : "")"
      )
      for event in chunk.events {
        buffer.line(describe(event, reader.definitions))
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
    var line = Formatting.milliseconds(event.time).leftPadded(10) + "  T\(event.thread)  " + event.kind.description
    func object() -> String { "\(definitions.typeName(ofObject: event.object))#\(event.object)" }
    switch event.kind {
    case .access, .willSet, .didSet:
      line += " \(object()) \(definitions.propertyName(event.key))"
      if event.scope != 0 { line += " in scope #\(event.scope)" }
      if event.kind == .access && event.flags & EventFlags.staleRead != 0 { line += " STALE" }
      if event.kind == .willSet, case let kind = definitions.writeKind(of: event), kind != .unknown {
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
      line += " registrar #\(event.object) is a level of \(definitions.typeName(ofObject: event.aux))#\(event.aux)"
    case .scopeBegin:
      let kind = ScopeKind(rawValue: event.flags)?.description ?? "?"
      line += " #\(event.scope) \(kind) \"\(definitions.labelName(event.key))\""
      if event.aux != 0 { line += " inside #\(event.aux)" }
    case .scopeEnd, .trackingInstalled:
      line += " #\(event.scope)"
    case .trackingCancelled:
      line += " #\(event.scope)" + (event.flags & EventFlags.cancelledByFire != 0 ? " (fired)" : "")
    case .observationsRun:
      line += " #\(event.scope) of sequence #\(event.key) on "
      line += event.aux == 0 ? "no actor" : definitions.typeName(event.aux)
    case .observationsEnd:
      line += " sequence #\(event.key) " + (SequenceEnding(rawValue: event.flags)?.description ?? "?")
      line += " after #\(event.scope)"
    case .trackingFired:
      line += " #\(event.scope)"
      line += event.object != 0 ? " by \(object()) \(definitions.propertyName(event.key))" : " (no write in progress)"
    }
    if event.depth != 0 { line += " depth=\(event.depth)" }
    if event.stack != 0 {
      if let site = definitions.site(ofStack: event.stack) {
        line += " at \(SiteFormatting.describe(site))"
      } else {
        line += " stack #\(event.stack)"
      }
    }
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
