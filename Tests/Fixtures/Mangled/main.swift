import Observation

// Models whose names the compiler's mangler does not spell word for word, built by
// Tests/ObsTraceCommandsTests/MangledNameTests.swift as module `Mangled` with -DOBSTRACE (traced) and without,
// -Onone and -O; both print the same. The accessor macro's buffer of each property is named by a mangling that
// substitutes a name said before (the class `Mangled` of module `Mangled`: `7MangledAAC…`; the macro's own name
// `ObservationTracked` reusing a word of the type's or the property's: `TrackedValue`, `ObservationSettings`,
// `isTracked`; a word repeated in one name: `StepAndStepAndStepAndStep`) or spells it in punycode (`Ünïcødé.café`,
// `Prefs.lautstärke`). Every `+= 0` and `unchanged(&…)` below is a write through `_modify` that leaves the value as
// it was, read first by a tracking: each must be found a no-op (tryout17's Q5: none was compared); each `toggle()`
// is one that changes it.
#if OBSTRACE
  import ObsTrace
#endif

@Observable final class Mangled {
  var darkMode = false
  var level = 0
}

@Observable final class TrackedValue { var value = 0 }
@Observable final class ObservationSettings { var level = 0 }
@Observable final class Flags { var isTracked = false }
@Observable final class Ünïcødé { var café = 0 }
@Observable final class Prefs { var lautstärke = 0 }
@Observable final class StepAndStepAndStepAndStep { var stepAndStep = 0 }

nonisolated(unsafe) let mangled = Mangled()
nonisolated(unsafe) let tracked = TrackedValue()
nonisolated(unsafe) let settings = ObservationSettings()
nonisolated(unsafe) let flags = Flags()
nonisolated(unsafe) let unicode = Ünïcødé()
nonisolated(unsafe) let prefs = Prefs()
nonisolated(unsafe) let steps = StepAndStepAndStepAndStep()
nonisolated(unsafe) var fired = 0

func watch(_ read: @escaping () -> Void) {
  withObservationTracking(read) { fired += 1 }
}

/// A write through `_modify` that changes nothing.
func unchanged(_ value: inout Bool) {}

watch { _ = mangled.level }
mangled.level += 0
watch { _ = mangled.darkMode }
unchanged(&mangled.darkMode)
mangled.darkMode.toggle()
watch { _ = tracked.value }
tracked.value += 0
watch { _ = settings.level }
settings.level += 0
watch { _ = flags.isTracked }
unchanged(&flags.isTracked)
flags.isTracked.toggle()
watch { _ = unicode.café }
unicode.café += 0
watch { _ = prefs.lautstärke }
prefs.lautstärke += 0
watch { _ = steps.stepAndStep }
steps.stepAndStep += 0
print("fired \(fired)", mangled.darkMode, mangled.level, tracked.value, settings.level, flags.isTracked)
print(unicode.café, prefs.lautstärke, steps.stepAndStep)
