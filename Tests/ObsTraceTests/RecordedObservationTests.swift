import Foundation
import ObsTrace
import ObsTraceFixtureModels
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

@Observable
final class Row: @unchecked Sendable {
  var title = ""
  var done = false
  var tags: [String] = []
}

@Observable
final class RowList: @unchecked Sendable {
  var rows: [Row] = []
}

@Observable
final class Counted: @unchecked Sendable {
  var count = 0
}

@Observable
class Shape: @unchecked Sendable {
  var name = ""
}

@Observable
final class Square: Shape, @unchecked Sendable {
  var side = 0
}

@Suite("In-test recordings")
struct RecordedObservationTests {
  @Test("a list view whose rows change every run is one instance: one run per render, invalidations equal writes")
  func listView() async throws {
    let writes = 6
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let list = RowList()
        let view = RenderHarness("ListView.body") { list.rows.map(\.title).joined() }
        view.render()
        for index in 0..<writes {
          let row = Row()
          row.title = "row \(index)"
          list.rows.append(row)  // invalidates the view, which then reads one row more
          view.flush()
        }
      }
    }
    #expect(recorded.instances(of: "ListView.body") == 1)
    #expect(recorded.runs(of: "ListView.body") == writes + 1)
    #expect(recorded.invalidations(ofScope: "ListView.body") == writes)
    #expect(recorded.invalidations(of: "RowList.rows") == writes)
    #expect(recorded.report.properties.first { $0.name == "RowList.rows" }?.statistics.coalescedWrites == 0)
    #expect(recorded.redundantRuns(of: "ListView.body") == 0)
  }

  @Test("a lookup of a name nothing defines fails the test, naming the closest; an untouched property counts 0")
  func typoInLookup() async throws {
    let recorded = try await RecordingTestLock.shared {
      // Row.tags becomes known to the process here, whatever other tests ran before this one.
      _ = try recordObservation { Row().tags.append("x") }
      return try recordObservation {
        let row = Row()
        let view = RenderHarness("RowView.body") { row.title }
        view.render()
        row.title = "milk"
      }
    }
    withKnownIssue {
      #expect(recorded.invalidations(of: "Row.titel") == 0)
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("no property is named 'Row.titel'; closest: Row.title") }
    }
    withKnownIssue {
      #expect(recorded.runs(of: "RowView.bdy") == 0)
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("closest: RowView.body") }
    }
    // Known to the process (read above), only untouched in the block: no issue, 0.
    #expect(recorded.writes(of: "Row.tags") == 0)
    #expect(recorded.invalidations(of: "Row.title") == 1)
  }

  @Test("a failed lookup no test framework can see (a thread with no Test.current) is written to standard error")
  func failureOutsideAnyTest() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation { Row().title = "x" }
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-stderr-\(getpid()).txt").path
    let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let saved = dup(2)
    dup2(file, 2)
    let done = DispatchSemaphore(value: 0)
    // A thread of its own: neither Swift Testing's Test.current nor an XCTest case is set there.
    Thread {
      _ = recorded.invalidations(of: "Row.titel")
      done.signal()
    }.start()
    done.wait()
    dup2(saved, 2)
    close(saved)
    close(file)
    let written = try String(contentsOfFile: path, encoding: .utf8)
    try? FileManager.default.removeItem(atPath: path)
    #expect(written.contains("RecordedObservationTests.swift:"))
    #expect(written.contains(": error: recordObservation: no property is named 'Row.titel'; closest: Row.title"))
  }

  @Test("100 threads writing one object: a cross-thread finding naming 100 threads (no 64-thread cap)")
  func hundredThreads() async throws {
    let threads = 100
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let row = Row()
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        // Ordered by a lock, so that ThreadSanitizer (scripts/test) sees no race: still 100 threads writing.
        let lock = NSLock()
        for index in 0..<threads {
          done.enter()
          Thread.detachNewThread {
            start.wait()
            lock.withLock { row.title = "\(index)" }
            done.leave()
          }
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
      }
    }
    #expect(recorded.writes(of: "Row.title") == threads)
    let crossThread = try #require(recorded.findings(.crossThreadWrite).first)
    #expect(crossThread.message == "1 object's Row.title written from \(threads) threads")
    // In turn, under a lock: what happened, not a race; no write began inside another.
    #expect(crossThread.isInformational)
    #expect(recorded.findings(.concurrentWrite).isEmpty)
    // Every write reached the recording, though each thread's ring may be drained before the creating thread's.
    #expect(recorded.report.trace.threads >= threads)
  }

  @Test("two threads writing one object's property at once, with no lock: a concurrent-write warning")
  func concurrentWrites() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let row = Row()
        let other = Row()
        let go = DispatchSemaphore(value: 0)
        let written = DispatchSemaphore(value: 0)
        // The test's thread writes row.title; inside that write's willSet (onChange) the other thread writes
        // row.title too, unordered with it, then this thread writes `other` (a clock read) before its write ends.
        // The semaphores order the two stores, so that ThreadSanitizer (scripts/test) sees no race of the test's own:
        // the windows overlap all the same, as an unordered pair's can.
        // The other thread's write may fire the tracking as well (both willSets find it installed): only the
        // first fire waits.
        let first = NSLock()
        nonisolated(unsafe) var fired = false
        withObservationTracking {
          _ = row.title
        } onChange: {
          let isFirst = first.withLock { () -> Bool in
            defer { fired = true }
            return !fired
          }
          guard isFirst else { return }
          go.signal()
          written.wait()
          other.title = "after"
        }
        Thread.detachNewThread {
          go.wait()
          row.title = "from the other thread"
          written.signal()
        }
        row.title = "from the test's thread"
      }
    }
    #expect(recorded.writes(of: "Row.title") == 3)
    let concurrent = recorded.findings(.concurrentWrite)
    #expect(concurrent.count == 1)
    #expect(concurrent.first?.isInformational == false)
    #expect(
      concurrent.first?.message
        == "1 write to Row.title began while another thread's write to it on the same object was in progress "
        + "(1 object)")
    // The site: the write that began inside the other (the other thread's, in this file).
    #expect(concurrent.first?.site?.hasPrefix("ObsTraceTests/RecordedObservationTests.swift:") == true, "\(concurrent)")
    #expect(recorded.findings(.crossThreadWrite).first?.message == "1 object's Row.title written from 2 threads")
  }

  @Test("withObservationTracking re-tracked from its own onChange continues the instance that fired")
  func retrackInOnChange() async throws {
    final class Observer: @unchecked Sendable {
      let row: Row
      var values: [String] = []
      init(_ row: Row) { self.row = row }
      func observe() {
        values.append(
          withObservationTracking(named: "Observer.observe") {
            row.title
          } onChange: { [self] in
            observe()
          })
      }
    }
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let first = Observer(Row())
        let second = Observer(Row())
        first.observe()
        second.observe()
        for index in 0..<3 {
          first.row.title = "a\(index)"
          second.row.title = "b\(index)"
        }
      }
    }
    #expect(recorded.instances(of: "Observer.observe") == 2)
    #expect(recorded.runs(of: "Observer.observe") == 8)
    #expect(recorded.invalidations(ofScope: "Observer.observe") == 6)
  }

  /// Two rows of one list, each one `withObservationTracking` call on its own object, written in the order given
  /// (`+= 0` changes nothing), then re-rendered in display order, `a` then `b`. The recorder gives each re-render the
  /// waiting instance that fired first, before its reads are known: with `b` written first, `a`'s re-render was
  /// recorded as `b`'s instance and `b`'s as `a`'s, and a redundant run went uncounted (tryout18's R1). The replay
  /// takes a run whose reads are exactly one other waiting instance's last reads as that instance's run. Two rounds:
  /// in the second the recorder's ids of the two are each other's (the first round swapped them).
  @Test(
    "rows re-rendered in another order than their writes fired them: each run is judged against its own row",
    arguments: [
      // (writes in order: row, increment; the redundant runs)
      ([("b", 1), ("a", 0)], 1),  // a's re-render is redundant (counted 0 before)
      ([("b", 0), ("a", 1)], 1),  // b's re-render is redundant (counted 0 before)
      ([("a", 0), ("b", 1)], 1),  // a's re-render is redundant: the recorder's order was right already
      ([("b", 1), ("a", 1)], 0),  // both changed: nothing redundant
    ] as [([(String, Int)], Int)])
  func rowsInAnotherOrder(writes: [(String, Int)], redundant: Int) async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let a = Counted()
        let b = Counted()
        func row(_ counted: Counted) {
          withObservationTracking(named: "Counted.row") { _ = counted.count } onChange: {}
        }
        row(a)
        row(b)
        for _ in 0..<2 {
          for (name, increment) in writes { (name == "a" ? a : b).count += increment }
          row(a)
          row(b)
        }
      }
    }
    #expect(recorded.noopWrites(of: "Counted.count") == 2 * writes.count { $0.1 == 0 })
    #expect(recorded.instances(of: "Counted.row") == 2)
    #expect(recorded.runs(of: "Counted.row") == 6)
    #expect(recorded.redundantRuns(of: "Counted.row") == 2 * redundant)
    #expect(recorded.findings(.redundantRun).count == (redundant > 0 ? 1 : 0))
  }

  @Test("tryout18's R1 as written: rows of one unnamed withObservationTracking call, re-rendered in display order")
  func rowsInAnotherOrderAtCallSite() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let a = Counted()
        let b = Counted()
        func row(_ counted: Counted) { withObservationTracking { _ = counted.count } onChange: {} }
        row(a)
        row(b)
        b.count += 1
        a.count += 0
        row(a)  // redundant: only a write that changed nothing came since its previous run
        row(b)
      }
    }
    let scopes = recorded.scopeLabels
    #expect(scopes.count == 1)
    if let scope = scopes.first {
      #expect(recorded.instances(of: scope) == 2)
      #expect(recorded.redundantRuns(of: scope) == 1)
    }
  }

  @Test("two rows that read the same object: which waiting row a re-render is, nothing tells; the recorder's stands")
  func rowsReadingAlike() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let shared = Counted()
        let other = Counted()
        func row(_ counted: Counted) {
          withObservationTracking(named: "Counted.alike") { _ = counted.count } onChange: {}
        }
        row(shared)
        row(shared)
        row(other)
        other.count += 1  // fires the third row first
        shared.count += 0  // fires the first two
        row(shared)  // recorded as the third row's instance: two waiting rows read alike, so it stays there
        row(shared)
        row(other)
      }
    }
    #expect(recorded.instances(of: "Counted.alike") == 3)
    #expect(recorded.runs(of: "Counted.alike") == 6)
    // Not judged against a row it may not be: the recorder's choice is kept, read something new, not redundant.
    #expect(recorded.redundantRuns(of: "Counted.alike") == 1)
  }

  @Test("a block's invalidations, runs and writes are counted exactly")
  func exactCounts() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let row = Row()
        let view = RenderHarness("RowView.body") { "\(row.title) \(row.done)" }
        view.render()
        row.title = "milk"  // invalidates
        row.title = "bread"  // coalesced: the view has not run again
        view.flush()
        row.done = true  // invalidates
        view.flush()
        row.tags.append("x")  // not read: nothing
      }
    }
    #expect(recorded.invalidations(of: "Row.title") == 1)
    #expect(recorded.invalidations(of: "Row.done") == 1)
    #expect(recorded.invalidations(of: "Row.tags") == 0)
    #expect(recorded.writes(of: "Row.title") == 2)
    #expect(recorded.runs(of: "RowView.body") == 3)
    #expect(recorded.invalidations(ofScope: "RowView.body") == 2)
    #expect(recorded.report.properties.first { $0.name == "Row.title" }?.statistics.coalescedWrites == 1)
  }

  @Test("a write that changed nothing is seen as such, and so is a stale read")
  func noopAndStale() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation(comparing: .equatable) {
        let row = Row()
        let view = RenderHarness("RowView.body") { row.tags.count }
        view.render()
        row.tags[...] = row.tags[...]  // an in-place write of the same value
        view.flush()
        nonisolated(unsafe) let observed = row
        withObservationTracking {
          _ = row.done
        } onChange: {
          _ = observed.done
        }  // reads inside its own willSet
        row.done = true
      }
    }
    #expect(recorded.noopWrites(of: "Row.tags") == 1)
    #expect(recorded.wastedInvalidations(of: "Row.tags") == 1)
    #expect(recorded.redundantRuns(of: "RowView.body") == 1)
    #expect(recorded.staleReads(of: "Row.done") == 1)
    #expect(recorded.findings(.staleRead).count == 1)
  }

  @Test(
    "recordings that run at the same time see only their own objects",
    arguments: [1, 2, 3, 5, 8, 13])
  func parallel(writes: Int) async throws {
    let recorded = try await RecordingTestLock.shared {
      try await recordObservation {
        let counter = Counter()
        let view = RenderHarness("Counter.view") { counter.count }
        for value in 1...writes {
          view.render()
          counter.count = value
          await Task.yield()
        }
      }
    }
    #expect(recorded.writes(of: "Counter.count") == writes)
    #expect(recorded.invalidations(of: "Counter.count") == writes)
    #expect(recorded.runs(of: "Counter.view") == writes)
  }

  @Test("many recordings racing on real threads at once, each exact")
  func racing() async throws {
    try await RecordingTestLock.shared {
      try await withThrowingTaskGroup(of: (Int, RecordedObservation).self) { group in
        for writes in 1...8 {
          group.addTask {
            let recorded = try recordObservation {
              let box = Box(0)
              let view = RenderHarness("Box.view") { box.value }
              for value in 1...(writes * 10) {
                view.render()
                box.value = value
              }
            }
            return (writes * 10, recorded)
          }
        }
        for try await (writes, recorded) in group {
          #expect(recorded.writes(of: "Box<Int>.value") == writes)
          #expect(recorded.invalidations(of: "Box<Int>.value") == writes)
        }
      }
    }
  }

  @Test("objects created outside the block are not counted")
  func outsideObjects() async throws {
    let recorded = try await RecordingTestLock.shared {
      // Created under the lock: a test that records the whole process must not see this one's objects.
      let outside = Row()
      return try recordObservation {
        outside.title = "not mine"
        let inside = Row()
        inside.title = "mine"
      }
    }
    #expect(recorded.writes(of: "Row.title") == 1)
  }

  @Test("an object made before the block and read by its view: its writes from that read on count, as the view saw them")
  func outsideObjectReadByTheBlock() async throws {
    let recorded = try await RecordingTestLock.shared {
      let list = RowList()  // a fixture made first, as a suite's init makes it
      list.rows.append(Row())  // before the block: not the block's
      return try recordObservation {
        let view = RenderHarness("SharedView.body") { list.rows.count }
        view.render()
        list.rows.append(Row())  // invalidates the view
        view.flush()  // re-runs it
        list.rows.append(Row())  // and again
      }
    }
    #expect(recorded.runs(of: "SharedView.body") == 2)
    #expect(recorded.writes(of: "RowList.rows") == 2)
    #expect(recorded.invalidations(of: "RowList.rows") == 2)
    #expect(recorded.invalidations(ofScope: "SharedView.body") == 2)
    #expect(recorded.findings(.unrecordedWrite).isEmpty)
    #expect(recorded.findings(.inconsistentTrace).isEmpty)
  }

  @Test(
    "a block's objects of a class with @Observable at two levels: one object each, of its own type; untouched ones are registrars"
  )
  func hierarchyInBlock() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let square = Square()
        square.name = "a"  // declared by Shape
        let other = Square()
        other.side = 2
        _ = Square()  // never touched: two registrars, no object named
      }
    }
    #expect(recorded.report.objects.map(\.type) == ["Square"])
    #expect(recorded.report.objects.first?.statistics.created == 2)
    #expect(recorded.report.objects.first?.statistics.freed == 2)
    #expect(recorded.report.registrarsWithoutEvents.total.created == 2)
    #expect(recorded.report.registrarsWithoutEvents.total.freed == 2)
    #expect(recorded.writes(of: "Shape.name") == 1)
    #expect(recorded.writes(of: "Square.side") == 1)
  }
}

@Suite("Render harness")
struct RenderHarnessTests {
  @Test("it runs like a view body: once per render, dirty once per change until it runs again")
  func harness() async {
    // Holds the shared lock: a test that records the whole process must not see this one's objects.
    await RecordingTestLock.shared { harnessAlone() }
  }

  func harnessAlone() {
    let row = Row()
    let harness = RenderHarness("Row.body") { row.title }
    #expect(harness.runs == 0)
    #expect(harness.render() == "")
    row.title = "a"
    row.title = "b"
    #expect(harness.isDirty)
    #expect(harness.invalidations == 1)
    #expect(harness.flush())
    #expect(harness.runs == 2)
    #expect(!harness.flush())
    row.done = true  // not read
    #expect(!harness.isDirty)
  }
}

@Suite("Observations in tests")
struct ObservationsRecordingTests {
  @MainActor
  @Test("an Observations loop's values are runs of one sequence; a burst of writes is one value")
  func loopRuns() async throws {
    let recorded = try await RecordingTestLock.shared {
      try await recordObservation {
        let row = Row()
        let values = Observations(named: "Row.titles") { row.title }
        var iterator = values.makeAsyncIterator()
        _ = await iterator.next()
        row.title = "a"
        row.title = "b"
        row.title = "c"
        _ = await iterator.next()  // one value for the burst
        row.done = true  // not read
      }
    }
    #expect(recorded.runs(of: "Row.titles") == 2)
    #expect(recorded.invalidations(ofScope: "Row.titles") == 1)
    #expect(recorded.report.scopes.first { $0.label == "Row.titles" }?.statistics.coalescedWrites == 2)
    #expect(recorded.report.scopes.first { $0.label == "Row.titles" }?.isolations == ["MainActor"])
  }

  @MainActor
  @Test("an iteration cancelled while it waits ends its last run with a recorded cancel, not a wait forever")
  func cancelledWhileWaiting() async throws {
    let recorded = try await RecordingTestLock.shared {
      try await recordObservation {
        let row = Row()
        let started = AsyncStream<Void>.makeStream()
        let loop = Task { @MainActor in
          var iterator = Observations(named: "Row.waiting") { row.title }.makeAsyncIterator()
          _ = await iterator.next()
          started.continuation.yield()
          _ = await iterator.next()  // waits for a change that never comes; cancelled
        }
        var signals = started.stream.makeAsyncIterator()
        _ = await signals.next()
        loop.cancel()
        _ = await loop.value
      }
    }
    let scope = try #require(recorded.report.scopes.first { $0.label == "Row.waiting" })
    #expect(scope.statistics.runs == 1)
    #expect(scope.statistics.endings == ["cancelled": 1])
    #expect(scope.statistics.endedWithoutFire == ["sequence ended": 1])
  }
}

@Suite("Leaks from evidence")
struct LeakEvidenceTests {
  final class Keeper: @unchecked Sendable {
    var rows: [Row] = []
  }

  @Test(
    "objects of a type created turn after turn, never used again and never freed pile up; created together (a list's rows), freed, or few, they are not a leak",
    arguments: [
      (created: 12, kept: true, turns: true, leak: true), (created: 12, kept: true, turns: false, leak: false),
      (created: 12, kept: false, turns: true, leak: false), (created: 3, kept: true, turns: true, leak: false),
    ])
  func pileUp(created: Int, kept: Bool, turns: Bool, leak: Bool) async throws {
    let keeper = Keeper()
    let creationLine = #line + 5  // the line of `Row()` below
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let screen = RowList()
        for index in 0..<created {
          let row = Row()
          row.title = "\(index)"
          if kept { keeper.rows.append(row) }
          // A render that reads no row: a turn of the program between one row and the next.
          if turns {
            withObservationTracking {
              _ = screen.rows.count
            } onChange: {
            }
          }
        }
      }
    }
    let leaks = recorded.findings(.leakedObject)
    #expect(leaks.count == (leak ? 1 : 0))
    if leak {
      // Named with the place that created them (objectCreated carries a stack with call stacks on). The newest is
      // not left behind.
      let site = try #require(leaks.first?.site)
      #expect(site.hasPrefix("ObsTraceTests/RecordedObservationTests.swift:\(creationLine) "), "\(site)")
      #expect(
        leaks.first?.message
          == "\(created - 1) Row objects piled up, left behind by newer ones: created \(created) times in the trace "
          + "at \(site), none ever freed")
      #expect(leaks.first?.evidence.contains("grew with each of \(created) creations") == true)
    } else if kept {
      #expect(recorded.findings(.aliveAtEnd).first { $0.message.contains("Row") }?.count == created)
    }
    #expect(keeper.rows.count == (kept ? created : 0))
  }

  @Test("a list's rows added one a turn, each still shown by its row's view, are alive at the end, not a pile-up")
  func rowsOfALiveList() async throws {
    // The screen outlives the recording, as a live list does.
    let list = RowList()
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let listView = RenderHarness("ListView.body") { list.rows.count }
        var rowViews: [RenderHarness<String>] = []
        listView.render()
        for index in 0..<12 {
          let row = Row()
          row.title = "\(index)"
          list.rows.append(row)
          listView.flush()
          // Each row's view renders once and stays subscribed to its row: nothing changes it again.
          let rowView = RenderHarness("Row.body") { row.title }
          rowView.render()
          rowViews.append(rowView)
        }
        #expect(rowViews.allSatisfy { $0.runs == 1 })
      }
    }
    #expect(recorded.findings(.leakedObject).isEmpty)
    #expect(
      recorded.findings(.aliveAtEnd).map(\.message).contains("12 Row objects were alive when the trace ended"),
      "\(recorded.findings(.aliveAtEnd).map(\.message))")
    #expect(list.rows.count == 12)
  }
}
