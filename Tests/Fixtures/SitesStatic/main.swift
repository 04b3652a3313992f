// A program built with `--static-swift-stdlib` (Tests/ObsTraceCommandsTests/SiteTests.swift builds it with swiftc
// -static-stdlib, traced with -DOBSTRACE and untraced, -Onone and -O) whose model is written in a Task and on
// Dispatch queues: the Swift runtime, Concurrency and Dispatch are then part of the executable, and their frames
// are on each write's stack after the user's. Loop.swift (no import of ObsTrace) runs an `Observations` loop,
// whose tracking ObsTrace does not own. Each site comment names the write its line makes.
import Dispatch
import Observation

#if OBSTRACE
  import ObsTrace
#endif

@Observable final class Counter: @unchecked Sendable {
  var value = 0
}

let counter = Counter()
let task = Task.detached {
  counter.value += 1  // site: task
}
await task.value
let group = DispatchGroup()
DispatchQueue.global().async(group: group) {
  counter.value += 10  // site: dispatch
}
group.wait()
let serial = DispatchQueue(label: "fixture.serial")
serial.sync {
  counter.value += 100  // site: serial
}
let seen = await firstValue(counter)
print("value: \(counter.value), seen: \(seen)")
