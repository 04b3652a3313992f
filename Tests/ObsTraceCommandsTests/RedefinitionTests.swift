import Foundation
import Testing

@testable import ObsTraceFormat

/// A fresh-clone try-out's J9: a trace whose second chunk defined type 1 and property 1 again with other meanings
/// (`Shop.A` then `Shop.B`) was read without a word: the report named both writes `B.<String #1>`, the timeline
/// `A#1.<Int #1>`, the status "complete", and `baseline` wrote a baseline of it. A recorder gives each id one meaning
/// for the whole trace, so such a file is damaged or forged: it is now an inconsistency, counted and said with the
/// first such definition in every command, and check and baseline refuse it as they refuse undefined ids.
@Suite("Definitions that contradict")
struct RedefinitionTests {
  final class Names: @unchecked Sendable {
    var type = "Fixture.A"
    var description = "\\A.<computed 0x1 (Int)>"
  }

  /// Two chunks of thread 1, each a write of object 1's property 1; between them, `contradicting` changes what type 1
  /// and property 1 are (else the second chunk restates them unchanged).
  static func trace(contradicting: Bool) throws -> String {
    let names = Names()
    let definitions = SyntheticDefinitions(
      typeName: { _ in names.type },
      property: { _ in PropertyDefinition(rootType: 1, keyPathDescription: names.description, getterAddress: 0) })
    var trace = try SyntheticTrace("redefinition", definitions: definitions)
    for sequence in 0..<2 {
      if sequence == 1 && contradicting {
        names.type = "Fixture.B"
        names.description = "\\B.<computed 0x1 (String)>"
      }
      var chunk = trace.chunk(sequence: UInt64(sequence), firstTime: 1000 + 10_000 * UInt64(sequence))
      trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1)
      trace.next(&chunk, .didSet, flags: EventFlags.changed, object: 1, key: 1, aux: 1)
      try trace.write(chunk, threadEnded: sequence == 1)
    }
    return try trace.finish()
  }

  @Test("a definition that gives an id another meaning is an inconsistency every command says, and check and baseline refuse")
  func contradictionIsSaid() throws {
    let path = try Self.trace(contradicting: true)
    let first = #"type #1: "Fixture.A", then "Fixture.B""#
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    #expect(
      report.standardOutput.contains(
        "warning [inconsistent-trace] the trace is inconsistent: 2 definitions gave an id already defined another "
          + "meaning (first: \(first))"), "\(report.standardOutput)")
    let timeline = Run.command(["timeline", path]).standardOutput
    #expect(
      timeline.contains("! the trace is inconsistent: 2 definitions gave an id already defined another meaning "
        + "(first: \(first))"), "\(timeline)")
    let dump = Run.command(["dump", path]).standardOutput
    #expect(dump.contains("# inconsistent: 2 definitions gave an id already defined another meaning"), "\(dump)")
    let baseline = Paths.temporary("redefinition-baseline.json")
    let refused = Run.command(["baseline", path, "-o", baseline])
    #expect(refused.status == 2)
    #expect(refused.standardError.contains("(first: \(first)): the trace is damaged"), "\(refused.standardError)")
    #expect(!FileManager.default.fileExists(atPath: baseline))
    #expect(Run.command(["baseline", path, "-o", baseline, "--allow-incomplete"]).status == 0)
    let check = Run.command(["check", path, "--baseline", baseline])
    #expect(check.status == 1, "\(check.standardOutput)")
    #expect(check.standardOutput.contains("gave an id already defined another meaning"), "\(check.standardOutput)")
  }

  /// Chunks restate what their events use: restated unchanged, nothing is said.
  @Test("definitions restated unchanged in a later chunk are not an inconsistency")
  func restatementIsNot() throws {
    let path = try Self.trace(contradicting: false)
    let report = Run.command(["report", path]).standardOutput
    #expect(report.contains("  A.<Int #1> "), "\(report)")
    #expect(!report.contains("inconsistent"), "\(report)")
    #expect(!Run.command(["timeline", path]).standardOutput.contains("inconsistent"))
    #expect(Run.command(["baseline", path, "-o", Paths.temporary("restated-baseline.json")]).status == 0)
  }
}
