import Foundation
import ObsTraceFormat
import Testing

/// A trace whose last bytes are zeros (a preallocated file, or a crash that left zeros where the last data should
/// be) is said as what it is: zeros never written, after everything whole that is read. Before, the zeros were a
/// "damaged chunk … no chunk starts here" (there was none), and a trace with its footer before them was TRUNCATED.
@Suite("Zeros at a trace's end")
struct ZeroTailTests {
  /// `traces/guide.trc`'s bytes and its whole chunks' ranges and types.
  static func guide() throws -> (bytes: Data, chunks: [(type: ChunkType, range: Range<UInt64>)]) {
    let source = Paths.root + "/traces/guide.trc"
    var chunks: [(type: ChunkType, range: Range<UInt64>)] = []
    try TraceReader(path: source).forEachWholeChunkRange { type, range in chunks.append((type, range)) }
    return (try Data(contentsOf: URL(fileURLWithPath: source)), chunks)
  }

  static func write(_ bytes: Data, _ name: String) throws -> String {
    let path = Paths.temporary(name)
    try bytes.write(to: URL(fileURLWithPath: path))
    return path
  }

  static func events(_ path: String) throws -> (reader: TraceReader, count: Int) {
    let reader = try TraceReader(path: path)
    var count = 0
    reader.forEachEvent { _ in count += 1 }
    return (reader, count)
  }

  @Test("zeros after the last whole chunk, no footer: truncated, said as zeros never written, every event before read")
  func zerosInsteadOfTheFooter() throws {
    let (bytes, chunks) = try Self.guide()
    let footer = try #require(chunks.last { $0.type == .footer }).range
    let path = try Self.write(bytes.prefix(Int(footer.lowerBound)) + Data(count: 4096), "zeros.trc")
    let (reader, count) = try Self.events(path)
    let (_, whole) = try Self.events(Paths.root + "/traces/guide.trc")
    #expect(count == whole)
    #expect(reader.truncated)
    #expect(reader.damage.isEmpty)
    #expect(reader.cutAt == nil)
    let said =
      "at byte \(footer.lowerBound): the file ends in 4096 zero bytes after its last whole chunk: its end was never written"
    #expect(reader.zeroTail?.description == said)

    let report = Run.command(["report", path])
    #expect(report.status == 0)
    #expect(!report.standardOutput.contains("damaged"))
    #expect(
      report.standardOutput.contains(
        "warning [truncated] the trace is truncated: \(said) (a preallocated file, or the system stopped before the "
          + "data reached the disk); read everything whole before it"))
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardOutput.contains("\n!   \(said); read everything whole before it\n"))
    #expect(timeline.errorLines == ["obstrace timeline: note: \(path) is TRUNCATED: \(said); read everything whole before it (said at the end of the timeline)"])
    let dump = Run.command(["dump", path])
    #expect(dump.standardOutput.contains("\n# truncated \(said)\n"))
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 1)
    #expect(check.standardOutput.contains("FAILED: the trace's end was never written (it ends in zero bytes)"))
  }

  @Test("zeros after the footer: complete, nothing lost, nothing damaged; dump says the zeros")
  func zerosAfterTheFooter() throws {
    let (bytes, _) = try Self.guide()
    let path = try Self.write(bytes + Data(count: 4096), "preallocated.trc")
    let (reader, count) = try Self.events(path)
    let (_, whole) = try Self.events(Paths.root + "/traces/guide.trc")
    #expect(count == whole)
    #expect(!reader.truncated)
    #expect(reader.damage.isEmpty)
    #expect(
      reader.zeroTail?.description
        == "at byte \(bytes.count): the file ends in 4096 zero bytes after its last whole chunk: its end was never written")
    let report = Run.command(["report", path])
    #expect(report.standardOutput.contains(", complete"))
    #expect(!report.standardOutput.contains("TRUNCATED") && !report.standardOutput.contains("damaged"))
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 0)
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardError.isEmpty)
    #expect(Run.command(["dump", path]).standardOutput.contains("\n# complete at byte \(bytes.count): the file ends in 4096 zero bytes"))
  }

  @Test("zeros from inside the last events chunk: that chunk was never wholly written, not damaged")
  func zerosInsideAChunk() throws {
    let (bytes, chunks) = try Self.guide()
    let last = try #require(chunks.last { $0.type == .events }).range
    let cut = Int(last.lowerBound) + 30
    let path = try Self.write(bytes.prefix(cut) + Data(count: 2000), "half.trc")
    let (reader, _) = try Self.events(path)
    #expect(reader.truncated)
    #expect(reader.damage.isEmpty)
    let size = cut + 2000
    #expect(
      reader.zeroTail?.description
        == "at byte \(last.lowerBound): the chunk here was never wholly written: the file ends in \(size - cut) zero bytes from byte \(cut)"
    )
  }

  @Test("a chunk damaged by other bytes than zeros is still damage")
  func otherBytesAreDamage() throws {
    let (bytes, chunks) = try Self.guide()
    let footer = try #require(chunks.last { $0.type == .footer }).range
    let path = try Self.write(bytes.prefix(Int(footer.lowerBound)) + Data(repeating: 0x41, count: 100), "garbage.trc")
    let (reader, _) = try Self.events(path)
    #expect(reader.zeroTail == nil)
    #expect(reader.damage.map(\.offset) == [footer.lowerBound])
  }
}
