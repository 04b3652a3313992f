import Foundation
import Testing

@testable import ObsTraceFormat

/// Definitions for the synthetic trace: one type, one property.
private final class ModelDefinitions: TraceDefinitionSource {
  func typeName(_ id: UInt32) -> String { "Fixture.Model" }
  func property(_ id: UInt32) -> PropertyDefinition? {
    PropertyDefinition(rootType: 1, keyPathDescription: "\\Model.count", getterAddress: 0)
  }
  func label(_ id: UInt32) -> String { "" }
  func scope(_ id: UInt32) -> ScopeDefinition? { nil }
  func stack(_ id: UInt32) -> [UInt64] { [] }
}

/// Two threads each doing `model.count += 1` on their own model at the same time (a try-out's F5): the macro's
/// `_modify` accesses, then calls willSet directly; in time order the two threads' events interleave, so each
/// thread's access is followed by the other thread's event before its own willSet. Every command that leaves the
/// `_modify`'s own access out of the reads judges it on the thread's own events.
@Suite("Commands on _modify writes of two threads at once")
struct ModifyAcrossThreadsTests {
  static func trace() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "obstrace-modify-threads-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).trc"
    ).path
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0, seesUntracedTracking: true)
    let writer = try TraceFileWriter(path: path, header: header)
    let definitions = ModelDefinitions()
    let stamps = DefinitionStamps()
    let changed = EventFlags.modify | EventFlags.changed
    // (kind, flags, time, object) per thread; thread 1 reads its model once more at the end (a read of the program).
    let threads: [(thread: UInt32, os: Int32, events: [(EventKind, UInt8, UInt64, UInt32)])] = [
      (
        1, 42,
        [
          (.access, 0, 1000, 1), (.willSet, EventFlags.willSetDirect, 1200, 1), (.didSet, changed, 1400, 1),
          (.access, 0, 2000, 1),
        ]
      ),
      (2, 43, [(.access, 0, 1100, 2), (.willSet, EventFlags.willSetDirect, 1300, 2), (.didSet, changed, 1500, 2)]),
    ]
    var totals: [ThreadTotals] = []
    for (thread, os, events) in threads {
      var encoder = ChunkEncoder(thread: thread, osThreadID: os, sequence: 0, firstTime: 1000, stamps: stamps)
      for (kind, flags, time, object) in events {
        encoder.append(
          kind: kind.rawValue, flags: flags, time: time, depth: 0, object: object, key: 1, scope: 0, aux: 1, stack: 0,
          definitions: definitions, stamps: stamps)
      }
      try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: 0, threadEnded: true))
      totals.append(ThreadTotals(thread: thread, osThreadID: os, recorded: UInt64(events.count), dropped: 0))
    }
    try writer.writeChunk(
      .footer, payload: ChunkPayload.footer(TraceFooter(durationNanoseconds: 2000, chunks: 2, threads: totals)))
    writer.close()
    return path
  }

  @Test("report (text and JSON) and export count the one read the program made, not the two writes' accesses")
  func everyCommand() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let properties = try #require(object["properties"] as? [[String: Any]])
    #expect(properties.count == 1)
    #expect(properties.first?["reads"] as? Int == 1)
    #expect(properties.first?["writes"] as? Int == 2)
    let findings = try #require(object["findings"] as? [[String: Any]])
    #expect(findings.filter { $0["kind"] as? String == "untracked-read" }.map { $0["count"] as? Int } == [1])

    let report = Run.command(["report", path])
    #expect(report.standardOutput.contains("info [untracked-read] 1 read of "), "\(report.standardOutput)")

    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "obstrace-modify-threads-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
    ).path
    defer { try? FileManager.default.removeItem(atPath: output) }
    let export = Run.command(["export", path, "--format", "chrome-json", "-o", output])
    #expect(export.status == 0, "\(export.standardError)")
    let exported = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as? [String: Any])
    let events = try #require(exported["traceEvents"] as? [[String: Any]])
    let reads = events.filter { $0["ph"] as? String == "i" && ($0["name"] as? String)?.hasPrefix("read ") == true }
    // The program's read, on thread 1's track, at its time (2 µs).
    #expect(reads.count == 1)
    #expect(reads.first?["ts"] as? Double == 2)
    let writes = events.filter { $0["ph"] as? String == "B" && ($0["name"] as? String)?.hasPrefix("write ") == true }
    #expect(writes.count == 2)
  }
}
