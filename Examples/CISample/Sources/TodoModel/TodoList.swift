import Observation

#if ObsTrace
  import ObsTrace  // test builds only: every @Observable class in this file is traced
#endif

public struct Todo: Equatable, Sendable {
  public var title: String
  public var done: Bool

  public init(title: String, done: Bool = false) {
    self.title = title
    self.done = done
  }
}

@Observable
public final class TodoList {
  public var todos: [Todo] = []
  public var filter = "all"

  public init() {}

  public func add(_ title: String) { todos.append(Todo(title: title)) }

  /// Marks every todo done: writes each one, even those already done (an in-place write that changes nothing
  /// still notifies — which the ObsTrace check of this package watches).
  public func completeAll() {
    for index in todos.indices { todos[index].done = true }
  }

  public var remaining: Int { todos.filter { !$0.done }.count }
}
