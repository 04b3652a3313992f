// withObservationTracking in a program's top-level code and in a function of the same file: both labels name the
// module, `TopLevel/main.swift:N`, though top-level code's function (`main`, or `async_Main` once the code awaits)
// has no module in its name; so does the site of a write there. Built by Tests/ObsTraceCommandsTests/SiteTests.swift,
// with and without -DASYNC, in debug and optimized.
import ObsTrace
import Observation

@Observable final class Model: @unchecked Sendable {
  var value = 0
}

@inline(never) func trackInFunction(_ model: Model) {
  withObservationTracking { _ = model.value } onChange: {}  // site: function
}

let model = Model()
try Recorder.start(to: CommandLine.arguments[1], options: RecordingOptions(backtraces: .all))
withObservationTracking { _ = model.value } onChange: {}  // site: top level
trackInFunction(model)
#if ASYNC
  await Task.yield()
#endif
withObservationTracking { _ = model.value } onChange: {}  // site: top level later
model.value = 1  // site: write
Recorder.stop()
