// Models without ObsTrace: this file does not import it, so the macro uses Observation's own registrar.
import Observation

@Observable
final class PlainCounter {
  var value = 0
  var other = 0
}

/// One `withObservationTracking` scope with one read, through Observation's own function.
@inline(never)
func plainScope(_ model: PlainCounter) -> Int {
  withObservationTracking {
    model.value
  } onChange: {
  }
}

/// `reads` reads of `read()` inside one of Observation's own tracking scopes: this file does not import ObsTrace,
/// so for a traced model this is tracking ObsTrace does not own (an untraced scope).
@inline(never)
func readsInsideObservationTracking(_ reads: Int, _ read: () -> Int) -> Int {
  withObservationTracking {
    var sum = 0
    for _ in 0..<reads { sum &+= read() }
    return sum
  } onChange: {
  }
}
