import Foundation
import ObsTraceFormat
import Testing

/// Every command that prints from a trace says what the trace lost, once, where a user sees it.
@Suite("What a trace lost, said by every command")
struct LossTests {
  /// `traces/threads.trc` with its first events chunk damaged (a byte flipped: its checksum fails), and that chunk's
  /// offset. That chunk holds a worker thread's write and the fire it caused: without them the replay ends the last
  /// run when its objects are freed, a line that exists only because of the loss.
  static func damagedThreads() throws -> (path: String, offset: UInt64) {
    let source = Paths.root + "/traces/threads.trc"
    var events: Range<UInt64>?
    try TraceReader(path: source).forEachWholeChunkRange { type, range in
      if type == .events && events == nil { events = range }
    }
    let range = try #require(events)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    bytes[Int(range.lowerBound + range.upperBound) / 2] ^= 0x5a
    let path = Paths.temporary("damaged-threads.trc")
    try bytes.write(to: URL(fileURLWithPath: path))
    return (path, range.lowerBound)
  }

  /// `traces/fan-out.trc` cut in the middle of a chunk.
  static func cutFanOut() throws -> String {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/fan-out.trc"))
    let path = Paths.temporary("cut-fan-out.trc")
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("timeline: a damaged trace says so at its end and once on stderr, and marks the lines the loss can make")
  func timelineDamaged() throws {
    let (path, offset) = try Self.damagedThreads()
    let result = Run.command(["timeline", path])
    #expect(result.status == 0)
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    let verdicts = lines.filter { $0.hasPrefix("! INCOMPLETE: ") }
    #expect(verdicts.count == 1)
    #expect(
      lines.contains(
        "!   damaged chunk at byte \(offset) skipped (a chunk's checksum does not match): its events are lost"))
    // The worker whose only chunk was lost: the footer's count says what it recorded.
    #expect(lines.contains { $0.hasPrefix("!   T") && $0.contains("is missing all") && $0.contains("recorded events") })
    let ended = try #require(lines.first { $0.contains("without a fire: every object it read was freed") })
    #expect(ended.hasSuffix("[the trace lost events: this may come from the loss]"), "\(ended)")
    #expect(result.errorLines.count == 1)
    #expect(
      result.standardError.hasPrefix("obstrace timeline: note: \(path) is INCOMPLETE: damaged chunk at byte \(offset)"))
  }

  @Test("timeline: a whole trace prints no loss, nothing on stderr, and marks nothing")
  func timelineWhole() {
    for trace in ["threads", "fan-out", "guide"] {
      let result = Run.command(["timeline", Paths.root + "/traces/\(trace).trc"])
      #expect(result.status == 0)
      #expect(!result.standardOutput.contains("\n!"), "\(trace)")
      #expect(!result.standardOutput.contains("[the trace lost events"), "\(trace)")
      #expect(result.standardError.isEmpty, "\(trace)")
    }
  }

  @Test("timeline: a cut trace says it is cut short, where")
  func timelineCut() throws {
    let path = try Self.cutFanOut()
    let result = Run.command(["timeline", path])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("\n! TRUNCATED: "))
    #expect(result.standardOutput.contains("\n!   the file is cut short at byte "))
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("\(path) is TRUNCATED"))
  }

  /// A trace whose footer counts events lost at the stop and on threads without a ring, and a thread that recorded
  /// 7 events of which no chunk reached the file.
  /// Its module map names the obstrace binary, so that it can be symbolized.
  static func footerOnly() throws -> String {
    let path = Paths.temporary("footer-only.trc")
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    try writer.writeChunk(
      .modules, payload: ChunkPayload.modules([LoadedModule(path: Paths.binary("obstrace"), base: 0x40_0000)]))
    let footer = TraceFooter(
      durationNanoseconds: 1000, chunks: 1, threads: [ThreadTotals(thread: 1, osThreadID: 7, recorded: 7, dropped: 0)],
      lostAtStop: 3, ringless: 200)
    try writer.writeChunk(.footer, payload: ChunkPayload.footer(footer))
    writer.close()
    return path
  }

  /// A whole trace but for the events of signal handlers that interrupted the recorder, which its footer counts.
  static func signalHandlerFooter() throws -> String {
    let path = Paths.temporary("signal-handlers.trc")
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    let footer = TraceFooter(
      durationNanoseconds: 1000, chunks: 1, threads: [ThreadTotals(thread: 1, osThreadID: 7, recorded: 0, dropped: 0)],
      signalHandlerEvents: 9)
    try writer.writeChunk(.footer, payload: ChunkPayload.footer(footer))
    writer.close()
    return path
  }

  @Test("events of signal handlers not recorded: report, timeline and check say so; check and baseline refuse")
  func signalHandlerEvents() throws {
    let path = try Self.signalHandlerFooter()
    let clause = "9 events from signal handlers not recorded (a handler that interrupted the recorder on its thread)"
    let report = Run.command(["report", path])
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("0 dropped, INCOMPLETE: " + clause), "\(report.standardOutput)")
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardOutput.contains("!   " + clause), "\(timeline.standardOutput)")
    let check = Run.command(["check", path, "--max", "Model.count:writes<=1"])
    // The limit names nothing the trace has (it has no events): exit 2, and the loss said as what may hold it.
    #expect(check.status == 2, "\(check.standardOutput)\(check.standardError)")
    #expect(
      (check.standardOutput + check.standardError).contains("9 events from signal handlers were not recorded"),
      "\(check.standardOutput)\(check.standardError)")
    let baseline = Run.command(["baseline", path, "-o", path + ".json"])
    #expect(baseline.status != 0, "\(baseline.standardError)")
  }

  @Test("symbolize of a trace whose module list names a FIFO: skipped, not opened (it blocked forever: tryout15's J11)")
  func moduleThatIsAFIFO() throws {
    let path = Paths.temporary("fifo-module.trc")
    let fifo = (path as NSString).deletingLastPathComponent + "/module-fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    try writer.writeChunk(.modules, payload: ChunkPayload.modules([LoadedModule(path: fifo, base: 0x40_0000)]))
    try writer.writeChunk(
      .footer,
      payload: ChunkPayload.footer(
        TraceFooter(
          durationNanoseconds: 1000, chunks: 1,
          threads: [ThreadTotals(thread: 1, osThreadID: 7, recorded: 0, dropped: 0)])))
    writer.close()
    let result = try Run.program(
      "/usr/bin/timeout", ["30", Paths.binary("obstrace"), "symbolize", path, "-o", Paths.temporary("fifo-out.trc")])
    #expect(result.status != 124, "symbolize blocked on the FIFO")
    #expect(result.errorLines.count == 1, "\(result.standardError)")
  }

  /// `traces/guide.trc` with its footer replaced by one whose checksum holds and whose contents do not decode (a
  /// varint that never ends), and that footer's offset.
  static func malformedFooter() throws -> (path: String, offset: UInt64) {
    let source = Paths.root + "/traces/guide.trc"
    var footer: Range<UInt64>?
    try TraceReader(path: source).forEachWholeChunkRange { type, range in
      if type == .footer { footer = range }
    }
    let start = try #require(footer).lowerBound
    let scratch = Paths.temporary("scratch.trc")
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: scratch, header: header)
    try writer.writeChunk(.footer, payload: [0xFF, 0xFF])
    writer.close()
    var bad: Range<UInt64>?
    try TraceReader(path: scratch).forEachWholeChunkRange { type, range in
      if type == .footer { bad = range }
    }
    let badRange = try #require(bad)
    let chunk = try Data(contentsOf: URL(fileURLWithPath: scratch))[Int(badRange.lowerBound)..<Int(badRange.upperBound)]
    let path = Paths.temporary("malformed-footer.trc")
    try (try Data(contentsOf: URL(fileURLWithPath: source)).prefix(Int(start)) + chunk)
      .write(to: URL(fileURLWithPath: path))
    return (path, start)
  }

  @Test(
    "a footer that does not decode is said once, as that, by every command: not also as no footer (a recording that did not stop cleanly) and a damaged chunk"
  )
  func malformedFooterSaidOnce() throws {
    let (path, offset) = try Self.malformedFooter()
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    #expect(
      report.standardOutput.contains(
        "INCOMPLETE: the footer at byte \(offset) is malformed (what the recording lost is not known)"),
      "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains("[truncated] the trace's footer (at byte \(offset)) is malformed: the recording "),
      "\(report.standardOutput)")
    // Said twice: the status line and one finding.
    #expect(report.standardOutput.components(separatedBy: "is malformed").count == 3, "\(report.standardOutput)")
    let timeline = Run.command(["timeline", path])
    #expect(timeline.status == 0)
    #expect(
      timeline.standardOutput.contains("!   the footer at byte \(offset) is malformed: the recording wrote it"),
      "\(timeline.standardOutput)")
    let dump = Run.command(["dump", path])
    #expect(dump.standardOutput.contains("# the footer at byte \(offset) is malformed: the recording wrote it"))
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 1)
    #expect(
      check.standardOutput.contains("its footer (at byte \(offset)) is malformed, so what the recording lost is not known"),
      "\(check.standardOutput)")
    for (command, result) in [("report", report), ("timeline", timeline), ("dump", dump), ("check", check)] {
      let text = result.standardOutput + result.standardError
      for wrong in ["no footer", "did not stop cleanly", "damaged chunk", "cut short", "TRUNCATED"] {
        #expect(!text.contains(wrong), "\(command) says '\(wrong)': \(text)")
      }
    }
  }

  @Test("timeline: events lost at the stop, on threads without a ring, and a thread's missing chunks are each said")
  func timelineFooterCounts() throws {
    let path = try Self.footerOnly()
    let result = Run.command(["timeline", path])
    #expect(result.status == 0)
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines.contains("!   T1 is missing all 7 of its recorded events (none of its chunks was read)"))
    #expect(lines.contains("!   3 events lost at the stop (threads still running)"))
    #expect(
      lines.contains(
        "!   200 events not recorded (threads that could not get a ring: memory could not be allocated)"))
    #expect(result.errorLines.count == 1)
  }

  @Test(
    "a footer naming many threads none of whose chunks were read: 20 threads said one by one, the rest in one clause, in every command (a fresh-clone try-out's J5)"
  )
  func manyThreadsMissing() throws {
    let path = Paths.temporary("many-threads.trc")
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    let threads = (UInt32(1)...30).map { ThreadTotals(thread: $0, osThreadID: Int32($0), recorded: 5, dropped: 0) }
    try writer.writeChunk(
      .footer, payload: ChunkPayload.footer(TraceFooter(durationNanoseconds: 1000, chunks: 1, threads: threads)))
    writer.close()
    let rest = "10 more threads are missing events (50 of the events the footer counts as recorded, and any in "
      + "missing chunks; 'obstrace report --format json' counts them all)"
    let timeline = Run.command(["timeline", path])
    let lines = timeline.standardOutput.split(separator: "\n").filter { $0.hasPrefix("!   ") }
    #expect(lines.count == 21, "\(timeline.standardOutput)")
    #expect(lines.first == "!   T1 is missing all 5 of its recorded events (none of its chunks was read)")
    #expect(lines.dropLast().last == "!   T20 is missing all 5 of its recorded events (none of its chunks was read)")
    #expect(lines.last.map(String.init) == "!   " + rest)
    for command in [["graph", path], ["dump", path]] {
      let output = Run.command(command).standardOutput
      #expect(output.contains("T20 is missing all 5") && output.contains(rest), "\(command): \(output)")
      #expect(!output.contains("T21 is missing"), "\(command): \(output)")
    }
  }

  @Test("dump: the loss at the end of the dump, and once on stderr")
  func dump() throws {
    let (path, offset) = try Self.damagedThreads()
    let result = Run.command(["dump", path])
    #expect(result.status == 0)
    let last = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
    #expect(last.hasPrefix("# INCOMPLETE: damaged chunk at byte \(offset) skipped"), "\(last)")
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.hasPrefix("obstrace dump: note: \(path) is INCOMPLETE: "))
    let whole = Run.command(["dump", Paths.root + "/traces/threads.trc"])
    #expect(!whole.standardOutput.contains("# INCOMPLETE"))
    #expect(whole.standardError.isEmpty)
  }

  @Test("graph: the loss is the graph's title, and once on stderr; a whole trace's graph has no title")
  func graph() throws {
    let (path, offset) = try Self.damagedThreads()
    let result = Run.command(["graph", path])
    #expect(result.status == 0)
    #expect(
      result.standardOutput.contains(
        "labelloc=t; fontname=\"Helvetica\"; fontcolor=red; label=\"INCOMPLETE: damaged chunk at byte \(offset) skipped"
      ))
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("\(path) is INCOMPLETE"))
    let whole = Run.command(["graph", Paths.root + "/traces/threads.trc"])
    #expect(!whole.standardOutput.contains("labelloc"))
    #expect(whole.standardError.isEmpty)
  }

  @Test("export: Chrome JSON stays valid JSON, with the loss in its metadata and as a global instant")
  func exportChrome() throws {
    let (path, offset) = try Self.damagedThreads()
    let output = Paths.temporary("damaged.json")
    let result = Run.command(["export", path, "--format", "chrome-json", "-o", output])
    #expect(result.status == 0)
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("\(path) is INCOMPLETE"))
    #expect(result.standardError.hasSuffix(" (said in \(output))\n"), "\(result.standardError)")
    // Exported to a device, the loss is said on standard error alone: not "said in /dev/null".
    let discarded = Run.command(["export", path, "--format", "chrome-json", "-o", "/dev/null"])
    #expect(discarded.status == 0)
    #expect(discarded.errorLines.count == 1)
    #expect(discarded.standardError.contains("\(path) is INCOMPLETE"))
    #expect(!discarded.standardError.contains("said in"), "\(discarded.standardError)")
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as! [String: Any]
    let metadata = try #require(json["metadata"] as? [String: String])
    let loss = try #require(metadata["obstrace-incomplete"])
    #expect(loss.hasPrefix("INCOMPLETE: damaged chunk at byte \(offset) skipped"))
    let events = json["traceEvents"] as! [[String: Any]]
    #expect(
      events.filter { $0["ph"] as? String == "i" && $0["s"] as? String == "g" && $0["name"] as? String == loss }.count
        == 1)
    let whole = Paths.temporary("whole.json")
    _ = Run.command(["export", Paths.root + "/traces/threads.trc", "--format", "chrome-json", "-o", whole])
    let wholeJSON =
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: whole))) as! [String: Any]
    #expect(wholeJSON["metadata"] == nil)
  }

  @Test("export: Perfetto gets an instant on the process track named by the loss, and parses without errors")
  func exportPerfetto() throws {
    let (path, offset) = try Self.damagedThreads()
    let output = Paths.temporary("damaged.pftrace")
    let result = Run.command(["export", path, "-o", output])
    #expect(result.status == 0)
    #expect(result.errorLines.count == 1)
    let parsed = try Run.program(
      Paths.root + "/.build/python/bin/python", [Paths.root + "/scripts/perfetto-summary", output])
    let summary = try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as! [String: Any]
    #expect(summary["errors"] as? [String] == [])
    let instants = try #require(summary["instants"] as? [String: Int])
    #expect(instants.keys.filter { $0.hasPrefix("INCOMPLETE: damaged chunk at byte \(offset) skipped") }.count == 1)
  }

  @Test("symbolize: says what the rewritten trace still lacks, as the input did")
  func symbolize() throws {
    let path = try Self.footerOnly()
    let result = Run.command(["symbolize", path])
    #expect(result.status == 0)
    #expect(result.standardError.contains("3 events lost at the stop"), "\(result.standardError)")
    #expect(result.standardError.contains("200 events not recorded on threads without a ring"))
  }
}

extension LossTests {
  /// `traces/guide.trc` with a byte of the chunk of `type` flipped (its checksum fails), and that chunk's offset.
  static func damagedGuide(_ type: ChunkType) throws -> (path: String, offset: UInt64) {
    let source = Paths.root + "/traces/guide.trc"
    var chunk: Range<UInt64>?
    try TraceReader(path: source).forEachWholeChunkRange { found, range in
      if found == type && chunk == nil { chunk = range }
    }
    let range = try #require(chunk)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    bytes[Int(range.lowerBound + range.upperBound) / 2] ^= 0x5a
    let path = Paths.temporary("damaged-\(type)-guide.trc")
    try bytes.write(to: URL(fileURLWithPath: path))
    return (path, range.lowerBound)
  }

  /// A fresh-clone try-out's Q4 (session 17): a damaged symbol table was said as "its events are lost" by report,
  /// dump, timeline and the exports, while every one of the 45 events the footer counts was read.
  @Test("a damaged chunk whose loss leaves every recorded event read is said to have lost definitions, not events")
  func damagedChunkWithoutEvents() throws {
    let (symbols, offset) = try Self.damagedGuide(.symbols)
    let report = Run.command(["report", symbols])
    #expect(report.status == 0)
    #expect(report.standardOutput.contains("45 events"))
    #expect(
      report.standardOutput.contains(
        "INCOMPLETE: 1 damaged chunk skipped (no recorded event is missing: the footer's counts are all read; the "
          + "definitions they held, names or sites, are lost)"))
    #expect(!report.standardOutput.contains("events are lost"))
    #expect(report.standardOutput.contains("no recorded event is missing (every event the footer counts was read)"))
    let clause =
      "damaged chunk at byte \(offset) skipped (a chunk's checksum does not match): no recorded event is missing "
      + "(every event the footer counts was read), so what it held was definitions (names, sites, the symbol table), "
      + "and those are lost"
    let dump = Run.command(["dump", symbols])
    #expect(dump.standardOutput.contains("# INCOMPLETE: " + clause))
    let timeline = Run.command(["timeline", symbols])
    #expect(timeline.standardOutput.contains("!   " + clause))
    // The events chunk damaged instead: its events are lost, and said so.
    let (events, eventsOffset) = try Self.damagedGuide(.events)
    let lost = Run.command(["report", events])
    // With how many: the footer counts what each thread recorded (tryout18's R4).
    #expect(lost.standardOutput.contains("INCOMPLETE: 1 damaged chunk skipped (their events are lost: "))
    #expect(lost.standardOutput.contains(" the footer counts as recorded are not in the file (T1: "))
    let lostDump = Run.command(["dump", events])
    #expect(
      lostDump.standardOutput.contains(
        "damaged chunk at byte \(eventsOffset) skipped (a chunk's checksum does not match): its events are lost"))
  }
}
