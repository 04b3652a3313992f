import CObsTraceRing
import ObsTraceSymbols
import Synchronization

/// Which instance a scope run continues, decided where the run begins and recorded in its `scopeBegin` (the
/// rules are in docs/analysis.md, "Instances"):
///
/// - an `Observations` value continues its iterator; a `RenderHarness` render continues its harness;
/// - a named scope (`withTrackingScope(named:)`) is one instance per name;
/// - `withObservationTracking` called directly continues an instance of the same label that fired and has not
///   been re-tracked yet: the one whose change handler is running on this thread (a re-track from inside
///   `onChange`), else, of those whose last run was in this run's context, the one that fired first; with none, it
///   is a new instance. The context is the actor the code runs on (the main actor for any code on the main thread),
///   else the task (by its id, never another task's), else the thread (`obstrace_run_context`): a main-actor loop
///   that awaits between re-tracks resumes on other threads, and is one context. An instance last run in another
///   context is never taken outside its handler: several threads re-tracking one label each continue their own,
///   whatever the timing. The same label is the same call in the source: labels of calls at one place (an
///   optimized build's inlined copies) continue each other's instances (`continuingSamePlace`).
public enum InstanceRule: Sendable {
  /// This instance, whatever the label (an iterator's serial, a harness's serial).
  case continuing(UInt32)
  /// One instance per label.
  case perLabel
  /// The instance of this label that fired and waits to be re-tracked, else a new one.
  case afterFire
}

enum ScopeInstances {
  /// The instance whose change handler runs on this thread, set while it runs; `context`: the context its run was in
  /// (`obstrace_run_context`, 0 when none is known).
  struct Firing: Sendable {
    var label: UInt32
    var instance: UInt32
    var context: UInt64
  }

  /// An instance that fired and waits to be re-tracked, with the context its last run was in and when it fired
  /// (among all labels' fires).
  struct Waiting {
    var instance: UInt32
    var context: UInt64
    var order: UInt64
  }

  @TaskLocal static var firing: Firing?

  struct State {
    /// Per label: instances that fired and were not re-tracked yet, in firing order.
    var waiting: [UInt32: [Waiting]] = [:]
    /// Per label: the instance of a named scope.
    var named: [UInt32: UInt32] = [:]
    /// How many instances fired so far: the next fire's `Waiting.order`.
    var fires: UInt64 = 0
    /// Per call-site label: the source place of its call (nil: none known), resolved the first time a re-track
    /// needs it (`continuingSamePlace`).
    var places: [UInt32: SourcePlace?] = [:]

    /// Takes the waiting instance a run of `label` continues: the handler's own (a re-track from `onChange`), else
    /// the first fired of this context's; nil when there is none.
    mutating func take(_ label: UInt32, firing: Firing?, context: UInt64) -> UInt32? {
      guard let queue = waiting[label], !queue.isEmpty else { return nil }
      let handlers = firing.flatMap { firing in
        firing.label == label ? queue.firstIndex { $0.instance == firing.instance } : nil
      }
      guard let index = handlers ?? (context == 0 ? nil : queue.firstIndex { $0.context == context }) else {
        return nil
      }
      return remove(label, at: index)
    }

    /// Removes the waiting instance at `index` of `label`'s queue and returns it.
    mutating func remove(_ label: UInt32, at index: Int) -> UInt32 {
      var queue = waiting[label]!
      let instance = queue.remove(at: index).instance
      waiting[label] = queue.isEmpty ? nil : queue
      ScopeInstances.waitingCount.subtract(1, ordering: .releasing)
      return instance
    }

    /// The labels other than `label` with an instance a run in `context` (or in `firing`'s handler) could continue,
    /// leaving out those whose places are known to differ from `label`'s (none when `label` is known to have none).
    func otherLabels(than label: UInt32, firing: Firing?, context: UInt64) -> [UInt32] {
      let place = places[label]
      if case .some(.none) = place { return [] }
      func mayMatch(_ other: UInt32) -> Bool {
        guard let place, let otherPlace = places[other] else { return true }
        return otherPlace == place
      }
      var labels: [UInt32] = []
      if let firing, firing.label != label, mayMatch(firing.label),
        waiting[firing.label]?.contains(where: { $0.instance == firing.instance }) == true
      {
        labels.append(firing.label)
      }
      guard context != 0 else { return labels }
      for (other, queue) in waiting where other != label && !labels.contains(other) && mayMatch(other) {
        if queue.contains(where: { $0.context == context }) { labels.append(other) }
      }
      return labels
    }
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
  fileprivate static let waitingCount = Atomic<Int>(0)

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
      let context = obstrace_run_context()
      let (found, others): (UInt32?, [UInt32]) = state.withLock { state in
        // The handler's own instance (a re-track from `onChange`), else the first fired of this context's.
        if let instance = state.take(label, firing: firing, context: context) { return (instance, []) }
        return (nil, state.otherLabels(than: label, firing: firing, context: context))
      }
      if let found { return found }
      if !others.isEmpty, let instance = continuingSamePlace(label, others: others, firing: firing, context: context) {
        return instance
      }
      return newInstance()
    }
  }

  /// The waiting instance of another label whose call is at the same place in the source as `label`'s, taken as
  /// `take` takes one of the label's own (the handler's, else the first fired of this context's), or nil.
  ///
  /// An optimized build copies a function into each of its callers: a `withObservationTracking` inside it is then a
  /// call instruction per caller, a return address and a label each, and a re-track from another caller found no
  /// instance of its label (every run a new instance in a release build, one instance in a debug build). The
  /// places are the calls' innermost frames (file, line and column, from the line table through the recorder's
  /// libdw session), resolved only here, a re-track that would otherwise begin a new instance while other labels
  /// wait in its context, once per label. A label without a place (no debug information, a named scope) is never
  /// matched: its runs are new instances as before.
  static func continuingSamePlace(_ label: UInt32, others: [UInt32], firing: Firing?, context: UInt64) -> UInt32? {
    guard let place = place(ofLabel: label) else { return nil }
    let matching = others.filter { self.place(ofLabel: $0) == place }
    guard !matching.isEmpty else { return nil }
    return state.withLock { state in
      if let firing, matching.contains(firing.label),
        let index = state.waiting[firing.label]?.firstIndex(where: { $0.instance == firing.instance })
      {
        return state.remove(firing.label, at: index)
      }
      guard context != 0 else { return nil }
      var first: (label: UInt32, index: Int, order: UInt64)?
      for other in matching {
        guard let queue = state.waiting[other], let index = queue.firstIndex(where: { $0.context == context }) else {
          continue
        }
        if first == nil || queue[index].order < first!.order { first = (other, index, queue[index].order) }
      }
      return first.map { state.remove($0.label, at: $0.index) }
    }
  }

  /// The source place of call-site label `label`'s call, resolved once (outside the lock: it may open the
  /// process's symbol tables); nil for a label that is no call site or whose call has no line.
  static func place(ofLabel label: UInt32) -> SourcePlace? {
    let known: SourcePlace?? = state.withLock { $0.places[label] }
    if let known { return known }
    let place = Interner.shared.callSiteAddress(ofLabel: label).flatMap { address in
      RoomyStack.run { SymbolCache.innermostPlace(ofReturnAddress: UInt64(address)) }
    }
    state.withLock { $0.places[label] = .some(place) }
    return place
  }

  /// Records that `instance` of `label`, last run in `context`, fired: a later re-track of the label (from its
  /// handler, or in that context) may continue it.
  static func fired(label: UInt32, instance: UInt32, context: UInt64) {
    state.withLock { state in
      var queue = state.waiting[label] ?? []
      if queue.count >= maximumWaiting {
        queue.removeFirst()
      } else {
        waitingCount.add(1, ordering: .releasing)
      }
      queue.append(Waiting(instance: instance, context: context, order: state.fires))
      state.fires += 1
      state.waiting[label] = queue
    }
  }
}
