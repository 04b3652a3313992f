import Foundation
import Testing

@testable import ObsTraceFormat

/// A thread running at the stop whose last recorded event is an access outside any scope (tryout18's R8): the macro's
/// `_modify` accesses, then calls willSet, and a recording that stops in between holds the access alone. It may be a
/// read or the start of a write the recording did not reach: every command says that of it, and none counts it as a
/// read. A thread that exited (not running at the stop) ends with a read of the program: counted as one.
@Suite("An access at the end of a thread's recording")
struct AccessAtEndTests {
  /// Thread 1 and thread 2 each write their model through `_modify` (access, willSet, didSet), then access it once
  /// more as their last event; `runningAtStop` lists the threads the footer says were running at the stop.
  static func trace(runningAtStop: [UInt32]) throws -> String {
    var trace = try SyntheticTrace(
      "access-at-end", definitions: SyntheticDefinitions.modelCount, seesUntracedTracking: true)
    let changed = EventFlags.modify | EventFlags.changed
    let threads: [(thread: UInt32, os: Int32, events: [(EventKind, UInt8, UInt64, UInt32)])] = [
      (
        1, 42,
        [
          (.access, 0, 1000, 1), (.willSet, EventFlags.willSetDirect, 1200, 1), (.didSet, changed, 1400, 1),
          (.access, 0, 2000, 1),
        ]
      ),
      (
        2, 43,
        [
          (.access, 0, 1100, 2), (.willSet, EventFlags.willSetDirect, 1300, 2), (.didSet, changed, 1500, 2),
          (.access, 0, 3000, 2),
        ]
      ),
    ]
    for (thread, os, events) in threads {
      var chunk = trace.chunk(thread: thread, osThreadID: os)
      for (kind, flags, time, object) in events {
        trace.append(&chunk, kind, at: time, flags: flags, object: object, key: 1, aux: 1)
      }
      try trace.write(chunk)
    }
    return try trace.finish(runningAtStop: runningAtStop)
  }

  static func reportJSON(_ path: String) throws -> (property: [String: Any], findings: [[String: Any]]) {
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let properties = try #require(object["properties"] as? [[String: Any]])
    #expect(properties.count == 1)
    let findings = try #require(object["findings"] as? [[String: Any]])
    return (try #require(properties.first), findings.filter { $0["kind"] as? String == "untracked-read" })
  }

  static func exportedInstants(_ path: String) throws -> [[String: Any]] {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent(
      "obstrace-access-at-end-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
    ).path
    defer { try? FileManager.default.removeItem(atPath: output) }
    let export = Run.command(["export", path, "--format", "chrome-json", "-o", output])
    #expect(export.status == 0, "\(export.standardError)")
    let exported = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as? [String: Any])
    let events = try #require(exported["traceEvents"] as? [[String: Any]])
    return events.filter { $0["ph"] as? String == "i" }
  }

  @Test("a thread running at the stop: its last access is said as at the end, not counted as a read")
  func runningAtStop() throws {
    let path = try Self.trace(runningAtStop: [2])
    defer { try? FileManager.default.removeItem(atPath: path) }

    let (property, findings) = try Self.reportJSON(path)
    // Thread 1's last read (it exited) is the program's; thread 2's last access is not known to be one.
    #expect(property["reads"] as? Int == 1)
    #expect(property["accessesAtEnd"] as? Int == 1)
    #expect(property["writes"] as? Int == 2)
    #expect(findings.count == 1)
    #expect(findings.first?["count"] as? Int == 1)
    let message = findings.first?["message"] as? String ?? ""
    #expect(message.hasPrefix("1 read of "), "\(message)")
    #expect(
      message.contains(
        " outside any tracking scope, and 1 access of "), "\(message)")
    #expect(
      message.hasSuffix(
        " outside any tracking scope at the end of the recording: a read, or the start of a write through _modify "
          + "that the recording did not reach"), "\(message)")

    let report = Run.command(["report", path])
    #expect(report.status == 0, "\(report.standardError)")
    #expect(report.standardOutput.contains("1 (+1 at end)"), "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains(
        "at end: 1 access outside any scope at the end of the recording, not counted as reads: a read, or the start "
          + "of a write through _modify that the recording did not reach"), "\(report.standardOutput)")
    #expect(report.standardOutput.contains("info [untracked-read] 1 read of "), "\(report.standardOutput)")

    let timeline = Run.command(["timeline", path])
    #expect(timeline.status == 0, "\(timeline.standardError)")
    let lines = timeline.standardOutput.split(separator: "\n").filter { $0.contains("access of ") }
    #expect(lines.count == 1, "\(timeline.standardOutput)")
    #expect(
      lines.first?.contains(
        "outside any scope, its thread's last event at the end of the recording: a read, or the start of a write "
          + "through _modify that the recording did not reach") == true, "\(timeline.standardOutput)")

    let instants = try Self.exportedInstants(path)
    let reads = instants.filter { ($0["name"] as? String)?.hasPrefix("read ") == true }
    let accesses = instants.filter { ($0["name"] as? String)?.hasPrefix("access ") == true }
    // Thread 1's read at 2 µs; thread 2's access at 3 µs, as an access at the end.
    #expect(reads.map { $0["ts"] as? Double } == [2])
    #expect(accesses.map { $0["ts"] as? Double } == [3])
    #expect(accesses.first?["cat"] as? String == "access at end")
  }

  @Test("a trace cut short (its footer lost): every thread's last access is said as at the end")
  func truncated() throws {
    let whole = try Self.trace(runningAtStop: [])
    defer { try? FileManager.default.removeItem(atPath: whole) }
    let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
    let path = whole + ".cut"
    // The last 20 bytes: the footer, cut in the middle (the events' chunks are whole).
    try bytes.prefix(bytes.count - 20).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (property, findings) = try Self.reportJSON(path)
    #expect(property["reads"] as? Int == 0)
    #expect(property["accessesAtEnd"] as? Int == 2)
    #expect(findings.count == 1)
    #expect(
      findings.first?["message"] as? String
        == "2 accesses of Model.<property #1> outside any tracking scope at the end of the recording: each a read, "
        + "or the start of a write through _modify that the recording did not reach")
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardOutput.split(separator: "\n").filter { $0.contains("access of ") }.count == 2)
  }

  @Test("no thread running at the stop and a whole trace: each thread's last read is counted as a read")
  func wholeTrace() throws {
    let path = try Self.trace(runningAtStop: [])
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (property, findings) = try Self.reportJSON(path)
    #expect(property["reads"] as? Int == 2)
    #expect(property["accessesAtEnd"] == nil)
    #expect(findings.map { $0["count"] as? Int } == [2])
    #expect((findings.first?["message"] as? String)?.contains("at the end") == false)
    let timeline = Run.command(["timeline", path])
    #expect(!timeline.standardOutput.contains("access of "), "\(timeline.standardOutput)")
    let instants = try Self.exportedInstants(path)
    #expect(instants.filter { ($0["name"] as? String)?.hasPrefix("read ") == true }.count == 2)
    let accesses = instants.filter { ($0["name"] as? String)?.hasPrefix("access ") == true }
    #expect(accesses.count == 0)
  }
}
