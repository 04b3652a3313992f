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
  /// A depth past ObsTrace's inline scope stack (`OBSTRACE_SCOPE_STACK_DEPTH`, 64 levels), recorded on a stack large
  /// enough for it: every level must be a scope of ObsTrace's, inside the one before, and hold its own read. Before,
  /// from level 65 on the reads began untraced scopes that did not exist (16 of them), then went to the last of those.
  static let deepDepth = 300
  static let deepStackKiB = 2048

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
      let runs = [
        (Self.depth, false, Self.stackKiB), (Self.recordingDepth, true, Self.stackKiB),
        (Self.deepDepth, true, Self.deepStackKiB),
      ]
      for (depth, recording, stackKiB) in runs {
        let arguments = [kind, String(depth), String(stackKiB)]
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
        // tracking around them, first), each inside the one before, and no other scope (past 64 levels, untraced
        // scopes that did not exist were begun: stack18's finding). Each level's read is its own scope's.
        let reader = try TraceReader(path: trace)
        var labels: [String] = []
        var scopes: [UInt32] = []
        var parents: [UInt32] = []
        var untraced = 0
        var readScopes: [UInt32] = []
        reader.forEachEvent {
          if $0.kind == .scopeBegin {
            if $0.flags == ScopeKind.untraced.rawValue { untraced += 1 }
            labels.append(reader.definitions.labelName($0.key))
            scopes.append($0.scope)
            parents.append($0.aux)
          } else if $0.kind == .access && $0.scope != 0 {
            // (The program's write after the render reads the counter outside any scope.)
            readScopes.append($0.scope)
          }
        }
        #expect(untraced == 0, "\(kind), depth \(depth): \(untraced) untraced scopes")
        #expect(parents == [0] + scopes.dropLast(), "\(kind), depth \(depth): the parents")
        let levels = kind == "scope" ? Array(scopes.dropFirst()) : scopes
        #expect(readScopes == levels, "\(kind), depth \(depth): the scopes of the reads")
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
