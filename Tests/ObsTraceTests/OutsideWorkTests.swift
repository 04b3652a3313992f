import Dispatch
import Foundation
import ObsTrace
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

// Models of these tests alone: no other test writes them, so what is outside a block here is the block's own work.
@Observable
final class Threaded: @unchecked Sendable {
  var value = 0
}

@Observable
final class Queued: @unchecked Sendable {
  var name = ""
}

@Observable
final class Detached: @unchecked Sendable {
  var memo = ""
}

@Observable
final class Inherited: @unchecked Sendable {
  var maybe = 0
}

/// `recordObservation` knows its block by a task-local tag, which a `Thread`, a Dispatch queue and `Task.detached` do
/// not inherit: what the block starts there is not counted, and a lookup answered 0 for it, so a test asserting
/// `== 0` passed by mistake (a fresh-clone try-out's H12). A lookup that would answer 0 for a property written (or a
/// scope run) in the process while the block ran, outside it, fails the test saying so.
@Suite("In-test recordings: work outside the block")
struct OutsideWorkTests {
  /// The issue a lookup records for work outside its block (`RecordedObservation.outsideMessage`).
  static func saysOutside(_ issue: Issue, _ subject: String, _ counted: String) -> Bool {
    issue.comments.contains {
      $0.rawValue.hasPrefix("recordObservation: \(subject) counts 0 in the block, but \(counted)")
        && $0.rawValue.contains("while the block ran")
        && $0.rawValue.contains("a Thread, a Dispatch queue or a Task.detached the block started")
        && $0.rawValue.contains("or in a Task {} it awaits")
    }
  }

  @Test("a model made and written on a Thread the block started: its lookups fail saying so, not 0")
  func thread() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
          let model = Threaded()
          let view = RenderHarness("Threaded.view") { model.value }
          view.render()
          model.value = 1
          done.signal()
        }
        done.wait()
      }
    }
    withKnownIssue {
      #expect(recorded.writes(of: "Threaded.value") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "Threaded.value", "1 write of it was made")
    }
    withKnownIssue {
      #expect(recorded.invalidations(of: "Threaded.value") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "Threaded.value", "1 write of it was made")
    }
    withKnownIssue {
      #expect(recorded.reads(of: "Threaded.value") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "Threaded.value", "1 read of it was made")
    }
    withKnownIssue {
      #expect(recorded.runs(of: "Threaded.view") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "scope Threaded.view", "1 run of it was begun")
    }
  }

  @Test("a model made and written on a Dispatch queue from the block: its lookups fail saying so, not 0")
  func dispatchQueue() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
          let model = Queued()
          withObservationTracking {
            _ = model.name
          } onChange: {
          }
          model.name = "gcd"
          model.name = "again"
          done.signal()
        }
        done.wait()
      }
    }
    withKnownIssue {
      #expect(recorded.invalidations(of: "Queued.name") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "Queued.name", "2 writes of it were made")
    }
  }

  @Test("a model made and written in a Task.detached from the block: its lookups fail saying so, not 0")
  func detachedTask() async throws {
    let recorded = try await RecordingTestLock.shared {
      try await recordObservation {
        await Task.detached {
          let model = Detached()
          withObservationTracking {
            _ = model.memo
          } onChange: {
          }
          model.memo = "detached"
        }.value
      }
    }
    withKnownIssue {
      #expect(recorded.invalidations(of: "Detached.memo") == 0)
    } matching: { issue in
      Self.saysOutside(issue, "Detached.memo", "1 write of it was made")
    }
  }

  @Test("a model made and written in a Task {} from the block is the block's: counted, and no issue")
  func inheritingTask() async throws {
    let recorded = try await RecordingTestLock.shared {
      try await recordObservation {
        await Task {
          let model = Inherited()
          withObservationTracking {
            _ = model.maybe
          } onChange: {
          }
          model.maybe = 3
        }.value
      }
    }
    #expect(recorded.writes(of: "Inherited.maybe") == 1)
    #expect(recorded.invalidations(of: "Inherited.maybe") == 1)
    // Known and untouched outside the block too: 0, and nothing to say.
    #expect(recorded.staleReads(of: "Inherited.maybe") == 0)
  }

  @Test("a model the block made, written on a Thread it started: counted (the object is the block's)")
  func blockObjectOnThread() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let model = Threaded()
        withObservationTracking {
          _ = model.value
        } onChange: {
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
          model.value = 2
          done.signal()
        }
        done.wait()
      }
    }
    #expect(recorded.writes(of: "Threaded.value") == 1)
    #expect(recorded.invalidations(of: "Threaded.value") == 1)
  }
}
