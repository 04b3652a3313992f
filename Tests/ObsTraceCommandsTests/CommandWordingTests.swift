import Foundation
import Testing

/// What a new user met in the commands' words (a fresh-clone try-out's M2, M3, M4, M7, M8): each line says what was
/// typed, why, and what it counts.
@Suite("Commands' words")
struct CommandWordingTests {
  static let guide = Paths.root + "/traces/guide.trc"

  @Test("--thread echoes what was typed; --object that names no object lists the trace's objects, as --scope does")
  func unknownThreadAndObject() {
    let thread = Run.command(["timeline", Self.guide, "--thread", "T9"])
    #expect(thread.status == 2)
    #expect(
      thread.standardError == "obstrace timeline: --thread T9 is not a thread of \(Self.guide) (its threads: T1)\n")
    let object = Run.command(["timeline", Self.guide, "--object", "99"])
    #expect(object.status == 2)
    #expect(
      object.standardError
        == "obstrace timeline: --object 99 is not an object of \(Self.guide) (its objects: Model#1, Model#2)\n")
  }

  @Test("check --baseline of a file it cannot read says why")
  func unreadableBaseline() {
    let missing = Paths.temporary("nonexist.json")
    let result = Run.command(["check", Self.guide, "--baseline", missing])
    #expect(result.status == 2)
    #expect(result.standardError == "obstrace check: cannot read the baseline \(missing) (No such file or directory)\n")
    let folder = (missing as NSString).deletingLastPathComponent
    let directory = Run.command(["check", Self.guide, "--baseline", folder])
    #expect(directory.standardError == "obstrace check: cannot read the baseline \(folder) (it is a directory)\n")
  }

  @Test("the timeline of a trace with no events says there is nothing to show, not that nothing matches a filter")
  func emptyTrace() throws {
    // The guide's header, then zeros (a recording that wrote nothing more).
    let (bytes, chunks) = try GuideTrace.read()
    let header = bytes.prefix(Int(chunks[0].range.lowerBound)) + Data(count: 64)
    let path = try GuideTrace.write(header, "empty.trc")
    let empty = Run.command(["timeline", path])
    #expect(empty.status == 0)
    #expect(
      empty.standardOutput.split(separator: "\n").prefix(2)
        == ["time (ms)  thread  what", "(nothing to show: the trace has no scope run, write or fire)"])
    // A filter that matches nothing in a trace that has events: that is what is said.
    let filtered = Run.command(["timeline", Self.guide, "--from", "1000"])
    #expect(filtered.standardOutput == "time (ms)  thread  what\n(nothing matches)\n")
  }

  @Test("timeline --help says what a run's number counts")
  func runNumbers() {
    let help = Run.command(["timeline", "--help"]).standardOutput
    #expect(help.contains("The number of a run (#3) is its serial in the whole trace, not its rank"), "\(help)")
  }

  @Test("timeline --object shows the object's creation and its free, in time order among its lines")
  func objectFreed() {
    let trace = Paths.root + "/traces/fan-out.trc"
    let result = Run.command(["timeline", trace, "--object", "Theme#1"])
    #expect(result.status == 0)
    let lines = result.standardOutput.split(separator: "\n").map(String.init)
    #expect(lines[1].hasSuffix("  T1     created Theme#1"), "\(lines)")
    #expect(lines.last?.hasSuffix("  T1     freed Theme#1") == true, "\(lines)")
    #expect(lines.filter { $0.contains("created ") || $0.contains("freed ") }.count == 2)
    // Without --object, no such lines (the unfiltered timeline is as it was).
    let whole = Run.command(["timeline", trace]).standardOutput
    #expect(!whole.contains("freed Theme#1") && !whole.contains("created Theme#1"))
    // Another object's filter shows none of Theme#1's.
    #expect(!Run.command(["timeline", trace, "--object", "2"]).standardOutput.contains("Theme#1"))
  }
}
