import Foundation
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
    and call stacks against those files with libdw and writes the trace again with a symbol table. Everything
    else is copied byte for byte: a damaged or truncated trace stays damaged or truncated (and fails 'obstrace
    check' as before).

    The files must be the ones that ran: a binary modified after the recording began (rebuilt) would name its
    addresses wrongly, so its addresses are not looked up, and it is said. Exit 0 when every property and
    call-site label of the trace has a name; 1 when some stay unnamed, with why on standard error (a binary
    changed or gone, addresses that resolve to nothing: the trace records each binary's path and load
    address, not a build id; or key path getters that an optimized build merged, which only the running
    program names); 2 when the trace cannot be read or has no module map.

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
    // Its recording writes the symbol table at its stop; a rewrite now would also take the file from under it (the
    // rest of the recording would go to the replaced file).
    if reader.footer == nil, let holder = reader.recordingProcess {
      throw CommandError(
        "obstrace symbolize: \(path) is still being recorded by process \(holder), which writes its symbol table when "
          + "it stops; symbolize it after that, if it did not")
    }
    // Gathers every definition, and the stack each call-site label's `withObservationTracking` scopes began with:
    // a trace recorded before labels stated their own stack names such a label from its first scope's stack (an
    // `Observations` run begins in the iterator, away from the call site its label names: never from there).
    var beginStacks: [UInt32: UInt32] = [:]
    reader.forEachEvent { event in
      if event.kind == .scopeBegin, event.flags == ScopeKind.tracking.rawValue, event.stack != 0,
        beginStacks[event.key] == nil
      {
        beginStacks[event.key] = event.stack
      }
    }
    let definitions = reader.definitions
    guard !reader.modules.isEmpty else {
      throw CommandError("obstrace symbolize: \(path) has no module map; it cannot be symbolized after the fact")
    }
    // A binary changed since the recording began names its addresses wrongly: left out, and said.
    let changed = BinaryChanges(reader.modules, recordingBegan: reader.header.startWallClockNanoseconds)
    let usable = reader.modules.filter { !changed.paths.contains($0.path) }
    let symbolizer = usable.isEmpty ? nil : Symbolizer(modules: usable)
    if symbolizer == nil && changed.lines.isEmpty {
      throw CommandError(
        "obstrace symbolize: none of the binaries \(path) was recorded from can be read (first: \(reader.modules[0].path))"
      )
    }
    var callerLabels: [(label: UInt32, stack: [UInt64])] = []
    let prefix = "<call site of stack #"
    for (label, text) in definitions.labels where text.hasPrefix(prefix) {
      let own = UInt32(text.dropFirst(prefix.count).prefix { $0.isNumber }).flatMap { definitions.stacks[$0] }
      if let stack = own ?? beginStacks[label].flatMap({ definitions.stacks[$0] }) {
        callerLabels.append((label, stack))
      }
    }
    let sources = SymbolSources(
      properties: definitions.properties.map { ($0.key, $0.value) }, types: [],
      stacks: Array(definitions.stacks.values), callerLabels: callerLabels)
    var table = SymbolTableBuilder.build(sources) { addresses, calls in
      symbolizer?.resolve(Array(addresses), returnAddresses: Set(calls.keys), callees: calls) ?? [:]
    }
    let resolved = table
    // What a clean stop already named stays as it was.
    table.merge(definitions.symbols)
    let destination = parsed.value("output") ?? path
    try rewrite(reader, with: table, to: destination)
    // Damage and a cut end are copied as they are: the rewritten trace reads (and fails `check`) the same way.
    var kept: [String] = []
    if !reader.damage.isEmpty {
      kept.append("\(reader.damage.count) damaged chunk\(reader.damage.count == 1 ? "" : "s")")
    }
    if reader.truncated { kept.append("truncated") }
    // Copied as they are, after the footer (the rewrite keeps every byte it does not replace).
    if let extra = reader.afterFooter { kept.append("the bytes after its footer, from byte \(extra.offset)") }
    if reader.droppedEvents > 0 { kept.append("\(reader.droppedEvents) events dropped") }
    if let footer = reader.footer, footer.lostAtStop > 0 { kept.append("\(footer.lostAtStop) event\(footer.lostAtStop == 1 ? "" : "s") lost at the stop") }
    if let footer = reader.footer, footer.ringless > 0 {
      kept.append("\(footer.ringless) events not recorded on threads without a ring")
    }
    if let footer = reader.footer, footer.signalHandlerEvents > 0 {
      kept.append("\(footer.signalHandlerEvents) events from signal handlers not recorded")
    }
    output.writeError(
      "obstrace symbolize: named \(resolved.propertyNames.count) of \(definitions.properties.count) properties, "
        + "\(resolved.labelNames.count) call-site labels, \(resolved.frames.count) frames; wrote \(destination)"
        + (kept.isEmpty ? "" : " (still " + kept.joined(separator: ", ") + ", as the input)") + "\n")
    // What stays unnamed, and why: never a bare count.
    let unnamedProperties = definitions.properties.filter { id, property in
      table.propertyNames[id] == nil && property.getterAddress != 0
    }
    let unnamedLabels = callerLabels.filter { table.labelNames[$0.label] == nil }
    guard !unnamedProperties.isEmpty || !unnamedLabels.isEmpty else { return 0 }
    // A getter that is a thunk of a merged key path getter, passing the field offsets of the recorded root class:
    // the binary is the one that ran (its code there is that class's thunk), the getter is merged.
    var merged: [(id: UInt32, thunk: MergedKeyPathGetter)] = []
    if changed.lines.isEmpty, let symbolizer {
      for (id, property) in unnamedProperties.sorted(by: { $0.key < $1.key }) {
        guard let thunk = symbolizer.mergedKeyPathGetter(at: UInt64(property.getterAddress)),
          definitions.types[property.rootType] == thunk.module + "." + thunk.type
        else { continue }
        merged.append((id, thunk))
      }
    }
    if !merged.isEmpty {
      output.writeError("obstrace symbolize: \(MergedGetterNote.describe(merged, definitions))\n")
      guard merged.count < unnamedProperties.count || !unnamedLabels.isEmpty else { return 1 }
    }
    let mergedIDs = Set(merged.map(\.id))
    let otherProperties = unnamedProperties.filter { !mergedIDs.contains($0.key) }
    var unnamed: [String] = []
    if !otherProperties.isEmpty {
      unnamed.append(
        "\(otherProperties.count) \(merged.isEmpty ? "" : "other ")propert\(otherProperties.count == 1 ? "y" : "ies")")
    }
    if !unnamedLabels.isEmpty {
      unnamed.append("\(unnamedLabels.count) call-site label\(unnamedLabels.count == 1 ? "" : "s")")
    }
    let count = otherProperties.count + unnamedLabels.count
    let left = unnamed.joined(separator: " and ") + (count == 1 ? " stays unnamed" : " stay unnamed")
    if !changed.lines.isEmpty {
      for line in changed.lines { output.writeError("obstrace symbolize: \(line)\n") }
      output.writeError(
        "obstrace symbolize: \(left): symbolize with the binaries that ran (modified before the recording began), "
          + "or record again\n")
    } else {
      let addresses = otherProperties.map { UInt64($0.value.getterAddress) }.sorted()
      let first = addresses.first.map { " (first: getter 0x" + String($0, radix: 16) + ")" } ?? ""
      output.writeError(
        "obstrace symbolize: \(left): \(count == 1 ? "its address\(first) resolves" : "their addresses\(first) resolve") to no "
          + "key-path getter or call site in the binaries recorded (\(reader.modules[0].path)…); they may not be the "
          + "ones that ran, and then the names found are wrong too (the trace records each binary's path and load "
          + "address, not a build id)\n")
    }
    return 1
  }

  /// Writes the trace again, byte for byte, with `table` as a symbols chunk right after the header in place of
  /// the whole symbols chunks it had: damaged chunks, the footer (or its absence) and a cut end are copied as they
  /// are, so the result is exactly as complete as the input.
  static func rewrite(_ reader: TraceReader, with table: SymbolTable, to destination: String) throws(CommandError) {
    var replaced: [Range<UInt64>] = []
    reader.forEachWholeChunkRange { type, range in
      if type == .symbols { replaced.append(range) }
    }
    guard
      let symbols = TraceFileWriter.chunk(
        .symbols, payload: ChunkPayload.symbols(table), version: reader.header.version)
    else {
      throw CommandError("obstrace symbolize: zlib could not compress the symbol table")
    }
    guard let input = FileHandle(forReadingAtPath: reader.path) else {
      throw CommandError("obstrace symbolize: cannot read \(reader.path)")
    }
    defer { try? input.close() }
    // Whole or not at all: the input (the default destination) stays as it was until the new file is complete.
    let result = try OutputFile(path: destination, command: name)
    func copy(_ range: Range<UInt64>) throws(CommandError) {
      var remaining = range.count
      do {
        try input.seek(toOffset: range.lowerBound)
        while remaining > 0 {
          let block = try input.read(upToCount: min(remaining, 1 << 20)) ?? Data()
          if block.isEmpty { break }
          try result.write([UInt8](block))
          remaining -= block.count
        }
      } catch let error as CommandError {
        throw error
      } catch {
        throw CommandError("obstrace symbolize: cannot read \(reader.path) (\(error.localizedDescription))")
      }
    }
    try copy(0..<reader.chunksOffset)
    try result.write(symbols)
    var position = reader.chunksOffset
    for range in replaced {
      try copy(position..<range.lowerBound)
      position = range.upperBound
    }
    let size: UInt64
    do {
      size = try input.seekToEnd()
    } catch {
      throw CommandError("obstrace symbolize: cannot read \(reader.path) (\(error.localizedDescription))")
    }
    try copy(position..<max(position, size))
    try result.commit()
  }
}

/// What `symbolize` says of properties whose key path getters are thunks of a merged getter it cannot name
/// (`MergedKeyPathGetter`, docs/symbols.md): the binary is the one that ran, the getter is merged.
enum MergedGetterNote {
  static func describe(_ merged: [(id: UInt32, thunk: MergedKeyPathGetter)], _ definitions: TraceDefinitions)
    -> String
  {
    let count = merged.count
    let names = merged.prefix(3).map { definitions.propertyName($0.id) }.joined(separator: ", ")
    let more = count > 3 ? ", …" : ""
    let functions = Set(merged.map { "merged key path getter for \($0.thunk.merged.qualified)" }).sorted()
    return "\(count) propert\(count == 1 ? "y stays" : "ies stay") unnamed (\(names)\(more)): "
      + "\(count == 1 ? "its binary is the one" : "their binaries are the ones") that ran, but "
      + "\(count == 1 ? "its key path getter is a thunk" : "their key path getters are thunks") of one getter that "
      + "LLVM's function merging made for classes of one layout (\(functions.joined(separator: ", "))); which property "
      + "it reads for each class is in the classes' field layout, which a recording that stops cleanly reads from the "
      + "running program and symbolize does not; to have \(count == 1 ? "it" : "them") named in any trace, build "
      + "with -Xswiftc -Xfrontend -Xswiftc -disable-llvm-merge-functions-pass"
  }
}

/// The binaries of a trace's module map that are not the ones that ran: modified after the recording began (a
/// rebuild), or gone. The trace records each binary's path and load address only; the file's modification time
/// against the recording's start is the evidence left.
struct BinaryChanges {
  /// Paths of the binaries changed or gone.
  private(set) var paths: Set<String> = []
  /// One line per such binary, saying what was found.
  private(set) var lines: [String] = []

  init(_ modules: [LoadedModule], recordingBegan: UInt64) {
    for module in modules where !paths.contains(module.path) {
      var status = stat()
      guard stat(module.path, &status) == 0 else {
        paths.insert(module.path)
        lines.append("\(module.path) is gone (\(String(cString: strerror(errno)))): its addresses were not looked up")
        continue
      }
      let modified = UInt64(max(0, status.st_mtim.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, status.st_mtim.tv_nsec))
      guard modified > recordingBegan else { continue }
      paths.insert(module.path)
      let (after, before) = Self.utcApart(modified, recordingBegan)
      lines.append(
        "\(module.path) was modified after the recording began (\(after) against \(before)): "
          + "rebuilt, it would name its addresses wrongly, so they were not looked up")
    }
  }

  /// Two times as `utc` says them, with as many digits of the second (none, 3, 6 or 9) as tell them apart: a binary
  /// rebuilt in the second the recording began is `09:20:01.734 UTC against 09:20:01.201 UTC`, never two equal times.
  static func utcApart(_ a: UInt64, _ b: UInt64) -> (String, String) {
    for digits in [0, 3, 6] {
      let pair = (utc(a, digits: digits), utc(b, digits: digits))
      if pair.0 != pair.1 { return pair }
    }
    return (utc(a, digits: 9), utc(b, digits: 9))
  }

  /// `2026-12-01 09:20:01 UTC`; with `digits`, that many digits of the second after it (`09:20:01.734 UTC`).
  static func utc(_ nanoseconds: UInt64, digits: Int = 0) -> String {
    var seconds = time_t(nanoseconds / 1_000_000_000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S UTC", &parts)
    let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard digits > 0, text.hasSuffix(" UTC") else { return text }
    let fraction = String(nanoseconds % 1_000_000_000)
    let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
    return text.dropLast(4) + "." + padded.prefix(digits) + " UTC"
  }
}
