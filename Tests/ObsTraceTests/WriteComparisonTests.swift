import ObsTrace
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// Like the README's TodoList: `todos[i].done = true` for every todo, twice, is the no-op write users most need to see.
@Observable
final class Checklist: @unchecked Sendable {
  struct Todo: Equatable {
    var title: String
    var done = false
  }
  var todos = [Todo(title: "milk"), Todo(title: "bread"), Todo(title: "eggs")]
  var count = 0
}

@Suite("Write comparison in tests")
struct WriteComparisonTests {
  @Test("comparing: .equatable compares writes of an array through _modify: the second pass is found")
  func arrayNoopFoundWhenEquatable() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation(comparing: .equatable) {
        let list = Checklist()
        for _ in 0..<2 {
          for index in list.todos.indices { list.todos[index].done = true }
        }
      }
    }
    #expect(recorded.noopWrites(of: "Checklist.todos") == 3)
    #expect(recorded.writes(of: "Checklist.todos") == 6)
  }

  @Test("comparing: .trivial still finds a no-op of a trivially copyable member")
  func trivialMemberNoop() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation(comparing: .trivial) {
        let list = Checklist()
        list.count += 0
        list.count += 1
      }
    }
    #expect(recorded.noopWrites(of: "Checklist.count") == 1)
  }

  @Test("by default an array's writes are not compared: asking for their no-op writes fails, saying how to compare")
  func uncomparedWritesThrow() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let list = Checklist()
        list.todos[0].done = true
        list.todos[0].done = true
      }
    }
    let howToCompare = "recordObservation(comparing: .equatable)"
    var noop = -1
    withKnownIssue("2 writes of an array under .trivial were not compared") {
      noop = recorded.noopWrites(of: "Checklist.todos")
    } matching: { issue in
      issue.comments.contains {
        $0.rawValue.contains("2 writes of Checklist.todos") && $0.rawValue.contains(howToCompare)
      }
    }
    #expect(noop == 0)
    withKnownIssue("the same for the wasted invalidations") {
      _ = recorded.wastedInvalidations(of: "Checklist.todos")
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains(howToCompare) }
    }
    #expect(recorded.report.properties.first { $0.name == "Checklist.todos" }?.statistics.uncomparedWrites == 2)
  }

  /// A view re-rendered after writes of an array not compared: whether those runs were redundant is not known, so
  /// `redundantRuns(of:)` fails rather than answer 0 (it answered 0 before); compared, it answers.
  @Test("redundantRuns(of:) fails for runs that rest on writes not compared, saying how to compare them")
  func redundantRunsOnWritesNotCompared() async throws {
    func record(_ comparison: WriteComparison) async throws -> RecordedObservation {
      try await RecordingTestLock.shared {
        try recordObservation(comparing: comparison) {
          let list = Checklist()
          let view = RenderHarness("ChecklistView.body") { list.todos.map(\.done) }
          view.render()
          list.todos[0].done = true
          view.flush()
          list.todos[0].done = true  // changes nothing
          view.flush()
        }
      }
    }
    let recorded = try await record(.trivial)
    var redundant = -1
    withKnownIssue("2 runs rest on writes of an array not compared under .trivial") {
      redundant = recorded.redundantRuns(of: "ChecklistView.body")
    } matching: { issue in
      issue.comments.contains {
        $0.rawValue.contains(
          "2 runs of ChecklistView.body would be redundant if the writes through _modify not "
            + "compared before them changed nothing, so its redundantRuns is not known")
          && $0.rawValue.contains("recordObservation(comparing: .equatable)")
      }
    }
    #expect(redundant == 0)
    let scope = recorded.report.scopes.first { $0.label == "ChecklistView.body" }?.statistics
    #expect(scope?.uncomparedInvalidations == 2)
    #expect(scope?.possiblyRedundantRuns == 2)
    let compared = try await record(.equatable)
    #expect(compared.redundantRuns(of: "ChecklistView.body") == 1)
    #expect(compared.report.scopes.first { $0.label == "ChecklistView.body" }?.statistics.wastedInvalidations == 1)
  }
}
