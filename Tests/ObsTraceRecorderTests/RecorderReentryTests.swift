import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFormat
import Observation
import Testing

@testable import ObsTraceRecorder

/// The recorder is not re-entrant on a thread: an event that finds its thread inside it (a signal handler that
/// interrupted the recorder's own work there) is counted, not recorded, and the program's own work (the real
/// registrar) goes on as untraced (tryout16's P1 and P3).
@Suite("Recorder re-entry")
struct RecorderReentryTests {
  @Test("events offered while the thread is inside the recorder are counted in the footer, not stored")
  func countedNotStored() async throws {
    let model = LocalModel()
    nonisolated(unsafe) var fired = 0
    let trace = try await RecordingSupport.record {
      model.value = 1
      // As a signal handler finds its thread when it interrupted the recorder there.
      #expect(obstrace_enter_recorder())
      model.value = 2  // a setter's write: its willSet and didSet
      model.other += 1  // a `_modify`: its access, willSet and didSet
      _ = model.value  // an access
      // A tracking scope begun inside: its begin, and the read in it; it runs as Observation's, unrecorded.
      withObservationTracking {
        _ = model.other
      } onChange: {
        fired += 1
      }
      #expect(obstrace_is_in_recorder())
      obstrace_leave_recorder()
      model.other = 5  // recorded: fires the tracking installed above, which records nothing of its own
      model.value = 3
    }
    // The program saw every write, and the tracking fired once, as untraced.
    #expect(model.value == 3 && model.other == 5)
    #expect(fired == 1)
    #expect(trace.reader.footer?.signalHandlerEvents == 2 + 3 + 1 + 2)
    // Only the writes made outside the recorder are in the trace.
    #expect(
      trace.propertyEvents == [
        "willSet LocalModel.value", "didSet LocalModel.value", "willSet LocalModel.other", "didSet LocalModel.other",
        "willSet LocalModel.value", "didSet LocalModel.value",
      ], "\(trace.propertyEvents)")
    #expect(trace.events(.scopeBegin).isEmpty && trace.events(.trackingFired).isEmpty)
    #expect(!obstrace_is_in_recorder())
  }

  @Test("a recording counts only its own: a new recording starts the count again")
  func countStartsAgain() async throws {
    let model = LocalModel()
    _ = try await RecordingSupport.record {
      #expect(obstrace_enter_recorder())
      model.value = 1
      obstrace_leave_recorder()
    }
    let trace = try await RecordingSupport.record { model.value = 2 }
    #expect(trace.reader.footer?.signalHandlerEvents == 0)
    #expect(trace.events(.willSet).count == 1)
  }
}

/// The short-lived thread that runs the recorder's first-use work for a thread with little stack left
/// (`RoomyStack`, `obstrace_run_with_stack`) takes none of the program's signals, as the flusher does not: it runs
/// only the recorder's own work, under its locks, and the program does not know it exists.
@Suite("Roomy stack")
struct RoomyStackSignalTests {
  @Test("the helper thread blocks every signal; the caller's mask is as it was")
  func helperBlocksEverySignal() throws {
    // The caller takes these (a worker thread of the test runner may block them): inherited, the helper would too.
    let signals = [SIGALRM, SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGCHLD]
    var taken = sigset_t()
    sigemptyset(&taken)
    for signal in signals { sigaddset(&taken, signal) }
    var callerBefore = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &taken, &callerBefore)
    defer { pthread_sigmask(SIG_SETMASK, &callerBefore, nil) }
    // What the helper saw: for each signal asked, whether its mask blocks it.
    var blocked = [Int32](repeating: -1, count: signals.count)
    let ran = blocked.withUnsafeMutableBufferPointer { buffer in
      obstrace_run_with_stack(
        { context in
          let out = context!.assumingMemoryBound(to: Int32.self)
          var mask = sigset_t()
          pthread_sigmask(SIG_SETMASK, nil, &mask)
          for (index, signal) in [SIGALRM, SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGCHLD].enumerated() {
            out[index] = sigismember(&mask, signal)
          }
        }, buffer.baseAddress, 1 << 20)
    }
    #expect(ran)
    #expect(blocked == [Int32](repeating: 1, count: signals.count), "\(blocked)")
    var callerAfter = sigset_t()
    pthread_sigmask(SIG_SETMASK, nil, &callerAfter)
    for signal in signals { #expect(sigismember(&callerAfter, signal) == 0) }
  }
}
