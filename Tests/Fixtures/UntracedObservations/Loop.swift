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

/// The model's value, read here before main.swift first uses the model. An optimized build of several threads (as
/// `swift build -c release` makes) inlines the getter here and builds its key path with a getter of this file's: a
/// thunk with no symbol that jumps to the key path getter in main.swift's code. The recorder meets that key path
/// first, and names the property through the thunk.
@inline(never) func peek(_ model: Model) -> Int { model.value }
