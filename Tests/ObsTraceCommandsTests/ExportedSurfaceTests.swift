import Foundation
import Testing

/// `import ObsTrace` gives a model file and a test what they need and nothing of the engine: a file that imports
/// it is type-checked against the built modules, as a user's would be.
@Suite("Exported surface")
struct ExportedSurfaceTests {
  /// Names of the engine (replay, analysis, trace format, symbols, recorder internals) that a model file must not see.
  static let engineNames = [
    "Replay", "Baseline", "DenseTable", "jsonString", "TraceAnalysis", "AnalysisReport", "Finding", "TraceEvent",
    "EventKind", "TraceReader", "SymbolTable", "Symbolizer", "SiteFilter", "RecordingTaps", "TrackingScopes",
    "TracedTracking", "ScopeLabel", "CallSite", "InstanceRule", "Interner", "RegistrarExtent",
  ]

  @Test(
    "a file that imports ObsTrace, or ObsTraceTesting, sees none of the engine's names",
    arguments: ["ObsTrace", "ObsTraceTesting"])
  func engineIsNotExported(module: String) throws {
    let source = Paths.temporary("engine-\(module).swift")
    let uses = Self.engineNames.map { "  _ = \($0).self" }.joined(separator: "\n")
    try "import \(module)\n\nfunc use() {\n\(uses)\n}\n".write(toFile: source, atomically: true, encoding: .utf8)
    let result = try Run.program("/usr/bin/env", FixtureBuild.swiftc(module: "SurfaceCheck") + ["-typecheck", source])
    #expect(result.status != 0)
    for name in Self.engineNames {
      #expect(result.standardError.contains("cannot find '\(name)' in scope"), "\(name) is visible")
    }
  }

  @Test("a model file and its test compile with only ObsTrace, next to their own Replay, Baseline and jsonString")
  func modelFileAndTestCompile() throws {
    let source = Paths.temporary("model.swift")
    try Self.modelAndTest.write(toFile: source, atomically: true, encoding: .utf8)
    let result = try Run.program("/usr/bin/env", FixtureBuild.swiftc(module: "SurfaceCheck") + ["-typecheck", source])
    #expect(result.status == 0, "\(result.standardError)")
  }

  @Test(
    "a traced program links neither Swift Testing nor the replay: they come with ObsTraceTesting, in tests",
    arguments: ["obstrace-demo", "obstrace-fidelity", "obstrace-observations"])
  func tracedProgramLinksNoTesting(program: String) throws {
    let needed = try Run.program("/usr/bin/env", ["readelf", "--dynamic", "--wide", Paths.binary(program)])
    #expect(needed.status == 0, "\(needed.standardError)")
    #expect(needed.standardOutput.contains("(NEEDED)"))
    #expect(needed.standardOutput.contains("libswiftObservation.so"))
    for library in ["libTesting.so", "lib_TestingInterop.so", "libXCTest.so"] {
      #expect(!needed.standardOutput.contains(library), "\(program) needs \(library)")
    }
    let symbols = try Run.program("/usr/bin/env", ["nm", "--defined-only", Paths.binary(program)])
    #expect(symbols.status == 0)
    #expect(symbols.standardOutput.contains("8ObsTrace"))
    #expect(!symbols.standardOutput.contains("16ObsTraceAnalysis"), "\(program) links the replay")
  }

  /// This test binary links ObsTraceTesting, and with it Testing: the check above can tell.
  @Test("the check above sees Swift Testing where it is linked")
  func testBinaryLinksTesting() throws {
    let running = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let needed = try Run.program("/usr/bin/env", ["readelf", "--dynamic", "--wide", running])
    #expect(needed.standardOutput.contains("libTesting.so"))
  }

  static let modelAndTest = """
    import ObsTrace
    import ObsTraceTesting
    import Observation

    // The user's own names, which the engine's must not collide with.
    struct Replay { var steps: [Int] }
    enum Baseline { case empty }
    func jsonString(_ value: Int) -> String { "\\(value)" }

    @Observable final class TodoList: @unchecked Sendable {
      var todos: [String] = []
      func add(_ title: String) { todos.append(title) }
    }

    func exercise() async throws {
      let registrar: TracingRegistrar = Observation.ObservationRegistrar()
      _ = registrar
      try Recorder.start(to: "/tmp/run.trc", options: RecordingOptions(backtraces: .writes))
      let summary: RecordingSummary? = Recorder.stop()
      _ = summary
      let list = TodoList()
      _ = withObservationTracking { list.todos } onChange: {}
      _ = withObservationTracking(named: "List.body") { list.todos } onChange: {}
      _ = withTrackingScope(named: "Row.body") { list.todos.count }
      for await count in Observations({ list.todos.count }) { _ = count; break }
      let recorded: RecordedObservation = try recordObservation {
        let view = RenderHarness("TodoListView.body") { list.todos }
        _ = view.render()
        list.add("milk")
        _ = view.flush()
      }
      _ = recorded.invalidations(of: "TodoList.todos") + recorded.runs(of: "TodoListView.body")
      _ = recorded.findings(.noopWrite)
      _ = Replay(steps: [1]).steps.count + (Baseline.empty == .empty ? 1 : 0)
      _ = jsonString(1)
    }
    """
}
