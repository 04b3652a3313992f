import ObsTrace
import Observation

// A function holding one withObservationTracking, re-tracked by calling it again after each fire: one instance in
// any build. An optimized build inlines `render()` at each of its callers, a call instruction (a return address)
// per caller; `renderOther()` is another call in the source, waiting on the same thread, never continued by
// `render()`'s runs, nor they by its.

@Observable
final class Model {
  var value = 0
}

let model = Model()
let other = Model()

@MainActor func render() {
  withObservationTracking {  // site: render
    print("value \(model.value)")
  } onChange: {
    print("  invalidated")
  }
}

@MainActor func renderOther() {
  withObservationTracking {  // site: other
    print("other \(other.value)")
  } onChange: {
    print("  other invalidated")
  }
}

renderOther()
other.value = 1
render()
model.value = 1
render()
model.value = 2
render()
model.value = 3
renderOther()
