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
