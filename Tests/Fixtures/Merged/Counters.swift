// The models of Tests/Fixtures/Merged (see main.swift) whose first stored properties have one layout (an Int before
// the registrar), read and written only from this file: an optimized build compiled as `swift build -c release`
// does emits their key path getters in this file's code and the registrar's specializations in another's, and
// merges the getters into one function (`$s6Merged7CounterC5countSivpACTKTm`), each property's key path getter a
// thunk that calls it.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable final class Counter {
  var count = 0
  var note = ""
}

@Observable final class Meter {
  var reading = 0
}

@Observable final class Gauge {
  var level = 0
}

func readCounters(_ counter: Counter, _ meter: Meter, _ gauge: Gauge) -> String {
  "\(counter.count) \(counter.note) \(meter.reading) \(gauge.level)"
}

func leaveCounters(_ counter: Counter, _ meter: Meter, _ gauge: Gauge) {
  counter.count += 0  // site: counter unchanged
  meter.reading += 0  // site: meter unchanged
  gauge.level += 0  // site: gauge unchanged
}

func stepCounters(_ counter: Counter, _ meter: Meter, _ gauge: Gauge) {
  counter.count += 1
  meter.reading += 2
  gauge.level += 3
}
