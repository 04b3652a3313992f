import Foundation
import ObsTraceAnalysis
import ObsTraceFormat
import ObsTraceRecorder
import Testing
import XCTest

/// What Observation did inside one `recordObservation` block, analysed: for assertions in tests.
///
/// Only objects created and scopes begun inside the block count, so tests that run in parallel do not see each
/// other's events. The block is known by a task-local value: its own code and tasks that inherit its task-locals
/// (`Task {}`, `async let`, task groups) count; work it starts on a `Thread`, a Dispatch queue or with
/// `Task.detached` does not. A lookup that would answer 0 for a property written (read, for `reads` and
/// `staleReads`) or a scope run in the process while the block ran, outside it, fails the test saying so instead
/// (`RecordingTaps.OutsideWork`): 0 would not be known. Create the models under test inside the block.
public struct RecordedObservation: Sendable {
  /// The full analysis, as `obstrace report` prints it.
  public let report: AnalysisReport

  /// (write, fired scope) pairs caused by writes of `property` (`"Model.items"`).
  public func invalidations(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.invalidations, CallerLocation(fileID, filePath, line, column))
  }
  /// Of `invalidations(of:)`, those predicted for tracking ObsTrace does not own (a `withObservationTracking` in a
  /// file without `import ObsTrace`), not recorded.
  public func predictedInvalidations(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.predictedInvalidations, CallerLocation(fileID, filePath, line, column))
  }
  /// Invalidations caused by writes of `property` that changed nothing. When a write of `property` through
  /// `_modify` was not compared, the test fails with how to compare it: the answer would not be known.
  public func wastedInvalidations(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.wastedInvalidations, CallerLocation(fileID, filePath, line, column), compared: true)
  }
  /// Writes of `property`: through its setter, `_modify` or `withMutation`.
  public func writes(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.writes, CallerLocation(fileID, filePath, line, column))
  }
  /// Reads of `property` the program made (the access a `_modify` write makes outside any scope is part of that
  /// write; inside a scope it is a read, which Observation subscribes the scope to).
  public func reads(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.reads, CallerLocation(fileID, filePath, line, column))
  }
  /// Writes of `property` through `_modify` that left its value unchanged. When a write of `property` through
  /// `_modify` was not compared, the test fails with how to compare it, so that "0" never means "not looked at".
  public func noopWrites(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.noopWrites, CallerLocation(fileID, filePath, line, column), compared: true)
  }
  /// Reads of `property` inside its own willSet window (they saw the old value).
  public func staleReads(
    of property: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(of: property, \.staleReads, CallerLocation(fileID, filePath, line, column))
  }

  /// Runs of the scope labelled `scope` (`"FirstView.body"`, or a call site `"Module/File.swift:12"`).
  public func runs(
    of scope: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(ofScope: scope, \.runs, CallerLocation(fileID, filePath, line, column))
  }
  /// Instances of `scope`: a harness, an iterator, an observer re-tracked after each fire is one.
  public func instances(
    of scope: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(ofScope: scope, \.instances, CallerLocation(fileID, filePath, line, column))
  }
  /// Times runs of `scope` were invalidated.
  public func invalidations(
    ofScope scope: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(ofScope: scope, \.invalidations, CallerLocation(fileID, filePath, line, column))
  }
  /// Of `invalidations(ofScope:)`, those predicted (an `untraced` scope), not recorded.
  public func predictedInvalidations(
    ofScope scope: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(ofScope: scope, \.predictedInvalidations, CallerLocation(fileID, filePath, line, column))
  }
  /// Runs of `scope` that read nothing that really changed since its previous run. When runs of it would be
  /// redundant if writes through `_modify` that were not compared changed nothing, the test fails with how to
  /// compare them: the answer would not be known.
  public func redundantRuns(
    of scope: String,
    fileID: String = #fileID, filePath: StaticString = #filePath, line: Int = #line, column: Int = #column
  ) -> Int {
    count(ofScope: scope, \.redundantRuns, CallerLocation(fileID, filePath, line, column)) { statistics in
      statistics.possiblyRedundantRuns > 0
        ? possiblyRedundantMessage(TraceDefinitions.printable(scope), statistics.possiblyRedundantRuns) : nil
    }
  }

  /// Findings of one kind (`.noopWrite`, `.staleRead`, `.fanOut`, …).
  public func findings(_ kind: Finding.Kind) -> [Finding] { report.findings.filter { $0.kind == kind } }

  /// Property names seen, for a message when an assertion names one that is not there.
  public var propertyNames: [String] { report.properties.map(\.name) }
  public var scopeLabels: [String] { report.scopes.map(\.label) }

  /// Names defined anywhere in the process (a property of a model the block did not touch is known, and counts 0).
  private let knownProperties: Set<String>
  private let knownScopes: Set<String>
  /// What the process did while the block ran that the block does not count, by property name and scope label.
  private let outsideWrites: [String: Int]
  private let outsideReads: [String: Int]
  private let outsideRuns: [String: Int]

  /// A name nothing defines is a mistake in the test (a typo would pass `== 0`): it fails the test, naming the
  /// closest known names.
  private func unknown(_ kind: String, _ name: String, _ known: Set<String>, _ location: CallerLocation) {
    let message =
      "recordObservation: no \(kind) is named '\(name)'; " + NameSuggestions.describe(name, in: known.sorted())
    location.fail(message)
  }

  /// One count of `property`'s statistics: every property lookup above is this, with its metric. `compared`: fail
  /// the test when writes of it through `_modify` were not compared (a no-op count would not be known).
  private func count(
    of property: String, _ metric: KeyPath<PropertyStatistics, Int>, _ location: CallerLocation, compared: Bool = false
  ) -> Int {
    let value = (compared ? self.compared(property, location) : statistics(property, location))?[keyPath: metric] ?? 0
    if value == 0 {
      let reading = metric == \PropertyStatistics.reads || metric == \PropertyStatistics.staleReads
      let outside = (reading ? outsideReads : outsideWrites)[property] ?? 0
      if outside > 0 { location.fail(Self.outsideMessage(property, outside, reading ? "read" : "write")) }
    }
    return value
  }

  /// One count of `scope`'s statistics: every scope lookup above is this, with its metric. `unknown`: why the count
  /// is not known in these statistics, if it is not (the test then fails with that).
  private func count(
    ofScope scope: String, _ metric: KeyPath<ScopeStatistics, Int>, _ location: CallerLocation,
    unknown: (ScopeStatistics) -> String? = { _ in nil }
  ) -> Int {
    let statistics = scopeStatistics(scope, location)
    if let statistics, let why = unknown(statistics) { location.fail(why) }
    let value = statistics?[keyPath: metric] ?? 0
    if value == 0, let outside = outsideRuns[TraceDefinitions.printable(scope)], outside > 0 {
      location.fail(Self.outsideMessage("scope " + scope, outside, "run"))
    }
    return value
  }

  /// Why a lookup does not answer 0: what the process did outside the block (`what`: "write", "read" or "run"),
  /// and how to have it counted.
  static func outsideMessage(_ subject: String, _ count: Int, _ what: String) -> String {
    let counted = "\(count) \(what)\(count == 1 ? " of it was" : "s of it were")"
    let started =
      "a Thread, a Dispatch queue or a Task.detached the block started, which do not inherit its task-local tag"
    let why =
      what == "run"
      ? "begun in this process while the block ran, outside it (on \(started); or by another test running at the "
        + "same time)"
      : "made in this process while the block ran, \(what == "read" ? "of" : "to") objects the block does not own "
        + "(made on \(started); made before the block and read by none of its scopes; or another test's, running "
        + "at the same time)"
    let how = what == "run" ? "begin the scope in the block" : "create the models in the block and run that work in it"
    return "recordObservation: \(subject) counts 0 in the block, but \(counted) \(why): the block does not count "
      + "them, so 0 is not known to be true; \(how) or in a Task {} it awaits (tasks inherit its task-locals)"
  }

  private func statistics(_ property: String, _ location: CallerLocation) -> PropertyStatistics? {
    let found = report.properties.filter { $0.name == property }
    // Types of one name in two modules give two properties one name: the count of one would be taken silently.
    if found.count > 1 {
      let candidates = Baseline.ambiguousPropertyNames(report).first { $0.name == property }?.candidates ?? []
      location.fail(
        "recordObservation: '\(property)' names \(found.count) properties (\(candidates.joined(separator: ", "))): "
          + "types of one name in two modules; rename one of them to tell their counts apart")
      return nil
    }
    if let found = found.first { return found.statistics }
    // Types of one name in two modules are named with their modules (`ModA.Model.count`): the name without its
    // module is said to be theirs, not unknown.
    let qualified = report.properties.filter { found in
      found.qualifyingModule.map { found.name == "\($0).\(property)" } ?? false
    }.map(\.name).sorted()
    if !qualified.isEmpty {
      location.fail(
        "recordObservation: '\(property)' is named \(qualified.joined(separator: ", ")): types of one name in two "
          + "modules are named with their module; look \(qualified.count == 1 ? "it" : "each") up by that name")
      return nil
    }
    if !knownProperties.contains(property) { unknown("property", property, knownProperties, location) }
    return nil
  }

  /// The statistics of `property`, after failing the test when some of its writes through `_modify` were not
  /// compared.
  private func compared(_ property: String, _ location: CallerLocation) -> PropertyStatistics? {
    let found = statistics(property, location)
    if let found, found.uncomparedWrites > 0 {
      location.fail(Self.uncomparedMessage(property, found.uncomparedWrites, comparison, found.uncomparedBecause))
    }
    return found
  }

  /// Why a no-op count cannot be given, and how to get one.
  static func uncomparedMessage(
    _ property: String, _ count: Int, _ comparison: WriteComparison, _ reasons: UncomparedCounts
  ) -> String {
    let equatable = "record with recordObservation(comparing: .equatable) { … } to compare Equatable members with =="
    let how = reasons.nonzero.map { entry -> String in
      switch entry.reason {
      case .notRecorded:
        comparison == .equatable
          ? "its type is neither Equatable nor trivially copyable, so it cannot be compared" : equatable
      case .notTriviallyCopyable: "its type is not trivially copyable in 64 bytes; " + equatable
      case .notEquatable: "its type is neither Equatable nor trivially copyable, so it cannot be compared"
      case .storedFieldNotFound:
        "its stored field was not found (no symbol names its key path getter, its class has no one field "
          + "_name of its type, or no line table shows its getter is the @Observable macro's)"
          + (comparison == .equatable ? "" : "; " + equatable)
      case .comparisonOff: "comparison was off; record with comparing: .trivial or .equatable to compare"
      case .handWrittenAccessor:
        "its accessors are written by hand, so its value is not known to be in a field _name; "
          + (comparison == .equatable ? "its type is not Equatable, so nothing compares it" : equatable)
      case .noValueKept, .tooManyProperties: entry.reason.why
      }
    }.joined(separator: "; ")
    return "recordObservation: \(count) write\(count == 1 ? "" : "s") of \(property) through _modify "
      + "\(count == 1 ? "was" : "were") not compared (comparing: .\(comparison)): \(how)"
  }

  /// Why a scope's redundant runs cannot be given, and how to get them: the writes not compared of the properties
  /// it read, each as `noopWrites(of:)` says it.
  private func possiblyRedundantMessage(_ scope: String, _ count: Int) -> String {
    let read = Set(report.scopes.first { $0.label == scope }?.reads ?? [])
    let properties = report.properties.filter { read.contains($0.name) && $0.statistics.uncomparedWrites > 0 }
    let whys = properties.map {
      Self.uncomparedMessage($0.name, $0.statistics.uncomparedWrites, comparison, $0.statistics.uncomparedBecause)
        .replacing("recordObservation: ", with: "")
    }
    return "recordObservation: \(count) run\(count == 1 ? "" : "s") of \(scope) would be redundant if the writes "
      + "through _modify not compared before \(count == 1 ? "it" : "them") changed nothing, so its redundantRuns is "
      + "not known" + (whys.isEmpty ? "" : ": " + whys.joined(separator: "; "))
  }

  private func scopeStatistics(_ scope: String, _ location: CallerLocation) -> ScopeStatistics? {
    // A name as the report prints it (a blank or multi-line name given to `named:` is printed escaped).
    let scope = TraceDefinitions.printable(scope)
    if let found = report.scopes.first(where: { $0.label == scope }) { return found.statistics }
    if !knownScopes.contains(scope) { unknown("scope", scope, knownScopes, location) }
    return nil
  }

  /// How the block's objects compared writes through `_modify`.
  public let comparison: WriteComparison

  init(_ tapped: Recorder.TappedEvents, comparison: WriteComparison) {
    self.comparison = comparison
    var replay = Replay()
    replay.replay(tapped.events)
    let trace = AnalysisReport.Trace(
      path: "<in-test recording>", events: replay.events, threads: replay.threadsSeen.count,
      droppedEvents: tapped.droppedEvents, truncated: false, damage: [],
      durationNanoseconds: replay.lastTime &- (replay.firstTime ?? replay.lastTime), backtraces: "writes",
      symbolized: true, seesUntracedTracking: tapped.seesUntracedTracking)
    report = TraceAnalysis.report(replay, definitions: tapped.definitions, trace: trace)
    let definitions = tapped.definitions
    knownProperties = Set(definitions.properties.keys.map { definitions.propertyName($0) })
    knownScopes = Set(definitions.labels.keys.map { definitions.labelName($0) })
    func byName(_ counts: [UInt32: Int], _ name: (UInt32) -> String) -> [String: Int] {
      counts.reduce(into: [:]) { named, entry in named[name(entry.key), default: 0] += entry.value }
    }
    outsideWrites = byName(tapped.outside.writes) { definitions.propertyName($0) }
    outsideReads = byName(tapped.outside.reads) { definitions.propertyName($0) }
    outsideRuns = byName(tapped.outside.runs) { definitions.labelName($0) }
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
///
/// `comparing` is how the objects created in the block compare writes through `_modify`, to count the writes
/// that changed nothing. The default is a whole-program recording's, `.trivial`: recording changes nothing the
/// code under test can see (no copy of a value, no call of its `==` or getters), and trivially copyable members
/// (`Int`, `Bool`, an enum, a struct of such) are still compared. A test that asks for the no-op writes of an array
/// or a string passes `comparing: .equatable`, and pays for it inside the block: the old value is copied before each
/// mutation (an in-place append copies the array, `isKnownUniquelyReferenced` sees one more reference) and `==`
/// runs once per write (see `WriteComparison.equatable`). Asking for the no-op writes of a property whose writes
/// were not compared fails the test, saying how to compare them, rather than answering 0.
public func recordObservation(comparing comparison: WriteComparison = .trivial, _ body: () throws -> Void) throws
  -> RecordedObservation
{
  let (_, tapped) = try Recorder.tap(comparison: comparison, body)
  return RecordedObservation(tapped, comparison: comparison)
}

/// The async form of `recordObservation(comparing:_:)`, for code that awaits (an `Observations` loop).
public func recordObservation(
  comparing comparison: WriteComparison = .trivial, isolation: isolated (any Actor)? = #isolation,
  _ body: () async throws -> Void
) async throws -> RecordedObservation {
  let (_, tapped) = try await Recorder.tap(comparison: comparison, isolation: isolation, body)
  return RecordedObservation(tapped, comparison: comparison)
}

/// Where a test called an assertion of `RecordedObservation`, and how its failures reach that test's framework:
/// Swift Testing inside a Swift Testing test, XCTest otherwise.
///
/// One `SourceLocation = #_sourceLocation` parameter would serve Swift Testing only: that macro is Testing's, so an
/// XCTest file that does not import Testing cannot expand it, and `XCTFail` takes its file as a `StaticString`.
/// `Issue.record` outside a Swift Testing test is lost (this toolchain's XCTest installs no handler for it), hence
/// `XCTFail` there. Outside any test both do nothing (a lookup on a detached thread inside a Swift Testing test has
/// no `Test.current`), so that branch also writes the failure to standard error: a failed assertion is never silent.
struct CallerLocation {
  let fileID: String
  let filePath: StaticString
  let line: Int
  let column: Int

  /// From a lookup's four caller-location parameters (each public lookup must declare them itself: their
  /// defaults are the caller's only when they are the lookup's own parameters, and XCTest needs a `StaticString`
  /// path where Swift Testing's `#_sourceLocation` would be one parameter).
  init(_ fileID: String, _ filePath: StaticString, _ line: Int, _ column: Int) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  func fail(_ message: String) {
    if Test.current != nil {
      let location = SourceLocation(fileID: fileID, filePath: "\(filePath)", line: line, column: column)
      Issue.record(Comment(rawValue: message), sourceLocation: location)
    } else {
      XCTFail(message, file: filePath, line: UInt(max(0, line)))
      FileHandle.standardError.write(Data("\(filePath):\(line): error: \(message)\n".utf8))
    }
  }
}
