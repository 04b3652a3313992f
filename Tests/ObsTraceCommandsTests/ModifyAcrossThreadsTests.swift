import Foundation
import Testing

@testable import ObsTraceFormat

/// Definitions for the synthetic trace: one type, one property.
/// Two threads each doing `model.count += 1` on their own model at the same time (a try-out's F5): the macro's
/// `_modify` accesses, then calls willSet directly; in time order the two threads' events interleave, so each
/// thread's access is followed by the other thread's event before its own willSet. Every command that leaves the
/// `_modify`'s own access out of the reads judges it on the thread's own events.
@Suite("Commands on _modify writes of two threads at once")
struct ModifyAcrossThreadsTests {
  static func trace() throws -> String {
    var trace = try SyntheticTrace(
      "modify-threads", definitions: SyntheticDefinitions.modelCount, seesUntracedTracking: true)
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
    for (thread, os, events) in threads {
      var chunk = trace.chunk(thread: thread, osThreadID: os)
      for (kind, flags, time, object) in events {
        trace.append(&chunk, kind, at: time, flags: flags, object: object, key: 1, aux: 1)
      }
      try trace.write(chunk)
    }
    return try trace.finish()
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
