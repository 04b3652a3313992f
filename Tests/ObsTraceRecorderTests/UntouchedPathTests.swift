import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFormat
import ObsTraceTestSupport
import Observation
import Synchronization
import Testing

@testable import ObsTraceRecorder

/// A model only these tests write, so that no other test has looked up its stored fields.
@Observable
final class SetterOnlyModel: @unchecked Sendable {
  var value = 0
}

/// A model whose first write goes through `_modify`, written by one test only.
@Observable
final class ModifyFirstModel: @unchecked Sendable {
  var value = 0
}

/// A task executor that runs every job on one thread of its own, created for the test: what that thread was given
/// (a ring) is what the test's code gave it.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopping = false

  init() {
    let thread = Thread { [self] in run() }
    thread.start()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }

  func stop() {
    condition.lock()
    stopping = true
    condition.signal()
    condition.unlock()
  }

  private func run() {
    while true {
      condition.lock()
      while jobs.isEmpty && !stopping { condition.wait() }
      if jobs.isEmpty {
        condition.unlock()
        return
      }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// What ObsTrace does where Observation's own code would do nothing more: a program that is not recording runs
/// as without ObsTrace, and a recording adds no work where a race of the program is decided.
extension RecorderTests {
  @Test("while not recording, an Observations loop gives the thread that creates and iterates it no ring")
  func observationsNotRecordingAttachNoRing() async throws {
    await RecordingTestLock.exclusive {
      let model = SetterOnlyModel()
      let executor = DedicatedThreadExecutor()
      defer { executor.stop() }
      // Giving a thread a ring zeroes megabytes on it: on a loaded machine that was enough to change which
      // writes of an Observations loop raced its re-read (the loop of the tryout hung 2-3 times as often).
      let (values, threadHasRing) = await Task(executorPreference: executor) {
        var values: [Int] = []
        for await value in Observations({ model.value }) {
          values.append(value)
          break
        }
        // The rest of the drop-in surface, not recording, gives no ring either.
        values.append(
          withObservationTracking {
            model.value
          } onChange: {
          })
        model.value = 2
        model.value += 1
        values.append(model.value)
        return (values, obstrace_thread_has_ring())
      }.value
      #expect(values == [0, 0, 3])
      #expect(!threadHasRing)
    }
  }

  @Test("while not recording, an Observations iterator allocates nothing and takes no serial; recording, it does")
  func observationsIteratorIsLazy() async throws {
    try await RecordingTestLock.exclusive {
      let model = SetterOnlyModel()
      // Serials are taken only here while no one records (the lock): one before, one after, nothing between.
      let before = obstrace_next_scope_serial()
      var iterator = ObsTraceRecorder.Observations<Int, Never>({ model.value }).makeAsyncIterator()
      let first = await iterator.next()
      let after = obstrace_next_scope_serial()
      #expect(first == 0)
      #expect(iterator.lifetime == nil)
      #expect(after == before &+ 1)

      // Recording, the iterator's first recorded run gives it its lifetime (one sequence instance in the trace).
      try Recorder.start(to: RecordingSupport.temporaryPath("lazy.trc"))
      model.value = 1
      let second = await iterator.next()
      let sequence = iterator.lifetime?.sequence
      Recorder.stop()
      #expect(second == 1)
      #expect(sequence != nil && sequence != 0)
    }
  }

  @Test("an Observations sequence made before the recording started is labelled by its line, as one made during it")
  func observationsMadeBeforeTheStart() async throws {
    try await RecordingTestLock.exclusive {
      try #require(!Recorder.isRecording)
      let model = SetterOnlyModel()
      let line = #line + 1
      var iterator = ObsTraceRecorder.Observations<Int, Never>({ model.value }).makeAsyncIterator()
      let path = RecordingSupport.temporaryPath("before.trc")
      try Recorder.start(to: path)
      let first = await iterator.next()
      Recorder.stop()
      #expect(first == model.value)
      let reader = try TraceReader(path: path)
      var labels: [String] = []
      reader.forEachEvent { event in
        if event.kind == .scopeBegin { labels.append(reader.definitions.labelName(event.key)) }
      }
      // Before, the call site was not looked for while not recording: '<call site of stack #N>', named by nothing.
      #expect(labels == ["ObsTraceRecorderTests/UntouchedPathTests.swift:\(line)"])
    }
  }

  @Test("recording, the flusher opens the symbol tables that locate a stored field: the first _modify write does not")
  func symbolTablesOpenedByTheFlusher() async throws {
    try await RecordingTestLock.exclusive {
      // As in a process that has not symbolized anything yet.
      SymbolCache.state.withLock { $0 = SymbolCache.State() }
      let model = ModifyFirstModel()
      let trace = try RecordingSupport.recordHoldingLock {
        let deadline = Date().addingTimeInterval(10)
        while !SymbolCache.state.withLock({ $0.attempted }) && Date() < deadline { usleep(1000) }
        model.value += 1
      }
      #expect(SymbolCache.state.withLock { $0.openedAhead })
      // The write was compared: its field was found with the tables the flusher opened.
      let key = try #require(trace.events(.willSet).first).key
      #expect(obstrace_property_field(key) != 0 && obstrace_property_field(key) != UInt32.max)
    }
  }

  @Test("when the early open of the symbol tables failed, the stop's naming opens them again")
  func namingRetriesAFailedOpen() async throws {
    try await RecordingTestLock.exclusive {
      // As after a failed early open (the program closed libdw's descriptor on /proc/PID/maps while it was read).
      SymbolCache.state.withLock {
        $0 = SymbolCache.State(); $0.attempted = true
      }
      let function: @convention(c) () -> UInt32 = obstrace_current_thread_serial
      let address = UInt64(UInt(bitPattern: unsafeBitCast(function, to: UnsafeRawPointer.self)))
      let frames = SymbolCache.resolve([address], [:])
      #expect(frames[address]?.function.contains("obstrace_current_thread_serial") == true, "\(frames)")
      #expect(SymbolCache.state.withLock { $0.symbolizer != nil })
    }
  }

  @Test("a setter's write looks up no stored field (that names the getter with libdw) on its thread; a _modify's does")
  func setterLooksUpNoStoredField() async throws {
    Interner.namingLog.withLock { $0 = Interner.NamingLog() }
    Interner.watchingNames.store(true, ordering: .relaxed)
    defer { Interner.watchingNames.store(false, ordering: .relaxed) }
    let model = SetterOnlyModel()
    let writer = Atomic<UInt>(0)
    let setter = try await RecordingSupport.record {
      writer.store(UInt(pthread_self()), ordering: .relaxed)
      model.value = 1
    }
    let key = try #require(setter.events(.willSet).first).key
    // The setter needs no comparison (the macro skips an equal value itself): the first write of a property
    // used to open the process's symbol tables here, about 50 ms, before the write's willSet. (The flusher may
    // look for the field when it defines the property, off the program's thread.)
    let lookups = Interner.namingLog.withLock { $0.fieldLookups }
    #expect(!lookups.contains { $0.property == key && $0.thread == writer.load(ordering: .relaxed) })
    let modify = try await RecordingSupport.record { model.value += 1 }
    #expect(modify.events(.willSet).first?.key == key)
    #expect(obstrace_property_field(key) != 0)
  }
}
