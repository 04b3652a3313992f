// A view layer that tracks with Observation directly: this file does NOT import ObsTrace (issue 15). Its twin in
// ObsTraceFixtureTracedViews is the same file with the import; the tests compare what ObsTrace reports for both.
import ObsTraceFixtureModels
import Observation
import Synchronization

/// Renders a todo list's count under Observation's own tracking and marks itself dirty when the list changes.
/// The body runs on the thread that renders; the change handler (any thread) touches only `dirty`, under a lock.
public final class ListView: @unchecked Sendable {
  let list: TodoList
  private let dirty = Mutex(false)

  public init(_ list: TodoList) { self.list = list }

  /// Whether a change invalidated the view since it last rendered.
  public var isDirty: Bool { dirty.withLock { $0 } }

  /// Runs the body under tracking, as a view's body runs.
  @discardableResult
  public func render() -> Int {
    dirty.withLock { $0 = false }
    return withObservationTracking {
      list.todos.count
    } onChange: { [self] in
      self.dirty.withLock { $0 = true }
    }
  }
}

/// Observation's `withObservationTracking`, called from this file: for tests that nest other scopes inside it.
public func trackInViews<T>(_ apply: () -> T, onChange: @escaping @Sendable () -> Void) -> T {
  withObservationTracking(apply, onChange: onChange)
}
