// Module `ModA` of Tests/Fixtures/SameNameModules (see main.swift): a `Model` whose name module `ModB` declares
// too, and a `Solo` no other module does.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable public final class Model {
  public var count = 0
  public init() {}
}

@Observable public final class Solo {
  public var value = 0
  public init() {}
}
