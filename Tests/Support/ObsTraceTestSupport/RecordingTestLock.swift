import Foundation

/// Tests that start and stop the process's one recording themselves hold this lock alone; in-test recordings
/// (which share a recording) hold it together. Swift Testing runs suites in parallel in one process.
public enum RecordingTestLock {
  struct State {
    var shared = 0
    var exclusive = false
  }

  static let state = Locked(State())

  /// Holds the lock alone for `body`. It waits by suspending, never by blocking its thread: a test that holds the
  /// shared side may need that thread (the main actor's, or one of the cooperative pool's two on two cores) to
  /// resume and release it. A blocking wait is not offered: two of them on the pool's two threads hung the run.
  public static func exclusive<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
  ) async rethrows -> T {
    while !state.withLock({ state in
      guard !state.exclusive && state.shared == 0 else { return false }
      state.exclusive = true
      return true
    }) {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    defer { state.withLock { $0.exclusive = false } }
    return try await body()
  }

  public static func shared<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T)
    async rethrows -> T
  {
    while !state.withLock({ state in
      guard !state.exclusive else { return false }
      state.shared += 1
      return true
    }) {
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    defer { state.withLock { $0.shared -= 1 } }
    return try await body()
  }
}

/// A value shared by test threads, behind an NSLock (not Synchronization.Mutex: ThreadSanitizer sees a pthread
/// mutex).
public final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  public init(_ value: Value) { self.value = value }

  public func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
