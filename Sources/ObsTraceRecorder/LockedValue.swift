#if canImport(Glibc)
  import Glibc
#endif

/// A value behind a pthread mutex, for state that holds non-Sendable values (key paths, boxed values) which only
/// ever cross threads under the lock. A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer sees
/// its happens-before edges (it does not see a futex's), so `swift test --sanitize=thread` stays meaningful.
package final class LockedValue<Value>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var value: Value

  package init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
