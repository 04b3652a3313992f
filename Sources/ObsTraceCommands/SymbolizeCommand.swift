import ObsTraceFormat
import ObsTraceSymbols

#if canImport(Glibc)
  import Glibc
#endif

/// `obstrace symbolize FILE`: names and places for a trace whose process could not write them (it was killed),
/// resolved from the binaries it had loaded, which must still exist.
enum SymbolizeCommand: TraceCommand {
  static let name = "symbolize"
  static let abstract = "Add property names and call sites to a trace that lacks them, from its binaries."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace symbolize <file> [-o <output>]

    A recording writes its symbol table when it stops; a process that was killed leaves a trace without one.
    The trace records the modules the process had loaded and where; this command resolves the key-path getters
    and call stacks against those files with libdw (they must be unchanged) and writes the trace again with a
    symbol table. Whole chunks are copied; a truncated trace stays marked truncated.

    OPTIONS:
      -o, --output <file>   Where to write (default: replace the input).
      -h, --help            Show this help.

    EXAMPLE:
      obstrace symbolize crashed.trc && obstrace report crashed.trc

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(options: ["-o": "output", "--output": "output"], command: name).parse(
      arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let reader = try TraceInput.open(path, command: name)
    reader.forEachChunk { _ in }  // gathers every definition
    let definitions = reader.definitions
    guard !reader.modules.isEmpty else {
      throw CommandError("obstrace symbolize: \(path) has no module map; it cannot be symbolized after the fact")
    }
    guard let symbolizer = Symbolizer(modules: reader.modules) else {
      throw CommandError(
        "obstrace symbolize: none of the binaries \(path) was recorded from can be read (first: \(reader.modules[0].path))"
      )
    }
    var callerLabels: [(label: UInt32, stack: [UInt64])] = []
    let prefix = "<call site of stack #"
    for (label, text) in definitions.labels where text.hasPrefix(prefix) {
      if let id = UInt32(text.dropFirst(prefix.count).prefix { $0.isNumber }), let stack = definitions.stacks[id] {
        callerLabels.append((label, stack))
      }
    }
    let sources = SymbolSources(
      properties: definitions.properties.map { ($0.key, $0.value) }, types: [],
      stacks: Array(definitions.stacks.values), callerLabels: callerLabels)
    let table = SymbolTableBuilder.build(sources) { addresses, returnAddresses in
      symbolizer.resolve(Array(addresses), returnAddresses: returnAddresses)
    }
    let destination = parsed.value("output") ?? path
    let temporary = destination + ".symbolizing"
    do {
      let writer = try TraceFileWriter(path: temporary, header: reader.header)
      var footer: [UInt8]?
      try reader.forEachWholeChunk { type, payload throws(TraceFileError) in
        switch type {
        case .symbols: break
        case .footer: footer = payload
        default: try writer.writeChunk(type, payload: payload)
        }
      }
      try writer.writeChunk(.symbols, payload: ChunkPayload.symbols(table))
      if let footer { try writer.writeChunk(.footer, payload: footer) }
      writer.close()
    } catch {
      unlink(temporary)
      throw CommandError("obstrace symbolize: \(error)")
    }
    guard rename(temporary, destination) == 0 else {
      unlink(temporary)
      throw CommandError("obstrace symbolize: cannot write \(destination) (\(String(cString: strerror(errno))))")
    }
    output.writeError(
      "obstrace symbolize: named \(table.propertyNames.count) of \(definitions.properties.count) properties, "
        + "\(table.labelNames.count) call-site labels, \(table.frames.count) frames; wrote \(destination)\n")
    return 0
  }
}
