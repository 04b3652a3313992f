// Three `withObservationTracking` calls in one function, each its own call site: built optimized by
// scripts/release-labels, whose check is that a release build of ObsTrace labels them as three scopes at these
// lines (an optimized build once turned the label's return-address lookup into a tail call, and every scope of a
// function became one label).
import ObsTrace
import Observation

@Observable final class Counter {
  var count = 0
  var other = 0
}

@inline(never) func trackThree(_ counter: Counter) -> Int {
  let first = withObservationTracking {  // scope: first
    counter.count
  } onChange: {
  }
  let second = withObservationTracking {  // scope: second
    counter.other
  } onChange: {
  }
  let third = withObservationTracking {  // scope: third
    counter.count + counter.other
  } onChange: {
  }
  return first + second + third
}

print(trackThree(Counter()))
