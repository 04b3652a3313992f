import Observation

// A program whose hand-written accessors keep their values elsewhere than `_name` (Models.swift), built by
// Tests/ObsTraceCommandsTests/HandWrittenAccessorTests.swift with -DOBSTRACE (traced) and without, -Onone and -O;
// all print the same. Each write is marked `// site: …` for the test.
#if OBSTRACE
  import ObsTrace
#endif

nonisolated(unsafe) let ledger = Ledger()
nonisolated(unsafe) let thermometer = Thermometer()

withObservationTracking {
  _ = ledger.percent
} onChange: {
  print("percent fired")
}
ledger.percent += 5  // site: percent changed
print("percent", ledger.percent, "cache", ledger._percent)
ledger.percent += 0  // site: percent unchanged
withObservationTracking {
  _ = ledger.cents
} onChange: {
  print("cents fired")
}
ledger.cents += 0  // site: cents unchanged
ledger.cents += 7  // site: cents changed
print("cents", ledger.cents)
withObservationTracking {
  _ = thermometer.degrees
} onChange: {
  print("degrees fired")
}
thermometer.degrees = 21  // site: degrees changed
withObservationTracking {
  _ = thermometer.reading
} onChange: {
  print("reading fired")
}
thermometer.reading += 0  // site: reading unchanged
print("degrees", thermometer.degrees, "reading", thermometer.reading, "cache", thermometer._degrees)
