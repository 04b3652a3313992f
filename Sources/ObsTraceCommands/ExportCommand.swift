import ObsTraceAnalysis
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// `obstrace export FILE --format perfetto|chrome-json -o OUT`: the trace for a trace viewer.
enum ExportCommand: TraceCommand {
  static let name = "export"
  static let abstract = "Write the trace for a viewer: Perfetto (ui.perfetto.dev) or Chrome JSON."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace export <file> --format perfetto|chrome-json -o <output>

    A track per thread. Each scope run is a slice named by its scope (arguments: kind, scope and instance ids,
    what it read, whether it was redundant); each write a slice 'write Type.property' (object, site, whether it
    changed the value, how many runs it invalidated); each read an instant 'read Type.property' (object, scope,
    site); each fire an instant 'invalidate <scope>' inside the write that caused it ('fire after its sequence
    ended: <scope>' for an Observations loop's last value, which fires after the loop ended and is followed by
    no run). Flows (arrows) follow the cause: from each run to the write that invalidated it, and from each fire
    to the run of that scope instance it caused. Open the file at https://ui.perfetto.dev, or query it with Perfetto's trace_processor;
    chrome-json also opens in chrome://tracing.

    OPTIONS:
      --format <format>     perfetto (protobuf, the default) or chrome-json.
      -o, --output <file>   Where to write (required).
      -h, --help            Show this help.

    EXAMPLE:
      obstrace export run.trc --format perfetto -o run.pftrace

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: ["--format": "format", "-o": "output", "--output": "output"], command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let format = parsed.value("format") ?? "perfetto"
    guard format == "perfetto" || format == "chrome-json" else {
      throw CommandError("obstrace export: --format must be perfetto or chrome-json, not '\(format)'")
    }
    guard let destination = parsed.value("output") else {
      throw CommandError("obstrace export: give the output file with -o <file>; see 'obstrace export --help'")
    }
    let reader = try TraceInput.open(path, command: name)
    let stream = try OutputFile(path: destination, command: name, inputs: [(path, "the trace")])
    let processID = Int32(bitPattern: reader.header.processID)
    let processName = reader.header.executable.split(separator: "/").last.map(String.init) ?? "process"
    if format == "perfetto" {
      try export(reader, to: PerfettoWriter(output: stream, processID: processID, processName: processName))
    } else {
      try export(reader, to: ChromeJSONWriter(output: stream, processID: processID, processName: processName))
    }
    try stream.commit()
    // What the viewer cannot show, said in the file (an instant named by it; Chrome JSON's metadata too) and once on
    // standard error.
    let loss = TraceLoss(reader)
    if let note = loss.afterFooterNote(path, command: name) { output.writeError(note) }
    if loss.verdict != nil {
      // Said in the file only when there is a file to read it in (not /dev/null, a FIFO, a terminal).
      var written = stat()
      let kept = stat(destination, &written) == 0 && written.st_mode & S_IFMT == S_IFREG
      output.writeError(
        "obstrace export: note: \(path) is \(loss.briefSummary)"
          + (reader.truncated ? "; the trace is truncated: slices still open at its end are closed there" : "")
          + (kept ? " (said in \(destination))" : "") + "\n")
    }
    return 0
  }

  /// Replays the trace (the machine alone: an export needs no statistics) into `writer`.
  static func export<Writer: ExportWriter>(_ reader: TraceReader, to writer: Writer) throws(CommandError) {
    var export = TraceExport(writer: writer, reader: reader)
    TraceAnalysis.replay(reader, into: &export)
    if let summary = TraceLoss(reader).summary { try export.noteLoss(summary) }
    try export.finish()
  }
}
