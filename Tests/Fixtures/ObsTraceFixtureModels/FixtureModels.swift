// Models declared in a module of their own, compiled in Swift 6 language mode, with only `import ObsTrace`
// added: the kinds of classes the drop-in must trace unchanged.
import ObsTrace
import Observation

/// A plain model.
@Observable
public final class Counter {
  public var count = 0
  public var label = "counter"
  public var items: [Int] = []

  public init() {}
}

/// A main-actor model, as most SwiftUI models are.
@MainActor
@Observable
public final class MainActorSettings {
  public var volume = 5
  public var muted = false

  public init() {}
}

/// A generic model.
@Observable
public final class Box<Value> {
  public var value: Value

  public init(_ value: Value) {
    self.value = value
  }
}

/// A model whose synthesized Codable conformance encodes every stored property, the registrar included.
@Observable
public final class Profile: Codable {
  public var name = ""
  public var age = 0

  public init() {}
}

/// Element of `Library.shelves`, for in-place writes through `_modify` (`library.shelves[0].count = …`).
public struct Shelf: Equatable, Sendable {
  public var name: String
  public var count: Int

  public init(name: String, count: Int) {
    self.name = name
    self.count = count
  }
}

@Observable
public final class Library {
  public var shelves: [Shelf] = [Shelf(name: "a", count: 1), Shelf(name: "b", count: 2)]
  /// Not Equatable: a write can never be shown unchanged.
  public var handler: @Sendable () -> Void = {}

  public init() {}
}

/// The issue-15 model: a list whose views live in other modules, with and without `import ObsTrace`.
@Observable
public final class TodoList {
  public var todos: [String] = []

  public init() {}

  public func add(_ title: String) { todos.append(title) }
}
