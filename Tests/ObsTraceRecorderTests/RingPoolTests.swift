import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceTestSupport
import Observation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A model written from one thread after another (joined in between).
@Observable
final class PoolModel: @unchecked Sendable {
  var value = 0
}

/// The pages the calling thread faulted in for the first time so far (minor faults: a fresh page zeroed).
private func threadMinorFaults() -> Int {
  var usage = rusage()
  getrusage(__rusage_who_t(1) /* RUSAGE_THREAD */, &usage)
  return usage.ru_minflt
}

/// A thread's ring comes from a pool the flusher prepares: its first event neither allocates nor zeroes one.
extension RecorderTests {
  @Test("once the flusher has primed the pool, a thread's first event takes a prepared ring: none is made on it")
  func firstEventTakesAPreparedRing() async throws {
    try await RecordingTestLock.exclusive {
      _ = try RecordingSupport.recordHoldingLock {
        let model = PoolModel()
        // A thread that wrote before: what the first write of the process makes once (names, caches) is made.
        RecordingSupport.runThreads(1) { _ in model.value = 1 }
        let deadline = Date().addingTimeInterval(30)
        while obstrace_ring_pool_count() < obstrace_ring_pool_target() && Date() < deadline { usleep(1000) }
        #expect(obstrace_ring_pool_count() == obstrace_ring_pool_target())
        let madeBefore = obstrace_rings_made_on_program_threads()
        let seen = LockedBox<(hadRing: Bool, hasRing: Bool, faults: Int)>((true, false, 0))
        RecordingSupport.runThreads(1) { _ in
          let hadRing = obstrace_thread_has_ring()
          let before = threadMinorFaults()
          model.value = 2
          let faults = threadMinorFaults() - before
          seen.value = (hadRing, obstrace_thread_has_ring(), faults)
        }
        let (hadRing, hasRing, faults) = seen.value
        #expect(!hadRing && hasRing)
        #expect(obstrace_rings_made_on_program_threads() == madeBefore)
        // A ring zeroed on the thread faults in its 2 MiB: 512 pages of 4 KiB.
        let ringPages = Int(RecordingOptions().ringCapacity) * MemoryLayout<obstrace_record>.stride / 4096
        #expect(faults < ringPages / 8, "the first write faulted \(faults) pages in")
      }
    }
  }

  @Test("with no ring prepared, a thread's first ring is made on it, and counted; not recording, the pool is empty")
  func emptyPoolMakesARingOnTheThread() async throws {
    try await RecordingTestLock.exclusive {
      _ = try RecordingSupport.recordHoldingLock { LocalModel().value = 1 }
      // Stopped: the pool was emptied, and no flusher refills it.
      #expect(obstrace_ring_pool_count() == 0)
      let madeBefore = obstrace_rings_made_on_program_threads()
      RecordingSupport.runThreads(1) { _ in _ = obstrace_current_ring() }
      #expect(obstrace_rings_made_on_program_threads() == madeBefore + 1)
      #expect(obstrace_ring_pool_count() == 0)
    }
  }
}

/// A value threads hand to the test under a lock.
final class LockedBox<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value
  init(_ value: Value) { stored = value }
  var value: Value {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}
