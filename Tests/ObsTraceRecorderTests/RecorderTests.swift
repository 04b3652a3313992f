import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFixtureModels
import ObsTraceFormat
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// A model declared in the test module itself.
/// Several trivially copyable members of one type, and a struct of them.
@Observable
final class SameTypes {
  struct Pair: Equatable {
    var x = 0.0
    var y = 0.0
  }
  var a = 1
  var b = 2
  var c = 3
  var inner = Pair()
}

@Observable
final class LocalModel {
  var value = 0
  var other = 0
}

/// One call site of `withObservationTracking`, reached by two paths (two different stacks).
enum CallSitePaths {
  static let line = #line + 3
  @inline(never)
  static func track(_ model: LocalModel) -> Int {
    withObservationTracking {
      model.value
    } onChange: {
    }
  }
  @inline(never)
  static func first(_ model: LocalModel) -> Int { track(model) }
  @inline(never)
  static func second(_ model: LocalModel) -> Int { track(model) + 1 }
}

/// Seed 004's observer: re-observes from `onChange`, which runs inside the willSet, so the re-read is stale.
final class ImmediateObserver: @unchecked Sendable {
  let model: LocalModel
  var seen: [Int] = []

  init(model: LocalModel) {
    self.model = model
  }

  func observe() {
    withObservationTracking {
      seen.append(model.value)
    } onChange: {
      self.observe()
    }
  }
}

/// Every test that records runs in this one serialized suite: a process records one trace at a time.
@Suite("Recording", .serialized)
struct RecorderTests {
  @Test("every kind of @Observable class is traced by `import ObsTrace` alone, with its property names")
  @MainActor
  func dropInClassKinds() async throws {
    let settings = MainActorSettings()
    // Waits for the recording without blocking the main actor, which other tests' loops may be using.
    let trace = try await RecordingTestLock.exclusive {
      try RecordingSupport.recordHoldingLock {
        let counter = Counter()
        counter.count = 3
        _ = counter.count
        let box = Box(7)
        box.value = 8
        let strings = Box("a")
        strings.value = "b"
        let local = LocalModel()
        local.value = 1
        settings.volume = 11
        _ = settings.muted
      }
    }
    let names = Set(trace.events.filter { $0.kind == .willSet || $0.kind == .access }.map(trace.propertyName))
    #expect(
      names == [
        "Counter.count", "Box<Int>.value", "Box<String>.value", "LocalModel.value", "MainActorSettings.volume",
        "MainActorSettings.muted",
      ])
    #expect(trace.definitions.symbols.propertyNames.values.contains { $0.module == "ObsTraceFixtureModels" })
    #expect(trace.definitions.symbols.propertyNames.values.contains { $0.module == "ObsTraceRecorderTests" })
    // Box<Int> and Box<String> are two types, each with its name, and so are their properties (the key path
    // getters' symbols name both `Box.value`).
    let boxTypes = Set(
      trace.events(.willSet).map { trace.definitions.typeName(ofObject: $0.object) }.filter { $0.hasPrefix("Box") })
    #expect(boxTypes == ["Box<Int>", "Box<String>"])
    // The four objects created in the block (settings was created before), on this test's thread: the recording is
    // the process's, and a test of another suite may create or free a traced object on another thread meanwhile
    // (under load, one that did counted 5 objects here).
    let thread = try #require(trace.events(.willSet).first).thread
    let created = trace.events(.objectCreated).filter { $0.thread == thread }.map(\.object)
    #expect(created.count == 4)
    #expect(Set(created).isSubset(of: Set(trace.events(.willSet).map(\.object))))
  }

  @Test("objects get serials, and their freeing is recorded")
  func objectLifetimes() async throws {
    let trace = try await RecordingSupport.record {
      for index in 0..<3 {
        let counter = Counter()
        counter.count = index + 1
      }
    }
    let created = trace.events(.objectCreated).map(\.object)
    let freed = trace.events(.objectFreed).map(\.object)
    #expect(created.count == 3)
    #expect(Set(created).count == 3)
    #expect(freed == created)
    #expect(trace.events(.objectFreed).allSatisfy { trace.definitions.typeName($0.aux) == "Counter" })
  }

  @Test(
    "the footer lists a thread still running at the stop, not one that exited nor the stopping one; the free it makes after the stop is not in the trace"
  )
  func runningAtStop() async throws {
    let created = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let ids = LockedIDs()
    let trace = try await RecordingSupport.record {
      // A thread that records and exits before the stop.
      let recorded = DispatchSemaphore(value: 0)
      let exited = Thread {
        do {
          let model = LocalModel()
          model.value = 1
        }
        ids.setCurrentThread("exited")
        recorded.signal()
      }
      exited.start()
      recorded.wait()
      // A thread that is still running (waiting) when the recording stops, and frees its model after.
      let worker = Thread {
        do {
          let model = LocalModel()
          model.value = 2
          ids.setCurrentThread("worker")
          created.signal()
          release.wait()
        }
        finished.signal()
      }
      worker.start()
      created.wait()
      LocalModel().value = 3
      ids.setCurrentThread("stopping")
      // Gone from the kernel's list only after its thread-exit handlers ran (which hand its ring over).
      let gone = Date().addingTimeInterval(10)
      while FileManager.default.fileExists(atPath: "/proc/self/task/\(ids.get("exited").os)") && Date() < gone {
        usleep(1000)
      }
    }
    release.signal()
    finished.wait()
    let footer = try #require(trace.reader.footer)
    let (worker, exited, stopping) = (ids.get("worker").serial, ids.get("exited").serial, ids.get("stopping").serial)
    #expect(footer.runningAtStop.contains(worker))
    #expect(!footer.runningAtStop.contains(exited))
    #expect(!footer.runningAtStop.contains(stopping))
    // Three objects created; two freed in the trace (the worker's free came after the stop).
    #expect(trace.events(EventKind.objectCreated).count == 3)
    let freedOn = Set(trace.events(EventKind.objectFreed).map { $0.thread })
    #expect(freedOn == [exited, stopping])
  }

  @Test("a setter records willSet then didSet; a read records an access")
  func setterAndGetter() async throws {
    let counter = Counter()
    let trace = try await RecordingSupport.record {
      counter.count = 5
      counter.count = 5  // the macro's setter skips an equal value: nothing
      _ = counter.count
    }
    #expect(trace.propertyEvents == ["willSet Counter.count", "didSet Counter.count", "access Counter.count"])
  }

  @Test(
    "a read recorded by the inlined path (key path cached, registrar bound) is the event the full path records",
    arguments: [RecordingOptions.Backtraces.off, .writes])
  func inlinedReadPath(backtraces: RecordingOptions.Backtraces) async throws {
    let model = LocalModel()
    let counter = Counter()
    let observer = ImmediateObserver(model: model)
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: backtraces)) {
      // The first read of each takes the full path (nothing cached, nothing bound); the next ones the inlined one.
      for _ in 0..<3 { _ = model.value }
      for _ in 0..<3 { _ = counter.label }  // an Equatable member: its cached id carries the Equatable bit
      _ = withObservationTracking {
        model.value + model.value
      } onChange: {
      }
      // Inside its own willSet window (the observer re-reads from onChange): stale, which the inlined path leaves.
      observer.observe()
      model.other = 1
      model.value = 1
    }
    let reads = trace.events(.access)
    func fields(_ event: TraceEvent) -> [UInt32] {
      [event.object, event.key, event.aux, event.scope, UInt32(event.flags), UInt32(event.depth), event.stack]
    }
    let expectedReads: Int = 3 + 3 + 2 + 2
    #expect(reads.count == expectedReads)
    let (outside, labels, inScope) = (reads[0..<3], reads[3..<6], reads[6..<8])
    #expect(Set(outside.map(fields)).count == 1)
    #expect(Set(labels.map(fields)).count == 1)
    #expect(Set(inScope.map(fields)).count == 1)
    #expect(trace.propertyName(reads[0]) == "LocalModel.value" && trace.propertyName(reads[3]) == "Counter.label")
    #expect(outside.first!.scope == 0 && outside.first!.flags == 0 && outside.first!.aux != 0)
    #expect(inScope.first!.scope != 0 && inScope.first!.flags == EventFlags.accessInScope && inScope.first!.depth == 1)
    // The observer's first read is fresh, its re-read inside the write of `value` stale (with a stack when stacks
    // are on); the write of `other` does not make a read of `value` stale.
    let observed = reads[8...]
    #expect(observed.map { $0.flags & EventFlags.staleRead != 0 } == [false, true])
    #expect((observed.last!.stack != 0) == (backtraces != .off))
  }

  @Test("a read takes its thread's previous time; the clock is read again after OBSTRACE_UNTIMED_READS events")
  func readsSkipTheClock() async throws {
    let counter = Counter()
    let limit = Int(OBSTRACE_UNTIMED_READS)
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: .off)) {
      counter.count = 1
      for _ in 0..<(limit * 4) { _ = counter.count }
    }
    let write = try #require(trace.events(.willSet).first)
    let reads = trace.events(.access)
    #expect(reads.count == limit * 4)
    // The didSet and the next `limit - 1` reads follow the willSet's clock read without one of their own.
    #expect(trace.events(.didSet).first?.time == write.time)
    #expect(reads.prefix(limit - 1).allSatisfy { $0.time == write.time })
    // Then the clock is read once `limit` events have gone without it: times never go back, and they move on.
    #expect(zip(reads, reads.dropFirst()).allSatisfy { $0.time <= $1.time })
    #expect(reads[limit - 1].time > write.time)
    #expect(Set(reads.map(\.time)).count == 4)
  }

  @Test(
    "each comparison mode marks _modify writes unchanged, changed or not compared, without recording its reads",
    arguments: [
      // count += 0, count += 1, shelves[0].count = 1 (same), shelves[1].count = 9; then the setter of handler.
      // A write not compared says why: an array under .trivial is not trivially copyable; .off compares nothing.
      (WriteComparison.trivial, [Self.unchanged, Self.changed, Self.notBitwise, Self.notBitwise, 0]),
      (.equatable, [Self.unchanged, Self.changed, Self.unchanged, Self.changed, 0]),
      (.off, [Self.off, Self.off, Self.off, Self.off, 0]),
    ])
  func comparisonModes(comparison: WriteComparison, flags: [UInt8]) async throws {
    let counter = Counter()
    let library = Library()
    let trace = try await RecordingSupport.record(options: RecordingOptions(comparison: comparison)) {
      counter.count += 0
      counter.count += 1
      library.shelves[0].count = 1  // the same value
      library.shelves[1].count = 9
      library.handler = {}  // the setter: withMutation, never compared
    }
    let didSets = trace.events(.didSet)
    #expect(
      didSets.map { trace.propertyName($0) } == [
        "Counter.count", "Counter.count", "Library.shelves", "Library.shelves", "Library.handler",
      ])
    #expect(didSets.map(\.flags) == flags)
    // One access per _modify (the accessor's own), none from ObsTrace reading the value around it.
    #expect(trace.events(.access).count == 4)
  }

  @Test("bits are compared in the written property's own field, among several of the same type")
  func fieldOfTheWrittenProperty() async throws {
    let model = SameTypes()
    let trace = try await RecordingSupport.record {
      model.b += 1  // a and c unchanged: a field mistaken for b's would call this a no-op
      model.c += 0
      model.a += 2
      model.inner.x += 0
      model.inner.y += 1
    }
    #expect(
      trace.events(.didSet).map(\.flags) == [changed, unchanged, changed, unchanged, changed])
  }

  static let unchanged = EventFlags.modify | EventFlags.unchanged
  static let changed = EventFlags.modify | EventFlags.changed
  static let modify = EventFlags.modify
  static let notBitwise = EventFlags.modify | UncomparedReason.notTriviallyCopyable.flags
  static let off = EventFlags.modify | UncomparedReason.comparisonOff.flags
  var unchanged: UInt8 { Self.unchanged }
  var changed: UInt8 { Self.changed }

  @Test("the traced withObservationTracking behaves as the real one and records its scope")
  func tracking() async throws {
    let model = LocalModel()
    let fired = Locked(0)
    var result = 0
    var callLine = 0
    let trace = try await RecordingSupport.record {
      callLine = #line + 1
      result = withObservationTracking {
        model.value + 1
      } onChange: {
        fired.withLock { $0 += 1 }
      }
      model.other = 1  // not read: nothing
      model.value = 1  // fires
      model.value = 2  // one-shot: nothing more
    }
    #expect(result == 1)
    #expect(fired.withLock { $0 } == 1)
    let kinds = trace.events.filter { $0.kind != .objectCreated }.map(\.kind)
    #expect(
      kinds == [
        .scopeBegin, .access, .scopeEnd, .trackingInstalled, .willSet, .didSet, .willSet, .trackingFired,
        .trackingCancelled, .didSet, .willSet, .didSet,
      ])
    let begin = trace.events(.scopeBegin)[0]
    // The label is the call site, as #fileID:#line would say it.
    #expect(trace.definitions.labelName(begin.key) == "ObsTraceRecorderTests/RecorderTests.swift:\(callLine)")
    #expect(trace.events(.access)[0].scope == begin.scope)
    #expect(trace.events(.access)[0].flags & EventFlags.accessInScope != 0)
    let fire = trace.events(.trackingFired)[0]
    #expect(fire.scope == begin.scope)
    #expect(trace.propertyName(fire) == "LocalModel.value")
    #expect(fire.object == trace.events(.objectCreated).first?.object ?? fire.object)
  }

  @Test(
    "one call site reached by two paths is one label, named after the call site, whatever the backtrace level",
    arguments: RecordingOptions.Backtraces.allCases)
  func oneLabelPerCallSite(backtraces: RecordingOptions.Backtraces) async throws {
    let model = LocalModel()
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: backtraces)) {
      _ = CallSitePaths.first(model)
      _ = CallSitePaths.second(model)
      _ = CallSitePaths.first(model)
    }
    let begins = trace.events(.scopeBegin)
    #expect(begins.count == 3)
    #expect(Set(begins.map(\.key)).count == 1)
    #expect(
      trace.definitions.labelName(begins[0].key) == "ObsTraceRecorderTests/RecorderTests.swift:\(CallSitePaths.line)")
  }

  @Test("a scope that reads nothing installs nothing, as for real; a named scope keeps its name")
  func emptyAndNamedScopes() async throws {
    let model = LocalModel()
    let trace = try await RecordingSupport.record {
      withObservationTracking {
      } onChange: {
      }
      _ = withObservationTracking(named: "FirstView.body") {
        model.value
      } onChange: {
      }
    }
    #expect(trace.events(.trackingInstalled).count == 1)
    let labels = trace.events(.scopeBegin).map { trace.definitions.labelName($0.key) }
    #expect(labels.last == "FirstView.body")
  }

  @Test("nested tracking: the inner scope's reads are in the inner scope, whose parent is the outer one")
  func nestedTracking() async throws {
    let model = LocalModel()
    let outerFired = Locked(0)
    let trace = try await RecordingSupport.record {
      withObservationTracking {
        _ = model.value
        withObservationTracking {
          _ = model.other
        } onChange: {
        }
      } onChange: {
        outerFired.withLock { $0 += 1 }
      }
      model.other = 5  // the inner list merged into the outer one: the outer scope fires too
    }
    #expect(outerFired.withLock { $0 } == 1)
    let begins = trace.events(.scopeBegin)
    #expect(begins.count == 2)
    #expect(begins[1].aux == begins[0].scope)
    #expect(Set(trace.events(.trackingFired).map(\.scope)) == Set(begins.map(\.scope)))
  }

  @Test("seed 004's immediate re-observe reads the old value, and the read is marked stale")
  func staleRead() async throws {
    let model = LocalModel()
    let observer = ImmediateObserver(model: model)
    let trace = try await RecordingSupport.record {
      observer.observe()
      model.value = 1
      model.value = 2
    }
    #expect(observer.seen == [0, 0, 1])
    let stale = trace.events(.access).filter { $0.flags & EventFlags.staleRead != 0 }
    #expect(stale.count == 2)
    #expect(stale.allSatisfy { $0.stack != 0 })
  }

  @Test("the site of a write is the test's own line")
  func writeSite() async throws {
    let counter = Counter()
    var line = 0
    let trace = try await RecordingSupport.record {
      line = #line + 1
      counter.count = 42
    }
    let write = try #require(trace.events(.willSet).first)
    let site = try #require(trace.definitions.site(ofStack: write.stack))
    #expect(site.file.hasSuffix("RecorderTests.swift"))
    #expect(site.line == UInt32(line))
    #expect(site.function.contains("writeSite"))
  }

  @Test("the site of a read is the test's own line (stacks on every event)")
  func readSite() async throws {
    let counter = Counter()
    var line = 0
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: .all)) {
      line = #line + 1
      _ = counter.count
    }
    let read = try #require(trace.events(.access).first)
    let site = try #require(trace.definitions.site(ofStack: read.stack))
    #expect(site.file.hasSuffix("RecorderTests.swift"))
    #expect(site.line == UInt32(line))
    #expect(site.function.contains("readSite"))
  }

  @Test("without stacks a write still says whether it went through _modify or withMutation")
  func writeKindsWithoutStacks() async throws {
    let model = LocalModel()
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: .off)) {
      model.value = 1
      model.value += 1
      model.withMutation(keyPath: \.value) {}
    }
    let kinds = trace.events(.willSet).map { trace.definitions.writeKind(of: $0) }
    #expect(kinds == [.setOrWithMutation, .modify, .setOrWithMutation])
  }

  @Test("with backtraces off no event carries a stack; with all, reads do too")
  func backtraceLevels() async throws {
    let counter = Counter()
    let off = try await RecordingSupport.record(options: RecordingOptions(backtraces: .off)) {
      counter.count = 1
      _ = counter.count
    }
    #expect(off.events.allSatisfy { $0.stack == 0 })
    let all = try await RecordingSupport.record(options: RecordingOptions(backtraces: .all)) {
      counter.count = 2
      _ = counter.count
    }
    #expect(all.events(.access).allSatisfy { $0.stack != 0 })
    #expect(all.events(.willSet).allSatisfy { $0.stack != 0 })
  }

  @Test("several threads writing and reading at once lose nothing: exact counts per thread")
  func threadsLossless() async throws {
    let threads = 4
    let writes = 20_000
    let trace = try await RecordingSupport.record(options: RecordingOptions(ringCapacity: 64)) {
      let models = (0..<threads).map { _ in LocalModel() }
      nonisolated(unsafe) let shared = models
      RecordingSupport.runThreads(threads) { index in
        let model = shared[index]
        for value in 1...writes {
          model.value = value
          _ = model.value
        }
      }
    }
    #expect(trace.summary.droppedEvents == 0)
    let byThread = Dictionary(grouping: trace.events.filter { $0.kind == .willSet }, by: \.thread)
    #expect(byThread.count == threads)
    #expect(byThread.values.allSatisfy { $0.count == writes })
    let accesses = Dictionary(grouping: trace.events(.access), by: \.thread)
    #expect(accesses.values.allSatisfy { $0.count == writes })
    // Each thread's events arrive in the order it recorded them.
    for events in byThread.values { #expect(zip(events, events.dropFirst()).allSatisfy { $0.time <= $1.time }) }
  }

  @Test("in drop mode, recorded + dropped == emitted for every thread, and the drops are in the file")
  func dropModeCounts() async throws {
    let threads = 3
    let writes = 5_000
    let trace = try await RecordingSupport.record(
      options: RecordingOptions(ringCapacity: 64, dropWhenFull: true, backtraces: .off)
    ) {
      let models = (0..<threads).map { _ in LocalModel() }
      nonisolated(unsafe) let shared = models
      // Drops for certain: the flusher drains nothing while the threads write (left to race it, it could keep up).
      #expect(obstrace_flusher_hold(true))
      RecordingSupport.runThreads(threads) { index in
        for value in 1...writes { shared[index].value = value }
      }
      obstrace_flusher_hold(false)
    }
    let footer = try #require(trace.reader.footer)
    let perThread = Dictionary(grouping: trace.events, by: \.thread).mapValues(\.count)
    let workers = footer.threads.filter {
      perThread[$0.thread] != nil && $0.recorded + $0.dropped == UInt64(2 * writes)
    }
    #expect(workers.count == threads)
    for totals in workers { #expect(UInt64(perThread[totals.thread] ?? 0) == totals.recorded) }
    #expect(footer.dropped > 0)
    #expect(trace.reader.droppedEvents == footer.dropped)
    #expect(trace.summary.droppedEvents == footer.dropped)
  }

  @Test("an in-test recording inside a drop-mode recording says how many events were dropped while it ran")
  func inTestDrops() async throws {
    try await RecordingTestLock.exclusive {
      try Recorder.start(
        to: RecordingSupport.temporaryPath("drops.trc"), options: RecordingOptions(ringCapacity: 64, dropWhenFull: true)
      )
      defer { Recorder.stop() }
      let recorded = try recordObservation {
        let model = PoolModel()
        // Drops for certain: the flusher drains nothing while a new thread (whose ring has the recording's 64
        // slots) records a thousand writes, two events or more each. Left to race the flusher, a loaded machine
        // sometimes drained fast enough, or the test's thread already had a larger ring of an earlier recording.
        #expect(obstrace_flusher_hold(true))
        RecordingSupport.runThreads(1) { _ in
          for value in 1...1_000 { model.value = value }
        }
        obstrace_flusher_hold(false)
      }
      #expect(recorded.report.trace.droppedEvents >= 2 * 1_000 - 64)
      #expect(recorded.writes(of: "PoolModel.value") <= 64)
      #expect(recorded.findings(.droppedEvents).count == 1)
    }
  }

  @Test("short-lived threads hand their rings over: nothing is lost")
  func shortLivedThreads() async throws {
    let threads = 40
    let writes = 250
    let trace = try await RecordingSupport.record {
      let model = LocalModel()
      let lock = NSLock()
      nonisolated(unsafe) let shared = model
      RecordingSupport.runThreads(threads) { index in
        for value in 1...writes {
          lock.lock()
          shared.value = index * 10_000 + value  // never the value already there: the setter would skip it
          lock.unlock()
        }
      }
    }
    let byThread = Dictionary(grouping: trace.events(.willSet), by: \.thread)
    #expect(byThread.count == threads)
    #expect(
      byThread.values.allSatisfy { $0.count == writes },
      "\(byThread.mapValues(\.count).sorted { $0.key < $1.key }) \(trace.reader.footer!)")
  }

  @Test("a second start while recording is refused, and the first recording goes on")
  func secondStart() async throws {
    try await RecordingTestLock.exclusive { try secondStartAlone() }
  }

  func secondStartAlone() throws {
    let counter = Counter()
    let path = RecordingSupport.temporaryPath("first.trc")
    try Recorder.start(to: path)
    #expect(throws: RecordingError.self) { try Recorder.start(to: RecordingSupport.temporaryPath("second.trc")) }
    counter.count = 1
    let summary = try #require(Recorder.stop())
    #expect(summary.path == path)
    #expect(summary.events >= 2)
  }

  @Test("an unwritable path refuses to start, and the program goes on untraced and unchanged")
  func unwritablePath() async throws {
    try await RecordingTestLock.exclusive { try unwritablePathAlone() }
  }

  func unwritablePathAlone() throws {
    do {
      try Recorder.start(to: "/nonexistent/directory/run.trc")
      Issue.record("started recording to a directory that does not exist")
    } catch {
      #expect(error.code == .cannotWrite)
      #expect(error.message.contains("/nonexistent/directory/run.trc"))
    }
    #expect(Recorder.isRecording == false)
    let model = LocalModel()
    let fired = Locked(0)
    _ = withObservationTracking {
      model.value
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    model.value = 3
    #expect(fired.withLock { $0 } == 1)
    #expect(model.value == 3)
  }

  @Test("a model's synthesized Codable conformance works through the tracing registrar")
  func codableModel() throws {
    let profile = Profile()
    profile.name = "Ada"
    profile.age = 36
    let data = try JSONEncoder().encode(profile)
    let decoded = try JSONDecoder().decode(Profile.self, from: data)
    #expect(decoded.name == "Ada")
    #expect(decoded.age == 36)
  }

  @Test("a real trace cut at random offsets reads back its whole chunks")
  func realTraceCut() async throws {
    let trace = try await RecordingSupport.record {
      let model = LocalModel()
      for value in 0..<60_000 { model.value = value }
    }
    let bytes = try Data(contentsOf: URL(fileURLWithPath: trace.path))
    #expect(trace.reader.footer?.chunks ?? 0 >= 3)
    var generator = SeededGenerator()
    for _ in 0..<20 {
      // Past the header (its executable path makes it ~150 bytes here): a cut header is an error, tested elsewhere.
      let cut = Int.random(in: 256..<bytes.count, using: &generator)
      let path = RecordingSupport.temporaryPath("cut.trc")
      try bytes.prefix(cut).write(to: URL(fileURLWithPath: path))
      let reader = try ObsTraceFormat.TraceReader(path: path)
      var events: [TraceEvent] = []
      reader.forEachEvent { events.append($0) }
      #expect(reader.truncated)
      #expect(
        events == Array(trace.events.prefix(events.count)), "cut at \(cut), OBSTRACE_TEST_SEED=\(generator.seed)")
    }
  }
}

/// The recorder's thread serial and the OS thread id of threads of a test, by name.
final class LockedIDs: @unchecked Sendable {
  private let lock = NSLock()
  private var ids: [String: (serial: UInt32, os: Int32)] = [:]

  /// Notes the calling thread, which must have recorded already (it has a ring).
  func setCurrentThread(_ name: String) {
    let ring = obstrace_current_ring()!
    let id = (obstrace_ring_thread_id(ring), obstrace_ring_os_thread_id(ring))
    lock.withLock { ids[name] = id }
  }
  func get(_ name: String) -> (serial: UInt32, os: Int32) { lock.withLock { ids[name] ?? (0, -1) } }
}
