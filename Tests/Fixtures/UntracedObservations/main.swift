// A program whose `Observations` sequence is made in a file that does not import ObsTrace (Loop.swift): ObsTrace
// sees its tracking as untraced, and names it by the sequence's closure, the one line of the user's code on the
// stack (Observation's own async code runs it). Built by Tests/ObsTraceCommandsTests/SiteTests.swift (not a target
// of the package), debug and optimized.
import ObsTrace
import Observation

@Observable final class Model: @unchecked Sendable {
  var value = 0
}

let model = Model()
let before = peek(model)
model.value = 1
print("first value: \(await firstValue(model) ?? -1), before: \(before)")
