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
