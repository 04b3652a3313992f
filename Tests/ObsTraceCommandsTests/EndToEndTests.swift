import Foundation
import ObsTraceFormat
import Testing

/// The built programs, run as a user runs them: exit codes, one-line errors, and tracing that changes nothing.
@Suite("End to end")
struct EndToEndTests {
  @Test("the demo prints the same with and without ObsTrace: the seed guide's console")
  func sameBehaviour() throws {
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let trace = Paths.temporary("demo.trc")
    let traced = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(untraced.status == 0)
    #expect(traced.status == 0)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.standardError.isEmpty)
    let guide = """
      observableObject.property += 1
        AGGraphInvalidateValue(#3176)
      observableObject.otherProperty += 1
        AGGraphInvalidateValue(#3228)
      """
    #expect(untraced.standardOutput.contains(guide))
    #expect(FileManager.default.fileExists(atPath: trace))
  }

  @Test("%p in OBSTRACE_OUTPUT becomes the process id")
  func processIDInPath() throws {
    let directory = Paths.temporary("pid")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let result = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": directory + "/run-%p.trc"])
    #expect(result.status == 0)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(files.count == 1)
    let name = try #require(files.first)
    #expect(name.hasPrefix("run-") && name.hasSuffix(".trc") && Int(name.dropFirst(4).dropLast(4)) != nil)
  }

  /// tryout16's P5: a traced process appended its trace's path to whatever file OBSTRACE_RECORD_LIST named
  /// (`record -- env OBSTRACE_RECORD_LIST=/etc/passwd prog` added a line to /etc/passwd).
  @Test("a traced process writes its trace's path only to a list obstrace record made, not to any file the variable names")
  func recordListIsRecords() throws {
    let victim = Paths.temporary("not-a-list.txt")
    try "keep me\n".write(toFile: victim, atomically: false, encoding: .utf8)
    let trace = Paths.temporary("record-list.trc")
    let result = try Run.program(
      "obstrace",
      ["record", "-o", trace, "--", "/usr/bin/env", "OBSTRACE_RECORD_LIST=\(victim)", Paths.binary("obstrace-demo")])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
    #expect(
      result.standardError.contains(
        "obstrace: OBSTRACE_RECORD_LIST names \(victim), which is not a list 'obstrace record' made"),
      "\(result.standardError)")
    // The process still records where it was told.
    #expect(Run.command(["report", trace]).status == 0)
  }

  @Test("record runs the command, passes its exit code through and summarizes the trace")
  func record() throws {
    let trace = Paths.temporary("record.trc")
    let result = try Run.program("obstrace", ["record", "-o", trace, "--", Paths.binary("obstrace-demo")])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("AGGraphInvalidateValue(#3176)"))
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("events from 1 thread"))
    // Findings counted as the report counts them, in the same words.
    let report = Run.command(["report", trace]).standardOutput
    let counts = try #require(report.split(separator: "\n").first { $0.hasPrefix("Findings: ") })
    #expect(result.standardError.contains(". \(counts): see 'obstrace report \(trace)'."), "\(result.standardError)")
    let failing = try Run.program(
      "obstrace", ["record", "-o", Paths.temporary("none.trc"), "--", "/bin/sh", "-c", "exit 3"])
    #expect(failing.status == 3)
    #expect(failing.standardError.contains("wrote no trace"))
  }

  @Test("an unwritable OBSTRACE_OUTPUT costs one line on stderr; the program runs and prints the same")
  func unwritableOutput() throws {
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let traced = try Run.program("obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": "/nonexistent/dir/run.trc"])
    #expect(traced.status == 0)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.errorLines.count == 1)
    #expect(traced.standardError.contains("/nonexistent/dir/run.trc"))
  }

  @Test(
    "OBSTRACE_RING_CAPACITY out of range or not a number: one line naming the variable and the value used; the program prints the same, the trace records the ring it used",
    arguments: [
      (
        "1073741824",
        "OBSTRACE_RING_CAPACITY=1073741824 is out of range (64 to 4194304 records a thread's ring); using 4194304",
        4_194_304
      ),
      (
        "99999999999999999999",
        "OBSTRACE_RING_CAPACITY=99999999999999999999 is out of range (64 to 4194304 records a thread's ring); using 4194304",
        4_194_304
      ),
      ("8", "OBSTRACE_RING_CAPACITY=8 is out of range (64 to 4194304 records a thread's ring); using 64", 64),
      (
        "lots", "OBSTRACE_RING_CAPACITY=lots is not a number (64 to 4194304 records a thread's ring); using 65536",
        65_536
      ),
      ("100", nil, 128),
      ("4194304", nil, 4_194_304),
    ] as [(String, String?, UInt64)])
  func ringCapacityBounds(value: String, line: String?, used: UInt64) throws {
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let trace = Paths.temporary("ring.trc")
    let traced = try Run.program(
      "obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": trace, "OBSTRACE_RING_CAPACITY": value])
    #expect(traced.status == 0)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.errorLines == (line.map { ["obstrace: " + $0] } ?? []))
    #expect(try TraceReader(path: trace).header.ringCapacity == used)
  }

  @Test("OBSTRACE_OUTPUT naming a FIFO, a device or a directory: the program runs untraced to its end, one line says why")
  func outputNotARegularFile() throws {
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let fifo = Paths.temporary("output.fifo")
    unlink(fifo)
    #expect(mkfifo(fifo, 0o644) == 0)
    let directory = Paths.temporary("output-directory")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (path, kind) in [(fifo, "a FIFO"), ("/dev/null", "a character device"), (directory, "a directory")] {
      // Under `timeout -s KILL` (the runner's children inherit SIGTERM blocked): opening a FIFO used to block the program in its first model's init until a reader came.
      let traced = try Run.program(
        "/usr/bin/timeout", ["-s", "KILL", "60", Paths.binary("obstrace-demo")], environment: ["OBSTRACE_OUTPUT": path])
      #expect(traced.status == 0)
      #expect(traced.standardOutput == untraced.standardOutput)
      #expect(
        traced.errorLines == [
          "obstrace: \(path): cannot create the trace file (it is \(kind), not a regular file); the program runs untraced"
        ])
    }
  }

  @Test("record --ring-capacity out of range is one line naming the flag and the range, exit 2")
  func recordRingCapacityBounds() {
    for value in ["63", "4194305", "1073741824", "lots"] {
      let result = Run.command(["record", "-o", Paths.temporary("r.trc"), "--ring-capacity", value, "--", "/bin/true"])
      #expect(result.status == 2)
      #expect(
        result.standardError
          == "obstrace record: --ring-capacity must be a number from 64 to 4194304, not '\(value)'\n")
    }
  }

  @Test(
    "symbolize with a binary modified after the recording began: not looked up, said with its path and times, exit 1; one replaced with its old time: the unresolved address said, exit 1"
  )
  func symbolizeChangedBinary() throws {
    let directory = Paths.temporary("bin")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let binary = directory + "/scenarios"
    try FileManager.default.copyItem(atPath: Paths.binary("obstrace-scenarios"), toPath: binary)
    let trace = Paths.temporary("killed.trc")
    let killed = try Run.program(binary, ["killed"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(killed.status == 128 + 9)
    // The binary that ran: everything named, exit 0.
    let same = Run.command(["symbolize", trace, "-o", Paths.temporary("same.trc")])
    #expect(same.status == 0)
    #expect(same.errorLines.count == 1)
    #expect(same.standardError.hasPrefix("obstrace symbolize: named 1 of 1 properties, 1 call-site labels"))
    // Rebuilt (here: its time moved past the recording's start).
    try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(1)], ofItemAtPath: binary)
    let rebuilt = Run.command(["symbolize", trace, "-o", Paths.temporary("rebuilt.trc")])
    #expect(rebuilt.status == 1)
    #expect(rebuilt.errorLines.count == 3)
    #expect(
      rebuilt.errorLines.first?.hasPrefix("obstrace symbolize: named 0 of 1 properties, 0 call-site labels") == true)
    #expect(
      rebuilt.errorLines.dropFirst().first?.hasPrefix(
        "obstrace symbolize: \(binary) was modified after the recording began (") == true, "\(rebuilt.standardError)")
    #expect(
      rebuilt.errorLines.last
        == "obstrace symbolize: 1 property and 1 call-site label stay unnamed: symbolize with the binaries that ran "
        + "(modified before the recording began), or record again")
    // Replaced by another program with an old time: nothing to go by but what does not resolve.
    try FileManager.default.removeItem(atPath: binary)
    try FileManager.default.copyItem(atPath: Paths.binary("obstrace-demo"), toPath: binary)
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1e9)], ofItemAtPath: binary)
    let replaced = Run.command(["symbolize", trace, "-o", Paths.temporary("replaced.trc")])
    #expect(replaced.status == 1)
    #expect(replaced.errorLines.count == 2)
    // Whether the recorded call site's address also falls after a call in the other program's code (and gets a
    // name, a wrong one) depends on both programs' layouts: a scenario added to obstrace-scenarios moved it.
    let last = replaced.errorLines.last ?? ""
    #expect(
      last.hasPrefix("obstrace symbolize: 1 property stays unnamed: its address (first: getter 0x")
        || last.hasPrefix(
          "obstrace symbolize: 1 property and 1 call-site label stay unnamed: their addresses (first: getter 0x"),
      "\(replaced.standardError)")
    #expect(replaced.standardError.contains("they may not be the ones that ran"))
  }

  @Test("a trace that hits a full disk mid-run: one line, the program finishes, the file reads as far as it is whole")
  func fullDisk() throws {
    let trace = Paths.temporary("full.trc")
    let result = try Run.program("obstrace-scenarios", ["fill-disk", trace])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("done: count 300001, fired 3"))
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("File too large"))
    let reader = try TraceReader(path: trace)
    reader.forEachEvent { _ in }
    #expect(reader.truncated)
  }

  @Test("a process killed by SIGKILL leaves a trace that holds every event written a second before")
  func killed() throws {
    let trace = Paths.temporary("killed.trc")
    let result = try Run.program("obstrace-scenarios", ["killed"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(result.status == 128 + 9)
    let reader = try TraceReader(path: trace)
    var writes = 0
    reader.forEachEvent { if $0.kind == .willSet { writes += 1 } }
    #expect(reader.truncated)
    #expect(reader.footer == nil)
    #expect(writes == 10_000)
    // Killed, it wrote no symbol table; `obstrace symbolize` resolves names and sites from its binary.
    #expect(reader.definitions.symbols.propertyNames.isEmpty)
    // Until then a frame is its address, labelled as such.
    let frames = Run.command(["dump", "--stacks", trace]).standardOutput.split(separator: "\n").filter {
      $0.hasPrefix("              ")
    }
    #expect(!frames.isEmpty && frames.allSatisfy { $0.hasSuffix("  [not symbolized]") && $0.contains("0x") })
    let symbolized = Paths.temporary("symbolized.trc")
    let result2 = Run.command(["symbolize", trace, "-o", symbolized])
    #expect(result2.status == 0)
    // Under check, a killed run fails whatever its counts say, unless told to check it anyway.
    let check = Run.command(["check", symbolized, "--max", "Counter.count:writes<=10000"])
    #expect(check.status == 1)
    #expect(check.standardOutput.contains("limit Counter.count:writes<=10000: ok (10000)"))
    #expect(check.standardOutput.contains("FAILED: the trace was cut short (the process was killed or crashed)"))
    let allowed = Run.command(["check", symbolized, "--max", "Counter.count:writes<=10000", "--allow-incomplete"])
    #expect(allowed.status == 0)
    #expect(allowed.standardOutput.hasSuffix("PASSED\n"))
    let named = try TraceReader(path: symbolized)
    var sites = Set<String>()
    var count = 0
    named.forEachEvent { event in
      if event.kind == .willSet {
        count += 1
        if let site = named.definitions.site(ofStack: event.stack) {
          sites.insert("\(site.file.split(separator: "/").last!)")
        }
      }
    }
    #expect(count == 10_000)
    #expect(named.truncated)
    #expect(named.definitions.propertyName(1) == "Counter.count")
    #expect(sites == ["main.swift"])
    // Its scope, labelled by its call site, is named too: the label's stack is stated with the label.
    let scopes = Run.command(["report", symbolized]).standardOutput
    #expect(scopes.contains("obstrace_scenarios/main.swift:\(killedScopeLine) "), "\(scopes)")
    #expect(!scopes.contains("<call site of stack"))

    // A damaged chunk and the cut end stay as they were: symbolize never makes a trace look complete.
    // The first of its two events chunks: the second still states what the check's limit names.
    var eventsChunks: [UInt64] = []
    try TraceReader(path: trace).forEachChunk { eventsChunks.append($0.offset) }
    try #require(eventsChunks.count >= 2)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: trace))
    bytes[Int(eventsChunks[0]) + TraceFormat.chunkHeaderSize + 4] ^= 0x5a
    let damaged = Paths.temporary("killed-damaged.trc")
    try bytes.write(to: URL(fileURLWithPath: damaged))
    let reportBefore = Run.command(["report", damaged]).standardOutput.split(separator: "\n")[1]
    #expect(reportBefore.contains("1 damaged"))
    #expect(reportBefore.contains("TRUNCATED"))
    let rewritten = Run.command(["symbolize", damaged])  // in place
    #expect(rewritten.status == 0)
    #expect(rewritten.standardError.contains("still 1 damaged chunk, truncated"), "\(rewritten.standardError)")
    let after = Run.command(["check", damaged, "--max", "Counter.count:writes<=10000"])
    #expect(after.status == 1)
    #expect(after.standardOutput.contains("FAILED: the trace was cut short"))
    #expect(after.standardOutput.contains("1 damaged chunk(s) were skipped"))
    #expect(Run.command(["report", damaged]).standardOutput.split(separator: "\n")[1] == reportBefore)
  }

  /// The line of the scope in `obstrace-scenarios killed`.
  var killedScopeLine: Int {
    let source = try! String(contentsOfFile: Paths.root + "/Examples/obstrace-scenarios/main.swift", encoding: .utf8)
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    let start = lines.firstIndex { $0.hasPrefix("func killed()") }!
    return lines[start...].firstIndex { $0.contains("withObservationTracking {") }! + 1
  }

  @Test(
    "a scope re-run on another thread while the write that woke it is in progress raced it: a stale read, not redundant"
  )
  func racingRead() throws {
    let trace = Paths.temporary("racing.trc")
    let result = try Run.program("obstrace-scenarios", ["racing-read"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(result.status == 0)
    // The program shows the race: the re-run read the old value.
    #expect(result.standardOutput.contains("re-reads level while it is being set to 1: 0"))
    let report = Run.command(["report", "--format", "json", trace])
    let json = try #require(try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8)) as? [String: Any])
    let findings = try #require(json["findings"] as? [[String: Any]])
    #expect(!findings.contains { $0["kind"] as? String == "redundant-run" })
    let raced = findings.filter { $0["kind"] as? String == "stale-read" }
    #expect(raced.count == 1)
    #expect(raced.first?["scope"] as? String == "RacingObserver.observe")
    #expect(raced.first?["count"] as? Int == 1)
    let scopes = try #require(json["scopes"] as? [[String: Any]])
    #expect(scopes.first { $0["label"] as? String == "RacingObserver.observe" }?["redundantRuns"] as? Int == 0)
    let timeline = Run.command(["timeline", trace, "--scope", "RacingObserver.observe"])
    #expect(timeline.standardOutput.contains("[raced a write on another thread: may have read the old value]"))
  }

  @Test(
    "pool threads idle at the stop (their jobs done 50 ms before it) are said as what the trace shows: not exited, and their last event's distance from the stop; not as running or working"
  )
  func idlePoolThreads() throws {
    let trace = Paths.temporary("idle-pool.trc")
    let result = try Run.program("obstrace-scenarios", ["idle-pool"], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(result.status == 0)
    #expect(result.standardOutput == "idle-pool: 4 jobs done\n")
    let footer = try #require(try TraceReader(path: trace).footer)
    // Dispatch keeps an idle pool thread for seconds: the ones that ran the jobs had not exited at the stop.
    try #require(!footer.runningAtStop.isEmpty)
    let report = Run.command(["report", trace]).standardOutput
    let finding = try #require(
      report.split(separator: "\n").first { $0.contains("[running-at-stop]") }.map(String.init), "\(report)")
    let count = footer.runningAtStop.count
    #expect(
      finding.contains(
        "[running-at-stop] \(count) thread\(count == 1 ? "" : "s") had not exited when the recording stopped (T"),
      "\(finding)")
    #expect(!report.contains("still running") && !report.contains("worked"), "\(report)")
    // Each thread's clause: its last event, at least the 50 ms the program slept before it exited, or none.
    for thread in footer.runningAtStop.prefix(8) {
      let clause = try #require(
        finding.components(separatedBy: "T\(thread): ").dropFirst().first?.split(separator: ";").first
          .map { String($0.split(separator: ")").first ?? "") }, "\(finding)")
      if clause != "no event in the trace" {
        let prefix = "last event "
        #expect(clause.hasPrefix(prefix) && clause.hasSuffix(" ms before the stop"), "\(clause)")
        let milliseconds = Double(clause.dropFirst(prefix.count).prefix { $0.isNumber || $0 == "." }) ?? 0
        #expect(milliseconds >= 45, "\(clause)")
      }
    }
  }

  @Test(
    "a thread's last event (a free) racing the exit is in the trace, or the trace says the thread still ran: never complete without it, never a leak (20 runs)"
  )
  func exitRace() throws {
    for _ in 0..<20 {
      let trace = Paths.temporary("exit-race.trc")
      let result = try Run.program("obstrace-scenarios", ["exit-race"], environment: ["OBSTRACE_OUTPUT": trace])
      #expect(result.status == 0)
      #expect(result.standardOutput == "exiting\n")
      let reader = try TraceReader(path: trace)
      var freed = 0
      var worker: UInt32?
      reader.forEachEvent { event in
        if event.kind == .objectFreed { freed += 1 }
        if event.kind == .objectCreated { worker = event.thread }
      }
      let footer = try #require(reader.footer)
      let report = Run.command(["report", trace]).standardOutput
      let status = report.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
      #expect(!report.contains("[leaked-object]"))
      #expect(!report.contains("[alive-at-end]"), "\(report)")
      if freed == 0 {
        // The free was lost with the exit: the worker was still running, and the report says so.
        #expect(footer.runningAtStop.contains(try #require(worker)))
        if footer.lostAtStop > 0 {
          // The worker stored the free just too late for the final drain: counted, and the trace is incomplete.
          let events = footer.lostAtStop == 1 ? "1 event" : "\(footer.lostAtStop) events"
          #expect(status.contains("INCOMPLETE: \(events) lost at the stop"), "\(status)")
        } else {
          #expect(
            status.hasSuffix("complete up to the stop, 1 thread not exited at the stop (see running-at-stop)"),
            "\(status)")
        }
        #expect(report.contains("[running-at-stop] 1 thread had not exited when the recording stopped (T"))
        #expect(report.contains("1 object (Counter) used on it may have been freed after the stop"))
      } else {
        #expect(freed == 1)
      }
    }
  }

  @Test(
    "under CPU load, threads drained at different moments: no thread's times go back, the trace spans no more than the process lived"
  )
  func timesUnderLoad() throws {
    let trace = Paths.temporary("busy.trc")
    let started = ContinuousClock.now
    let result = try Run.program("obstrace-scenarios", ["busy-drains"], environment: ["OBSTRACE_OUTPUT": trace])
    let lived = started.duration(to: .now)
    let lifetime =
      UInt64(lived.components.seconds) * 1_000_000_000 + UInt64(lived.components.attoseconds / 1_000_000_000)
    #expect(result.status == 0)
    #expect(result.standardOutput == "done\n")
    let reader = try TraceReader(path: trace)
    var last: [UInt32: UInt64] = [:]
    var backwards = 0
    var latest: UInt64 = 0
    var writes: [UInt32: Int] = [:]
    reader.forEachEvent { event in
      if event.time < last[event.thread, default: 0] { backwards += 1 }
      last[event.thread] = event.time
      latest = max(latest, event.time)
      if event.kind == .willSet { writes[event.thread, default: 0] += 1 }
    }
    #expect(reader.damage.isEmpty && !reader.truncated)
    #expect(backwards == 0)
    // Four writers, drained as their rings fill (under load the flusher lags: they wait for it), at its wakes
    // and when each exits.
    #expect(writes.count == 4)
    // Times count from the recording's start, which is after the process started; the footer's duration is the
    // last clock sample, before it exited.
    let footer = try #require(reader.footer)
    #expect(latest <= footer.durationNanoseconds)
    #expect(footer.durationNanoseconds <= lifetime, "trace \(footer.durationNanoseconds) ns, process \(lifetime) ns")
  }

  @Test("the graph renders with dot -Tsvg")
  func graphRenders() throws {
    let dot = Paths.temporary("graph.dot")
    let graph = Run.command(["graph", "--dot", Paths.root + "/traces/fan-out.trc"])
    try graph.standardOutput.write(toFile: dot, atomically: true, encoding: .utf8)
    let rendered = try Run.program("/usr/bin/dot", ["-Tsvg", dot])
    #expect(rendered.status == 0)
    #expect(rendered.standardOutput.contains("<svg"))
    #expect(rendered.standardOutput.contains("Theme.accent"))
  }
}

/// Bad input: one line on stderr naming the file or flag, exit 2; help exits 0 with an example.
@Suite("Command line")
struct CommandLineTests {
  @Test(
    "bad input is one line on stderr, exit 2",
    arguments: [
      (["report", "/nonexistent/run.trc"], "/nonexistent/run.trc"),
      (["report"], "missing the trace file"),
      (["report", "--frobnicate", "x.trc"], "--frobnicate"),
      (["report", "--format", "xml", "x.trc"], "--format"),
      (["report", "--fan-out", "-3", "x.trc"], "--fan-out"),
      (["timeline", "--object", "seven", "x.trc"], "--object"),
      (["graph"], "missing the trace file"),
      (["dump", "a.trc", "b.trc"], "expected one trace file"),
      (["record", "--", "true"], "-o"),
      (["record", "-o", "x.trc"], "missing the command"),
      (["frobnicate"], "unknown command"),
      // Names and numbers the trace does not have: an error naming the closest, never an empty answer.
      (["timeline", "--scope", "nosuch", Paths.root + "/traces/guide.trc"], "--scope 'nosuch' names no scope"),
      (["timeline", "--property", "Model.proprety", Paths.root + "/traces/guide.trc"], "closest: Model.property"),
      (["timeline", "--thread", "99", Paths.root + "/traces/guide.trc"], "--thread 99 is not a thread"),
      (["timeline", "--object", "999", Paths.root + "/traces/guide.trc"], "--object 999 is not an object"),
      (["timeline", "--from", "10", "--to", "5", "x.trc"], "--from"),
      (["graph", "--scope", "FirstView.bod", Paths.root + "/traces/guide.trc"], "closest: FirstView.body"),
      (["graph", "--type", "Modle", Paths.root + "/traces/guide.trc"], "--type 'Modle'"),
      // Limits that can never pass, and a tolerance that lets everything pass.
      (["check", Paths.root + "/traces/guide.trc", "--max", "Model.property:invalidations<=-1"], "can never pass"),
      (["check", Paths.root + "/traces/guide.trc", "--max", "Model.property:invalidations<0"], "can never pass"),
      (
        ["check", Paths.root + "/traces/guide.trc", "--max", "Model.property:writes<=9", "--tolerance", "inf"],
        "--tolerance"
      ),
      // A trace file that cannot be created: said before running the command, which would run untraced.
      (["record", "-o", "/tmp", "--", "true"], "-o /tmp is a directory"),
      (["record", "-o", "/nonexistent/dir/run.trc", "--", "true"], "cannot create -o /nonexistent/dir/run.trc"),
      // An option given twice is not both, nor the last in silence (a fresh-clone try-out's F10).
      (
        ["timeline", "--scope", "FirstView.body", "--scope", "SecondView.body", Paths.root + "/traces/guide.trc"],
        "--scope is given twice ('FirstView.body', 'SecondView.body'); it takes one value"
      ),
      (["timeline", "--thread", "T2", "--thread", "T1", Paths.root + "/traces/guide.trc"], "--thread is given twice"),
      (["report", "--format", "json", "--format=text", Paths.root + "/traces/guide.trc"], "--format is given twice"),
      (["graph", "--type", "Model", "--type", "Model", Paths.root + "/traces/guide.trc"], "--type is given twice"),
      (["check", Paths.root + "/traces/guide.trc", "-o", "a.xml", "--output", "b.xml"], "--output is given twice"),
    ])
  func badInput(arguments: [String], mention: String) {
    let result = Run.command(arguments)
    #expect(result.status == 2)
    #expect(result.standardOutput.isEmpty)
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains(mention), "\(result.standardError)")
  }

  @Test(
    "-o - writes to standard output, and a one-character file name is written like any other (both crashed: a fresh-clone try-out's J10)"
  )
  func shortOutputNames() throws {
    let guide = Paths.root + "/traces/guide.trc"
    let folder = Paths.temporary("short-names")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let named = try Run.program("obstrace", ["export", "--format", "chrome-json", "-o", "a", guide], directory: folder)
    #expect(named.status == 0, "\(named.standardError)")
    let file = try String(contentsOfFile: folder + "/a", encoding: .utf8)
    #expect(file.hasPrefix("{") && file.count > 100)
    let dashed = try Run.program("obstrace", ["export", "--format", "chrome-json", "-o", "-", guide], directory: folder)
    #expect(dashed.status == 0, "\(dashed.standardError)")
    #expect(dashed.standardOutput == file)
    #expect(!FileManager.default.fileExists(atPath: folder + "/-"))
    let html = try Run.program("obstrace", ["report", "--format", "html", "-o", "b", guide], directory: folder)
    #expect(html.status == 0, "\(html.standardError)")
    #expect(try String(contentsOfFile: folder + "/b", encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
  }

  @Test("`--` ends the options of every command: what follows it is the trace (tryout14's N1)")
  func doubleDashEndsOptions() throws {
    let guide = Paths.root + "/traces/guide.trc"
    for command in [["report"], ["timeline"], ["graph", "--dot"], ["dump"], ["report", "--format", "json"]] {
      let plain = Run.command(command + [guide])
      #expect(plain.status == 0 && !plain.standardOutput.isEmpty, "\(command)")
      let after = Run.command(command + ["--", guide])
      #expect(after.status == 0 && after.standardOutput == plain.standardOutput, "\(command): \(after.standardError)")
    }
    // What follows `--` is not an option, even when it looks like one: named as the file it is taken for.
    let dashed = Run.command(["report", "--", "--format"])
    #expect(dashed.status == 2 && dashed.standardError.contains("--format"), "\(dashed.standardError)")
    #expect(!dashed.standardError.contains("needs a value"), "\(dashed.standardError)")
  }

  /// observations.trc: the model's registrar is created (thread 1's only chunk, flushed at its exit) before the
  /// model's first read on thread 2 records its type.
  @Test("dump says an object's type is not yet recorded where its creation comes first, then names it by its type")
  func dumpBeforeTheTypeIsRecorded() throws {
    let lines = Run.command(["dump", Paths.root + "/traces/observations.trc"]).standardOutput.split(separator: "\n")
    let created = try #require(lines.first { $0.contains(" objectCreated ") })
    #expect(created.contains("  T1  objectCreated <type not yet recorded>#1 at "), "\(created)")
    #expect(lines.contains { $0.contains("  T2  access Model#1 Model.property") })
    for trace in ["guide", "stale-read", "fan-out", "noop-modify", "threads", "observations", "observations-leaky"] {
      let dump = Run.command(["dump", Paths.root + "/traces/\(trace).trc"]).standardOutput
      #expect(!dump.contains("unknown type"), "\(trace)")
    }
  }

  @Test("timeline --thread or --object naming one the trace has, with no line of it, matches nothing: not an error")
  func threadWithoutLines() throws {
    // observations.trc: T1 created the model and read it (dump shows its events), but no timeline line is T1's.
    let path = Paths.root + "/traces/observations.trc"
    #expect(Run.command(["dump", path]).standardOutput.contains("  T1  objectCreated"))
    let result = Run.command(["timeline", path, "--thread", "1"])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput == "time (ms)  thread  what\n(nothing matches)\n")
    // A thread it does not have is still an error, and the threads it lists are all of the trace's.
    let missing = Run.command(["timeline", path, "--thread", "3"])
    #expect(missing.status == 2)
    #expect(missing.standardError.contains("(its threads: T1, T2)"), "\(missing.standardError)")
  }

  @Test("a file that is not a trace is refused with its name")
  func notATrace() throws {
    let path = Paths.temporary("text.trc")
    try "just some text\n".write(toFile: path, atomically: true, encoding: .utf8)
    for command in ["report", "timeline", "graph", "dump"] {
      let result = Run.command([command, path])
      #expect(result.status == 2)
      #expect(result.errorLines.count == 1)
      #expect(result.standardError.contains(path))
      #expect(result.standardError.contains("not an ObsTrace trace"))
    }
  }

  @Test("a trace cut inside its header, at every length: one line naming the file and saying it is cut short, exit 2")
  func cutInsideHeader() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/guide.trc"))
    let headerLength = 16 + Int(bytes[12]) + Int(bytes[13]) << 8 + 4
    for length in 1..<headerLength {
      let path = Paths.temporary("cut-header-\(length).trc")
      try bytes.prefix(length).write(to: URL(fileURLWithPath: path))
      let result = Run.command(["report", path])
      #expect(result.status == 2, "\(length) bytes")
      #expect(result.errorLines.count == 1, "\(length) bytes")
      #expect(result.standardError.hasPrefix("obstrace report: \(path): "), "\(length) bytes")
      #expect(result.standardError.contains("the trace header is cut short: the file ends after \(length)"))
    }
    let empty = Paths.temporary("empty.trc")
    try Data().write(to: URL(fileURLWithPath: empty))
    let result = Run.command(["report", empty])
    #expect(result.status == 2)
    #expect(
      result.standardError
        == "obstrace report: \(empty): the file is empty: not an ObsTrace trace (no OBSTRACE header)\n")
  }

  @Test(
    "every command has --help with an example, exit 0",
    arguments: ["record", "report", "graph", "timeline", "baseline", "check", "symbolize", "dump"])
  func help(command: String) {
    let result = Run.command([command, "--help"])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("USAGE: obstrace \(command)"))
    #expect(result.standardOutput.contains("EXAMPLE"))
  }

  @Test("a trace with a damaged chunk is never called complete: the report says what was lost")
  func damagedTraceIsNotComplete() throws {
    let source = Paths.root + "/traces/fan-out.trc"
    var events: Range<UInt64>?
    try TraceReader(path: source).forEachWholeChunkRange { type, range in
      if type == .events && events == nil { events = range }
    }
    let range = try #require(events)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
    bytes[Int(range.lowerBound + range.upperBound) / 2] ^= 0x5a
    let path = Paths.temporary("damaged.trc")
    try bytes.write(to: URL(fileURLWithPath: path))
    let status = Run.command(["report", path]).standardOutput.split(separator: "\n")[1]
    #expect(status.contains("INCOMPLETE: 1 damaged chunk skipped (their events are lost"), "\(status)")
    #expect(!status.contains("complete,"))
    let clean = Run.command(["report", source]).standardOutput.split(separator: "\n")[1]
    #expect(clean.hasSuffix(", complete"))
  }

  @Test("a truncated trace is still reported, and says so")
  func truncatedTrace() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/traces/fan-out.trc"))
    let path = Paths.temporary("cut.trc")
    // Cut inside a chunk (the symbols chunk, or the events before it), not only the footer.
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
    let result = Run.command(["report", path])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("TRUNCATED"))
    #expect(result.standardOutput.contains("[truncated]"))
    let dump = Run.command(["dump", path])
    #expect(dump.standardOutput.contains("# truncated at byte "))
  }
}

@Suite("Stripped binaries")
struct StrippedBinaryTests {
  /// The report's JSON `trace.binariesWithoutSymbols` and its text, for a trace of `program` (run with no
  /// arguments).
  func report(of program: String, _ name: String) throws -> (binaries: [String], text: String, html: String) {
    let trace = Paths.temporary("\(name).trc")
    let run = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0, "\(run.standardError)")
    let json = Run.command(["report", "--format", "json", trace]).standardOutput
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let binaries = try #require((object["trace"] as? [String: Any])?["binariesWithoutSymbols"] as? [String])
    let html = Paths.temporary("\(name).html")
    #expect(Run.command(["report", "--format", "html", trace, "-o", html]).status == 0)
    return (binaries, Run.command(["report", trace]).standardOutput, try String(contentsOfFile: html, encoding: .utf8))
  }

  @Test(
    "a trace of a stripped program says once which binary had no symbols, in text, JSON and HTML, and which property names are fallbacks; an unstripped one says nothing"
  )
  func strippedDemo() throws {
    let stripped = Paths.temporary("obstrace-demo-stripped")
    try? FileManager.default.removeItem(atPath: stripped)
    try FileManager.default.copyItem(atPath: Paths.binary("obstrace-demo"), toPath: stripped)
    #expect(try Run.program("/usr/bin/env", ["strip", stripped]).status == 0)
    let (binaries, text, html) = try report(of: stripped, "stripped")
    #expect(binaries == ["obstrace-demo-stripped"], "\(binaries)")
    let lines = text.split(separator: "\n").filter { $0.contains("no symbols or debug info") }
    #expect(
      lines == [
        "  no symbols or debug info in \(binaries.first ?? "") (stripped?): sites in its code and names of its "
          + "properties are not known; record an unstripped build to see them"
      ], "\(text)")
    #expect(html.contains("No symbols or debug info in \(binaries.first ?? "")"))
    // Its properties' names are fallbacks, said under the header as for a trace without a symbol table.
    let fallbacks = "2 properties are not named by the symbol table, their names are fallbacks: Model.<Int #1>, Model.<Int #2>"
    #expect(text.contains("\n  \(fallbacks)\n"), "\(text)")
    #expect(html.contains(fallbacks.replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")))
    // Its Int properties' writes through _modify are not compared, and the report says the true reason: no symbol
    // names their key path getters (before: "arrays, strings, …", and a setting that would not compare them).
    #expect(
      text.contains(
        "\n  writes through _modify: 0 compared, 6 not compared (stored field not found: no symbol names the "
          + "property's key path getter, its class has no one field _name of its type, or no line table shows its "
          + "getter is the @Observable macro's)\n"), "\(text)")

    let (plainBinaries, plainText, plainHTML) = try report(of: Paths.binary("obstrace-demo"), "unstripped")
    #expect(plainBinaries.isEmpty)
    #expect(!plainText.contains("no symbols or debug info"))
    #expect(!plainHTML.contains("No symbols or debug info"))
    #expect(!plainText.contains("not named by the symbol table") && !plainHTML.contains("not named by the symbol table"))
    #expect(plainText.contains("\n  writes through _modify: 6 compared\n"), "\(plainText)")
  }
}
