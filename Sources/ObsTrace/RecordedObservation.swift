@_exported import ObsTraceAnalysis
import ObsTraceFormat

/// What Observation did inside one `recordObservation` block, analysed: for assertions in tests.
///
/// Only objects created and scopes begun inside the block count (on any thread or task started from it), so
/// tests that run in parallel do not see each other's events. Create the models under test inside the block.
public struct RecordedObservation: Sendable {
  /// The full analysis, as `obstrace report` prints it.
  public let report: AnalysisReport

  /// (write, fired scope) pairs caused by writes of `property` (`"Model.items"`).
  public func invalidations(of property: String) -> Int { statistics(property)?.invalidations ?? 0 }
  /// Invalidations caused by writes of `property` that changed nothing.
  public func wastedInvalidations(of property: String) -> Int { statistics(property)?.wastedInvalidations ?? 0 }
  public func writes(of property: String) -> Int { statistics(property)?.writes ?? 0 }
  public func reads(of property: String) -> Int { statistics(property)?.reads ?? 0 }
  /// Writes of `property` through `_modify` that left its value unchanged.
  public func noopWrites(of property: String) -> Int { statistics(property)?.noopWrites ?? 0 }
  /// Reads of `property` inside its own willSet window (they saw the old value).
  public func staleReads(of property: String) -> Int { statistics(property)?.staleReads ?? 0 }

  /// Runs of the scope labelled `scope` (`"FirstView.body"`, or a call site `"Module/File.swift:12"`).
  public func runs(of scope: String) -> Int { scopeStatistics(scope)?.runs ?? 0 }
  /// Instances of `scope`: a harness, an iterator, an observer re-tracked after each fire is one.
  public func instances(of scope: String) -> Int { scopeStatistics(scope)?.instances ?? 0 }
  /// Times runs of `scope` were invalidated.
  public func invalidations(ofScope scope: String) -> Int { scopeStatistics(scope)?.invalidations ?? 0 }
  /// Runs of `scope` that read nothing that really changed since its previous run.
  public func redundantRuns(of scope: String) -> Int { scopeStatistics(scope)?.redundantRuns ?? 0 }

  /// Findings of one kind (`.noopWrite`, `.staleRead`, `.fanOut`, …).
  public func findings(_ kind: Finding.Kind) -> [Finding] { report.findings.filter { $0.kind == kind } }

  /// Property names seen, for a message when an assertion names one that is not there.
  public var propertyNames: [String] { report.properties.map(\.name) }
  public var scopeLabels: [String] { report.scopes.map(\.label) }

  private func statistics(_ property: String) -> PropertyStatistics? {
    report.properties.first { $0.name == property }?.statistics
  }

  private func scopeStatistics(_ scope: String) -> ScopeStatistics? {
    report.scopes.first { $0.label == scope }?.statistics
  }

  init(_ tapped: Recorder.TappedEvents) {
    var replay = Replay()
    for event in tapped.events { replay.consume(event) }
    let trace = AnalysisReport.Trace(
      path: "<in-test recording>", events: replay.events, threads: replay.threadsSeen.count,
      droppedEvents: tapped.droppedEvents, truncated: false, damage: [],
      durationNanoseconds: replay.lastTime &- (replay.firstTime ?? replay.lastTime), backtraces: "writes",
      symbolized: true)
    report = TraceAnalysis.report(replay, definitions: tapped.definitions, trace: trace)
  }
}

/// Records what Observation does while `body` runs and returns it analysed, for assertions:
///
///     let recorded = try recordObservation {
///       let model = Model()
///       let view = RenderHarness("RowView.body") { model.title }
///       view.render()
///       model.title = "new"
///     }
///     #expect(recorded.invalidations(of: "Model.title") == 1)
public func recordObservation(_ body: () throws -> Void) throws -> RecordedObservation {
  let (_, tapped) = try Recorder.tap(body)
  return RecordedObservation(tapped)
}

/// The async form of `recordObservation(_:)`, for code that awaits (an `Observations` loop).
public func recordObservation(
  isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void
) async throws -> RecordedObservation {
  let (_, tapped) = try await Recorder.tap(isolation: isolation, body)
  return RecordedObservation(tapped)
}
