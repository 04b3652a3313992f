// A program whose `Observations` loop is in a file without `import ObsTrace` (Loop.swift), its model written from
// here on a thread of its own: each write waits for the loop's previous value, so it comes after that value's
// tracking was installed (which the recorder does not see) and wakes the next value. With the argument `waiting`,
// the program ends while its loop waits for a value no write gives (`driveAndLeave`). Built by
// Tests/ObsTraceCommandsTests/SiteTests.swift with -DOBSTRACE (traced) and without (Observation alone), -Onone and
// -O; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Model: @unchecked Sendable {
  var value = 0
}

/// Writes 1, 2, 3 on a thread, each after the loop got the value before it, then 4 after the loop ended.
func drive(_ model: Model) async -> String {
  let lock = NSLock()
  let got = DispatchSemaphore(value: 0)
  let ended = DispatchSemaphore(value: 0)
  let seen = Seen()
  let watcher = Task.detached {
    await watch(model, lock, got, seen, until: 3)
    ended.signal()
    return seen.values
  }
  await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in
    Thread {
      for step in 1...3 {
        got.wait()
        lock.withLock { model.value = step }  // site: write
      }
      got.wait()
      // The loop has ended: this write finds its last value's tracking still installed and wakes nothing.
      ended.wait()
      lock.withLock { model.value = 4 }  // site: after
      written.resume()
    }.start()
  }
  return "values: \(await watcher.value)"
}

/// The values a loop got, locked: read by the writer while the loop goes on waiting.
final class Seen: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [Int] = []
  func append(_ value: Int) { lock.withLock { list.append(value) } }
  var values: [Int] { lock.withLock { list } }
}

/// Writes 1, 2, 3 here, each after the loop got the value before it, and ends after the loop got 3, while it waits
/// for a fourth: the last value's run is the last thing its thread records (its end is not in the trace).
func driveAndLeave(_ model: Model) -> String {
  let lock = NSLock()
  let got = DispatchSemaphore(value: 0)
  let seen = Seen()
  Task.detached { await watch(model, lock, got, seen, until: Int.max) }
  for step in 1...3 {
    got.wait()
    lock.withLock { model.value = step }  // site: leave
  }
  got.wait()
  return "values: \(seen.values)"
}

if CommandLine.arguments.dropFirst().first == "waiting" {
  print(driveAndLeave(Model()))
} else {
  print(await drive(Model()))
}
