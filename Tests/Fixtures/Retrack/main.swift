import ObsTrace
import Observation

// A function holding one withObservationTracking, re-tracked by calling it again after each fire: one instance in
// any build. An optimized build inlines `render()` at each of its callers, a call instruction (a return address)
// per caller; `renderOther()` is another call in the source, waiting on the same thread, never continued by
// `render()`'s runs, nor they by its, nor `observe()`'s.

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

// Re-tracked from its own change handler (seed 004's pattern): the first call is a copy inlined here, the
// handler's another (or the function itself), each its own call instruction. `late()` is first called from that
// handler, inside Observation's willSet: it is named by its call, as any.
@MainActor func observe() {
  withObservationTracking {  // site: observe
    print("watched \(watched.value)")
  } onChange: {
    print("  watched changed")
    MainActor.assumeIsolated {
      observe()
      handled += 1
      if handled == 1 { late() }
    }
  }
}

@MainActor func late() {
  withObservationTracking {  // site: late
    print("late \(quiet.value)")
  } onChange: {
    print("  late invalidated")
  }
}

let watched = Model()
let quiet = Model()
var handled = 0
observe()
watched.value = 1
watched.value = 2

renderOther()
other.value = 1
render()
model.value = 1
render()
model.value = 2
render()
model.value = 3
renderOther()
