import Foundation
import Testing

/// `Observations` under ObsTrace, side by side with Observation's own, and what the traces say of it.
@Suite("Observations")
struct ObservationsTests {
  @Test(
    "each behaviour prints the same with ObsTrace's Observations and with Observation's",
    arguments: ["guide", "leaky", "actor", "until-finished", "throws", "two-iterators"])
  func sideBySide(mode: String) throws {
    let real = try Run.program("obstrace-observations-untraced", [mode])
    let traced = try Run.program(
      "obstrace-observations", [mode], environment: ["OBSTRACE_OUTPUT": Paths.temporary("o.trc")])
    #expect(real.status == 0)
    #expect(traced.status == 0)
    #expect(traced.standardOutput == real.standardOutput)
    #expect(traced.standardError.isEmpty)
  }

  @Test("the guide's loop prints the seed's console: first value at once, one per change, a burst gives one")
  func guideConsole() throws {
    let traced = try Run.program("obstrace-observations", ["guide"])
    let expected = """
      a loop over Observations({ observableObject.property })
        value: 0
      property += 1
        value: 1
      otherProperty += 1
      property += 1, three times in a row
        value: 4
      cancel the loop's task
        the loop ended
      a model that saves itself, then goes away
        save: property is 0
        save: property is 1
        freed

      """
    #expect(traced.standardOutput == expected)
  }

  func report(_ trace: String) throws -> [String: Any] {
    let result = Run.command(["report", "--format", "json", Paths.root + "/traces/\(trace).trc"])
    return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as! [String: Any]
  }

  @Test("the replay counts the guide's loop exactly: three runs, two invalidations by property, none by otherProperty")
  func guideCounts() throws {
    let report = try report("observations")
    let scopes = report["scopes"] as! [[String: Any]]
    let loop = try #require(scopes.first { ($0["reads"] as? [String]) == ["Model.property"] })
    #expect(loop["kind"] as? String == "observations")
    #expect((loop["label"] as? String)?.hasPrefix("obstrace_observations/main.swift:") == true)
    #expect(loop["runs"] as? Int == 3)
    #expect(loop["invalidations"] as? Int == 2)
    #expect(loop["coalescedWrites"] as? Int == 2)
    #expect(loop["isolations"] as? [String] == ["MainActor"])
    #expect(loop["endings"] as? [String: Int] == ["cancelled": 1])
    let properties = report["properties"] as! [[String: Any]]
    #expect(properties.first { $0["property"] as? String == "Model.property" }?["invalidations"] as? Int == 2)
    #expect(properties.first { $0["property"] as? String == "Model.otherProperty" }?["invalidations"] as? Int == 0)
    // The weak self-saving model is freed: no leak.
    let findings = report["findings"] as! [[String: Any]]
    #expect(!findings.contains { $0["kind"] as? String == "leaked-object" })
    // Its loop's last run ended when the model was freed, then its sequence ended (the task was cancelled): the
    // recorder's cancel of that run is placed, not an inconsistency.
    #expect(!findings.contains { $0["kind"] as? String == "inconsistent-trace" })
  }

  @Test("each Observations sequence recorded now is labelled by its own call site in the program, not by its loop")
  func sequencesLabelledByTheirCallSites() throws {
    let trace = Paths.temporary("guide-labels.trc")
    let traced = try Run.program("obstrace-observations", ["guide"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 0)
    let json = Run.command(["report", "--format", "json", trace])
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let scopes = try #require(report["scopes"] as? [[String: Any]])
    let labels = scopes.filter { $0["kind"] as? String == "observations" }.compactMap { $0["label"] as? String }
    // The guide's loop over Model and the self-saving model's loop: two sequences made at two lines of main.swift.
    #expect(labels.count == 2, "\(labels)")
    #expect(Set(labels).count == 2, "\(labels)")
    #expect(labels.allSatisfy { $0.hasPrefix("obstrace_observations/main.swift:") }, "\(labels)")
  }

  @Test("loops that leave by break end their sequences as abandoned, in the report, its JSON and the timeline alike")
  func abandonedIterators() throws {
    let trace = Paths.temporary("two-iterators.trc")
    let traced = try Run.program(
      "obstrace-observations", ["two-iterators"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 0)
    let json = Run.command(["report", "--format", "json", trace])
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let scopes = try #require(report["scopes"] as? [[String: Any]])
    let loop = try #require(scopes.first { $0["kind"] as? String == "observations" })
    #expect(loop["sequences"] as? Int == 2)
    #expect(loop["endings"] as? [String: Int] == ["abandoned": 2])
    #expect(loop["sequencesRunningAtEnd"] as? Int == 0)
    let text = Run.command(["report", trace]).standardOutput
    #expect(text.contains("sequences: 2 abandoned"), "\(text)")
    // The sequences' line, not the trace's status line: a pool thread of the program that recorded is alive at the
    // exit's stop whenever the scheduler ran part of a loop on it, and the report says so ("1 thread still running").
    #expect(!text.contains("still running at the end"), "\(text)")
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(timeline.components(separatedBy: "ended: abandoned").count == 3, "\(timeline)")
    // The write after both loops ended fires each iterator's last tracking (Observation's, which outlives the
    // iterator): placed, said in the timeline, no inconsistency and no invalidation.
    #expect(
      timeline.components(separatedBy: "after its sequence ended: its tracking outlives the iterator")
        .count == 3, "\(timeline)")
    #expect(!timeline.contains("INCONSISTENT"), "\(timeline)")
    let exported = Paths.temporary("two-iterators.json")
    #expect(Run.command(["export", trace, "--format", "chrome-json", "-o", exported]).status == 0)
    let chrome = try String(contentsOfFile: exported, encoding: .utf8)
    #expect(chrome.components(separatedBy: "\"fire after its sequence ended: ").count == 3, "\(chrome)")
    #expect(loop["invalidations"] as? Int == 2)
    let findings = try #require(report["findings"] as? [[String: Any]])
    #expect(!findings.contains { $0["kind"] as? String == "inconsistent-trace" })
    #expect(!findings.contains { $0["kind"] as? String == "leaked-object" })
  }

  @Test(
    "a sequence whose closure throws after reading is ended at the run that threw (Observation installed its tracking), not at the run before it, whose tracking had fired: every event is placed"
  )
  func throwingSequenceEndsAtTheRunThatThrew() throws {
    let trace = Paths.temporary("throws.trc")
    let traced = try Run.program("obstrace-observations", ["throws"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 0)
    let timeline = Run.command(["timeline", trace]).standardOutput
    #expect(!timeline.contains("INCONSISTENT"), "\(timeline)")
    let lines = timeline.split(separator: "\n").map(String.init)
    // The run that threw read the property (it threw because of what it read): the sequence's last run.
    let runs = lines.filter { $0.contains(" (observations, #") }
    let lastRun = try #require(runs.last)
    let marker = try #require(lastRun.range(of: "(observations, #"))
    let last = lastRun[marker.upperBound...].prefix { $0.isNumber }
    #expect(lastRun.hasSuffix("read Model#1.property"), "\(timeline)")
    #expect(
      lines.contains { $0.contains("(#\(last)) with its sequence, unfired") }, "\(last) \(timeline)")
    #expect(lines.contains { $0.hasSuffix("ended: threw") }, "\(timeline)")
    let json = Run.command(["report", "--format", "json", trace])
    let report = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let findings = try #require(report["findings"] as? [[String: Any]])
    #expect(!findings.contains { $0["kind"] as? String == "inconsistent-trace" }, "\(findings)")
  }

  @Test(
    "a loop whose task keeps its model alive after a newer model replaced it is reported as a leak, with the loop's site; the newest, which nothing replaced, is only alive at the end"
  )
  func leakyLoop() throws {
    let report = try report("observations-leaky")
    let findings = report["findings"] as! [[String: Any]]
    let leak = try #require(findings.first { $0["kind"] as? String == "leaked-object" })
    #expect(findings.filter { $0["kind"] as? String == "leaked-object" }.count == 1)
    #expect(leak["count"] as? Int == 1)
    #expect((leak["message"] as? String)?.hasSuffix("though a newer LeakySavingModel replaced it") == true)
    let alive = try #require(findings.first { $0["kind"] as? String == "alive-at-end" })
    #expect(alive["count"] as? Int == 1)
    #expect((alive["message"] as? String)?.hasPrefix("1 LeakySavingModel object was alive") == true)
    #expect((leak["scope"] as? String)?.hasPrefix("obstrace_observations/main.swift:") == true)
    #expect((leak["site"] as? String)?.hasPrefix("obstrace_observations/main.swift:") == true)
    #expect((leak["evidence"] as? String)?.contains("no end recorded") == true)
  }
}
