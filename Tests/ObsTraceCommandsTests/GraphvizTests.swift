import Foundation
import Testing

@testable import ObsTraceCommands

/// What the HTML report and `graph --dot` hand to Graphviz, and what happens when Graphviz refuses it.
@Suite("Graphviz")
struct GraphvizTests {
  @Test(
    "a dot that exits before reading the graph: the page says it failed, and obstrace goes on (it was killed by SIGPIPE: a fresh-clone try-out's J2)"
  )
  func dotExitsEarly() throws {
    let folder = Paths.temporary("dot")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let dot = folder + "/dot"
    try "#!/bin/sh\nexec 0<&-\nexit 1\n".write(toFile: dot, atomically: true, encoding: .utf8)
    #expect(chmod(dot, 0o755) == 0)
    // Far more than a pipe holds, so the writer meets the closed pipe whenever dot exits.
    let graph = "digraph g {\n" + String(repeating: "  \"node\" [label=\"x\"];\n", count: 100_000) + "}\n"
    guard case .unavailable(let why) = HTMLReport.render(dotText: graph, dot: dot) else {
      Issue.record("a dot that failed drew a graph")
      return
    }
    #expect(why == "\(dot) -Tsvg failed (exit 1)")
  }

  @Test("a name over Graphviz's quoted-string limit is cut for the drawing, kept apart from one that begins alike")
  func longNamesAreCut() throws {
    let long = "Shop." + String(repeating: "T", count: 60_000)
    let other = long + "U"
    let cut = GraphCommand.dotName(long)
    #expect(cut.unicodeScalars.count < GraphCommand.dotNameLimit + 60)
    #expect(cut.hasPrefix("Shop.TTT") && cut.contains("… (59005 more characters; #"), "\(cut.suffix(60))")
    #expect(GraphCommand.dotName(other) != cut)
    #expect(GraphCommand.dotName("Model.property") == "Model.property")
    // Control characters escaped, the quoted string stays under Graphviz's 16,384 bytes.
    let escaped = GraphCommand.dotString(String(repeating: "\u{1}", count: 5_000))
    #expect(escaped.utf8.count < 16_384)
    // And Graphviz draws it (it refuses the whole graph for one string over its limit).
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dot") else { return }
    let text =
      "digraph g {\n  \(GraphCommand.dotString("p:" + long)) [label=\(GraphCommand.dotString(long))];\n"
      + "  \(GraphCommand.dotString("p:" + other)) [label=\(GraphCommand.dotString(other))];\n}\n"
    guard case .svg(let svg) = HTMLReport.render(dotText: text, dot: "/usr/bin/dot") else {
      Issue.record("dot did not draw the graph of two long names")
      return
    }
    #expect(svg.components(separatedBy: "class=\"node\"").count == 3)
  }
}

extension GraphvizTests {
  /// perf19 (session 16): the HTML report of a cut 100 k-object trace waited for dot with no limit; its graph of
  /// 12,951 edges was still being laid out after 600 s (obstrace itself: 0.4 s).
  @Test(
    "a graph too big to lay out is not given to dot, and a dot that does not finish in time is stopped; the page says so",
    .timeLimit(.minutes(3)))
  func bigGraphsAndSlowDots() throws {
    let edges = (0..<30).map { "  \"p:\($0)\" -> \"s:\($0)\" [label=\"x\"];\n" }.joined()
    let graph = "digraph g {\n" + edges + "}\n"
    // A dot that never reads: with 30 edges over a limit of 20, it is not run at all.
    let folder = Paths.temporary("dot-slow")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let dot = folder + "/dot"
    try "#!/bin/sh\nexec sleep 600\n".write(toFile: dot, atomically: true, encoding: .utf8)
    #expect(chmod(dot, 0o755) == 0)
    guard case .unavailable(let tooBig) = HTMLReport.render(dotText: graph, dot: dot, edgeLimit: 20) else {
      Issue.record("a graph over the limit was drawn")
      return
    }
    #expect(
      tooBig.hasPrefix("The graph has 30 edges, more than Graphviz lays out in reasonable time (20 at most here)"))
    #expect(tooBig.contains("obstrace graph --sites --scope LABEL run.trc | dot -Tsvg"))
    // Under the limit, a dot that does not finish is ended after the time given.
    let start = ContinuousClock.now
    guard case .unavailable(let slow) = HTMLReport.render(dotText: graph, dot: dot, edgeLimit: 100, seconds: 1) else {
      Issue.record("a dot that never finished drew a graph")
      return
    }
    #expect(ContinuousClock.now - start < .seconds(300))
    #expect(
      slow
        == "\(dot) -Tsvg did not finish laying out the graph (30 edges) in 1 s; draw a part of it: obstrace graph --sites --scope LABEL run.trc | dot -Tsvg > graph.svg (or --property)"
    )
  }
}

extension GraphvizTests {
  /// Whether process `process` is gone: no such process, or a zombie that its new parent has yet to reap.
  static func gone(_ process: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8) else { return true }
    // `pid (name) S …`: the state after the name's closing parenthesis.
    guard let close = stat.lastIndex(of: ")") else { return true }
    return stat[close...].dropFirst(2).first == "Z"
  }

  /// tryout17's Q2: a `report --format html` killed by Ctrl-C or `timeout` left `dot -Tsvg` running, re-parented to
  /// init, for as long as its layout took (Foundation's Process had put dot in a process group of its own, and the
  /// 60 s limit died with obstrace). obstrace is started here in a group of its own, as a shell's job or `timeout`'s
  /// command is, with a fake dot on its PATH that says its process id and never ends; the signal goes to the group.
  @Test(
    "a report --format html killed by a signal to its process group (Ctrl-C, timeout) takes its dot with it",
    .timeLimit(.minutes(10)), arguments: [SIGINT, SIGTERM, SIGKILL])
  func dotDiesWithObstrace(signal: Int32) throws {
    let folder = (Paths.temporary("dot") as NSString).deletingLastPathComponent
    let dot = folder + "/dot"
    // Written by a shell of its own: a file this process had open for writing could be inherited by a child another
    // test spawns meanwhile, and exec of it would then fail (ETXTBSY).
    let made = try Run.program(
      "/bin/sh",
      [
        "-c",
        "printf '#!/bin/sh\\necho $$ > %s/dot.pid\\nexec sleep 600\\n' \"$1\" > \"$1/dot\" && chmod 755 \"$1/dot\"",
        "sh", folder,
      ])
    try #require(made.status == 0, "\(made.standardError)")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let arguments = [
      Paths.binary("obstrace"), "report", "--format", "html", "-o", folder + "/page.html",
      Paths.root + "/traces/noop-modify-worse.trc",
    ]
    let environment =
      ["PATH=\(folder):/usr/bin:/bin"]
      + ProcessInfo.processInfo.environment.filter { $0.key != "PATH" }.map { "\($0.key)=\($0.value)" }
    let obstrace = try Run.job(
      arguments, input: "/dev/null", inputFlags: O_RDONLY, output: folder + "/out", errors: folder + "/err",
      environment: environment)
    // Until the fake dot runs (at most 240 s: a loaded machine), or obstrace ends without it.
    var dotProcess: pid_t = 0
    var status: Int32 = 0
    var reaped = false
    for _ in 0..<2400 {
      if let text = try? String(contentsOfFile: folder + "/dot.pid", encoding: .utf8),
        let process = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
      {
        dotProcess = process
        break
      }
      if waitpid(obstrace, &status, WNOHANG) == obstrace {
        reaped = true
        break
      }
      usleep(100_000)
    }
    if dotProcess == 0 && !reaped { killpg(obstrace, SIGKILL) }
    let errors = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
    let page = (try? String(contentsOfFile: folder + "/page.html", encoding: .utf8)) ?? ""
    let noGraph = page.split(separator: "\n").first { $0.contains("no-graph") }.map(String.init) ?? "none"
    try #require(dotProcess > 0, "the fake dot never ran: \(errors); the page: \(noGraph)")
    // Until it is `sleep` (the script has exec'ed), so that the signal is not taken by the shell between the two.
    for _ in 0..<600 {
      if (try? String(contentsOfFile: "/proc/\(dotProcess)/comm", encoding: .utf8))?.hasPrefix("sleep") == true {
        break
      }
      usleep(100_000)
    }
    #expect(killpg(obstrace, signal) == 0)
    while waitpid(obstrace, &status, 0) < 0 && errno == EINTR {}
    #expect(status & 0x7f == signal, "obstrace ended by its signal")
    // dot is gone within 30 s (at once, when it shares the group).
    var ended = false
    for _ in 0..<300 {
      if Self.gone(dotProcess) {
        ended = true
        break
      }
      usleep(100_000)
    }
    #expect(ended, "dot (\(dotProcess)) still runs after obstrace was killed by \(CommandSignals.name(signal))")
    if !ended { kill(dotProcess, SIGKILL) }
  }
}
