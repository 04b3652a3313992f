// Module `ModB` of Tests/Fixtures/SameNameModules (see main.swift): a `Model`, as module `ModA` has.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable public final class Model {
  public var count = 0
  public init() {}
}
