// A program that forks while it records (no exec): the child writes a model of its own many times (more than a
// ring holds) and exits; the parent waits for it, then writes its own model again. Built by
// Tests/ObsTraceCommandsTests/ForkTests.swift with -DOBSTRACE (traced) and without (Observation alone), -Onone and
// -O; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Counter {
  var hits = 0
}

final class Fires: @unchecked Sendable { var count = 0 }

let counter = Counter()
let fired = Fires()
withObservationTracking { _ = counter.hits } onChange: { fired.count += 1 }
counter.hits = 1
let writes = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 0 : 0
let child = fork()
if child == 0 {
  let mine = Counter()
  for _ in 0..<writes { mine.hits += 1 }
  print("child wrote \(mine.hits)")
  exit(0)
}
var status: Int32 = 0
waitpid(child, &status, 0)
counter.hits = 2
print("parent: child status \(status), fired \(fired.count), hits \(counter.hits)")
