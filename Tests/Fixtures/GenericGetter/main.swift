// A program whose generic models (Models.swift) get key path getters with no symbol in an optimized build: each only
// calls its property's getter. Built by Tests/ObsTraceCommandsTests/MergedGetterTests.swift with -DOBSTRACE (traced)
// and without, -Onone and -O; all print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

nonisolated(unsafe) let box = Box(1)
nonisolated(unsafe) let pair = Pair(2)
nonisolated(unsafe) let counter = Counter()

withObservationTracking {
  print(readAll(box, pair, counter))
} onChange: {
  print("fired")
}
leaveAll(box, pair, counter)
