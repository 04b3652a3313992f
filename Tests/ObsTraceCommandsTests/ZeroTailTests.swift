import Foundation
import ObsTraceFormat
import Testing

/// A trace whose last bytes are zeros (a preallocated file, or a crash that left zeros where the last data should
/// be) is said as what it is: zeros never written, after everything whole that is read. Before, the zeros were a
/// "damaged chunk … no chunk starts here" (there was none), and a trace with its footer before them was TRUNCATED.
@Suite("Zeros at a trace's end")
struct ZeroTailTests {
  @Test("zeros after the last whole chunk, no footer: truncated, said as zeros never written, every event before read")
  func zerosInsteadOfTheFooter() throws {
    let (bytes, chunks) = try GuideTrace.read()
    let footer = try #require(chunks.last { $0.type == .footer }).range
    let path = try GuideTrace.write(bytes.prefix(Int(footer.lowerBound)) + Data(count: 4096), "zeros.trc")
    let (reader, count) = try GuideTrace.events(path)
    let (_, whole) = try GuideTrace.events(GuideTrace.path)
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
    #expect(
      timeline.errorLines == [
        "obstrace timeline: note: \(path) is TRUNCATED: \(said); read everything whole before it (said at the end of the timeline)"
      ])
    let dump = Run.command(["dump", path])
    #expect(dump.standardOutput.contains("\n# truncated \(said)\n"))
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 1)
    #expect(check.standardOutput.contains("FAILED: the trace's end was never written (it ends in zero bytes)"))
  }

  @Test("zeros after the footer: complete, nothing lost, nothing damaged; dump says the zeros")
  func zerosAfterTheFooter() throws {
    let (bytes, _) = try GuideTrace.read()
    let path = try GuideTrace.write(bytes + Data(count: 4096), "preallocated.trc")
    let (reader, count) = try GuideTrace.events(path)
    let (_, whole) = try GuideTrace.events(GuideTrace.path)
    #expect(count == whole)
    #expect(!reader.truncated)
    #expect(reader.damage.isEmpty)
    #expect(
      reader.zeroTail?.description
        == "at byte \(bytes.count): the file ends in 4096 zero bytes after its last whole chunk: its end was never written"
    )
    let report = Run.command(["report", path])
    #expect(report.standardOutput.contains(", complete"))
    #expect(!report.standardOutput.contains("TRUNCATED") && !report.standardOutput.contains("damaged"))
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 0)
    let timeline = Run.command(["timeline", path])
    #expect(timeline.standardError.isEmpty)
    #expect(
      Run.command(["dump", path]).standardOutput.contains(
        "\n# complete at byte \(bytes.count): the file ends in 4096 zero bytes"))
  }

  @Test("zeros from inside the last events chunk: that chunk was never wholly written, not damaged")
  func zerosInsideAChunk() throws {
    let (bytes, chunks) = try GuideTrace.read()
    let last = try #require(chunks.last { $0.type == .events }).range
    let cut = Int(last.lowerBound) + 30
    let path = try GuideTrace.write(bytes.prefix(cut) + Data(count: 2000), "half.trc")
    let (reader, _) = try GuideTrace.events(path)
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
    let (bytes, chunks) = try GuideTrace.read()
    let footer = try #require(chunks.last { $0.type == .footer }).range
    let path = try GuideTrace.write(
      bytes.prefix(Int(footer.lowerBound)) + Data(repeating: 0x41, count: 100), "garbage.trc")
    let (reader, _) = try GuideTrace.events(path)
    #expect(reader.zeroTail == nil)
    #expect(reader.damage.count == 1 && reader.damage.listed.map(\.offset) == [footer.lowerBound])
  }
}

extension ZeroTailTests {
  /// A fresh-clone try-out's Q13 (session 17): a footer with one byte of its compressed data changed was told as a
  /// chunk "never wholly written: the file ends in 1 zero byte" (the deflate stream's own last byte), and its
  /// damage was never said.
  @Test("a damaged last chunk whose data ends in a zero byte is damage, not an end never written")
  func damagedFooterIsDamage() throws {
    let (bytes, chunks) = try GuideTrace.read()
    let footer = try #require(chunks.last { $0.type == .footer }).range
    #expect(bytes.last == 0)
    var damaged = bytes
    damaged[Int(footer.lowerBound + footer.upperBound) / 2] ^= 0x01
    let path = try GuideTrace.write(damaged, "flipped-footer.trc")
    let (reader, _) = try GuideTrace.events(path)
    #expect(reader.zeroTail == nil)
    #expect(reader.truncated)
    #expect(reader.malformedFooter?.offset == footer.lowerBound)
    #expect(reader.malformedFooter?.message == TraceReader.damagedFooterMessage)
    let report = Run.command(["report", path])
    #expect(!report.standardOutput.contains("never wholly written"))
    #expect(
      report.standardOutput.contains(
        "INCOMPLETE: the footer at byte \(footer.lowerBound) is damaged (its checksum does not match) (what the "
          + "recording lost is not known)"), "\(report.standardOutput)")
    let dump = Run.command(["dump", path])
    #expect(
      dump.standardOutput.contains(
        "# the footer at byte \(footer.lowerBound) is damaged (its checksum does not match): the recording wrote it"))
    // Another chunk damaged the same way is a damaged chunk, not a footer.
    let events = try #require(chunks.first { $0.type == .events }).range
    var other = bytes
    other[Int(events.lowerBound + events.upperBound) / 2] ^= 0x01
    let (otherReader, _) = try GuideTrace.events(try GuideTrace.write(other, "flipped-events.trc"))
    #expect(otherReader.malformedFooter == nil)
    #expect(otherReader.damage.listed.map(\.offset) == [events.lowerBound])
  }
}
