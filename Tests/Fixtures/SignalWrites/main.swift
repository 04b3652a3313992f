// A SIGALRM handler (setitimer, every 500 µs) writes a model while the program's only thread writes another 1000
// times a round and re-tracks it (a fresh-clone try-out's Signals program, tryout16's P1 and P3). Recording, the
// handler's events met the recorder's locks held by the very thread it interrupted (the program hung) or were stored
// into the middle of that thread's own store (counts that were not so, said "complete"). Built by
// Tests/ObsTraceCommandsTests/SignalHandlerTests.swift with -DOBSTRACE (traced) and without (Observation alone): both
// print the same on standard output; standard error says how often the handler ran, which the test compares with
// the trace.
//
// The program's own precautions, as a careful program takes them: SIGALRM is blocked while a tracking runs (a read
// by the handler would land in the interrupted tracking's access list: Observation's own race, untraced too), and
// every write of the handler's kind is made once before the timer starts (a key path's first use allocates, and
// malloc is not async-signal-safe, untraced either).
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Stats: @unchecked Sendable {
  var work = 0
}

@Observable final class Alarm: @unchecked Sendable {
  var count = 0
}

let stats = Stats()
let alarm = Alarm()
nonisolated(unsafe) var fires = 0
nonisolated(unsafe) var handlerRuns: sig_atomic_t = 0

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200

func track() {
  var set = sigset_t()
  var old = sigset_t()
  sigemptyset(&set)
  sigaddset(&set, SIGALRM)
  pthread_sigmask(SIG_BLOCK, &set, &old)
  withObservationTracking {
    _ = stats.work
  } onChange: {
    fires += 1
  }
  pthread_sigmask(SIG_SETMASK, &old, nil)
}

// First uses before the timer starts (a `_modify` write of each, unchanged).
stats.work += 0
alarm.count += 0
signal(SIGALRM) { _ in
  alarm.count += 1
  handlerRuns += 1
}
var interval = itimerval(
  it_interval: timeval(tv_sec: 0, tv_usec: 500), it_value: timeval(tv_sec: 0, tv_usec: 500))
setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &interval, nil)
for _ in 0..<rounds {
  track()
  for _ in 0..<1000 { stats.work += 1 }
}
var off = itimerval()
setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &off, nil)
signal(SIGALRM, SIG_IGN)
// The handler's count, as the program sees it (it varies with timing: standard error, which the test reads).
FileHandle.standardError.write(Data("handler runs \(handlerRuns) alarm.count \(alarm.count)\n".utf8))
print("work \(stats.work) fires == rounds \(fires == rounds) count == runs \(alarm.count == Int(handlerRuns))")
