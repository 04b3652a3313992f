import Foundation
import Testing

/// A trace with many damaged spots (tryout14's H2: a header, then the chunk magic `OTCK` over and over, each a chunk
/// whose length runs past the end of the file): every spot is skipped and counted, and the report stays short.
@Suite("Many damaged chunks")
struct ManyDamagedChunksTests {
  /// traces/guide.trc's header followed by `spots` copies of the chunk magic.
  static func trace(spots: Int) throws -> String {
    let guide = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/guide.trc"))
    let magic = Data("OTCK".utf8)
    let header = guide[..<(guide.range(of: magic)?.lowerBound ?? guide.endIndex)]
    let path = Paths.temporary("many-damaged-\(spots).trc")
    var bytes = Data(header)
    for _ in 0..<spots { bytes.append(magic) }
    try bytes.write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test("the report lists the first 20 damaged chunks and says the rest in one finding, with their count and bytes")
  func restInOneFinding() throws {
    let path = try Self.trace(spots: 50)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let trace = try #require(object["trace"] as? [String: Any])
    let damaged = try #require(trace["damagedChunks"] as? Int)
    #expect(damaged > 40, "every spot is counted: \(trace)")
    let findings = try #require(object["findings"] as? [[String: Any]])
    let chunks = findings.filter { $0["kind"] as? String == "damaged-chunk" }
    #expect(chunks.count == 21, "\(chunks.count) damaged-chunk findings")
    #expect(chunks.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == damaged, "\(chunks)")
    let rest = try #require(chunks.first { ($0["count"] as? Int ?? 0) > 1 })
    let message = try #require(rest["message"] as? String)
    #expect(message.hasPrefix("\(damaged - 20) more damaged chunks, from byte "), "\(message)")
    // The text report: 21 findings of three lines, not one per spot.
    let text = Run.command(["report", path]).standardOutput
    #expect(text.components(separatedBy: "[damaged-chunk]").count == 22, "\(text)")
    // The timeline's loss lines at its end: 20 damaged chunks and one line for the rest.
    let timeline = Run.command(["timeline", path]).standardOutput
    #expect(timeline.components(separatedBy: "damaged chunk at byte").count == 21, "\(timeline)")
    #expect(timeline.contains("\(damaged - 20) more chunks skipped from byte "), "\(timeline)")
  }

  @Test("dump lists every damaged spot, in file order, past the 20 the reader keeps (it reads the file again for them)")
  func dumpListsEvery() throws {
    let path = try Self.trace(spots: 50)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let json = Run.command(["report", path, "--format", "json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let damaged = try #require((object["trace"] as? [String: Any])?["damagedChunks"] as? Int)
    let dump = Run.command(["dump", path])
    #expect(dump.status == 0, "\(dump.standardError)")
    let lines = dump.standardOutput.split(separator: "\n").filter { $0.hasPrefix("# damage at byte ") }
    #expect(lines.count == damaged && damaged > 40, "\(lines.count) of \(damaged)")
    let offsets = lines.compactMap { Int($0.dropFirst("# damage at byte ".count).prefix { $0 != ":" }) }
    #expect(offsets.count == lines.count && offsets == offsets.sorted() && Set(offsets).count == offsets.count)
  }
}
