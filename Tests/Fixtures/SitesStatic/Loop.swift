// This file does NOT import ObsTrace: the `Observations` below is Observation's own.
import Observation

/// The first value of an `Observations` sequence over the counter's value, read in a task of its own.
@inline(never) func firstValue(_ counter: Counter) async -> Int {
  let loop = Task.detached {
    for await value in Observations({ counter.value }) {  // site: observations
      return value
    }
    return -1
  }
  return await loop.value
}
