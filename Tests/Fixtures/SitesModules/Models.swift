// The models of Tests/Fixtures/SitesModules (see main.swift), a module of their own (`ModuleModels`) as a package's
// model target is.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

public protocol Model: AnyObject, Observable {
  var title: String { get set }
}

@Observable public final class Product: Model {
  public var title = ""
  public init() {}
}

@Observable public final class Promotion {
  public var percent = 0
  public init() {}
}

@Observable public final class Inventory: @unchecked Sendable {
  public var reserved: Set<Int> = []
  public var counts: [Int: Int] = [:]
  public var log: [String] = []
  public init() {}
}
