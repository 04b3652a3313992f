import Observation

// A program whose models are private: a private class in each of two files, both named `Model` (this file and
// PrivB.swift), and private, fileprivate and private(set) members of an internal class (Counter), built by
// Tests/ObsTraceCommandsTests/PrivateNameTests.swift with -DOBSTRACE (traced) and without, -Onone and -O; all print
// the same. Each write is marked `// site: …` for the test.
#if OBSTRACE
  import ObsTrace
#endif
@Observable private final class Model {
  var count = 0
}

func privateA() {
  let model = Model()
  withObservationTracking {
    _ = model.count
  } onChange: {
    print("A fired")
  }
  model.count += 0  // site: A unchanged
  model.count += 1  // site: A changed
  print("A", model.count)
}

@Observable final class Counter {
  private var secret = 0
  fileprivate var semi = 0
  private(set) var visible = 0

  func bump() {
    secret += 0  // site: secret unchanged
    semi += 0  // site: semi unchanged
    visible += 0  // site: visible unchanged
  }

  var total: Int { secret + semi + visible }
}

func privateMembers() {
  let counter = Counter()
  withObservationTracking {
    _ = counter.total
  } onChange: {
    print("total fired")
  }
  counter.bump()
  print("total", counter.total)
}

privateA()
privateB()
privateMembers()
