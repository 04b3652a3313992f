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

    USAGE: obstrace export <file> --format perfetto|chrome-json -o <output> [--scope <label>] [--property <Type.name>]
                           [--object <n>] [--thread <n>] [--from <ms>] [--to <ms>]

    A track per thread. Each scope run is a slice named by its scope (arguments: kind, scope and instance ids,
    what it read, whether it was redundant); each write a slice 'write Type.property' (object, site, whether it
    changed the value, how many runs it invalidated, whether they were wasted); a write through _modify that was
    not compared has outcome 'not compared', its wasted and the redundant of the runs that rest on it 'not known:
    ...', never false; each read an instant 'read Type.property' (object, scope,
    site); each fire an instant 'invalidate <scope>' inside the write that caused it (argument predicted: true
    when the scope is untraced, tracking ObsTrace does not own, whose fire the replay predicts from Observation's
    rules; 'fire after its sequence ended: <scope>' for an Observations loop's last value, which fires after the
    loop ended and is followed by no run). Flows (arrows) follow the cause: from each run to the write that invalidated it, and from each fire
    to the run of that scope instance it caused. Open the file at https://ui.perfetto.dev, or query it with Perfetto's trace_processor;
    chrome-json also opens in chrome://tracing.

    A long run's export is large (tens of bytes an event: 3 GB for 70 M events), more than Perfetto's web UI opens;
    export says so on standard error when the trace holds over 10 M events. The timeline's filters take a part:
    a run or write is exported when the timeline would show its line, a read or fire when it is of what the filter
    names (in its window and thread, of that object or property, of or inside a run of that scope); a slice's end
    and a flow go with their beginnings. 'obstrace timeline' with the same filters shows what you will get.

    OPTIONS:
      --format <format>     perfetto (protobuf, the default) or chrome-json.
      -o, --output <file>   Where to write (required).
    \(TimelineFilter.help)
      -h, --help            Show this help.

    EXAMPLE:
      obstrace export run.trc --format perfetto -o run.pftrace
      obstrace export run.trc -o part.pftrace --from 1200 --to 1500 --thread T1

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: TimelineFilter.options.merging(["--format": "format", "-o": "output", "--output": "output"]) { $1 },
      command: name
    ).parse(arguments)
    let filter = try TimelineFilter(parsed, command: name)
    let path = try TraceInput.singlePath(parsed, command: name)
    let format = parsed.value("format") ?? "perfetto"
    guard format == "perfetto" || format == "chrome-json" else {
      throw CommandError("obstrace export: --format must be perfetto or chrome-json, not '\(format)'")
    }
    guard let destination = parsed.value("output") else {
      throw CommandError("obstrace export: give the output file with -o <file>; see 'obstrace export --help'")
    }
    let reader = try TraceInput.open(path, command: name)
    if filter.isEmpty, let note = largeExportNote(reader, path: path) { output.writeError(note) }
    // What a run read and whom a write invalidated are known at their ends: a first replay decides which to keep.
    var selection: ExportSelection?
    if filter.namesSomething {
      var deciding = ExportSelection(matcher: TimelineFilter.Matcher(filter: filter, reader: reader))
      TraceAnalysis.replay(reader, into: &deciding)
      selection = deciding
    }
    let stream = try OutputFile(path: destination, command: name, inputs: [(path, "the trace")])
    let processID = Int32(bitPattern: reader.header.processID)
    let processName = reader.header.executable.split(separator: "/").last.map(String.init) ?? "process"
    let evidence: TimelineFilter.Evidence?
    if format == "perfetto" {
      evidence = try export(
        reader, to: PerfettoWriter(output: stream, processID: processID, processName: processName), filter: filter,
        selection: selection)
    } else {
      evidence = try export(
        reader, to: ChromeJSONWriter(output: stream, processID: processID, processName: processName), filter: filter,
        selection: selection)
    }
    // A filter that matched nothing: an error when it names what the trace does not have (the output left as it
    // was), else said.
    if let evidence {
      try evidence.check(reader, path: path, command: name)
    }
    try stream.commit()
    if evidence != nil {
      output.writeError("obstrace export: note: nothing in \(path) matches the filter; \(destination) has no events\n")
    }
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

  /// Replays the trace (the machine alone: an export needs no statistics) into `writer`, what `filter` and
  /// `selection` keep. Returns, when a filter kept nothing, what it is to be checked against.
  static func export<Writer: ExportWriter>(
    _ reader: TraceReader, to writer: Writer, filter: TimelineFilter = TimelineFilter(),
    selection: ExportSelection? = nil
  ) throws(CommandError) -> TimelineFilter.Evidence? {
    var export = TraceExport(writer: writer, reader: reader, filter: filter, selection: selection)
    TraceAnalysis.replay(reader, into: &export)
    if let summary = TraceLoss(reader).summary { try export.noteLoss(summary) }
    try export.finish()
    return export.emitted == 0 ? export.evidence : nil
  }

  /// Above this many events (its footer's count), an unfiltered export is said to be large.
  static let largeExportEvents: UInt64 = 10_000_000

  /// `obstrace export: note: …` when the whole trace is more than a viewer opens, with how to take a part.
  static func largeExportNote(_ reader: TraceReader, path: String, limit: UInt64 = largeExportEvents) -> String? {
    guard let footer = reader.footer else { return nil }
    // Saturating: a damaged footer's counts may add up past 2^64.
    let events = footer.threads.reduce(UInt64(0)) {
      $0.addingReportingOverflow($1.recorded).overflow ? .max : $0 + $1.recorded
    }
    guard events > limit else { return nil }
    return "obstrace export: note: \(path) holds \(events) events (its footer's count): their export is large (tens of "
      + "bytes an event), more than Perfetto's web UI opens; take a part with --from/--to <ms>, --thread, --scope, "
      + "--property or --object ('obstrace timeline' takes the same filters, to choose)\n"
  }
}
