import CObsTraceRing
import ObsTraceFormat
import Synchronization

/// The part of a `TracingRegistrar` that has an identity: created with the object's registrar and freed with
/// it, so its serial names the object in the trace and its `deinit` records that the object was freed.
///
/// Its methods are the recording hot path, reduced to integer ids: one relaxed load of the enabled flag when
/// recording is off; when on, a per-thread cache lookup for the key path and one store into the thread's ring.
@usableFromInline
final class RegistrarExtent: Sendable {
  /// This registrar's own serial.
  @usableFromInline let serial: UInt32
  /// The object's serial and type id in the trace, packed (serial << 32 | type), 0 until its first recorded
  /// event: see `bind`. The serial is this registrar's own unless the object's class has several `@Observable`
  /// levels, each with its registrar; then all of them use one.
  private let binding = Atomic<UInt64>(0)
  /// Values read before a `_modify` of an Equatable member, keyed by key path id, to mark unchanged writes
  /// (`WriteComparison.equatable` only).
  private let snapshots = LockedValue<[UInt32: Any]>([:])
  /// The comparison of the in-test recording that created this object (`recordObservation(comparing:)`), or
  /// `noComparisonOverride` to follow the recording's options.
  private let comparisonOverride: UInt32
  static let noComparisonOverride = UInt32.max
  /// `EventFlags.modify`, for the registrar's inlinable code.
  @usableFromInline static let modifyFlag: UInt8 = EventFlags.modify
  /// A didSet's flags for a write not compared as the value from before it was not kept.
  @usableFromInline static let noValueKeptFlag: UInt8 = UncomparedReason.noValueKept.flags

  @usableFromInline
  init() {
    Recorder.startFromEnvironmentIfNeeded()
    serial = obstrace_next_object_serial()
    comparisonOverride =
      obstrace_is_enabled()
      ? RecordingTaps.currentComparison?.mode ?? Self.noComparisonOverride
      : Self.noComparisonOverride
    // Inside the recorder (`obstrace_enter_recorder`): a model made by a signal handler that interrupted the
    // recorder on this thread is counted, not recorded.
    if obstrace_is_enabled() && obstrace_enter_recorder() {
      defer { obstrace_leave_recorder() }
      // aux: the in-test recording this object belongs to, if any.
      let tag = RecordingTaps.currentTag
      // Told now, not when the flusher meets this event: another thread's ring may be drained first, and its
      // writes to this object must already find the recording they belong to.
      if tag != 0 { RecordingTaps.tagObject(serial, tag) }
      // With call stacks on (writes, the default, or all): where it was created, for a pile-up's site.
      let stack = obstrace_stack_level() >= 1 ? StackCapture.current() : 0
      obstrace_emit(EventKind.objectCreated.rawValue, 0, serial, 0, 0, tag, stack)
    }
  }

  deinit {
    if obstrace_is_enabled() && obstrace_enter_recorder() {
      // Each level's registrar says it was freed; the replay counts the object once (the others are aliases).
      let bound = binding.load(ordering: .relaxed)
      obstrace_emit(EventKind.objectFreed.rawValue, 0, serial, 0, 0, UInt32(truncatingIfNeeded: bound), 0)
      obstrace_leave_recorder()
    }
  }

  /// The object's serial and type for an event, binding them at the registrar's first recorded event.
  @inline(__always)
  private func identity(_ address: UnsafeRawPointer?, _ subject: Any.Type) -> (object: UInt32, type: UInt32) {
    var bound = binding.load(ordering: .relaxed)
    if bound == 0 { bound = bind(address, subject) }
    return (UInt32(truncatingIfNeeded: bound >> 32), UInt32(truncatingIfNeeded: bound))
  }

  /// Learns what object this registrar belongs to, once: its dynamic type (`Dog`, even from a registrar that
  /// `Animal` declares) and, when its class has `@Observable` at several levels, the registrars of the other
  /// levels, found in the object's own stored fields (`ObjectLevels`). All of them then record as one object,
  /// the serial of the first created; each other level's registrar records an `objectBound` event naming it.
  /// Nothing is keyed by address, so a reused address cannot merge two objects.
  @inline(never)
  private func bind(_ address: UnsafeRawPointer?, _ subject: Any.Type) -> UInt64 {
    ObjectLevels.lock.withLock { bindings in
      bindings &+= 1
      let bound = binding.load(ordering: .relaxed)
      if bound != 0 { return bound }  // another level's first event bound this one
      guard let address else {
        let own = UInt64(serial) << 32 | UInt64(Interner.shared.typeID(subject))
        binding.store(own, ordering: .relaxed)
        return own
      }
      let dynamicType: AnyObject.Type = type(of: Unmanaged<AnyObject>.fromOpaque(address).takeUnretainedValue())
      let type = UInt64(Interner.shared.typeID(dynamicType))
      let levels = ObjectLevels.registrars(of: address, dynamicType)
      guard levels.contains(where: { $0 === self }), let first = levels.map(\.serial).min() else {
        binding.store(UInt64(serial) << 32 | type, ordering: .relaxed)
        return UInt64(serial) << 32 | type
      }
      for level in levels {
        level.binding.store(UInt64(first) << 32 | type, ordering: .relaxed)
        if level.serial != first {
          obstrace_emit(EventKind.objectBound.rawValue, 0, level.serial, 0, 0, first, 0)
        }
      }
      return UInt64(first) << 32 | type
    }
  }

  /// Records an access; false when the access need not reach the real registrar: ObsTrace itself is reading (it
  /// must not), or the read was made outside any tracking (the real registrar's `access` would do nothing).
  ///
  /// A read's whole cost when recording: a key path this thread has met, a bound registrar and no stale read or
  /// new untraced tracking are recorded by one inlined C call (`obstrace_record_read`); anything else takes
  /// `recordAccessInFull`, which records the same event the same way. The C call reads Observation's tracking
  /// pointer for the read's scope; when it is NULL (no tracking on this thread), forwarding the access would only
  /// call Observation's `access` to read the same pointer again and return, so it is not forwarded.
  ///
  /// Called only while recording: `TracingRegistrar.access` has just loaded the recording flag. Inside the recorder
  /// (`obstrace_enter_recorder`) throughout: a read that finds its thread inside it already (a signal handler's, that
  /// interrupted the recorder) is counted, not recorded, and forwarded as untraced.
  @usableFromInline
  func recordAccess(_ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type, _ address: UnsafeRawPointer?)
    -> Bool
  {
    guard obstrace_enter_recorder() else { return true }
    defer { obstrace_leave_recorder() }
    let pointer = UnsafeRawPointer(Unmanaged.passUnretained(keyPath).toOpaque())
    switch obstrace_record_read(pointer, binding.load(ordering: .relaxed)) {
    case OBSTRACE_READ_RECORDED: return true
    case OBSTRACE_READ_SUPPRESSED, OBSTRACE_READ_RECORDED_UNTRACKED: return false
    default: return recordAccessInFull(keyPath, subject, member, address)
    }
  }

  /// `recordAccess` for a read the inlined path leaves: interns the key path, binds the registrar, captures a stack
  /// when one is due, begins an untraced scope.
  @inline(never)
  func recordAccessInFull(
    _ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type, _ address: UnsafeRawPointer?
  ) -> Bool {
    let key = Interner.keyPathID(keyPath, root: subject, member: member)
    let (object, type) = identity(address, subject)
    if obstrace_stack_level() >= 2 {
      if obstrace_access_is_suppressed() { return false }
      let stack = StackCapture.current()
      if obstrace_emit_access_with_stack(object, key, type, stack) == 3 {
        UntracedTracking.beginScope()
        _ = obstrace_emit_access_with_stack(object, key, type, stack)
      }
      return true
    }
    switch obstrace_emit_access(object, key, type) {
    case 1: return false
    case 2:
      // A read inside this property's own willSet window: it sees the old value (seed 004's stale read).
      obstrace_emit_access_with_stack(object, key, type, StackCapture.current())
      return true
    case 3:
      // The first read inside tracking ObsTrace does not own: it begins an untraced scope, then is recorded in it.
      recordFirstUntracedAccess(object, key, type)
      return true
    default: return true
    }
  }

  @inline(never)
  private func recordFirstUntracedAccess(_ object: UInt32, _ key: UInt32, _ type: UInt32) {
    UntracedTracking.beginScope()
    if obstrace_emit_access(object, key, type) == 2 {
      obstrace_emit_access_with_stack(object, key, type, StackCapture.current())
    }
  }

  /// Records a willSet and opens its window: until `endWillSet`, tracking that fires on this thread was fired
  /// by this write. Returns the window to close, with how the write is to be compared; nil, having recorded nothing
  /// (the event counted), when the thread is inside the recorder already: a signal handler's write that interrupted
  /// it, whose didSet then finds the thread inside it too. Called only while recording: `TracingRegistrar`'s
  /// `willSet` and `withMutation` have just loaded the recording flag.
  @usableFromInline
  func beginWillSet(
    _ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type, _ address: UnsafeRawPointer?,
    inWithMutation: Bool
  )
    -> WillSetWindow?
  {
    guard obstrace_enter_recorder() else { return nil }
    defer { obstrace_leave_recorder() }
    // Untraced scopes that ended before this write end before it in the trace (a write inside one does not fire it).
    if obstrace_has_foreign_scopes() { obstrace_sync_foreign() }
    let key = Interner.keyPathID(keyPath, root: subject, member: member)
    let stack = obstrace_stack_level() >= 1 ? StackCapture.current() : 0
    let (object, type) = identity(address, subject)
    let flags = inWithMutation ? EventFlags.willSetInWithMutation : EventFlags.willSetDirect
    // The event and its window (`obstrace_set_writing`), in one call with one load of the thread's ring.
    let saved = obstrace_record_will_set(EventKind.willSet.rawValue, flags, object, key, type, stack)
    // A setter's write (withMutation) is never compared: the macro skips an equal Equatable value itself. Only a
    // `_modify` looks for its stored field (which may name the getter, once per property).
    let plan =
      inWithMutation ? WriteComparisonPlan(key: key, field: 0, equatable: false, uncompared: 0) : comparison(key)
    return WillSetWindow(key: key, comparison: plan, saved: saved)
  }

  /// Closes the window: inlined (one store into the thread's ring, inside the recorder), not a call. The window's
  /// flow entered the recorder at `beginWillSet`, so the thread is not inside it now.
  @inlinable
  func endWillSet(_ window: WillSetWindow) {
    obstrace_reenter_recorder()
    obstrace_restore_writing(window.saved)
    obstrace_leave_recorder()
  }

  /// `endWillSet` for a write compared bit for bit: keeps the bits of the property's stored field in `object` (the
  /// object's address) until its didSet, and closes the window, in one stay inside the recorder.
  @usableFromInline
  func endWillSet(_ window: WillSetWindow, storingFieldOf object: UnsafeRawPointer) {
    obstrace_reenter_recorder()
    let plan = window.comparison
    obstrace_snapshot_store(serial, plan.key, object + plan.fieldOffset, plan.fieldSize)
    obstrace_restore_writing(window.saved)
    obstrace_leave_recorder()
  }

  /// How a `_modify` of property `key` is compared under this object's mode.
  @inline(__always)
  private func comparison(_ key: UInt32) -> WriteComparisonPlan {
    let mode = comparisonOverride != Self.noComparisonOverride ? comparisonOverride : obstrace_compare_mode()
    // Whether the member is Equatable is asked only under `equatable` (a conformance lookup at the property's first
    // such write, then the interner's table): a conformance lookup is first-use work no other mode needs.
    if mode == WriteComparison.equatable.mode && Interner.shared.memberIsEquatable(key) {
      return WriteComparisonPlan(key: key, field: 0, equatable: true, uncompared: 0)
    }
    guard mode != 0 else { return Self.uncompared(key, .comparisonOff) }
    guard key < OBSTRACE_MAX_FIELD_PROPERTIES else { return Self.uncompared(key, .tooManyProperties) }
    var field = obstrace_property_field(key)
    if field == 0 { field = Interner.shared.storedField(key, onWriter: true) }
    switch field {
    case StoredField.notFound: return Self.uncompared(key, .storedFieldNotFound)
    case StoredField.handWritten: return Self.uncompared(key, .handWrittenAccessor)
    case StoredField.notBitwise:
      return Self.uncompared(key, mode == WriteComparison.equatable.mode ? .notEquatable : .notTriviallyCopyable)
    default: return WriteComparisonPlan(key: key, field: field, equatable: false, uncompared: 0)
    }
  }

  private static func uncompared(_ key: UInt32, _ reason: UncomparedReason) -> WriteComparisonPlan {
    WriteComparisonPlan(key: key, field: 0, equatable: false, uncompared: reason.flags)
  }

  /// The property a didSet is about and how its write is compared, or nil when not recording.
  @usableFromInline
  func didSetKey(_ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type) -> WriteComparisonPlan? {
    guard obstrace_is_enabled() else { return nil }
    return comparison(Interner.keyPathID(keyPath, root: subject, member: member))
  }

  /// `recordDidSet` for a setter's write (`withMutation`), inside the recorder: its willSet window was recorded, so
  /// the thread is not inside it now.
  @usableFromInline
  func recordSetterDidSet(key: UInt32, _ subject: Any.Type, _ address: UnsafeRawPointer?) {
    obstrace_reenter_recorder()
    recordDidSet(key: key, subject, address)
    obstrace_leave_recorder()
  }

  /// Records a didSet of the property `key` (from `didSetKey`, or the setter's willSet window). The caller is inside
  /// the recorder.
  @usableFromInline
  func recordDidSet(key: UInt32, _ subject: Any.Type, _ address: UnsafeRawPointer?, flags: UInt8 = 0) {
    guard obstrace_is_enabled() else { return }
    let (object, type) = identity(address, subject)
    // Untimed: a didSet follows its willSet (and the observers that ran) at once; it takes their time.
    obstrace_emit_untimed(EventKind.didSet.rawValue, flags, object, key, obstrace_innermost_scope(), type, 0)
  }

  /// Compares the stored field's bits with those kept at willSet: the didSet flags (unchanged, changed, or 0
  /// when nothing was kept). A field whose getter's origin was not settled when the write began
  /// (`StoredField.originPending`: this or another program's thread found it) marks them with `originPendingFlag`,
  /// for the flusher to settle before it encodes the didSet (`Flusher.settleMarkedDidSets`).
  @usableFromInline
  func compareFieldBits(_ plan: WriteComparisonPlan, object: UnsafeRawPointer) -> UInt8 {
    let outcome = obstrace_snapshot_compare(serial, plan.key, object + plan.fieldOffset, plan.fieldSize)
    guard plan.field & StoredField.originPending != 0, outcome != 0 else { return outcome }
    obstrace_note_origin_mark()
    return outcome | Self.originPendingFlag
  }

  /// In a didSet's flags, in the ring only (the flusher clears it): compared with a field whose getter's origin was
  /// not settled. Bits 6–7 of a didSet's flags are not used by the format.
  static let originPendingFlag: UInt8 = 0x80

  /// A marked didSet's flags once property `key`'s origin is settled (`Interner.settleOrigin`): as compared when the
  /// getter is the macro's, else not compared, for the reason a lookup made at first would have given.
  static func settledFlags(_ flags: UInt8, key: UInt32) -> UInt8 {
    let compared = flags & ~originPendingFlag
    let withoutOutcome = compared & ~(EventFlags.unchanged | EventFlags.changed)
    switch Interner.shared.settleOrigin(key) {
    case StoredField.handWritten: return withoutOutcome | UncomparedReason.handWrittenAccessor.flags
    case StoredField.notFound: return withoutOutcome | UncomparedReason.storedFieldNotFound.flags
    default: return compared
    }
  }

  /// Keeps the value read before a `_modify` of an Equatable member until its didSet: under a lock, inside the
  /// recorder (the write's flow entered it at `beginWillSet`, so the thread is not inside it now). A value it
  /// replaces is released after, outside.
  @usableFromInline
  func storeSnapshot(_ value: Any, key: UInt32) {
    obstrace_reenter_recorder()
    let replaced = snapshots.withLock { $0.updateValue(value, forKey: key) }
    obstrace_leave_recorder()
    withExtendedLifetime(replaced) {}
  }

  /// The value stored by `willSet` for this property, if any (taken under a lock, inside the recorder, as stored).
  @usableFromInline
  func takeSnapshot(key: UInt32) -> Any? {
    obstrace_reenter_recorder()
    defer { obstrace_leave_recorder() }
    return snapshots.withLock { $0.removeValue(forKey: key) }
  }
}

/// How a write through `_modify` is compared: the property id, and either its stored field's bits (offset and
/// size packed, 0 when not located), or its Equatable value read through the getter, or nothing, and then why
/// (`uncompared`: an `UncomparedReason`'s didSet flags).
@usableFromInline
struct WriteComparisonPlan {
  @usableFromInline let key: UInt32
  @usableFromInline let field: UInt32
  @usableFromInline let equatable: Bool
  @usableFromInline let uncompared: UInt8

  init(key: UInt32, field: UInt32, equatable: Bool, uncompared: UInt8) {
    self.key = key
    self.field = field
    self.equatable = equatable
    self.uncompared = uncompared
  }

  @usableFromInline var comparesBits: Bool { field != 0 }
  var fieldOffset: Int { Int(field >> 8) }
  var fieldSize: UInt32 { field & StoredField.sizeMask }
}

/// An open willSet window: the key path id written and how the write is compared, and the window it
/// interrupted (writes nest when a change handler writes).
@usableFromInline
struct WillSetWindow {
  @usableFromInline let key: UInt32
  @usableFromInline let comparison: WriteComparisonPlan
  /// The window this one interrupted, packed (object << 32 | key).
  @usableFromInline let saved: UInt64

  init(key: UInt32, comparison: WriteComparisonPlan, saved: UInt64) {
    self.key = key
    self.comparison = comparison
    self.saved = saved
  }
}

/// Reads a property for ObsTrace's own purposes, without recording an access or registering with the real
/// registrar.
@usableFromInline
enum SilentRead {
  /// The property's value, read through its getter with the getter's `access` suppressed.
  @inlinable
  static func value<Subject, Member>(of subject: Subject, _ keyPath: KeyPath<Subject, Member>) -> Member {
    begin()
    defer { end() }
    return subject[keyPath: keyPath]
  }

  @usableFromInline
  static func begin() { obstrace_suppress_access(true) }

  @usableFromInline
  static func end() { obstrace_suppress_access(false) }

  /// The didSet flags for two values read around a `_modify` (of one Equatable type): unchanged or changed.
  @usableFromInline
  static func comparisonFlags(_ old: Any, _ new: Any) -> UInt8 {
    guard let old = old as? any Equatable else { return 0 }
    return old.isEqual(toAny: new) ? EventFlags.unchanged : EventFlags.changed
  }
}

extension Equatable {
  fileprivate func isEqual(toAny other: Any) -> Bool {
    guard let other = other as? Self else { return false }
    return self == other
  }
}

/// Captures and interns the calling thread's stack by walking frame pointers.
enum StackCapture {
  /// The id of the calling thread's stack: walked into the thread's ring, hashed and looked up in the thread's cache
  /// in one C call; the interner's lock is taken only for a stack this thread has not met (or has lost from its
  /// cache). Never inlined: the walk skips this function's own frame, so its callers' frames are the same in any
  /// build.
  @inline(never)
  static func current(minimumDepth: Int32 = 0) -> UInt32 {
    var count: Int32 = 0
    var hash: UInt64 = 0
    let cached = obstrace_capture_stack_here(minimumDepth, &count, &hash)
    if cached != 0 { return cached }
    return count == 0 ? 0 : internCaptured(count: Int(count), hash: hash)
  }

  /// The frames `obstrace_capture_stack_here` left in the thread's ring, interned.
  @inline(never)
  private static func internCaptured(count: Int, hash: UInt64) -> UInt32 {
    guard let frames = obstrace_captured_frames() else { return 0 }
    return intern(UnsafeBufferPointer(start: frames, count: count), hash: hash)
  }

  /// The id of the stack from frame record `record` (`CallSite.here()`'s own, still running) on: its first
  /// frame is the record's return address.
  static func from(record: UInt) -> UInt32 {
    withUnsafeTemporaryAllocation(of: UInt.self, capacity: Int(OBSTRACE_MAX_STACK_DEPTH)) { buffer in
      let depth = min(Int32(obstrace_stack_depth()), OBSTRACE_MAX_STACK_DEPTH)
      var count: Int32 = 0
      var hash: UInt64 = 0
      let cached = obstrace_capture_stack_from(record, buffer.baseAddress!, depth, &count, &hash)
      if cached != 0 { return cached }
      return intern(UnsafeBufferPointer(rebasing: buffer[0..<Int(count)]), hash: hash)
    }
  }

  /// A stack the thread's cache did not have (0 for none).
  @inline(never)
  private static func intern(_ frames: UnsafeBufferPointer<UInt>, hash: UInt64) -> UInt32 {
    frames.isEmpty ? 0 : Interner.shared.stackID(frames, hash: hash)
  }
}
