// The model of Tests/Fixtures/SitesInlined (see main.swift), a module of its own as `swift build` builds a model
// target.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable public final class Counter {
  public var value = 0
  public init() {}
}
