// Two types of one name in two modules (tryout18's R9): `ModA.Model` and `ModB.Model`, each with a `count`, read
// once in one tracking; ModA's written once, ModB's twice. Built by Tests/ObsTraceCommandsTests/ModuleNameTests.swift
// with -DOBSTRACE (traced) and without, each module on its own as `swift build` builds a package's targets; both
// print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Observation
import ModA
import ModB

let a = ModA.Model()
let b = ModB.Model()
let solo = Solo()
withObservationTracking {
  _ = a.count
  _ = b.count
  _ = solo.value
} onChange: {
  print("fired")
}
a.count += 1
b.count += 1
b.count += 1
solo.value = 1
print(a.count, b.count, solo.value)
