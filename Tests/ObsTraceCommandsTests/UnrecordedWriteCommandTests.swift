import Foundation
import Testing

@testable import ObsTraceCommands
@testable import ObsTraceFormat

/// What every command says of a scope that read only a model declared without `import ObsTrace` and was fired by
/// its write: the events the recorder writes for it (a fresh-clone try-out's F1), in a trace that stopped cleanly.
@Suite("Commands on a write ObsTrace did not record")
struct UnrecordedWriteCommandTests {
  static func trace() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "Fixture.Model" }, label: { _ in "LegacyView.body" },
      scope: { _ in ScopeDefinition(kind: .tracking, label: 1, parent: 0) })
    var trace = try SyntheticTrace("unrecorded", definitions: definitions, seesUntracedTracking: true)
    var chunk = trace.chunk()
    // withObservationTracking { _ = legacy.count } onChange: { … }; legacy.count += 1 (Legacy without the import).
    let events: [(EventKind, UInt8, UInt64)] = [
      (.scopeBegin, ScopeKind.tracking.rawValue, 1000), (.scopeEnd, 0, 2000), (.trackingInstalled, 0, 2000),
      (.trackingFired, 0, 5000), (.trackingCancelled, EventFlags.cancelledByFire, 5100),
    ]
    for (kind, flags, time) in events {
      trace.append(
        &chunk, kind, at: time, flags: flags, object: kind == .scopeBegin ? 9 : 0, key: kind == .scopeBegin ? 1 : 0,
        scope: 1)
    }
    try trace.write(chunk)
    return try trace.finish(duration: 5000)
  }

  @Test("report, JSON, timeline and check: the fire is counted and said once; nothing calls the trace inconsistent")
  func everyCommand() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    #expect(!report.standardOutput.contains("inconsistent"), "\(report.standardOutput)")
    #expect(
      report.standardOutput.contains(
        "warning [unrecorded-write] 1 invalidation was fired by a write ObsTrace did not record, invalidating "
          + "LegacyView.body; such writes are in no property's count"), "\(report.standardOutput)")
    #expect(report.standardOutput.components(separatedBy: "unrecorded-write").count == 2)

    let json = Run.command(["report", path, "--format", "json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let scopes = try #require(object["scopes"] as? [[String: Any]])
    #expect(scopes.first?["invalidations"] as? Int == 1)
    #expect(scopes.first?["unexplainedInvalidations"] as? Int == 1)
    let findings = try #require(object["findings"] as? [[String: Any]])
    #expect(findings.compactMap { $0["kind"] as? String } == ["unrecorded-write"])

    let timeline = Run.command(["timeline", path])
    #expect(timeline.status == 0)
    #expect(!timeline.standardOutput.contains("INCONSISTENT"), "\(timeline.standardOutput)")
    #expect(!timeline.standardOutput.contains("freed"), "\(timeline.standardOutput)")
    #expect(
      timeline.standardOutput.contains(
        "fired LegacyView.body (#1) with no write in progress: by a write ObsTrace did not record (an @Observable "
          + "without `import ObsTrace`?)"), "\(timeline.standardOutput)")

    let check = Run.command(["check", path, "--max", "LegacyView.body:invalidations<=1"])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    #expect(check.standardOutput.hasSuffix("PASSED\n"), "\(check.standardOutput)")
  }
}
