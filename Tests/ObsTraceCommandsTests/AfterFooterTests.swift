import Foundation
import ObsTraceFormat
import Testing

/// Bytes after a trace's footer, and a trace whose symbol table was damaged, said as what they are (tryout10 N5,
/// N7). Before, bytes after the footer made a complete trace "cut short (the process was killed or crashed)", or,
/// when they were many, a damaged chunk and "no footer"; and `check --max` on a trace that lost its symbol table
/// said the user's name was wrong.
@Suite("Bytes after the footer, names lost")
struct AfterFooterTests {
  /// 5000 bytes of a seeded generator, none of them the chunk magic's first byte (so no chunk can begin in them).
  static func garbage(_ count: Int) -> Data {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    return Data(
      (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let byte = UInt8(truncatingIfNeeded: state >> 56)
        return byte == UInt8(ascii: "O") ? 1 : byte
      })
  }

  @Test(
    "a few bytes, many bytes, or a whole second trace after the footer: the trace is complete and read once, every command says the bytes are not part of it, check and baseline work from it"
  )
  func bytesAfterTheFooter() throws {
    let (bytes, _) = try GuideTrace.read()
    let (_, whole) = try GuideTrace.events(GuideTrace.path)
    let cases: [(name: String, tail: Data)] = [
      ("hello.trc", Data("hello\n".utf8)), ("garbage.trc", Self.garbage(5000)), ("doubled.trc", bytes),
      // Junk, then zeros: not the zeros of an end never written.
      ("junk-then-zeros.trc", Data("junk".utf8) + Data(count: 100)),
    ]
    for (name, tail) in cases {
      let path = try GuideTrace.write(bytes + tail, name)
      let (reader, count) = try GuideTrace.events(path)
      #expect(count == whole, "\(name)")
      #expect(!reader.truncated, "\(name)")
      #expect(reader.damage.isEmpty, "\(name)")
      #expect(reader.cutAt == nil && reader.zeroTail == nil, "\(name)")
      let said =
        "at byte \(bytes.count): the file goes on for \(tail.count) bytes after the trace's footer (the last thing a "
        + "recording writes), not part of the trace: ignored"
      #expect(reader.afterFooter?.description == said, "\(name)")

      let report = Run.command(["report", path])
      #expect(report.status == 0)
      #expect(report.standardOutput.contains(", complete; \(said)\n"), "\(name): \(report.standardOutput)")
      #expect(!report.standardOutput.contains("TRUNCATED") && !report.standardOutput.contains("damaged"))
      #expect(!report.standardOutput.contains("[truncated]"))

      let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
      #expect(check.status == 0, "\(name): \(check.standardOutput)")
      #expect(check.standardOutput.contains("\n  note: \(said)\n"), "\(name): \(check.standardOutput)")
      #expect(!check.standardOutput.contains("killed or crashed"))
      let failing = Run.command(["check", path, "--max", "Model.property:writes<=1"])
      #expect(failing.status == 1)
      let github = Run.command(["check", path, "--max", "Model.property:writes<=100", "--format", "github"])
      #expect(github.status == 0)
      #expect(github.errorLines == ["obstrace check: note: \(path): \(said)"])

      let baselinePath = Paths.temporary("after-footer.json")
      let baseline = Run.command(["baseline", path, "-o", baselinePath])
      #expect(baseline.status == 0, "\(name): \(baseline.standardError)")
      #expect(baseline.errorLines.first == "obstrace baseline: note: \(path): \(said)")
      #expect(baseline.errorLines.count == 2 && baseline.errorLines[1].hasPrefix("obstrace baseline: wrote "))
      let against = Run.command(["check", GuideTrace.path, "--baseline", baselinePath])
      #expect(against.status == 0, "\(against.standardOutput)")

      for command in ["timeline", "graph"] {
        let result = Run.command([command, path])
        #expect(result.status == 0)
        #expect(result.errorLines == ["obstrace \(command): note: \(path): \(said)"], "\(name) \(command)")
      }
      let export = Run.command(["export", path, "-o", Paths.temporary("after-footer.json"), "--format", "chrome-json"])
      #expect(export.status == 0, "\(export.standardError)")
      #expect(export.errorLines == ["obstrace export: note: \(path): \(said)"])
      // symbolize copies them as they are, and says so; the rewritten trace reads as the input.
      let symbolized = Paths.temporary("after-footer-symbolized.trc")
      let symbolize = Run.command(["symbolize", path, "-o", symbolized])
      #expect(
        symbolize.errorLines.first?.hasSuffix(
          "wrote \(symbolized) (still the bytes after its footer, from byte \(bytes.count), as the input)") == true,
        "\(name): \(symbolize.standardError)")
      let (again, againCount) = try GuideTrace.events(symbolized)
      #expect(againCount == whole && again.afterFooter != nil && !again.truncated, "\(name)")
      let dump = Run.command(["dump", path])
      #expect(dump.standardOutput.contains("\n# \(said)\n"), "\(name)")
      #expect(!dump.standardOutput.contains("TRUNCATED") && !dump.standardOutput.contains("# damage"))
    }
  }

  @Test(
    "check --max on a trace whose symbol table chunk is damaged says the trace's names are not known, and why; not that the name is wrong"
  )
  func namesLostToDamage() throws {
    let (bytes, chunks) = try GuideTrace.read()
    let symbols = try #require(chunks.first { $0.type == .symbols }).range
    var flipped = bytes
    flipped[Int(symbols.lowerBound) + 40] ^= 0x10
    let path = try GuideTrace.write(flipped, "symbols-flipped.trc")
    let check = Run.command(["check", path, "--max", "Model.property:writes<=100"])
    #expect(check.status == 2)
    #expect(check.errorLines.count == 1)
    #expect(
      check.standardError.hasPrefix(
        "obstrace check: --max 'Model.property:writes<=100' names no property or scope of \(path), whose property "
          + "names are not known: its symbol table is missing, and 1 damaged chunk was skipped (first at byte "
          + "\(symbols.lowerBound)): the recording stopped cleanly, which writes one, so it was likely damaged, so they "
          + "are named by type and number (known: Model.<Int #"), "\(check.standardError)")
    #expect(
      check.standardError.hasSuffix(
        "'obstrace symbolize \(path)' names them from the binaries it was recorded from, if they are still there\n"))

    // Without a footer (killed before its stop): no table was written.
    let footer = try #require(chunks.last { $0.type == .footer }).range
    let cut = bytes.prefix(Int(symbols.lowerBound)) + bytes[Int(symbols.upperBound)..<Int(footer.lowerBound)]
    let killed = try GuideTrace.write(cut, "symbols-never-written.trc")
    let unnamed = Run.command(["check", killed, "--max", "Model.property:writes<=100"])
    #expect(unnamed.status == 2)
    #expect(
      unnamed.standardError.contains(
        "whose property names are not known: it has no symbol table (the recording did not stop cleanly, and the "
          + "table is written at the stop)"), "\(unnamed.standardError)")

    // A name the trace does not have, in a trace with its names: the name is said to be unknown, as before.
    let typo = Run.command(["check", GuideTrace.path, "--max", "Model.propperty:writes<=100"])
    #expect(typo.status == 2)
    #expect(
      typo.standardError
        == "obstrace check: --max 'Model.propperty:writes<=100' names no property or scope of \(GuideTrace.path); closest: Model.property, Model.otherProperty\n"
    )
  }
}
