import Foundation
import Testing

/// A thread's chunks are written once each, in order: a copy of one (tryout14's H1: a file whose events chunk was
/// repeated 300 times read as a complete trace, every count × 300, and `baseline` wrote it) is skipped and said.
@Suite("Repeated chunks")
struct RepeatedChunkTests {
  /// traces/guide.trc with its events chunks written `copies` times, then its other chunks.
  static func trace(copies: Int) throws -> String {
    let guide = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/guide.trc")))
    let magic = Array("OTCK".utf8)
    var start = 0
    while !guide[start..<(start + 4)].elementsEqual(magic) { start += 1 }
    var events: [UInt8] = []
    var others: [UInt8] = []
    var offset = start
    while offset + 17 <= guide.count, guide[offset..<(offset + 4)].elementsEqual(magic) {
      let length = guide[(offset + 5)..<(offset + 9)].reversed().reduce(0) { $0 << 8 | Int($1) }
      let chunk = guide[offset..<(offset + 17 + length)]
      if guide[offset + 4] == 1 { events += chunk } else { others += chunk }
      offset += 17 + length
    }
    #expect(!events.isEmpty && !others.isEmpty)
    var bytes = Array(guide[..<start])
    for _ in 0..<copies { bytes += events }
    bytes += others + guide[offset...]
    let path = Paths.temporary("repeated-\(copies).trc")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("copies of a thread's chunk are skipped and said: the counts are the trace's own, and check refuses it")
  func copiesSkipped() throws {
    let original = Run.command(["report", Paths.root + "/traces/guide.trc", "--format", "json"])
    let whole = try #require(try JSONSerialization.jsonObject(with: Data(original.standardOutput.utf8)) as? [String: Any])
    let wholeTrace = try #require(whole["trace"] as? [String: Any])
    let path = try Self.trace(copies: 4)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let trace = try #require(object["trace"] as? [String: Any])
    #expect(trace["events"] as? Int == wholeTrace["events"] as? Int, "\(trace)")
    #expect(trace["damagedChunks"] as? Int == 3, "\(trace)")
    let text = Run.command(["report", path]).standardOutput
    #expect(text.contains("T1's chunk #0 again, after its chunk #0"), "\(text)")
    // Said as copies, not as damage that lost events.
    #expect(text.contains("3 copies of chunks already read skipped (their events were read once)"), "\(text)")
    #expect(!text.contains("damaged chunks skipped"), "\(text)")
    #expect(text.contains("its events were read once; nothing is lost by it"), "\(text)")
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardError.contains("skipped (T1's chunk #0 again"), "\(timeline.standardError)")
    #expect(!timeline.standardError.contains("its events are lost"), "\(timeline.standardError)")
    // The property's counts are the original's, not four times them.
    let properties = try #require(object["properties"] as? [[String: Any]])
    let wholeProperties = try #require(whole["properties"] as? [[String: Any]])
    #expect(properties.map { $0["writes"] as? Int } == wholeProperties.map { $0["writes"] as? Int })
    // A trace with copies is not whole: no baseline from it.
    let baseline = Run.command(["baseline", path, "-o", Paths.temporary("repeated.json")])
    #expect(baseline.status == 2, "\(baseline.standardOutput) \(baseline.standardError)")
    // Said as copies, as the report says them, not as damage (tryout15's K3).
    #expect(
      baseline.standardError.contains("3 copies of chunks already read were skipped")
        && !baseline.standardError.contains("damaged"), "\(baseline.standardError)")
  }
}
