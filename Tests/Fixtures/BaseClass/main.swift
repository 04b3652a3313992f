// A program whose @Observable base class (Models.swift) is read first from this file, through its computed
// `summary`, which an optimized build compiled as `swift build -c release` does (`-wmo -num-threads 2`) inlines
// here: the key path the recorder first meets for `Animal.age` then has a getter thunk with no symbol (a fresh-clone
// try-out's N3: `Animal.<Int #8>`, and its `_modify` writes not compared). Built by
// Tests/ObsTraceCommandsTests/SiteTests.swift with -DOBSTRACE (traced) and without, -Onone and -O; all print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

nonisolated(unsafe) let rex = Dog(name: "Rex", breed: "collie")
nonisolated(unsafe) var fired = 0
func watch() {
  withObservationTracking {
    print("owner", rex.summary)
  } onChange: {
    fired += 1
  }
}
watch()
rex.age += 0  // site: unchanged
watch()
rex.age += 1  // site: changed
watch()
rex.breed += "!"
print("fired \(fired), \(rex.summary), \(rex.breed)")
