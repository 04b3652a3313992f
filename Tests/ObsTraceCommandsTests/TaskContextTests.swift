import Foundation
import Testing

/// One-shot trackings, each in a task of its own (tryout15's J12): a run's context was the running task's address,
/// and a task begun after another ended is often allocated where it was, so a run in it continued the dead task's
/// fired instance: 200 trackings in 200 detached tasks were 16 to 21 instances, different each recording, with a
/// false redundant-run warning on about 180 runs. The context is now the task's id, which the runtime never gives
/// twice.
@Suite("Task contexts")
struct TaskContextTests {
  /// Recordings of each shape: on main the first one was already wrong (16 to 21 instances for 200 trackings); the
  /// count must be exact in every one.
  static let recordings = 6

  @Test(
    "trackings in tasks begun one after the other, detached or in task groups, are one instance each, every recording")
  func oneInstancePerTask() throws {
    let source = Paths.root + "/Tests/Fixtures/TaskContexts/main.swift"
    let marks = try FixtureBuild.siteMarks(source)
    let traced = try FixtureBuild.compile([source], module: "TaskContexts", optimization: "-O", flags: ["-DOBSTRACE"])
    let untraced = try FixtureBuild.compile([source], module: "TaskContexts", optimization: "-O")
    // 200 detached tasks (tryout15's Tasks); 12 orders of 1 to 6 children each, 42 children (tryout15's App).
    for (kind, count, trackings) in [("detached", 200, 200), ("group", 12, 42)] {
      let arguments = [kind, String(count)]
      let alone = try Run.program(untraced, arguments)
      #expect(alone.status == 0, "\(alone.standardError)")
      #expect(alone.standardOutput == "\(kind): trackings \(trackings) fires \(trackings)\n")
      let label = "TaskContexts/main.swift:\(marks[kind] ?? 0)"
      for recording in 1...Self.recordings {
        let trace = Paths.temporary("task-contexts-\(kind)-\(recording).trc")
        let run = try Run.program(traced, arguments, environment: ["OBSTRACE_OUTPUT": trace])
        #expect(run.status == 0, "\(kind) #\(recording): \(run.standardError)")
        #expect(run.standardOutput == alone.standardOutput, "\(kind) #\(recording)")
        let report = Run.command(["report", "--format", "json", trace])
        #expect(report.status == 0, "\(report.standardError)")
        let json = try #require(
          try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8)) as? [String: Any])
        let scopes = json["scopes"] as? [[String: Any]] ?? []
        let scope = try #require(scopes.first { $0["label"] as? String == label }, "\(kind) #\(recording): \(scopes)")
        #expect(
          scope["instances"] as? Int == trackings && scope["runs"] as? Int == trackings,
          "\(kind) #\(recording): \(scope)")
        #expect(scope["redundantRuns"] as? Int == 0, "\(kind) #\(recording): \(scope)")
        let findings = json["findings"] as? [[String: Any]] ?? []
        #expect(!findings.contains { $0["kind"] as? String == "redundant-run" }, "\(kind) #\(recording): \(findings)")
        try? FileManager.default.removeItem(atPath: trace)
      }
    }
  }
}
