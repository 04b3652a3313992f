// The user's own computed properties and subscripts are the user's code: a write in a computed setter or a subscript
// setter is sited in that setter, and a withObservationTracking in a computed getter (a view's `body`) is labelled by
// its own line, not by a caller's. Built debug and optimized by Tests/ObsTraceCommandsTests/SiteTests.swift (not a
// target of the package); each `// site:` comment names the event the line makes.
import ObsTrace
import Observation

@Observable final class Temp {
  var celsius = 0.0
  var fahrenheit: Double {
    get { celsius * 9 / 5 + 32 }
    set { celsius = (newValue - 32) * 5 / 9 }  // site: computed setter
  }
  subscript(offset: Double) -> Double {
    get { celsius + offset }
    set { celsius = newValue - offset }  // site: subscript setter
  }
}

struct Screen {
  let temp: Temp
  var label: String {
    withObservationTracking {  // site: computed tracking
      "\(temp.celsius)"
    } onChange: {
      print("label fired")
    }
  }
}

let temp = Temp()
let screen = Screen(temp: temp)
try Recorder.start(to: CommandLine.arguments[1], options: RecordingOptions(backtraces: .all))
print(screen.label)
temp.fahrenheit = 212
print(screen.label)
temp[5] = 50
Recorder.stop()
