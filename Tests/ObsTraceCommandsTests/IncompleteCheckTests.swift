import Foundation
import Testing

@testable import ObsTraceFormat

/// Every way a trace can be incomplete refuses a pass in `check` (with `--max` and with `--baseline`), is refused by
/// `baseline`, and is said by `report`: a cut tail, a damaged chunk, a chunk gone by its number, a thread's last
/// chunk gone (the footer counts more than was read), events dropped in the ring.
@Suite("An incomplete trace never passes a check")
struct IncompleteCheckTests {
  /// A trace of one thread writing `Model.count` twice in each of three chunks (numbered 0, 1, 2), with a footer
  /// that counts its 18 events; `dropped` events said dropped before chunk 1 (and in the footer).
  static func threeChunks(dropped: UInt64 = 0) throws -> String {
    var trace = try SyntheticTrace(
      "three-chunks", definitions: SyntheticDefinitions.modelCount, dropWhenFull: dropped > 0,
      seesUntracedTracking: true)
    for sequence in UInt64(0)..<3 {
      let start = 1000 + sequence * 1000
      var chunk = trace.chunk(sequence: sequence, firstTime: start)
      for write in UInt64(0)..<2 {
        let time = start + write * 300
        let events: [(EventKind, UInt8, UInt64)] = [
          (.access, 0, time), (.willSet, EventFlags.willSetInWithMutation, time + 100),
          (.didSet, EventFlags.changed, time + 200),
        ]
        for (kind, flags, at) in events { trace.append(&chunk, kind, at: at, flags: flags, object: 1, key: 1, aux: 1) }
      }
      try trace.write(chunk, dropped: sequence == 1 ? dropped : 0, threadEnded: sequence == 2)
    }
    return try trace.finish(duration: 4000)
  }

  /// `path`'s bytes without its events chunk number `index` (from 0, in file order), removed exactly: every other
  /// chunk whole, no damage to find.
  static func cuttingOut(eventsChunk index: Int, of path: String, _ name: String) throws -> String {
    var events: [Range<UInt64>] = []
    try TraceReader(path: path).forEachWholeChunkRange { type, range in
      if type == .events { events.append(range) }
    }
    let range = events[index]
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes.removeSubrange(Int(range.lowerBound)..<Int(range.upperBound))
    return try GuideTrace.write(bytes, name)
  }

  /// The text check's last line, its exit status, and the baseline command's result.
  static func checked(_ path: String, baseline: String) -> (
    max: ProcessResult, against: ProcessResult, made: ProcessResult
  ) {
    let max = Run.command(["check", path, "--max", "Model.<property #1>:writes<=100"])
    let against = Run.command(["check", path, "--baseline", baseline])
    let made = Run.command(["baseline", path, "-o", Paths.temporary("made-baseline.json")])
    return (max, against, made)
  }

  /// The whole trace's baseline, and what `check` says of the whole trace: it passes, so a failure below is the
  /// loss's.
  static func wholeBaseline() throws -> String {
    let whole = try threeChunks()
    let baseline = Paths.temporary("whole-baseline.json")
    let made = Run.command(["baseline", whole, "-o", baseline])
    #expect(made.status == 0, "\(made.standardError)")
    let max = Run.command(["check", whole, "--max", "Model.<property #1>:writes<=100"])
    #expect(max.status == 0, "\(max.standardOutput)\(max.standardError)")
    #expect(max.standardOutput.hasSuffix("PASSED\n"))
    let against = Run.command(["check", whole, "--baseline", baseline])
    #expect(against.status == 0, "\(against.standardOutput)\(against.standardError)")
    let report = Run.command(["report", whole])
    #expect(report.standardOutput.split(separator: "\n")[1].hasSuffix(", complete"), "\(report.standardOutput)")
    #expect(report.standardOutput.contains("Model.<property #1>"))
    return baseline
  }

  /// Expects `check` (both ways) to refuse `path` with `reason` on its FAILED line, `baseline` to refuse it naming
  /// the file, and `report` to say `said` in its completeness.
  static func expectRefused(_ path: String, baseline: String, reason: String, said: String) {
    let (max, against, made) = checked(path, baseline: baseline)
    for result in [max, against] {
      #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
      #expect(result.standardOutput.hasPrefix("obstrace check: \(path)"), "\(result.standardOutput)")
      let last = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
      #expect(last.hasPrefix("FAILED: "), "\(last)")
      #expect(last.contains(reason), "\(last)")
      #expect(last.contains("so the check cannot pass"), "\(last)")
    }
    #expect(made.status == 2, "\(made.standardError)")
    #expect(made.errorLines.count == 1)
    #expect(made.standardError.hasPrefix("obstrace baseline: \(path): "), "\(made.standardError)")
    #expect(made.standardError.contains(reason), "\(made.standardError)")
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    let completeness = report.standardOutput.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
    #expect(completeness.contains(said), "\(completeness)")
    #expect(!completeness.hasSuffix(", complete"), "\(completeness)")
  }

  @Test("a chunk cut out of the middle, bytes removed exactly: its thread's chunk numbers skip it; check refuses")
  func chunkMissingByNumber() throws {
    let baseline = try Self.wholeBaseline()
    let path = try Self.cuttingOut(eventsChunk: 1, of: try Self.threeChunks(), "missing-chunk.trc")
    // Nothing in the file is damaged: the reader reads every chunk left whole, and the counts are lower.
    let (reader, count) = try GuideTrace.events(path)
    #expect(reader.damage.isEmpty && !reader.truncated)
    #expect(count == 12)
    let clause = "1 chunk is missing by its thread's numbers (T1 #1)"
    Self.expectRefused(
      path, baseline: baseline, reason: clause + ", 6 events the footer counts as recorded are not in the file",
      said: "INCOMPLETE: " + clause)
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.standardOutput.contains("\"missingChunks\":1,\"unreadRecordedEvents\":6"), "\(json.standardOutput)")
  }

  @Test("a thread's last chunk cut out: only the footer's count shows it; check refuses")
  func lastChunkMissing() throws {
    let baseline = try Self.wholeBaseline()
    let path = try Self.cuttingOut(eventsChunk: 2, of: try Self.threeChunks(), "missing-last-chunk.trc")
    let (reader, count) = try GuideTrace.events(path)
    #expect(reader.damage.isEmpty && !reader.truncated && reader.chunkLedger.gaps.isEmpty)
    #expect(count == 12)
    let clause = "6 events the footer counts as recorded are not in the file (T1: 6 of 18)"
    Self.expectRefused(path, baseline: baseline, reason: clause, said: "INCOMPLETE: " + clause)
    let json = Run.command(["report", path, "--format", "json"])
    #expect(!json.standardOutput.contains("missingChunks"))
    #expect(json.standardOutput.contains("\"unreadRecordedEvents\":6"), "\(json.standardOutput)")
  }

  @Test("a damaged chunk: check refuses, report says it")
  func damagedChunk() throws {
    let baseline = try Self.wholeBaseline()
    let whole = try Self.threeChunks()
    var events: [Range<UInt64>] = []
    try TraceReader(path: whole).forEachWholeChunkRange { type, range in
      if type == .events { events.append(range) }
    }
    var bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
    bytes[Int(events[1].lowerBound + events[1].upperBound) / 2] ^= 0x5a
    let path = try GuideTrace.write(bytes, "damaged-chunk.trc")
    Self.expectRefused(
      path, baseline: baseline, reason: "1 damaged chunk(s) were skipped",
      said: "INCOMPLETE: 1 damaged chunk skipped (their events are lost")
  }

  @Test("a cut tail (no footer): check refuses, report says it")
  func cutTail() throws {
    let baseline = try Self.wholeBaseline()
    let whole = try Self.threeChunks()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
    let path = try GuideTrace.write(bytes.prefix(bytes.count - 10), "cut-tail.trc")
    Self.expectRefused(
      path, baseline: baseline, reason: "the trace was cut short (the process was killed or crashed)",
      said: "TRUNCATED")
  }

  @Test("events dropped in the ring: check refuses, report says it")
  func droppedInTheRing() throws {
    let baseline = try Self.wholeBaseline()
    let path = try Self.threeChunks(dropped: 5)
    Self.expectRefused(
      path, baseline: baseline, reason: "5 events were dropped", said: "INCOMPLETE: events were dropped")
  }
}

extension IncompleteCheckTests {
  @Test("check --max of a name a trace cut inside its first chunk does not have: the error says the trace is cut")
  func unknownNameInACutTrace() throws {
    let (bytes, chunks) = try GuideTrace.read()
    // Cut inside the first chunk after the header: no event, no definition.
    let path = try GuideTrace.write(bytes.prefix(Int(chunks[0].range.lowerBound) + 20), "cut-to-header.trc")
    let result = Run.command(["check", path, "--max", "Model.property:writes<=4"])
    #expect(result.status == 2)
    #expect(result.standardOutput.isEmpty)
    #expect(
      result.standardError
        == "obstrace check: --max 'Model.property:writes<=4' names no property or scope of \(path); the trace has "
        + "none; \(path) is incomplete, so it may be in what was lost: the trace was cut short (the process was "
        + "killed or crashed)\n")
    // The whole trace names it and checks it.
    #expect(Run.command(["check", GuideTrace.path, "--max", "Model.property:writes<=4"]).status == 0)
  }
}
