import ObsTrace
import Observation

// Observation calls a tracking's onChange from the willSet that fires it, before it cancels that tracking: a write
// made inside the handler to what the tracking read fires the same handler again, nested, and so does a write to it
// made from the handler of another tracking that the first handler's write fired (two models kept in sync through
// onChange). Both are bounded here; unguarded they recurse until the stack overflows, traced or not.

@Observable
final class Counter {
  var value = 0
}

// One handler that writes what its own tracking read, once.
nonisolated(unsafe) let counter = Counter()
nonisolated(unsafe) var reentered = false
withObservationTracking {  // site: reentry
  _ = counter.value
} onChange: {
  if !reentered {
    reentered = true
    print("reentry: writing value inside the write of value")
    counter.value = 100  // site: nested write
  } else {
    print("reentry again, nested: value still \(counter.value)")
  }
}
counter.value = 2  // site: outer write
print("value \(counter.value)")

// Two models kept in sync: a's handler writes b and re-tracks a, b's writes a and re-tracks b, 6 handler calls.
nonisolated(unsafe) var pings = 0
nonisolated(unsafe) let a = Counter()
nonisolated(unsafe) let b = Counter()
func watchA() {
  withObservationTracking {  // site: watch a
    _ = a.value
  } onChange: {
    pings += 1
    print("a changed (\(pings))")
    if pings < 6 {
      b.value += 1  // site: write b
      watchA()
    }
  }
}
func watchB() {
  withObservationTracking {  // site: watch b
    _ = b.value
  } onChange: {
    pings += 1
    print("b changed (\(pings))")
    if pings < 6 {
      a.value += 1  // site: write a
      watchB()
    }
  }
}
watchA()
watchB()
a.value = 1  // site: start
print("pings \(pings) a \(a.value) b \(b.value)")
