import Foundation
import ObsTraceFormat
import Testing

@testable import ObsTraceCommands

/// `obstrace export` with the timeline's filters (a fresh-clone try-out's G9: a 70 M-event trace exported to 3 GB,
/// which Perfetto's web UI cannot open, with no way to take a part). A filtered export holds the runs and writes the
/// timeline shows with the same filter, and only what matches; its errors are the timeline's.
@Suite("Export of a part of a trace")
struct ExportFilterTests {
  /// A Chrome JSON export read back: slices (by name, with their begin's and end's arguments), instants, tracks.
  struct Exported {
    var slices: [(name: String, thread: Int, time: Double, arguments: [String: Any])] = []
    var instants: [(name: String, thread: Int, time: Double, arguments: [String: Any])] = []
    var tracks: Set<Int> = []
    var flowStarts: Set<Int> = []
    var flowEnds: Set<Int> = []

    init(_ path: String) throws {
      let data = try Data(contentsOf: URL(fileURLWithPath: path))
      let events = (try JSONSerialization.jsonObject(with: data) as! [String: Any])["traceEvents"] as! [[String: Any]]
      var open: [Int: [(name: String, time: Double, arguments: [String: Any])]] = [:]
      for event in events {
        let thread = event["tid"] as? Int ?? -1
        let time = event["ts"] as? Double ?? 0
        let arguments = event["args"] as? [String: Any] ?? [:]
        switch event["ph"] as! String {
        case "M": if event["name"] as? String == "thread_name" { tracks.insert(thread) }
        case "B": open[thread, default: []].append((event["name"] as! String, time, arguments))
        case "E":
          let begin = open[thread]?.popLast()
          #expect(begin != nil, "an end without a begin")
          if let begin {
            slices.append((begin.name, thread, begin.time, begin.arguments.merging(arguments) { $1 }))
          }
        case "i": instants.append((event["name"] as! String, thread, time, arguments))
        case "s": flowStarts.insert(event["id"] as! Int)
        case "f": flowEnds.insert(event["id"] as! Int)
        default: break
        }
      }
      #expect(open.values.allSatisfy { $0.isEmpty }, "slices left open")
    }

    func count(_ name: String) -> Int { slices.filter { $0.name == name }.count }
  }

  /// The timeline's lines with `filter`: runs by label, writes by `Type.property`.
  static func timeline(_ trace: String, _ filter: [String]) -> (runs: [String: Int], writes: [String: Int]) {
    let result = Run.command(["timeline", trace] + filter)
    #expect(result.status == 0, "\(result.standardError)")
    var runs: [String: Int] = [:]
    var writes: [String: Int] = [:]
    for line in result.standardOutput.split(separator: "\n").dropFirst() {
      let what = line.dropFirst(18)
      if what.hasPrefix("run ") {
        runs[String(what.dropFirst(4).prefix { $0 != "(" }.dropLast()), default: 0] += 1
      } else if what.hasPrefix("write ") {
        let object = what.dropFirst(6).prefix { $0 != " " }
        // Model#1.property → Model.property
        let type = object.prefix { $0 != "#" }
        let member = object.drop { $0 != "." }
        writes["write " + type + member, default: 0] += 1
      }
    }
    return (runs, writes)
  }

  static func export(_ trace: String, _ filter: [String], format: String = "chrome-json") throws -> (
    path: String, result: ProcessResult
  ) {
    let path = Paths.temporary("part.\(format)")
    return (path, Run.command(["export", trace, "--format", format, "-o", path] + filter))
  }

  static func trace(_ name: String) -> String { Paths.root + "/traces/\(name).trc" }

  @Test(
    "a filtered export holds the runs and writes the timeline shows with the same filter, and only what matches",
    arguments: [
      ("guide", ["--scope", "FirstView.body"]), ("guide", ["--scope", "FirstView.body (#5)"]),
      ("guide", ["--object", "2"]), ("guide", ["--object", "Model#1"]),
      ("guide", ["--property", "Model.otherProperty"]),
      ("guide", ["--from", "40", "--to", "40.16"]), ("threads", ["--thread", "T2"]),
      ("noop-modify-worse", ["--scope", "TodoList.body"]), ("fan-out", ["--thread", "1", "--from", "0.5"]),
    ])
  func matchesTheTimeline(trace: String, filter: [String]) throws {
    let (path, result) = try Self.export(Self.trace(trace), filter)
    #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
    let exported = try Exported(path)
    let expected = Self.timeline(Self.trace(trace), filter)
    #expect(!expected.runs.isEmpty || !expected.writes.isEmpty, "the filter shows nothing: choose another")
    var slices: [String: Int] = [:]
    for slice in exported.slices { slices[slice.name, default: 0] += 1 }
    #expect(slices == expected.runs.merging(expected.writes) { $0 + $1 })
    #expect(exported.flowEnds.isSubset(of: exported.flowStarts))
    // What each filter names, every event has.
    let events = exported.slices + exported.instants
    var index = 0
    while index < filter.count {
      let (flag, value) = (filter[index], filter[index + 1])
      index += 2
      switch flag {
      case "--thread":
        #expect(exported.tracks.count == 1 && events.allSatisfy { exported.tracks.contains($0.thread) })
      case "--from": #expect(events.allSatisfy { $0.time >= Double(value)! * 1000 })
      case "--to": #expect(events.allSatisfy { $0.time <= Double(value)! * 1000 })
      case "--object":
        let object = value.contains("#") ? value : "#" + value
        for event in events {
          let named = [event.arguments["object"], event.arguments["read"]].compactMap { $0 as? String }
          #expect(named.contains { $0.contains(object) }, "\(event.name) \(event.arguments)")
        }
      case "--property":
        let member = String(value.drop { $0 != "." })
        for event in events {
          let named =
            event.name.hasPrefix("write ") || event.name.hasPrefix("read ") ? event.name : "\(event.arguments)"
          #expect(named.contains(member), "\(event.name) \(event.arguments)")
        }
      case "--scope":
        let label = PrintedNames.run(value)?.label ?? value
        for event in events where !event.name.hasPrefix("write ") {
          let named = [event.name, event.arguments["scope"] as? String ?? ""]
          #expect(named.contains { $0.hasSuffix(label) }, "\(event.name) \(event.arguments)")
        }
      default: Issue.record("unknown filter \(flag)")
      }
    }
  }

  @Test(
    "a filtered Perfetto export parses with Perfetto's schema and holds the scope's runs and the writes that invalidated it"
  )
  func perfetto() throws {
    let python = Paths.root + "/.build/python/bin/python"
    try #require(
      FileManager.default.isExecutableFile(atPath: python), "\(python) is missing: run scripts/setup, which makes it")
    let (path, result) = try Self.export(Self.trace("guide"), ["--scope", "FirstView.body"], format: "perfetto")
    #expect(result.status == 0, "\(result.standardError)")
    let parsed = try Run.program(python, [Paths.root + "/scripts/perfetto-summary", path])
    let summary = try JSONSerialization.jsonObject(with: Data(parsed.standardOutput.utf8)) as! [String: Any]
    #expect(summary["errors"] as? [String] == [])
    #expect(summary["slices"] as? [String: Int] == ["FirstView.body": 3, "write Model.property": 3])
    #expect((summary["instants"] as? [String: Int])?["invalidate FirstView.body"] == 3)
    #expect((summary["instants"] as? [String: Int])?.keys.contains { $0.contains("NextView") } == false)
  }

  @Test(
    "a filter naming what the trace does not have is the timeline's error, with export's name, and writes nothing",
    arguments: [
      (["--scope", "Nope"], "--scope 'Nope' names no scope of "),
      (["--object", "99"], "--object 99 is not an object of "),
      (["--thread", "T9"], "--thread T9 is not a thread of "),
      (["--thread", "x"], "--thread must be a number, not 'x'"),
      (["--from", "5", "--to", "1"], "--from must not be later than --to"),
      (["--property", "Model.nope"], "--property 'Model.nope' names no property of "),
    ])
  func errors(filter: [String], message: String) throws {
    let trace = Self.trace("guide")
    let (path, exported) = try Self.export(trace, filter)
    let timeline = Run.command(["timeline", trace] + filter)
    #expect(exported.status == 2 && timeline.status == 2)
    #expect(exported.errorLines.count == 1 && exported.standardError.hasPrefix("obstrace export: " + message))
    #expect(
      exported.standardError.replacingOccurrences(of: "obstrace export:", with: "obstrace timeline:")
        == timeline.standardError)
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("a filter that matches nothing in a trace that has what it names: the file, and a note saying it is empty")
  func nothingMatches() throws {
    let trace = Self.trace("guide")
    let (path, result) = try Self.export(trace, ["--from", "1000"])
    #expect(result.status == 0)
    #expect(
      result.standardError == "obstrace export: note: nothing in \(trace) matches the filter; \(path) has no events\n")
    let exported = try Exported(path)
    #expect(exported.slices.isEmpty && exported.instants.isEmpty)
  }

  @Test("a trace of many events: a note on standard error before the export, with the count and how to take a part")
  func largeNote() throws {
    let trace = Self.trace("guide")
    let reader = try TraceReader(path: trace)
    #expect(ExportCommand.largeExportNote(reader, path: trace) == nil)
    #expect(
      ExportCommand.largeExportNote(reader, path: trace, limit: 44)
        == "obstrace export: note: \(trace) holds 45 events (its footer's count): their export is large (tens of bytes "
        + "an event), more than Perfetto's web UI opens; take a part with --from/--to <ms>, --thread, --scope, "
        + "--property or --object ('obstrace timeline' takes the same filters, to choose)\n")
    #expect(Run.command(["export", "--help"]).standardOutput.contains("--from <ms>, --to <ms>"))
  }
}
