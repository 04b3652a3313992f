import ObsTrace
import Observation

// A @MainActor function that re-tracks in a loop and awaits between writes (tryout9's Rows): the code after the
// first await resumes on another thread than the main thread (Linux runs the main actor's jobs on a worker once
// the program awaits), and it is another partial function with its own call of withObservationTracking. One
// instance, whose three no-op writes (after each fire) are the coalesced ones.

@Observable
final class Box {
  var value = 0
}

let other = Box()

@MainActor
func work() async {
  let box = Box()
  for step in 1...3 {
    withObservationTracking {  // site: loop
      print("box \(box.value)")
    } onChange: {
      print("  invalidated")
    }
    box.value += step
    await Task.yield()
    box.value += 0
  }
}

withObservationTracking {  // site: other
  print("other \(other.value)")
} onChange: {
  print("  other invalidated")
}
other.value = 1
await work()
