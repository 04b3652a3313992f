// The models of Tests/Fixtures/SitesAsync, compiled as a module of their own (`AsyncModels`), as a package's model
// target is: their accessors are called, not inlined, from the program's async code.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable public final class Store: @unchecked Sendable {
  public var discount = 0
  public var total = 0
  public var items: [Int] = []
  public init() {}
}
