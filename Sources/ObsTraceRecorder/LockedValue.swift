import Synchronization

/// A value behind a `Mutex`, for state that holds non-Sendable values (key paths, boxed values) which only ever
/// cross threads under the lock.
final class LockedValue<Value>: @unchecked Sendable {
  private let mutex = Mutex(())
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try mutex.withLock { _ in try body(&value) }
  }
}
