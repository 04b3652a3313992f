import CObsTraceRing
import ObsTraceFormat
@_spi(SwiftUI) import Observation

/// Where a scope's label comes from: its call site (resolved to `Module/File.swift:line` at stop), or a name.
public enum ScopeLabel: Sendable {
  /// The call site of the traced function the user called, as the address it returns to
  /// (`CallSite.returnAddressOfCaller()`). One call site is one label, whatever path led to it; 0 (unknown): the
  /// first frame of user code on the stack.
  case callSite(UInt)
  /// The call site of the traced function the user called, from inside the user's function (`CallSite.here()`,
  /// called by a `@_transparent` shadow), with the stack from it when call stacks are on.
  case callSiteFrame(CallSite.Frame)
  case name(String)
  /// A label interned earlier (an `Observations` sequence labels every value's run with its init's call site).
  case interned(UInt32)

  /// Interns the label now: a name, or the call site.
  static func intern(_ name: String?, callSite: UInt) -> UInt32 {
    if let name { return Interner.shared.labelID(name) }
    return Interner.shared.callSiteLabelID(returnAddress: callSite)
  }
}

/// The call sites of ObsTrace's public entry points.
public enum CallSite {
  /// The address the function that calls this one returns to: its caller's call site. 0 when not recording or
  /// when the frame-pointer chain cannot be followed. Call it directly from the body of a function that is never
  /// inlined, so that the frames between are fixed: this function, then its caller.
  @inline(never)
  public static func returnAddressOfCaller() -> UInt {
    guard obstrace_is_enabled() else { return 0 }
    // Levels up from the C function: 0 returns into this function, 1 into its caller, 2 into the caller's caller.
    // Through a local's address: returning the C call's result directly is a tail call in an optimized build, which
    // drops this function's frame and makes every call site its caller's caller (all scopes of a function, one
    // label).
    var address: UInt = 0
    obstrace_return_address_into(2, &address)
    return address
  }

  /// `returnAddressOfCaller()` whether recording or not, without a ring: for an `Observations` sequence, which may be
  /// made before the recording starts and run during it (its label is its initializer's call site). A few loads up
  /// the frame-pointer chain through ObsTrace's own two frames; nothing allocated, no thread-local touched.
  @inline(never)
  public static func returnAddressOfCallerWithoutRing() -> UInt {
    var address: UInt = 0
    obstrace_near_return_address_into(2, &address)
    return address
  }

  /// A call site and, with call stacks on, the stack from it.
  public struct Frame: Sendable {
    /// The interned stack from the call site on, its first frame the call site (0: none captured).
    public var stack: UInt32
    /// The call site: the address a call in the user's code returns to.
    public var returnAddress: UInt
  }

  /// Where this call returns to, in the function that calls it, and with call stacks on the stack from there on
  /// (the caller's frames, not this one's); zeros when not recording or when the chain cannot be followed. For
  /// ObsTrace's `@_transparent` shadows, inlined into the user's function at the user's line: their call of this
  /// function is that line's code and is never a tail call (the traced call follows it), so its return address is
  /// in the user's function even when the traced call itself is the function's last and becomes a jump that leaves
  /// the user's function no frame (the traced function's own return address was then in the user's caller).
  @inline(never)
  public static func here() -> Frame {
    guard obstrace_is_enabled() else { return Frame(stack: 0, returnAddress: 0) }
    // Level 1 from the C function: this function's own frame record, whose return address is the call site, still
    // running while the stack is walked from it.
    var record: UInt = 0
    obstrace_frame_record_into(1, &record)
    guard record != 0 else { return Frame(stack: 0, returnAddress: 0) }
    let returnAddress = UnsafePointer<UInt>(bitPattern: record)![1]
    let stack = obstrace_stack_level() >= 1 ? StackCapture.from(record: record) : 0
    return Frame(stack: stack, returnAddress: returnAddress)
  }
}

/// Records tracking scopes: their begin and end, the installation of their observers, when they fire (with
/// the write in progress on the firing thread) and when they are cancelled.
public enum TrackingScopes {
  /// Begins a scope on this thread; 0 (and nothing recorded) when not recording. A run of an `Observations`
  /// sequence also records which sequence it belongs to and the actor it ran on. Never inlined: its locals would
  /// stay in the frame of a scope's run, on the stack while the scope's code runs.
  @inline(never)
  static func begin(
    _ kind: ScopeKind, _ label: ScopeLabel, instance rule: InstanceRule, sequence: UInt32 = 0,
    isolation: (any Actor)? = nil
  ) -> (scope: UInt32, label: UInt32, instance: UInt32, tracking: UnsafeRawPointer?) {
    Recorder.startFromEnvironmentIfNeeded()
    // Inside the recorder throughout (`obstrace_enter_recorder`): a scope begun by a signal handler that interrupted
    // the recorder on this thread is counted and runs unrecorded, as a scope does when not recording (its end, fire
    // and cancel then record nothing either: they are the scope 0's).
    guard obstrace_is_enabled() && obstrace_enter_recorder() else { return (0, 0, 0, nil) }
    defer { obstrace_leave_recorder() }
    let labelID: UInt32
    var stack: UInt32 = 0
    switch label {
    case .name(let name):
      labelID = Interner.shared.labelID(name)
      if obstrace_stack_level() >= 1 { stack = StackCapture.current() }
    case .callSite(let returnAddress):
      // Interned by the call site's address: a scope from a known site costs no stack walk when stacks are off.
      labelID = Interner.shared.callSiteLabelID(returnAddress: returnAddress)
      if obstrace_stack_level() >= 1 { stack = StackCapture.current() }
    case .callSiteFrame(let frame):
      labelID = Interner.shared.callSiteLabelID(returnAddress: frame.returnAddress)
      if obstrace_stack_level() >= 1 {
        // Walked where the call site was taken: the stack from the call site on, without ObsTrace's own frames.
        stack = frame.stack != 0 ? frame.stack : StackCapture.current()
      }
    case .interned(let id):
      labelID = id
    }
    // A run of `withObservationTracking` that continues no fired instance is a new instance: its serial is taken
    // with the scope's, in one atomic add.
    let newInstance = rule.continuesAfterFire && ScopeInstances.noneWaiting
    let scope = newInstance ? obstrace_next_scope_serials(2) : obstrace_next_scope_serial()
    let (parent, tracking) = UntracedTracking.enclosingScope()
    let instance = newInstance ? scope &+ 1 : ScopeInstances.resolve(rule, label: labelID)
    if obstrace_stack_level() == 0 { stack = 0 }
    // The in-test recording this scope belongs to, if any, is told before the flusher can meet the scope.
    let tag = RecordingTaps.currentTagIfAny
    if tag != 0 { RecordingTaps.tagScope(scope, tag) }
    // object: the instance this run continues.
    obstrace_emit(EventKind.scopeBegin.rawValue, kind.rawValue, instance, labelID, scope, parent, stack)
    if kind == .observations {
      var isolationType: UInt32 = 0
      var flags: UInt8 = 0
      if let isolation {
        isolationType = Interner.shared.typeID(type(of: isolation))
        if isolation === MainActor.shared { flags = EventFlags.onMainActor }
      }
      obstrace_emit(EventKind.observationsRun.rawValue, flags, 0, sequence, scope, isolationType, 0)
    }
    obstrace_push_scope(scope, tracking)
    return (scope, labelID, instance, tracking)
  }

  /// Records that an `Observations` sequence ended, after `lastRun`.
  static func sequenceEnded(_ sequence: UInt32, lastRun: UInt32, _ ending: SequenceEnding) {
    guard sequence != 0, obstrace_is_enabled(), obstrace_enter_recorder() else { return }
    obstrace_emit(EventKind.observationsEnd.rawValue, ending.rawValue, 0, sequence, lastRun, 0, 0)
    obstrace_leave_recorder()
  }

  /// A serial for an `Observations` iterator (the sequence instance its runs belong to).
  static func nextSequenceSerial() -> UInt32 { obstrace_next_scope_serial() }

  /// Ends `scope` on this thread. Its flow began it inside the recorder and left it, so the thread is not inside it
  /// now (the pop is made there all the same when recording has stopped since).
  static func end(_ scope: UInt32) {
    guard scope != 0 else { return }
    obstrace_reenter_recorder()
    obstrace_pop_scope(scope)
    if obstrace_is_enabled() { obstrace_emit(EventKind.scopeEnd.rawValue, 0, 0, 0, scope, 0, 0) }
    obstrace_leave_recorder()
  }

  /// Records that `scope`'s observers were installed, in the flow that began it (see `end`).
  static func installed(_ scope: UInt32) {
    guard scope != 0, obstrace_is_enabled() else { return }
    obstrace_reenter_recorder()
    obstrace_emit_untimed(EventKind.trackingInstalled.rawValue, 0, 0, 0, scope, 0, 0)
    obstrace_leave_recorder()
  }

  /// Records that `scope` fired, caused by the willSet in progress on this thread (none: the object was freed
  /// or the change came from code ObsTrace does not see). A fire runs in the flow of the write that fired it, which
  /// may be a signal handler's that interrupted the recorder: then counted, not recorded. Returns whether it was
  /// recorded.
  @discardableResult
  static func fired(_ scope: UInt32) -> Bool {
    guard scope != 0, obstrace_is_enabled(), obstrace_enter_recorder() else { return false }
    obstrace_emit(
      EventKind.trackingFired.rawValue, 0, obstrace_writing_object(), obstrace_writing_key(), scope, 0, 0)
    obstrace_leave_recorder()
    return true
  }

  /// Records that `scope`'s observers are gone, and why (`EventFlags.cancelledByFire`, `cancelledBySequenceEnd`):
  /// counted, not recorded, when the thread is inside the recorder (a signal handler's write fired it, see `fired`).
  static func cancelled(_ scope: UInt32, reason: UInt8) {
    guard scope != 0, obstrace_is_enabled(), obstrace_enter_recorder() else { return }
    obstrace_emit(EventKind.trackingCancelled.rawValue, reason, 0, 0, scope, 0, 0)
    obstrace_leave_recorder()
  }
}

/// The traced forms of Observation's tracking functions, behind the drop-in module's shadows.
public enum TracedTracking {
  /// A new instance id, for a caller whose runs are one instance (a render harness).
  public static func newInstance() -> UInt32 { ScopeInstances.newInstance() }

  /// Whether tracking is recorded now (starting the recording `OBSTRACE_OUTPUT` asks for, the first time). The drop-in's
  /// shadows check it in the caller's own code (they are `@_transparent`) and call Observation's function directly
  /// when it is false: a level of tracking that is not recorded has no frame of ObsTrace's on the stack, so nested
  /// tracking takes the stack Observation's own takes (tryout14's H10: a traced level took twice that, recording or
  /// not, and a recursive render that fitted a small stack untraced overflowed it traced). A recording that starts
  /// while such a scope runs sees it as tracking ObsTrace does not own (UntracedTracking), as before.
  @inlinable
  public static var isRecording: Bool {
    obstrace_is_enabled() || startsRecording()
  }

  /// `isRecording` when the flag is off: starts the environment's recording the first time.
  @usableFromInline @inline(never)
  static func startsRecording() -> Bool {
    Recorder.startFromEnvironmentIfNeeded()
    return obstrace_is_enabled()
  }

  /// Observation's own `withObservationTracking(_:onChange:)`, inlined into the caller: for the drop-in module, in
  /// which `Observation` names its own enum, when not recording.
  /// `onChange` is the caller's autoclosure, passed as it is (wrapped again, it would be one more closure context
  /// in the caller's frame, unoptimized).
  @_transparent
  public static func untraced<T>(_ apply: () -> T, _ onChange: () -> @Sendable () -> Void) -> T {
    Observation.withObservationTracking(apply, onChange: onChange())
  }

  /// `withObservationTracking(_:onChange:)`, recorded as a scope of kind `tracking`: the real function runs
  /// unchanged; ObsTrace only wraps `apply` (to mark the scope) and the change handler (to see it fire).
  ///
  /// Nested in other tracking, this function's frame stays on the stack while `apply` runs, with Observation's and
  /// the wrapping closure's: it is the only frame of ObsTrace's there but that closure, and does as little as it
  /// can itself (the scope is begun in a function of its own, and a scope outside any tracking, the outermost, whose
  /// frames are not repeated per level, runs in another).
  public static func withObservationTracking<T>(
    _ apply: () -> T, onChange: @autoclosure () -> @Sendable () -> Void, label: ScopeLabel,
    instance: InstanceRule = .afterFire
  ) -> T {
    // Not recording: Observation's function from this frame, which holds nothing else.
    guard isRecording else { return Observation.withObservationTracking(apply, onChange: onChange()) }
    return trackRecorded(apply, onChange, label: label, instance: instance)
  }

  /// `withObservationTracking(_:onChange:label:instance:)` recording.
  @inline(never)
  static func trackRecorded<T>(
    _ apply: () -> T, _ onChange: () -> @Sendable () -> Void, label: ScopeLabel, instance: InstanceRule
  ) -> T {
    let begun = beginTracking(.tracking, label, instance: instance)
    guard begun.scope != 0 && !begun.ownsTracking else { return trackAtTop(begun, apply, onChange) }
    let scope = begun.scope
    return Observation.withObservationTracking(
      {
        // Observation's tracking pointer for this scope: reads that see it are this scope's own.
        obstrace_note_own_tracking()
        defer { TrackingScopes.end(scope) }
        return apply()
      },
      // Evaluated by the real function only when the scope read something, as the real `onChange` is.
      onChange: tracedChangeHandler(scope, onChange(), firing: begun.firing))
  }

  /// The traced `withObservationTracking` with the scope's kind, and for an `Observations` value its sequence
  /// and the actor it runs on. Returns the value and the scope (0 when not recording).
  static func track<T>(
    _ kind: ScopeKind, _ label: ScopeLabel, instance rule: InstanceRule, sequence: UInt32 = 0,
    isolation: (any Actor)? = nil, _ apply: () -> T, onChange: @autoclosure () -> @Sendable () -> Void
  ) -> (value: T, scope: UInt32) {
    let begun = beginTracking(kind, label, instance: rule, sequence: sequence, isolation: isolation)
    guard begun.scope != 0 && !begun.ownsTracking else { return (trackAtTop(begun, apply, onChange), begun.scope) }
    return (trackWrapped(begun.scope, firing: begun.firing, apply, onChange: onChange()), begun.scope)
  }

  /// A tracking scope begun: what its run needs.
  struct BegunTracking {
    /// 0 when not recording.
    var scope: UInt32
    /// For a scope whose instance a later re-track continues (`InstanceRule.afterFire`).
    var firing: ScopeInstances.Firing?
    /// Whether ObsTrace runs the scope's tracking itself (`trackOutsideTracking`: outside any tracking, with
    /// Observation's tracking setter found). A recorded scope that does not runs through Observation's function,
    /// its `apply` wrapped (`trackWrapped`): nested in tracking in progress, or without the setter.
    var ownsTracking: Bool
  }

  /// Begins a tracking scope (`TrackingScopes.begin`) and works out how it runs: a function of its own, so that
  /// its locals are not in the frame that stays on the stack while the scope's `apply` runs.
  @inline(never)
  static func beginTracking(
    _ kind: ScopeKind, _ label: ScopeLabel, instance rule: InstanceRule, sequence: UInt32 = 0,
    isolation: (any Actor)? = nil
  ) -> BegunTracking {
    let (scope, labelID, instance, tracking) = TrackingScopes.begin(
      kind, label, instance: rule, sequence: sequence, isolation: isolation)
    guard scope != 0 else { return BegunTracking(scope: 0, firing: nil, ownsTracking: false) }
    let firing =
      rule.continuesAfterFire
      ? ScopeInstances.Firing(label: labelID, instance: instance, context: obstrace_run_context()) : nil
    return BegunTracking(
      scope: scope, firing: firing, ownsTracking: tracking == nil && obstrace_can_own_tracking())
  }

  /// A scope not recorded (Observation's function, untouched) or whose tracking ObsTrace runs itself
  /// (`trackOutsideTracking`): not nested in other tracking, so its frames are not repeated per level.
  @inline(never)
  static func trackAtTop<T>(
    _ begun: BegunTracking, _ apply: () -> T, _ onChange: () -> @Sendable () -> Void
  ) -> T {
    guard begun.ownsTracking else {
      return Observation.withObservationTracking(apply, onChange: onChange())
    }
    return trackOutsideTracking(begun.scope, firing: begun.firing, apply, onChange: onChange())
  }

  /// A recorded scope run through Observation's function: `apply` wrapped to mark the scope, the change handler to
  /// see it fire (as `withObservationTracking(_:onChange:label:instance:)` does it, in its own frame).
  @inline(__always)
  static func trackWrapped<T>(
    _ scope: UInt32, firing: ScopeInstances.Firing?, _ apply: () -> T,
    onChange: @autoclosure () -> @Sendable () -> Void
  ) -> T {
    Observation.withObservationTracking(
      {
        // Observation's tracking pointer for this scope: reads that see it are this scope's own.
        obstrace_note_own_tracking()
        defer { TrackingScopes.end(scope) }
        return apply()
      },
      // Evaluated by the real function only when the scope read something, as the real `onChange` is.
      onChange: tracedChangeHandler(scope, onChange(), firing: firing))
  }

  /// `track` for a scope begun outside any tracking (the common case): what Observation's `withObservationTracking`
  /// does, step for step, with the change handler installed through `ObservationTracking._installTracking(_:willSet:)`
  /// (the SPI that Observation's own `_installTracking(_:onChange:)` calls). Observation's function wraps the
  /// handler in a closure that cancels the tracking after it; wrapped by ObsTrace to see it fire, it would be two
  /// closures, two allocations per scope. Here the one closure that records the fire also cancels: a scope costs the
  /// allocations an untraced one does.
  ///
  /// As Observation's function: `apply` runs with an empty access list as the thread's tracking (none was in
  /// progress, so there is nothing to merge into afterwards); `onChange` is evaluated after it, only when it read
  /// something; the handler runs once, on the first willSet, then the tracking is cancelled.
  @inline(__always)
  static func trackOutsideTracking<T>(
    _ scope: UInt32, firing: ScopeInstances.Firing?, _ apply: () -> T,
    onChange: @autoclosure () -> @Sendable () -> Void
  ) -> T {
    // The access list: an `ObservationTracking._AccessList?`, nil, kept as the one word it is (checked when the
    // setter is enabled, `AccessListWord.isOneWord`): Observation's type is resilient, and handled as itself it
    // costs a dozen value-witness calls a scope.
    var list: UInt = 0
    let value = withUnsafeMutablePointer(to: &list) { list in
      obstrace_begin_own_tracking(list)
      defer {
        TrackingScopes.end(scope)
        obstrace_end_own_tracking()
      }
      return apply()
    }
    if list != 0 {
      let observer = firingHandler(scope, onChange(), firing: firing)
      let tracking = withUnsafeMutablePointer(to: &list) { ObservationTracking(AccessListWord.take($0)) }
      ObservationTracking._installTracking(tracking, willSet: observer, didSet: nil)
    }
    return value
  }

  /// The willSet observer of a scope from `trackOutsideTracking`, recording its installation: Observation's own (the
  /// handler, then the tracking's cancel), recording the fire and the cancel as `tracedChangeHandler` does.
  static func firingHandler(
    _ scope: UInt32, _ handler: __owned @escaping @Sendable () -> Void, firing: ScopeInstances.Firing?
  ) -> @Sendable (ObservationTracking) -> Void {
    TrackingScopes.installed(scope)
    return { tracking in
      runFired(scope, handler, firing: firing)
      tracking.cancel()
    }
  }

  /// A named scope around code that runs under someone else's tracking (a view body that SwiftUI tracks, a
  /// render harness): its reads are attributed to `name`.
  public static func withScope<T>(named name: String, kind: ScopeKind = .named, _ body: () throws -> T) rethrows -> T {
    let scope = TrackingScopes.begin(kind, .name(name), instance: .perLabel).scope
    defer { TrackingScopes.end(scope) }
    return try body()
  }

  /// The change handler, recording the fire and the cancel that follows it. `firing`: for a scope whose instance
  /// a later re-track continues, the instance is offered to it, and marked as firing while the handler runs.
  static func tracedChangeHandler(
    _ scope: UInt32, _ handler: @escaping @Sendable () -> Void, firing: ScopeInstances.Firing? = nil
  ) -> @Sendable () -> Void {
    TrackingScopes.installed(scope)
    return { runFired(scope, handler, firing: firing) }
  }

  /// A scope's fire, as both change handlers run it: the fire recorded, the handler run (with the continued
  /// instance offered and marked as firing, when there is one), the cancel that follows recorded.
  @inline(__always)
  static func runFired(_ scope: UInt32, _ handler: @Sendable () -> Void, firing: ScopeInstances.Firing?) {
    let recorded = TrackingScopes.fired(scope)
    if let firing {
      // The instance's bookkeeping (a lock) only for a recorded fire: inside the recorder, as the fire was.
      if recorded {
        obstrace_reenter_recorder()
        ScopeInstances.fired(label: firing.label, instance: firing.instance, context: firing.context)
        obstrace_leave_recorder()
      }
      ScopeInstances.$firing.withValue(firing) { handler() }
    } else {
      handler()
    }
    TrackingScopes.cancelled(scope, reason: EventFlags.cancelledByFire)
  }
}

extension InstanceRule {
  var continuesAfterFire: Bool {
    if case .afterFire = self { return true }
    return false
  }
}

/// Observation's access list (`ObservationTracking._AccessList?`) as the word that holds it: a struct of one
/// dictionary, so one pointer, 0 when nil (the read path relies on the same: docs/analysis.md, "Untraced
/// tracking"). ObsTrace runs its own tracking only when this holds (`isOneWord`).
enum AccessListWord {
  typealias List = ObservationTracking._AccessList?

  /// Whether an access list is one word and nil is 0.
  static let isOneWord: Bool = {
    guard MemoryLayout<List>.size == MemoryLayout<UInt>.size else { return false }
    var none: List = nil
    return withUnsafeBytes(of: &none) { $0.load(as: UInt.self) } == 0
  }()

  /// The list in `word` (not 0), moved out: the word no longer owns it.
  static func take(_ word: UnsafeMutablePointer<UInt>) -> List {
    UnsafeMutableRawPointer(word).withMemoryRebound(to: List.self, capacity: 1) { $0.move() }
  }
}
