import ObsTrace
import ObsTraceFixtureModels
import ObsTraceFixtureTracedViews
import ObsTraceFixtureViews
import ObsTraceTestSupport
import ObsTraceTesting
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
    // The two reads inside tracking are the scope's; the two accesses `add` made (its `todos.append`, through
    // `_modify`) are part of those writes: no read of TodoList.todos is outside tracking, and its reads are the
    // program's two.
    #expect(recorded.reads(of: "TodoList.todos") == 2)
    #expect(recorded.findings(.untrackedRead).filter { $0.property == "TodoList.todos" }.isEmpty)
  }

  @Test("its invalidations are predicted, and agree with the same view built with the import, where they are recorded")
  func predictedAgreesWithRecorded() async throws {
    let (untraced, untracedDirty) = try await RecordingTestLock.shared {
      try Self.scenario({ ObsTraceFixtureViews.ListView($0) }, render: { $0.render() }, isDirty: { $0.isDirty })
    }
    let (traced, tracedDirty) = try await RecordingTestLock.shared {
      try Self.scenario({ ObsTraceFixtureTracedViews.ListView($0) }, render: { $0.render() }, isDirty: { $0.isDirty })
    }
    // Side by side: the view behaves the same with and without the import.
    #expect(untracedDirty == [true, true])
    #expect(tracedDirty == untracedDirty)

    let untracedSite = "ObsTraceFixtureViews/ListView.swift:22"
    #expect(untraced.invalidations(of: "TodoList.todos") == 2)
    #expect(untraced.predictedInvalidations(of: "TodoList.todos") == 2)
    #expect(untraced.invalidations(ofScope: untracedSite) == 2)
    #expect(untraced.predictedInvalidations(ofScope: untracedSite) == 2)
    let finding = untraced.findings(.untracedTracking)
    #expect(finding.count == 1)
    #expect(finding.first?.site == untracedSite)
    #expect(finding.first?.count == 2)
    #expect(
      finding.first?.message
        == "2 scopes at \(untracedSite) track with Observation directly; add `import ObsTrace` to that file to record "
        + "them exactly")

    let tracedSite = "ObsTraceFixtureTracedViews/ListView.swift:23"
    #expect(traced.runs(of: tracedSite) == 2)
    #expect(traced.invalidations(of: "TodoList.todos") == untraced.invalidations(of: "TodoList.todos"))
    #expect(traced.invalidations(ofScope: tracedSite) == untraced.invalidations(ofScope: untracedSite))
    #expect(traced.predictedInvalidations(of: "TodoList.todos") == 0)
    #expect(traced.findings(.untracedTracking).isEmpty)
    #expect(traced.reads(of: "TodoList.todos") == untraced.reads(of: "TodoList.todos"))
    #expect(
      traced.findings(.untrackedRead).map(\.count) == untraced.findings(.untrackedRead).map(\.count))
  }

  @Test("a scope of ObsTrace's inside untraced tracking: its reads count for both, as Observation merges them")
  func nestedOwnScope() async throws {
    // The row's harness is ObsTrace's tracking; the enclosing tracking is Observation's, called from a file
    // without the import (untraced) or with it (traced).
    let untraced = try await RecordingTestLock.shared {
      try recordObservation {
        let list = TodoList()
        let row = RenderHarness("Row.body") { list.todos.count }
        ObsTraceFixtureViews.trackInViews({ row.render() }, onChange: {})
        list.add("milk")
      }
    }
    let traced = try await RecordingTestLock.shared {
      try recordObservation {
        let list = TodoList()
        let row = RenderHarness("Row.body") { list.todos.count }
        ObsTraceFixtureTracedViews.trackInViews({ row.render() }, onChange: {})
        list.add("milk")
      }
    }
    // The row's own tracking fires (recorded), and so does the enclosing one, which merged the row's reads.
    #expect(untraced.invalidations(ofScope: "Row.body") == 1)
    #expect(untraced.predictedInvalidations(ofScope: "Row.body") == 0)
    #expect(untraced.invalidations(of: "TodoList.todos") == 2)
    #expect(untraced.predictedInvalidations(of: "TodoList.todos") == 1)
    #expect(traced.invalidations(of: "TodoList.todos") == 2)
    #expect(traced.predictedInvalidations(of: "TodoList.todos") == 0)
    #expect(untraced.findings(.untracedTracking).map(\.site) == ["ObsTraceFixtureViews/ListView.swift:32"])
  }

  @Test("two trackings in a row from one frame are two scopes, even with no write between them; one write fires both")
  func reusedFrame() async throws {
    func record(_ makeView: @escaping (TodoList) -> () -> Void) async throws -> RecordedObservation {
      try await RecordingTestLock.shared {
        try recordObservation {
          let list = TodoList()
          let render = makeView(list)
          render()
          render()
          list.add("milk")
        }
      }
    }
    let untraced = try await record { list in { ObsTraceFixtureViews.ListView(list).render() } }
    let traced = try await record { list in { ObsTraceFixtureTracedViews.ListView(list).render() } }
    #expect(untraced.runs(of: "ObsTraceFixtureViews/ListView.swift:22") == 2)
    #expect(untraced.predictedInvalidations(of: "TodoList.todos") == 2)
    #expect(traced.invalidations(of: "TodoList.todos") == 2)
    #expect(untraced.invalidations(of: "TodoList.todos") == traced.invalidations(of: "TodoList.todos"))
  }
}
