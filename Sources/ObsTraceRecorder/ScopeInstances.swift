import CObsTraceRing
import Synchronization

/// Which instance a scope run continues, decided where the run begins and recorded in its `scopeBegin` (the
/// rules are in docs/analysis.md, "Instances"):
///
/// - an `Observations` value continues its iterator; a `RenderHarness` render continues its harness;
/// - a named scope (`withTrackingScope(named:)`) is one instance per name;
/// - `withObservationTracking` called directly continues an instance of the same label that fired and has not
///   been re-tracked yet: the one whose change handler is running on this thread (a re-track from inside
///   `onChange`), else, of those whose last run was on this thread, the one that fired first; with none, it is a
///   new instance. An instance last run on another thread is never taken outside its handler: several threads
///   re-tracking one label each continue their own, whatever the timing.
public enum InstanceRule: Sendable {
  /// This instance, whatever the label (an iterator's serial, a harness's serial).
  case continuing(UInt32)
  /// One instance per label.
  case perLabel
  /// The instance of this label that fired and waits to be re-tracked, else a new one.
  case afterFire
}

enum ScopeInstances {
  /// The instance whose change handler runs on this thread, set while it runs; `thread`: the thread its run was on
  /// (the trace's id, 0 when that thread had no ring).
  struct Firing: Sendable {
    var label: UInt32
    var instance: UInt32
    var thread: UInt32
  }

  /// An instance that fired and waits to be re-tracked, with the thread its last run was on.
  struct Waiting {
    var instance: UInt32
    var thread: UInt32
  }

  @TaskLocal static var firing: Firing?

  struct State {
    /// Per label: instances that fired and were not re-tracked yet, in firing order.
    var waiting: [UInt32: [Waiting]] = [:]
    /// Per label: the instance of a named scope.
    var named: [UInt32: UInt32] = [:]
  }

  /// A label's queue of fired instances is capped: an observer that is never re-tracked is not kept forever.
  static let maximumWaiting = 1024
  /// A pthread mutex (`LockedValue`), not `Synchronization.Mutex`: ThreadSanitizer does not see a futex's
  /// happens-before edges, and reported every access under the lock from two threads as a race.
  private static let state = LockedValue(State())
  /// How many instances wait in `state.waiting`, all labels together; changed under the lock. A re-track reads it
  /// first: with none waiting (a scope that never fired, the common case) it needs neither the lock nor the
  /// task-local `firing`. A fire on this thread is counted before its handler runs, so a re-track from the handler
  /// always sees it.
  private static let waitingCount = Atomic<Int>(0)

  /// Whether no instance waits to be re-tracked: a run under `afterFire` is then a new instance.
  static var noneWaiting: Bool {
    // Acquiring: pairs with the releasing updates under the lock (a fire on another thread).
    waitingCount.load(ordering: .acquiring) == 0
  }

  /// A new instance id (from the scope serials, so it never equals a scope or an iterator).
  static func newInstance() -> UInt32 { obstrace_next_scope_serial() }

  /// The instance a run of `label` continues under `rule`.
  static func resolve(_ rule: InstanceRule, label: UInt32) -> UInt32 {
    switch rule {
    case .continuing(let instance):
      return instance
    case .perLabel:
      return state.withLock { state in
        if let instance = state.named[label] { return instance }
        let instance = newInstance()
        state.named[label] = instance
        return instance
      }
    case .afterFire:
      // Acquiring: pairs with the releasing updates under the lock (a fire on another thread).
      if waitingCount.load(ordering: .acquiring) == 0 { return newInstance() }
      let firing = firing
      let thread = obstrace_current_thread_id()
      let found: UInt32? = state.withLock { state in
        guard var queue = state.waiting[label], !queue.isEmpty else { return nil }
        // The handler's own instance (a re-track from `onChange`), else the first fired of this thread's.
        let handlers = firing.flatMap { firing in
          firing.label == label ? queue.firstIndex { $0.instance == firing.instance } : nil
        }
        guard
          let index = handlers ?? (thread == 0 ? nil : queue.firstIndex { $0.thread == thread })
        else { return nil }
        let instance = queue.remove(at: index).instance
        state.waiting[label] = queue.isEmpty ? nil : queue
        waitingCount.subtract(1, ordering: .releasing)
        return instance
      }
      return found ?? newInstance()
    }
  }

  /// Records that `instance` of `label`, last run on `thread`, fired: a later re-track of the label (from its
  /// handler, or on that thread) may continue it.
  static func fired(label: UInt32, instance: UInt32, thread: UInt32) {
    state.withLock { state in
      var queue = state.waiting[label] ?? []
      if queue.count >= maximumWaiting {
        queue.removeFirst()
      } else {
        waitingCount.add(1, ordering: .releasing)
      }
      queue.append(Waiting(instance: instance, thread: thread))
      state.waiting[label] = queue
    }
  }
}
