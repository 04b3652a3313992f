import ObsTrace
import ObsTraceFixtureModels
import ObsTraceFixtureTracedViews
import ObsTraceFixtureViews
import ObsTraceTestSupport
import Testing

/// Issue 15: tracking ObsTrace does not own. `ObsTraceFixtureViews.ListView` calls Observation's own
/// `withObservationTracking` (its file does not import ObsTrace); `ObsTraceFixtureTracedViews.ListView` is the same
/// file with the import.
@Suite("Untraced tracking")
struct UntracedTrackingTests {
  /// The scenario: render, add("milk"), re-render, add("eggs").
  static func scenario<View>(_ makeView: (TodoList) -> View, render: (View) -> Void, isDirty: (View) -> Bool)
    throws -> (RecordedObservation, [Bool])
  {
    var dirty: [Bool] = []
    let recorded = try recordObservation {
      let list = TodoList()
      let view = makeView(list)
      render(view)
      list.add("milk")
      dirty.append(isDirty(view))
      render(view)
      list.add("eggs")
      dirty.append(isDirty(view))
    }
    return (recorded, dirty)
  }

  @Test("a view that tracks without the import: its tracking is a scope at its call site, with the reads it made")
  func untracedScopes() async throws {
    let (recorded, dirty) = try await RecordingTestLock.shared {
      try Self.scenario({ ObsTraceFixtureViews.ListView($0) }, render: { $0.render() }, isDirty: { $0.isDirty })
    }
    #expect(dirty == [true, true])
    let label = "ObsTraceFixtureViews/ListView.swift:22"
    let scope = recorded.report.scopes.first { $0.label == label }
    #expect(scope?.statistics.kind == .untraced, "\(recorded.scopeLabels)")
    #expect(scope?.statistics.runs == 2)
    #expect(scope?.statistics.reads.values.reduce(0, +) == 2)
    // The two reads inside tracking are the scope's; the two `add` made (through `_modify`) are outside any.
    #expect(recorded.reads(of: "TodoList.todos") == 4)
    #expect(recorded.findings(.untrackedRead).filter { $0.property == "TodoList.todos" }.map(\.count) == [2])
  }

  @Test("two trackings in a row from one frame are two scopes, even with no write between them")
  func reusedFrame() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let list = TodoList()
        let view = ObsTraceFixtureViews.ListView(list)
        view.render()
        view.render()
      }
    }
    #expect(recorded.runs(of: "ObsTraceFixtureViews/ListView.swift:22") == 2)
  }
}
