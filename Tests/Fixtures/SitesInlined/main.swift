// Writes through key paths next to an inlined function that tracks (a fresh-clone try-out's H13): an optimized build
// gives the key path accessors' inlined code the scope of the inlined `watch` beside them, so DWARF's chain of
// inlined functions named `watch(_:_:)` for the top-level write, and for `bump`'s, with a caller frame at `watch`'s
// call. Built by Tests/ObsTraceCommandsTests/SiteTests.swift with -DOBSTRACE (traced) and without, -Onone and -O,
// the model in a module of its own; all print the same. Each `// site:` comment names the write its line makes.
#if OBSTRACE
  import ObsTrace
#endif
import Observation
import InlinedModels

nonisolated(unsafe) let a = Counter()
nonisolated(unsafe) var fired: [String] = []
func watch(_ name: String, _ c: Counter) {
  withObservationTracking { _ = c.value } onChange: { fired.append(name) }
}
watch("a", a)
a[keyPath: \Counter.value] = 5  // site: key path set
watch("b", a)
a[keyPath: \Counter.value] += 1  // site: key path modify
func bump<T: AnyObject>(_ o: T, _ kp: ReferenceWritableKeyPath<T, Int>) { o[keyPath: kp] += 1 }  // site: bump
watch("c", a)
bump(a, \.value)  // site: bump call
print(a.value, fired)
