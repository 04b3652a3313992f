// A program whose writes and reads must be reported at their own lines, built debug and optimized by
// Tests/ObsTraceCommandsTests/SiteTests.swift (not a target of the package). Each `// site:` comment names the
// event the line makes; the test finds the lines by these comments.
import ObsTrace
import Observation

@Observable final class Counter {
  var count = 0
  var items: [Int] = []
}

@inline(never) func writeEveryWay(_ counter: Counter) {
  counter.count = 1  // site: set count
  counter.count += 2  // site: modify count
  counter.items.append(3)  // site: modify items
  counter.withMutation(keyPath: \.count) {}  // site: withMutation count
  print(counter.count)  // site: read count
}

@inline(never) func track(_ counter: Counter) {
  // Not in tail position: an optimized build turns a call in tail position into a jump, which leaves no frame.
  let count = withObservationTracking {  // site: tracking
    counter.items.count
  } onChange: {
  }
  print(count)
}
@inline(never) func firstPath(_ counter: Counter) { track(counter) }
@inline(never) func secondPath(_ counter: Counter) { track(counter) }

let counter = Counter()
try Recorder.start(to: CommandLine.arguments[1], options: RecordingOptions(backtraces: .all))
writeEveryWay(counter)
firstPath(counter)
secondPath(counter)
Recorder.stop()
