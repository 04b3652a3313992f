import Foundation
import ObsTraceAnalysis
import Testing

/// What recording must never change, side by side: each mode of `Examples/obstrace-fidelity` prints the same
/// built with ObsTrace and recording as built without it. With `OBSTRACE_COMPARE=equatable` (what recording did
/// by default before) the first four print differently: the test can tell.
@Suite("Fidelity")
struct FidelityTests {
  static let modes = [
    "unique", "append", "equality", "access", "hierarchy", "noop", "levels", "pileup", "together", "fewlevels",
    "tracking", "nested",
  ]

  /// Runs a mode of `obstrace-fidelity` recording to a new trace (with `OBSTRACE_BACKTRACES` when given), expects it to
  /// end well, and returns the trace's path.
  func recorded(_ mode: String, backtraces: String? = nil) throws -> String {
    let trace = Paths.temporary("\(mode).trc")
    var environment = ["OBSTRACE_OUTPUT": trace]
    environment["OBSTRACE_BACKTRACES"] = backtraces
    let run = try Run.program("obstrace-fidelity", [mode], environment: environment)
    #expect(run.status == 0, "\(mode): \(run.standardError)")
    return trace
  }

  @Test("recording changes nothing the program prints", arguments: modes)
  func sideBySide(mode: String) throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", [mode])
    let trace = Paths.temporary("fidelity.trc")
    let traced = try Run.program("obstrace-fidelity", [mode], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(untraced.status == 0)
    #expect(traced.status == 0)
    #expect(!untraced.standardOutput.isEmpty)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.standardError.isEmpty)
    #expect(FileManager.default.fileExists(atPath: trace))
  }

  @Test(
    "the untraced program prints what the issue's table says it should",
    arguments: [
      ("unique", "unique: storage replaced 0 times in 3 mutations, value 3\n"),
      ("append", "append: 20000 appends, 20000 items, the buffer moved fewer than 100 times\n"),
      ("equality", "equality: 10 writes of value.n, == called 0 times, n is 10\n"),
      ("access", "access: field += 1 called access(keyPath:) 1 time\n"),
      ("tracking", "tracking: 3 fires in 3 rounds, outer 1, inner 1, sum 18\n"),
      ("nested", "nested: outer fired 3, inner fired 3, sum 2\n"),
    ])
  func expectations(mode: String, output: String) throws {
    #expect(try Run.program("obstrace-fidelity-untraced", [mode]).standardOutput == output)
  }

  @Test(
    "comparing Equatable members (OBSTRACE_COMPARE=equatable, opt-in) changes what these programs see, as documented",
    arguments: ["unique", "append", "equality", "access"])
  func equatableComparisonPerturbs(mode: String) throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", [mode])
    let traced = try Run.program(
      "obstrace-fidelity", [mode],
      environment: ["OBSTRACE_OUTPUT": Paths.temporary("f.trc"), "OBSTRACE_COMPARE": "equatable"])
    #expect(traced.status == 0)
    #expect(traced.standardOutput != untraced.standardOutput)
  }

  @Test(
    "an onChange that calls exit() ends the process inside the write that fired it: traced, it prints and exits the same; the timeline shows that write, unfinished, and the report says so once"
  )
  func exitInsideAWrite() throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", ["exit"])
    #expect(untraced.status == 3)
    #expect(untraced.standardOutput == "exit: onChange ends the process inside the write\n")
    let trace = Paths.temporary("exit.trc")
    let traced = try Run.program("obstrace-fidelity", ["exit"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(traced.status == 3)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.standardError.isEmpty)
    let timeline = Run.command(["timeline", trace])
    #expect(timeline.status == 0)
    let writes = timeline.standardOutput.split(separator: "\n").filter { $0.contains(" write ") }
    #expect(writes.count == 1, "\(timeline.standardOutput)")
    #expect(
      writes.first?.contains(
        ".level by set UNFINISHED (the recording stopped inside it: its didSet is not in the trace) → invalidated "
          + "obstrace_fidelity/main.swift:") == true, "\(timeline.standardOutput)")
    let report = Run.command(["report", trace]).standardOutput
    #expect(
      report.components(separatedBy: "1 write was unfinished when the recording stopped (Gauge.level)").count == 2,
      "\(report)")
    // Every way a process can end inside a write is named, a thread still writing as the program ends too
    // (tryout13 G4: a program whose main returned while a worker was inside its write), and a signal handler that
    // called exit() on the thread it interrupted inside its write (tryout14 H14: a SIGTERM handler).
    #expect(
      report.contains(
        "(exit() in an observer the write fired, a signal handler that exited on the writing thread, the program "
          + "exiting while another thread was inside the write, a crash, or a cut trace)"), "\(report)")
    // What it counts is what the timeline shows: one write, one invalidation.
    let json = try TraceAnalysis.analyze(path: trace)
    let level = try #require(json.properties.first { $0.name == "Gauge.level" })
    #expect(level.statistics.writes == 1)
    #expect(level.statistics.invalidations == 1)
    #expect(json.unfinishedWrites == ["Gauge.level"])
    // JSON says it too (it said nothing of it), and a trace without one has no such field.
    let printed = Run.command(["report", trace, "--format", "json"]).standardOutput
    let object = try #require(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any])
    let traceObject = try #require(object["trace"] as? [String: Any])
    #expect(traceObject["unfinishedWrites"] as? [String] == ["Gauge.level"], "\(printed)")
    let whole = Run.command(["report", try recorded("tracking"), "--format", "json"]).standardOutput
    #expect(!whole.contains("unfinishedWrites"))
  }

  @Test(
    "nested tracking whose outer reads nothing itself: the outer fires on what only the inner read, traced and untraced alike, and report (text, JSON), graph and github give it those reads"
  )
  func nestedTrackingReads() throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", ["nested"])
    let trace = Paths.temporary("nested.trc")
    let traced = try Run.program("obstrace-fidelity", ["nested"], environment: ["OBSTRACE_OUTPUT": trace])
    // Observation fires the outer tracking on a write of what only the inner one read: 3 fires of each.
    #expect(untraced.standardOutput == "nested: outer fired 3, inner fired 3, sum 2\n")
    #expect(traced.standardOutput == untraced.standardOutput)
    let report = try TraceAnalysis.analyze(path: trace)
    let scopes = report.scopes.filter { $0.statistics.kind == .tracking }
    #expect(scopes.count == 2, "\(report.scopes.map(\.label))")
    // The outer is called on the line before the inner: both read Gauge.level, each invalidated 3 times by it.
    let line = { (label: String) in Int(label.split(separator: ":").last ?? "") ?? 0 }
    let ordered = scopes.sorted { line($0.label) < line($1.label) }
    #expect(ordered.count == 2 && line(ordered[0].label) + 1 == line(ordered[1].label), "\(ordered.map(\.label))")
    for scope in ordered {
      #expect(scope.reads == ["Gauge.level"], "\(scope.label): \(scope.reads)")
      #expect(scope.statistics.invalidations == 3)
      #expect(scope.statistics.runs == 3)
      // The third runs read a value only a `+= 0` had touched since the runs before them began.
      #expect(scope.statistics.redundantRuns == 1)
    }
    let outer = ordered[0].label
    let text = Run.command(["report", trace]).standardOutput
    let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("  \(outer) ") }, "\(text)")
    #expect(row.hasSuffix("Gauge.level"), "\(row)")
    let json = Run.command(["report", trace, "--format", "json"]).standardOutput
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let jsonScopes = try #require(object["scopes"] as? [[String: Any]])
    let jsonOuter = try #require(jsonScopes.first { $0["label"] as? String == outer }, "\(json)")
    #expect(jsonOuter["reads"] as? [String] == ["Gauge.level"])
    // The graph's read edge from the property to the outer scope, as to the inner one.
    let graph = Run.command(["graph", "--dot", trace]).standardOutput
    for scope in ordered {
      #expect(graph.contains("\"p:Gauge.level\" -> \"s:\(scope.label)\" [style=dashed"), "\(graph)")
    }
    // github: each redundant-run warning is on its scope's call, the line its label names.
    let github = Run.command(["report", trace, "--format", "github"]).standardOutput
    let redundant = github.split(separator: "\n").filter { $0.contains("title=obstrace redundant-run") }
    #expect(redundant.count == 2, "\(github)")
    for scope in ordered {
      #expect(
        redundant.contains { $0.contains("/obstrace-fidelity/main.swift,line=\(line(scope.label)),") },
        "\(github)")
    }
  }

  @Test(
    "a recording started from code while tracking is installed prints the same, and says what it could not see"
  )
  func lateStart() throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", ["latestart"])
    #expect(untraced.standardOutput == "latestart: fired 1 before, 1 after\n")
    let late = Paths.temporary("late.trc")
    let traced = try Run.program("obstrace-fidelity", ["latestart"], environment: ["OBSTRACE_LATE_OUTPUT": late])
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.standardError.isEmpty)
    // The tracking installed before the start fired, unseen: the trace says so rather than leave its write's
    // "invalidated nothing" as the whole story.
    let report = try TraceAnalysis.analyze(path: late)
    let started = report.findings.filter { $0.kind == .startedWhileRunning }
    #expect(started.count == 1)
    #expect(started.first?.count == 1)
    #expect(started.first?.isInformational == true)
    let timeline = Run.command(["timeline", late])
    #expect(timeline.status == 0)
    #expect(timeline.standardOutput.contains("write Gauge#1.level by set written → invalidated nothing"))
    #expect(timeline.standardOutput.contains("! the recording started while the program ran (Recorder.start)"))
    #expect(Run.command(["dump", late]).standardOutput.contains("started while the program ran (Recorder.start)"))
    // Started from OBSTRACE_OUTPUT (at the first model, before any tracking; the code's start then finds a recording
    // running): everything seen, nothing said.
    let early = Paths.temporary("early.trc")
    let whole = try Run.program(
      "obstrace-fidelity", ["latestart"], environment: ["OBSTRACE_OUTPUT": early, "OBSTRACE_LATE_OUTPUT": late])
    #expect(whole.standardOutput == untraced.standardOutput)
    let wholeReport = try TraceAnalysis.analyze(path: early)
    #expect(!wholeReport.findings.contains { $0.kind == .startedWhileRunning })
    #expect(wholeReport.properties.first { $0.name == "Gauge.level" }?.statistics.invalidations == 1)
    #expect(!Run.command(["timeline", early]).standardOutput.contains("started while the program ran"))
  }

  @Test("count += 0 is a no-op write, found by default with its site")
  func noopFound() throws {
    let trace = try recorded("noop")
    let report = try TraceAnalysis.analyze(path: trace)
    let tally = try #require(report.properties.first { $0.name == "Tally.count" })
    #expect(tally.statistics.noopWrites == 1)
    #expect(tally.statistics.comparedWrites == 1)
    #expect(tally.statistics.uncomparedWrites == 0)
    let finding = try #require(report.findings.first { $0.kind == .noopWrite })
    #expect(finding.site?.hasPrefix("obstrace_fidelity/main.swift:") == true)
  }

  @Test("writes of an array are counted as not compared, and the report says how to compare them")
  func uncomparedCounted() throws {
    let trace = try recorded("append")
    let result = Run.command(["report", trace])
    #expect(
      result.standardOutput.contains(
        "writes through _modify: 0 compared, 20000 not compared (not trivially copyable or over 64 bytes: arrays, "
          + "strings, …): OBSTRACE_COMPARE=equatable compares the Equatable ones\n"), "\(result.standardOutput)")
    let json = Run.command(["report", trace, "--format", "json"]).standardOutput
    #expect(
      json.contains(
        "\"modifyWrites\":{\"compared\":0,\"notCompared\":20000,\"notComparedBecause\":{\"notTriviallyCopyable\":20000}}"))
    // With comparison off, that is the reason said, with the setting that compares what can be compared.
    let off = Paths.temporary("append-off.trc")
    _ = try Run.program(
      "obstrace-fidelity", ["append"], environment: ["OBSTRACE_OUTPUT": off, "OBSTRACE_COMPARE": "off"])
    let offReport = Run.command(["report", off]).standardOutput
    #expect(
      offReport.contains(
        "writes through _modify: 0 compared, 20000 not compared (comparison off): OBSTRACE_COMPARE=trivial (the "
          + "default) compares trivially copyable members\n"), "\(offReport)")
    let dump = Run.command(["dump", off]).standardOutput
    #expect(dump.contains(" not compared (comparison off)"), "\(dump.prefix(2000))")
  }

  @Test("an object whose class is @Observable at two levels is one object of its dynamic type, created and freed once")
  func hierarchyIsOneObject() throws {
    let trace = try recorded("hierarchy")
    let report = try TraceAnalysis.analyze(path: trace)
    let objects = report.objects.map { "\($0.type) \($0.statistics.created) \($0.statistics.freed)" }
    #expect(objects == ["Animal 1 1", "Dog 1 1"])
    // Properties are named by the class that declares them, whichever object's class.
    #expect(Set(report.properties.map(\.name)) == ["Animal.name", "Animal.legs", "Dog.breed"])
    #expect(report.properties.first { $0.name == "Animal.name" }?.statistics.writes == 2)
    #expect(report.properties.first { $0.name == "Animal.legs" }?.statistics.noopWrites == 1)
    #expect(!report.findings.contains { $0.kind == .leakedObject })
    let timeline = Run.command(["timeline", trace]).standardOutput
    // One serial for the dog, whichever level's property: the first registrar created is the dog's.
    #expect(timeline.contains("write Dog#1.legs by _modify UNCHANGED"))
    #expect(timeline.contains("write Dog#1.name by set written"))
    #expect(timeline.contains("write Dog#1.breed by set written"))
    #expect(timeline.contains("write Animal#3.name by set written"))
    // The per-object graph names the object by its own type, whichever level declares the property.
    let graph = Run.command(["graph", trace, "--per-object"]).standardOutput
    #expect(graph.contains("\"p:Dog#1.name\""))
    #expect(graph.contains("\"p:Dog#1.breed\""))
    #expect(!graph.contains("Animal#1"))
  }

  @Test(
    "classes with @Observable at 1, 2 and 3 levels: one object per instance that had an event, of its dynamic type; registrars of untouched objects counted as registrars, with their sites",
    arguments: ["off", "writes", "all"])
  func levels(backtraces: String) throws {
    let trace = try recorded("levels", backtraces: backtraces)
    let report = try TraceAnalysis.analyze(path: trace)
    // Touched: a Tally, a Dog through Animal's property only, a MiddleNamePerson, a Person, a Dog kept to the end.
    let objects = report.objects.map { "\($0.type) \($0.statistics.created) \($0.statistics.freed)" }
    #expect(objects == ["Dog 2 1", "MiddleNamePerson 1 1", "Person 1 1", "Tally 1 1"])
    #expect(
      Set(report.properties.map(\.name)) == [
        "Tally.count", "Animal.name", "Dog.breed", "Entity.id", "Person.name", "MiddleNamePerson.middleName",
      ])
    // Untouched: 2 Tally (1 level), 2 Dog (2), 1 Animal (1), 3 MiddleNamePerson (3), 1 Person (2) freed; one
    // MiddleNamePerson (3) kept.
    let registrars = report.registrarsWithoutEvents.total
    #expect(registrars == RegistrarStatistics(created: 2 + 4 + 1 + 9 + 2 + 3, freed: 2 + 4 + 1 + 9 + 2))
    // An unbound registrar's free has no type to state: not an inconsistency, and not a damaged trace to check.
    #expect(!report.findings.contains { $0.kind == .inconsistentTrace })
    #expect(report.trace.undefinedReferences == 0)
    #expect(Run.command(["check", trace, "--max", "Tally.count:writes<=1"]).status == 0)
    let alive = report.findings.filter { $0.kind == .aliveAtEnd }.map(\.message)
    #expect(alive.count == 2)
    #expect(alive.contains("1 Dog object was alive when the trace ended"))
    #expect(alive.contains { $0.hasPrefix("3 @Observable registrars with no recorded event were alive") })
    #expect(!report.findings.contains { $0.kind == .leakedObject })
    let text = Run.command(["report", trace]).standardOutput
    #expect(!text.contains("unknown type"))
    #expect(!text.contains("<type #"))
    #expect(
      text.contains("21 @Observable registrars recorded no event (18 freed, 3 alive at the end), not counted above"))
    // A registrar cannot tell an @Observable class's from one a type keeps by hand (tryout14's N6): both are said.
    let handHeld = "(an object has one registrar per @Observable level of its class, and a registrar a type keeps by "
      + "hand, outside @Observable, is counted too)"
    #expect(text.contains(handHeld) && alive.contains { $0.hasSuffix(handHeld) }, "\(text)")
    let json = Run.command(["report", trace, "--format", "json"]).standardOutput
    #expect(!json.contains("unknown type"))
    #expect(json.contains("\"registrarsWithoutEvents\":{\"created\":21,\"freed\":18,\"aliveAtEnd\":3,\"sites\":["))
    let html = Paths.temporary("levels.html")
    #expect(Run.command(["report", trace, "--format", "html", "-o", html]).status == 0)
    let page = try String(contentsOfFile: html, encoding: .utf8)
    #expect(page.contains("<p class=\"note\" id=\"registrars-without-events\">21 @Observable registrars"))
    #expect(!page.contains("unknown type"))
    let sites = report.registrarsWithoutEvents.sites
    if backtraces == "off" {
      #expect(sites.map(\.site) == [nil])
      #expect(text.contains("created where not recorded (call stacks off: OBSTRACE_BACKTRACES=writes records it): 21"))
    } else {
      // Each untouched() call's closure is a site; the kept MiddleNamePerson's three registrars are one.
      #expect(sites.count == 6)
      let kept = try #require(sites.first { $0.statistics.freed == 0 })
      #expect(kept.statistics.created == 3)
      #expect(kept.site?.hasPrefix("obstrace_fidelity/main.swift:") == true)
      #expect(kept.site?.hasSuffix(" (levels())") == true)
      #expect(sites.first?.statistics == RegistrarStatistics(created: 9, freed: 9))
    }
  }

  @Test(
    "objects never touched, created at one site a turn apart and never freed: a pile-up of registrars at that site, but for the newest; without call stacks, only alive at the end",
    arguments: ["off", "writes"])
  func untouchedPileUp(backtraces: String) throws {
    let trace = try recorded("pileup", backtraces: backtraces)
    let report = try TraceAnalysis.analyze(path: trace)
    #expect(report.objects.isEmpty)
    // record's summary counts them apart too.
    let recorded = try Run.program(
      "obstrace",
      ["record", "-o", Paths.temporary("pileup-record.trc"), "--", Paths.binary("obstrace-fidelity"), "pileup"],
      environment: ["OBSTRACE_BACKTRACES": backtraces])
    #expect(
      recorded.standardError.contains(
        "0 objects of 0 types, 24 @Observable registrars of objects not read or written while recording, "),
      "\(recorded.standardError)")
    #expect(report.registrarsWithoutEvents.total == RegistrarStatistics(created: 24, freed: 0))
    let leaks = report.findings.filter { $0.kind == .leakedObject }
    let alive = report.findings.filter { $0.kind == .aliveAtEnd }
    if backtraces == "off" {
      #expect(leaks.isEmpty)
      #expect(alive.map(\.count) == [24])
    } else {
      // The newest object's two registrars, made in the last turn, were left behind by none: alive at the end.
      #expect(alive.map(\.count) == [2])
      let leak = try #require(leaks.first)
      #expect(leaks.count == 1)
      #expect(leak.site?.hasPrefix("obstrace_fidelity/main.swift:") == true)
      #expect(leak.site?.hasSuffix(" (pileup())") == true)
      #expect(
        leak.message.contains(
          "24 @Observable registrars were created there in the trace and none was ever freed, 22 of them left behind "
            + "by newer ones"), "\(leak.message)")
      #expect(leak.count == 22)
    }
  }

  @Test(
    "12 untouched objects made together, in one turn, and kept: alive at the end, not a pile-up (a screen's rows)")
  func untouchedTogetherIsNoPileUp() throws {
    let trace = try recorded("together", backtraces: "writes")
    let report = try TraceAnalysis.analyze(path: trace)
    #expect(report.registrarsWithoutEvents.total == RegistrarStatistics(created: 24, freed: 0))
    #expect(report.findings.filter { $0.kind == .leakedObject }.isEmpty)
    let alive = report.findings.filter { $0.kind == .aliveAtEnd }
    #expect(alive.map(\.count) == [24])
    #expect(
      alive.first?.message.contains(", created at obstrace_fidelity/main.swift:") == true,
      "\(alive.first?.message ?? "")")
  }

  @Test(
    "6 untouched objects of a 3-level class kept at one site are 18 registrars but too few objects for a pile-up: the threshold counts objects (the most registrars of one creation stack), not levels"
  )
  func fewObjectsManyLevelsAreNoPileUp() throws {
    let trace = try recorded("fewlevels", backtraces: "writes")
    let report = try TraceAnalysis.analyze(path: trace)
    #expect(report.registrarsWithoutEvents.total == RegistrarStatistics(created: 18, freed: 0))
    #expect(report.findings.filter { $0.kind == .leakedObject }.isEmpty)
    #expect(report.findings.filter { $0.kind == .aliveAtEnd }.map(\.count) == [18])
  }
}
