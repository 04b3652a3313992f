// A process-directed signal that every thread of the program blocks stays pending: no thread of the program runs its
// handler. Recording starts a thread of ObsTrace's, the flusher, which must not take the program's signals either (a
// fresh-clone try-out's P2: the flusher inherited the mask of the thread that started the recording, and a program's
// SIGALRM handler ran on it). Built by Tests/ObsTraceCommandsTests/DescriptorTests.swift with -DOBSTRACE (traced) and
// without (Observation alone); both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Shared {
  var hits = 0
}

nonisolated(unsafe) var handled: sig_atomic_t = 0
signal(SIGUSR1) { _ in handled = 1 }
// The first traced object starts the recording (OBSTRACE_OUTPUT) while this thread takes SIGUSR1.
let shared = Shared()
shared.hits = 1
// From here on, the program's only thread blocks it; a process-directed SIGUSR1 waits for a thread that takes it.
var blocked = sigset_t()
sigemptyset(&blocked)
sigaddset(&blocked, SIGUSR1)
pthread_sigmask(SIG_BLOCK, &blocked, nil)
kill(getpid(), SIGUSR1)
// A thread that takes it runs the handler at once; give it up to two seconds.
for _ in 0..<200 where handled == 0 { usleep(10_000) }
var pending = sigset_t()
sigpending(&pending)
print(handled != 0 ? "handled by another thread" : sigismember(&pending, SIGUSR1) == 1 ? "pending" : "lost")
shared.hits += 1
print("hits \(shared.hits)")
