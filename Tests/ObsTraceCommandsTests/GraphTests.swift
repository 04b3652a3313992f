import Foundation
import Testing

/// The graph that explains: write sites, wasted invalidations and redundant runs in colours of their own, counts
/// on the edges, and large graphs cut to the top properties with the rest summed up.
@Suite("Dependency graph")
struct GraphTests {
  func graph(_ trace: String, _ options: [String] = []) -> [String] {
    let result = Run.command(["graph", "--dot", Paths.root + "/traces/\(trace).trc"] + options)
    #expect(result.status == 0)
    return result.standardOutput.split(separator: "\n").map(String.init)
  }

  @Test("a property written without change is filled red, a scope with redundant runs orange, each with its count")
  func colours() throws {
    let lines = graph("noop-modify")
    let property = try #require(lines.first { $0.hasPrefix("  \"p:TodoStore.items\" [") })
    #expect(property.contains("fillcolor=\"#f8d0d0\"") && property.contains("1 no-op write"))
    let scope = try #require(lines.first { $0.hasPrefix("  \"s:TodoList.body\" [") })
    #expect(scope.contains("fillcolor=\"#fbd9a6\"") && scope.contains("3 runs (1 redundant)"))
    let invalidated = try #require(lines.first { $0.contains("-> \"s:TodoList.body\" [color=") })
    #expect(invalidated.contains("color=red") && invalidated.contains("label=\"invalidated 2 (1 wasted)\""))
    // Nothing was wasted in the guide: no fill, no red.
    let guide = graph("guide").joined(separator: "\n")
    #expect(!guide.contains("fillcolor") && !guide.contains("color=red"))
  }

  @Test("--sites draws each write site → the property it wrote, no-op writes in red")
  func sites() throws {
    let lines = graph("noop-modify-worse", ["--sites"])
    let noop = try #require(lines.first { $0.contains(":\(ScenarioSource.noopWrite)\" -> \"p:TodoStore.items\"") })
    #expect(noop.contains("color=red") && noop.contains("label=\"wrote 3 (3 no-op)\""))
    let changed = try #require(
      lines.first { $0.contains(":\(ScenarioSource.changingWrite)\" -> \"p:TodoStore.items\"") })
    #expect(changed.contains("color=steelblue") && changed.contains("label=\"wrote 1\""))
    #expect(
      lines.contains {
        $0.contains("shape=note") && $0.contains("main.swift:\(ScenarioSource.noopWrite)\\nnoopModify()")
      })
    #expect(!graph("noop-modify-worse").contains { $0.contains("shape=note") })
  }

  @Test("--top keeps the properties with the most invalidations and sums up the rest in one node")
  func top() throws {
    let all = graph("fan-out")
    #expect(all.contains { $0.hasPrefix("  \"p:Theme.fontSize\"") })
    let cut = graph("fan-out", ["--top", "1"])
    #expect(cut.contains { $0.hasPrefix("  \"p:Theme.accent\"") })
    #expect(!cut.contains { $0.contains("Theme.fontSize") })
    let more = try #require(cut.first { $0.hasPrefix("  \"more\"") })
    #expect(more.contains("… 1 more property"))
    #expect(!cut.contains { $0.contains("s:Header.body") })  // it only read the property left out
  }

  @Test("the graph with sites renders with dot")
  func renders() throws {
    let path = Paths.temporary("graph.dot")
    try graph("noop-modify-worse", ["--sites"]).joined(separator: "\n").write(
      toFile: path, atomically: true, encoding: .utf8)
    let svg = try Run.program("/usr/bin/dot", ["-Tsvg", path])
    #expect(svg.status == 0)
    #expect(svg.standardOutput.contains("wrote 3 (3 no&#45;op)"))
  }
}
