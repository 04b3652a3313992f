import Foundation
import ObsTraceAnalysis
import ObsTraceFormat
import Testing

/// The stack a traced program takes, side by side with the program built without ObsTrace (tryout14's H10: a traced
/// level of nested tracking took 2.1x the stack of Observation's own even not recording, and a recursive tracked
/// render that ran untraced overflowed its stack traced, SIGSEGV).
@Suite("Stack per tracking level")
struct StackDepthTests {
  /// The worker's stack, in KiB. Stack use is fixed by the code built, not by timing or load: these results do not
  /// vary from run to run.
  static let stackKiB = 256
  /// The depth run untraced and traced not recording. Untraced, the deepest plain render that fits 256 KiB is 452
  /// levels built -Onone and 575 built -O (528 and 416 bytes a level, plus the thread's own frames). Not recording,
  /// a traced level is Observation's own and one small frame of ObsTrace's (896 and 720 bytes a level: 265 and 330
  /// levels fit; a harness's 768 and 560: 309 and 426): 220 leaves a sixth to spare. Before, a traced level took
  /// 1,568 and 1,392 bytes not recording: 149 and 169 levels fitted (a harness, 137 and 157), so this fails there.
  static let depth = 220
  /// The depth run recording. The fixtures link the debug build of ObsTrace (the suite's), whose unoptimized frames
  /// a recorded level adds: 1,493 bytes a level built -Onone and 1,317 built -O (157 and 181 levels fit 256 KiB,
  /// 143 and 160 before): this guards against a recorded level growing, it does not show H10.
  static let recordingDepth = 120

  /// The kinds of nesting of Tests/Fixtures/DeepTracking (its header says what each is).
  static let kinds = ["plain", "named", "harness", "scope"]

  @Test(
    "a recursive tracked render that fits a small stack untraced fits it traced, not recording and recording",
    arguments: ["-Onone", "-O"])
  func recursiveRender(optimization: String) throws {
    let source = Paths.root + "/Tests/Fixtures/DeepTracking/main.swift"
    let traced = try FixtureBuild.compile(
      [source], module: "DeepTracking", optimization: optimization, flags: ["-DOBSTRACE"])
    let untraced = try FixtureBuild.compile([source], module: "DeepTracking", optimization: optimization)
    let marks = try FixtureBuild.siteMarks(source)
    for kind in Self.kinds {
      for (depth, recording) in [(Self.depth, false), (Self.recordingDepth, true)] {
        let arguments = [kind, String(depth), String(Self.stackKiB)]
        let alone = try Run.program(untraced, arguments)
        let fires = kind == "scope" ? 1 : depth + 1
        #expect(alone.status == 0, "\(kind) untraced, depth \(depth): \(alone.standardError)")
        #expect(alone.standardOutput == "\(kind): depth \(depth) fires \(fires)\n")
        // An empty OBSTRACE_OUTPUT: no recording starts.
        let trace = Paths.temporary("deep-\(kind)\(optimization).trc")
        let run = try Run.program(traced, arguments, environment: ["OBSTRACE_OUTPUT": recording ? trace : ""])
        let mode = recording ? "recording" : "not recording"
        #expect(run.status == 0, "\(kind) traced, \(mode), depth \(depth): status \(run.status)")
        #expect(run.standardOutput == alone.standardOutput, "\(kind) traced, \(mode)")
        guard recording else {
          #expect(!FileManager.default.fileExists(atPath: trace))
          continue
        }
        // The recording saw every level: a scope a level, labelled as it should be (and the scope kind's one
        // tracking around them, first). Untraced scopes are left out: past 64 levels (OBSTRACE_SCOPE_STACK_DEPTH)
        // ObsTrace's scope stack keeps no tracking pointer, and reads there begin untraced scopes that do not exist,
        // as before this change (a finding of its own, not this test's).
        let reader = try TraceReader(path: trace)
        var labels: [String] = []
        reader.forEachEvent {
          if $0.kind == .scopeBegin && $0.flags != ScopeKind.untraced.rawValue {
            labels.append(reader.definitions.labelName($0.key))
          }
        }
        let label = [
          "plain": "DeepTracking/main.swift:\(marks["plain"] ?? 0)", "named": "Deep.render", "harness": "Deep.row",
          "scope": "Deep.level",
        ]
        let outer = kind == "scope" ? ["DeepTracking/main.swift:\(marks["scope tracking"] ?? 0)"] : []
        #expect(labels == outer + Array(repeating: label[kind] ?? "", count: depth + 1), "\(kind)")
      }
    }
  }
}
