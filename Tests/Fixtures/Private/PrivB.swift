import Observation

#if OBSTRACE
  import ObsTrace
#endif

@Observable private final class Model {
  var count = 0
}

func privateB() {
  let model = Model()
  withObservationTracking {
    _ = model.count
  } onChange: {
    print("B fired")
  }
  for _ in 0..<3 {
    model.count += 1  // site: B changed
  }
  model.count += 0  // site: B unchanged
  print("B", model.count)
}
