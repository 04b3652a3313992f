import Foundation
import Testing

/// `obstrace export`: the Perfetto trace read back with Perfetto's published schema (PyPI's perfetto package, in
/// the venv scripts/setup makes), and the Chrome JSON read back as JSON, both against the report of the same
/// trace: a track per thread, balanced slices named by their scopes, writes and reads by `Type.property`, a flow
/// from each fire to the run it caused.
@Suite("Export for trace viewers")
struct ExportTests {
  static let traces = [
    "guide", "stale-read", "fan-out", "noop-modify", "noop-modify-worse", "threads", "observations",
    "observations-leaky",
  ]

  func report(_ trace: String) throws -> [String: Any] {
    let result = Run.command(["report", "--format", "json", Paths.root + "/traces/\(trace).trc"])
    return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
  }

  func export(_ trace: String, _ format: String) throws -> String {
    let path = Paths.temporary("\(trace).\(format)")
    let result = Run.command(["export", Paths.root + "/traces/\(trace).trc", "--format", format, "-o", path])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.isEmpty && result.standardError.isEmpty)
    return path
  }

  /// What the report says each viewer must show.
  struct Expected {
    var threads: Int
    var runs: [String: Int] = [:]
    var writes: [String: Int] = [:]
    var reads: [String: Int] = [:]
    var fires = 0
    /// Fires with the write that caused them (the properties' invalidations).
    var explainedFires = 0

    init(_ report: [String: Any]) {
      threads = (report["trace"] as! [String: Any])["threads"] as! Int
      for scope in report["scopes"] as! [[String: Any]] {
        runs[scope["label"] as! String] = scope["runs"] as? Int
        fires += scope["invalidations"] as! Int
      }
      for property in report["properties"] as! [[String: Any]] {
        let name = property["property"] as! String
        explainedFires += property["invalidations"] as! Int
        if let count = property["writes"] as? Int, count > 0 { writes["write " + name] = count }
        if let count = property["reads"] as? Int, count > 0 { reads["read " + name] = count }
      }
    }
  }

  @Test(
    "the Perfetto export parses with Perfetto's schema: tracks, balanced slices, names and flows", arguments: traces)
  func perfetto(trace: String) throws {
    let python = Paths.root + "/.build/python/bin/python"
    try #require(
      FileManager.default.isExecutableFile(atPath: python), "\(python) is missing: run scripts/setup, which makes it")
    let parsed = try Run.program(python, [Paths.root + "/scripts/perfetto-summary", try export(trace, "perfetto")])
    #expect(parsed.status == 0, "\(parsed.standardError)")
    let summary = try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as! [String: Any]
    let expected = Expected(try report(trace))
    #expect(summary["errors"] as? [String] == [])
    let tracks = summary["tracks"] as! [[String: Any]]
    #expect(tracks.count == expected.threads)
    #expect(Set(tracks.map { $0["name"] as! String }).count == tracks.count)
    #expect((summary["process"] as? [String: Any])?["name"] as? String != nil)
    let slices = summary["slices"] as! [String: Int]
    let instants = summary["instants"] as! [String: Int]
    for (scope, runs) in expected.runs { #expect(slices[scope] == runs, "runs of \(scope)") }
    for (write, count) in expected.writes { #expect(slices[write] == count, "\(write)") }
    for (read, count) in expected.reads { #expect(instants[read] == count, "\(read)") }
    #expect(slices.count == expected.runs.count + expected.writes.count)
    let fires = instants.filter { $0.key.hasPrefix("invalidate ") }.values.reduce(0, +)
    #expect(fires == expected.fires)
    // A flow starts at the end of every run (to the write that may invalidate it) and at every fire.
    #expect(summary["flowsStarted"] as? Int == expected.runs.values.reduce(0, +) + fires)
    // Those that end: run → the write that invalidated it, one per fire a write caused; fire → the run of the
    // scope it invalidated that it caused.
    let flows = summary["flows"] as! [[String]]
    #expect(flows.count == summary["flowsEnded"] as? Int)
    let fromFires = flows.filter { $0[0].hasPrefix("invalidate ") }
    let fromRuns = flows.filter { !$0[0].hasPrefix("invalidate ") }
    #expect(fromFires.allSatisfy { $0[0] == "invalidate " + $0[1] })
    #expect(fromRuns.allSatisfy { expected.runs[$0[0]] != nil && expected.writes[$0[1]] != nil })
    #expect(fromRuns.count == expected.explainedFires)
    // Every scope run says what it read and whether it was redundant.
    let arguments = summary["sliceArguments"] as! [String: [[String: Any]]]
    for scope in expected.runs.keys {
      #expect(arguments[scope]?.allSatisfy { $0["read"] != nil && $0["redundant"] != nil && $0["kind"] != nil } == true)
    }
  }

  @Test("flows of the noop-modify trace: each wasted write's fire leads to the redundant run it caused")
  func flows() throws {
    let python = Paths.root + "/.build/python/bin/python"
    let parsed = try Run.program(
      python, [Paths.root + "/scripts/perfetto-summary", try export("noop-modify-worse", "perfetto")])
    let summary = try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as! [String: Any]
    let flows = summary["flows"] as! [[String]]
    #expect(flows.filter { $0 == ["invalidate TodoList.body", "TodoList.body"] }.count == 4)
    #expect(flows.filter { $0 == ["TodoList.body", "write TodoStore.items"] }.count == 4)
    #expect(flows.count == 8)
    let runs = (summary["sliceArguments"] as! [String: [[String: Any]]])["TodoList.body"]!
    #expect(runs.map { $0["redundant"] as? Bool } == [false, true, true, true, false])
    let writes = (summary["sliceArguments"] as! [String: [[String: Any]]])["write TodoStore.items"]!
    #expect(writes.map { $0["outcome"] as? String } == ["unchanged", "unchanged", "unchanged", "changed"])
    #expect(writes.allSatisfy { ($0["site"] as? String)?.hasPrefix("obstrace_scenarios/main.swift:12") == true })
  }

  @Test("the Chrome JSON export has the same content: balanced slices per thread, instants, flows", arguments: traces)
  func chromeJSON(trace: String) throws {
    let data = try Data(contentsOf: URL(fileURLWithPath: try export(trace, "chrome-json")))
    let object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
    let events = object["traceEvents"] as! [[String: Any]]
    let expected = Expected(try report(trace))
    var open: [Int: [String]] = [:]
    var slices: [String: Int] = [:]
    var instants: [String: Int] = [:]
    var flowStarts: Set<Int> = []
    var flowEnds: Set<Int> = []
    var threadNames: Set<Int> = []
    var lastTime: [Int: Double] = [:]
    for event in events {
      let phase = event["ph"] as! String
      let tid = event["tid"] as? Int ?? -1
      // Flow events are bound at their slice's begin, which may come before the event they follow.
      if let time = event["ts"] as? Double, ["B", "E", "i"].contains(phase) {
        #expect(time >= lastTime[tid, default: 0], "time goes back on thread \(tid)")
        lastTime[tid] = time
      }
      switch phase {
      case "M": if event["name"] as? String == "thread_name" { threadNames.insert(tid) }
      case "B": open[tid, default: []].append(event["name"] as! String)
      case "E":
        let name = open[tid]?.popLast()
        #expect(name != nil, "an end without a begin")
        slices[name ?? "", default: 0] += 1
      case "i": instants[event["name"] as! String, default: 0] += 1
      case "s": flowStarts.insert(event["id"] as! Int)
      case "f": flowEnds.insert(event["id"] as! Int)
      default: Issue.record("unexpected phase \(phase)")
      }
      if phase != "M" { #expect(threadNames.contains(tid), "an event before its thread's name") }
    }
    #expect(open.values.allSatisfy { $0.isEmpty })
    #expect(threadNames.count == expected.threads)
    for (scope, runs) in expected.runs { #expect(slices[scope] == runs, "runs of \(scope)") }
    for (write, count) in expected.writes { #expect(slices[write] == count, "\(write)") }
    for (read, count) in expected.reads { #expect(instants[read] == count, "\(read)") }
    #expect(flowStarts.count == expected.runs.values.reduce(0, +) + expected.fires)
    #expect(flowEnds.isSubset(of: flowStarts))
    #expect(flowEnds.count >= expected.explainedFires)
  }

  @Test("a truncated trace exports what it holds, every slice closed, and says it is truncated")
  func truncated() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/stale-read.trc"))
    let cut = Paths.temporary("cut.trc")
    try whole.prefix(whole.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
    let output = Paths.temporary("cut.pftrace")
    let result = Run.command(["export", cut, "-o", output])
    #expect(result.status == 0)
    #expect(result.errorLines.count == 1 && result.standardError.contains("truncated"))
    let parsed = try Run.program(
      Paths.root + "/.build/python/bin/python", [Paths.root + "/scripts/perfetto-summary", output])
    let summary = try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as! [String: Any]
    #expect(summary["errors"] as? [String] == [])
    #expect(!(summary["slices"] as! [String: Int]).isEmpty)
  }

  @Test(
    "bad input to export is one line naming the flag or file, exit 2",
    arguments: [
      (["--format", "perfetto"], "-o"),
      (["--format", "svg", "-o", "/tmp/x"], "--format"),
      (["-o", "/nonexistent-folder/run.pftrace"], "/nonexistent-folder/run.pftrace"),
    ])
  func badInput(arguments: [String], mention: String) {
    let result = Run.command(["export", Paths.root + "/traces/guide.trc"] + arguments)
    #expect(result.status == 2)
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains(mention))
  }
}
