// This file does NOT import ObsTrace: the `Observations` below is Observation's own.
import Observation

/// The first value of an `Observations` sequence over the model's value, then the value read once more, by the
/// thread that ran the loop (after its tracking ended: the read closes the run).
@inline(never) func firstValue(_ model: Model) async -> Int? {
  var first: Int?
  for await value in Observations({ model.value }) {  // site: observations
    first = value
    break
  }
  _ = model.value
  return first
}
