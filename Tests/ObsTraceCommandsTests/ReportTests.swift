import Foundation
import Testing

/// What the sample traces must say: the facts each scenario was written to show.
@Suite("Reports of the sample traces")
struct ReportTests {
  func report(_ trace: String) throws -> [String: Any] {
    let result = Run.command(["report", "--format", "json", Paths.root + "/traces/\(trace).trc"])
    #expect(result.status == 0)
    return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
  }

  func rows(_ report: [String: Any], _ key: String) -> [[String: Any]] { report[key] as! [[String: Any]] }

  func row(_ report: [String: Any], _ key: String, _ field: String, _ value: String) -> [String: Any]? {
    rows(report, key).first { $0[field] as? String == value }
  }

  @Test("the JSON report has the contract's shape")
  func schema() throws {
    let report = try report("guide")
    #expect(report["schema"] as? String == "obstrace.report/1")
    let trace = try #require(report["trace"] as? [String: Any])
    for key in ["events", "threads", "droppedEvents", "truncated", "durationNanoseconds"] {
      #expect(trace[key] != nil, "\(key)")
    }
    for property in rows(report, "properties") {
      for key in ["property", "reads", "trackedReads", "writes", "noopWrites", "invalidations"] {
        #expect(property[key] != nil)
      }
    }
    for scope in rows(report, "scopes") {
      for key in ["label", "kind", "instances", "runs", "invalidations", "wastedInvalidations", "reads"] {
        #expect(scope[key] != nil)
      }
    }
    for finding in rows(report, "findings") {
      for key in ["kind", "property", "scope", "site", "count", "message"] { #expect(finding.keys.contains(key)) }
    }
  }

  // One instance: the demo runs FirstView's body three times as the same graph node (#3176), the last time on
  // another model; the node is re-tracked after each fire, so each run continues it (the old inference from the
  // objects read called the last run a second instance).
  @Test("the guide's run: FirstView runs three times (one node), each property invalidates as the seed says")
  func guide() throws {
    let report = try report("guide")
    let first = try #require(row(report, "scopes", "label", "FirstView.body"))
    #expect(first["runs"] as? Int == 3)
    #expect(first["instances"] as? Int == 1)
    #expect(first["redundantRuns"] as? Int == 0)
    // The demo's two models are globals: alive at the end is information, not a leak.
    let findings = rows(report, "findings")
    #expect(!findings.contains { $0["kind"] as? String == "leaked-object" })
    let alive = try #require(findings.first { $0["kind"] as? String == "alive-at-end" })
    #expect(alive["count"] as? Int == 2)
    #expect(first["invalidations"] as? Int == 3)
    #expect(first["reads"] as? [String] == ["Model.property"])
    let next = try #require(row(report, "scopes", "label", "NextView.body"))
    #expect(next["invalidations"] as? Int == 1)
    let property = try #require(row(report, "properties", "property", "Model.property"))
    #expect(property["writes"] as? Int == 4)
    #expect(property["invalidations"] as? Int == 3)
    #expect(property["coalescedWrites"] as? Int == 1)  // "again, before FirstView's body has run again: nothing"
  }

  @Test("the demo's trace names every property and the site of every write")
  func guideNames() throws {
    let report = try report("guide")
    let names = rows(report, "properties").compactMap { $0["property"] as? String }
    #expect(Set(names) == ["Model.property", "Model.otherProperty"])
    let timeline = Run.command(["timeline", Paths.root + "/traces/guide.trc"]).standardOutput
    let writes = timeline.split(separator: "\n").filter { $0.contains(" write ") }
    #expect(writes.count == 6)
    #expect(writes.allSatisfy { $0.contains(" at obstrace_demo/main.swift:") && $0.contains("(top-level code)") })
  }

  @Test("the stale read: the immediate re-observe reads stale once per change, the deferred one never")
  func staleRead() throws {
    let report = try report("stale-read")
    let stale = rows(report, "findings").filter { $0["kind"] as? String == "stale-read" }
    #expect(stale.count == 1)
    #expect(stale.first?["count"] as? Int == 3)
    #expect((stale.first?["site"] as? String)?.contains("ImmediateObserver.observe()") == true)
  }

  @Test("the fan-out: each accent write invalidates twelve rows")
  func fanOut() throws {
    let report = try report("fan-out")
    let fanOut = try #require(rows(report, "findings").first { $0["kind"] as? String == "fan-out" })
    // Each of the two writes, at its own line of the scenario (`theme.accent = "red"`, then `"green"`).
    let fanOuts = rows(report, "findings").filter { $0["kind"] as? String == "fan-out" }
    #expect(fanOuts.map { $0["property"] as? String } == ["Theme.accent", "Theme.accent"])
    #expect(fanOuts.map { $0["count"] as? Int } == [1, 1])
    #expect(
      fanOuts.compactMap { $0["site"] as? String }.sorted() == [
        "obstrace_scenarios/main.swift:91 (fanOut())", "obstrace_scenarios/main.swift:94 (fanOut())",
      ])
    #expect(fanOut["property"] as? String == "Theme.accent")
    let rowsScope = try #require(row(report, "scopes", "label", "Row.body"))
    #expect(rowsScope["instances"] as? Int == 12)
    #expect(rowsScope["invalidations"] as? Int == 24)
  }

  @Test("the no-op _modify: one wasted invalidation, one redundant run, with the write's site")
  func noopModify() throws {
    let report = try report("noop-modify")
    let items = try #require(row(report, "properties", "property", "TodoStore.items"))
    #expect(items["noopWrites"] as? Int == 1)
    #expect(items["wastedInvalidations"] as? Int == 1)
    let noop = try #require(rows(report, "findings").first { $0["kind"] as? String == "noop-write" })
    #expect((noop["site"] as? String)?.hasPrefix("obstrace_scenarios/main.swift:") == true)
    let list = try #require(row(report, "scopes", "label", "TodoList.body"))
    #expect(list["redundantRuns"] as? Int == 1)
  }

  @Test("several threads: each worker's write invalidates the scope the main thread installed")
  func threads() throws {
    let report = try report("threads")
    #expect((report["trace"] as? [String: Any])?["threads"] as? Int == 4)
    let completed = try #require(row(report, "properties", "property", "Progress.completed"))
    #expect(completed["invalidations"] as? Int == 3)
    let view = try #require(row(report, "scopes", "label", "ProgressView.body"))
    #expect(view["redundantRuns"] as? Int == 0)
    // The cross-thread write names the workers' line, `progress.completed += 1`.
    let crossThread = try #require(rows(report, "findings").first { $0["kind"] as? String == "cross-thread-write" })
    #expect((crossThread["site"] as? String)?.hasPrefix("obstrace_scenarios/main.swift:159 ") == true, "\(crossThread)")
  }

  @Test("--top cuts every table of the text report, the objects by type too, and says how many more (tryout18's R12)")
  func topCutsObjects() {
    let text = Run.command(["report", Paths.root + "/traces/observations.trc", "--top", "1"]).standardOutput
    let objects = text.components(separatedBy: "Objects, by type\n").last?.split(separator: "\n").prefix(3) ?? []
    #expect(objects.count == 3, "\(text)")
    #expect(objects.first?.hasPrefix("  type ") == true, "\(text)")
    #expect(objects.last == "  … 1 more (see --format json)", "\(text)")
    let whole = Run.command(["report", Paths.root + "/traces/observations.trc"]).standardOutput
    #expect(!(whole.components(separatedBy: "Objects, by type\n").last ?? "").hasPrefix("  … "), "\(whole)")
    #expect(whole.components(separatedBy: "Objects, by type\n").last?.split(separator: "\n").prefix(3).count == 3)
  }
}
