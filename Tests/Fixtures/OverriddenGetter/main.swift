// A program whose models (Models.swift, Stretch.swift: a module of their own) have a property a subclass
// overrides: its key path getter dispatches through the class's table. Built by
// Tests/ObsTraceCommandsTests/MergedGetterTests.swift with -DOBSTRACE (traced) and without, -Onone and -O; all print
// the same.
import OverriddenModels
#if OBSTRACE
  import ObsTrace
#endif
import Observation

let square = LoudSquare()
withObservationTracking { print("area \(square.area)") } onChange: { print("fired") }
square.width = 3
let rect = Rect()
stretch(rect, by: 0)
stretch(square, by: 1)
print(square.area, rect.area, LoudSquare.events)
