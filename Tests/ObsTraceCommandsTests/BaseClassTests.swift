import Foundation
import ObsTraceFormat
import Testing

/// A non-final `@Observable` base class read first through a computed property inlined into another file: in a
/// build made as `swift build -c release` makes it, the key path the recorder first meets for the base class's
/// property has a getter thunk with no symbol (a fresh-clone try-out's N3). The property is named through it
/// (2ff60fb), and its writes through `_modify` are compared through it too: the fixture Tests/Fixtures/BaseClass.
@Suite("Base class")
struct BaseClassTests {
  @Test(
    "a base class's writes through _modify are compared, and the no-op one found, in debug and release",
    arguments: ["-Onone", "-O"])
  func comparedThroughTheThunk(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/BaseClass"
    let sources = [folder + "/main.swift", folder + "/Models.swift"]
    let (run, _, trace) = try FixtureBuild.sideBySide(
      sources, module: "BaseClass", optimization: optimization, trace: "base-class\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(run.standardOutput == "owner Rex (0)\nowner Rex (0)\nowner Rex (1)\nfired 2, Rex (1), collie!\n")
    let marks = try FixtureBuild.siteMarks(folder + "/main.swift")
    let report = Run.command(["report", trace]).standardOutput
    #expect(report.contains("  Animal.age "), "\(report)")
    #expect(!report.contains("<Int #") && !report.contains("not named by the symbol table"), "\(report)")
    // age's two writes compared (one unchanged, one changed); breed's (a String) not, for its type.
    #expect(
      report.contains(
        "writes through _modify: 2 compared, 1 not compared (not trivially copyable or over 64 bytes: arrays, "
          + "strings, …): OBSTRACE_COMPARE=equatable compares the Equatable ones"), "\(report)")
    #expect(
      report.contains("[noop-write]") && report.contains("at BaseClass/main.swift:\(marks["unchanged"] ?? 0)"), "\(report)")
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.contains("Dog#1.age by _modify UNCHANGED"), "\(timeline)")
    #expect(timeline.contains("Dog#1.age by _modify changed"), "\(timeline)")
    #expect(timeline.contains("Dog#1.breed by _modify written (not compared: not trivially copyable)"), "\(timeline)")
  }
}
