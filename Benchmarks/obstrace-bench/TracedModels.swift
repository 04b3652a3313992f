// The same models with ObsTrace: this file imports it, so the macro uses the tracing registrar and
// `withObservationTracking` is ObsTrace's traced one.
import ObsTrace
import Observation

@Observable
final class TracedCounter {
  var value = 0
  var other = 0
}

@inline(never)
func tracedScope(_ model: TracedCounter) -> Int {
  withObservationTracking {
    model.value
  } onChange: {
  }
}

/// The demo's workload, repeated: two views each reading one property under tracking, the guide's writes.
func demoWorkload(_ rounds: Int) {
  let model = TracedCounter()
  for round in 0..<rounds {
    _ = withObservationTracking(named: "FirstView.body") {
      model.value
    } onChange: {
    }
    _ = withObservationTracking(named: "NextView.body") {
      model.other
    } onChange: {
    }
    model.value += 1
    model.other += 1
    model.value = round
    _ = model.other
  }
}
