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
  @usableFromInline let serial: UInt32
  /// The object's type id, set by its first recorded event (the registrar learns the type only then).
  private let typeID = Atomic<UInt32>(0)
  /// Values read before a `_modify` of an Equatable member, keyed by key path id, to mark unchanged writes.
  private let snapshots = LockedValue<[UInt32: Any]>([:])

  @usableFromInline
  init() {
    Recorder.startFromEnvironmentIfNeeded()
    serial = obstrace_next_object_serial()
    if obstrace_is_enabled() {
      // aux: the in-test recording this object belongs to, if any.
      let tag = RecordingTaps.currentTag
      // Told now, not when the flusher meets this event: another thread's ring may be drained first, and its
      // writes to this object must already find the recording they belong to.
      if tag != 0 { RecordingTaps.tagObject(serial, tag) }
      obstrace_emit(EventKind.objectCreated.rawValue, 0, serial, 0, 0, tag, 0)
    }
  }

  deinit {
    if obstrace_is_enabled() {
      obstrace_emit(EventKind.objectFreed.rawValue, 0, serial, 0, 0, typeID.load(ordering: .relaxed), 0)
    }
  }

  @inline(__always)
  private func objectType(_ subject: Any.Type) -> UInt32 {
    let known = typeID.load(ordering: .relaxed)
    if known != 0 { return known }
    let id = Interner.shared.typeID(subject)
    typeID.store(id, ordering: .relaxed)
    return id
  }

  /// Records an access; false when ObsTrace itself is reading (the access must then not reach the registrar).
  @usableFromInline
  func recordAccess(_ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type) -> Bool {
    guard obstrace_is_enabled() else { return true }
    let key = Interner.shared.keyPathID(keyPath, root: subject, member: member) & ~Interner.equatableBit
    let type = objectType(subject)
    if obstrace_stack_level() >= 2 {
      if obstrace_access_is_suppressed() { return false }
      let stack = StackCapture.current()
      if obstrace_emit_access_with_stack(serial, key, type, stack) == 3 {
        UntracedTracking.beginScope()
        _ = obstrace_emit_access_with_stack(serial, key, type, stack)
      }
      return true
    }
    switch obstrace_emit_access(serial, key, type) {
    case 1: return false
    case 2:
      // A read inside this property's own willSet window: it sees the old value (seed 004's stale read).
      obstrace_emit_access_with_stack(serial, key, type, StackCapture.current())
      return true
    case 3:
      // The first read inside tracking ObsTrace does not own: it begins an untraced scope, then is recorded in it.
      recordFirstUntracedAccess(key, type)
      return true
    default: return true
    }
  }

  @inline(never)
  private func recordFirstUntracedAccess(_ key: UInt32, _ type: UInt32) {
    UntracedTracking.beginScope()
    if obstrace_emit_access(serial, key, type) == 2 {
      obstrace_emit_access_with_stack(serial, key, type, StackCapture.current())
    }
  }

  /// Records a willSet and opens its window: until `endWillSet`, tracking that fires on this thread was fired
  /// by this write. Returns the window to close, or nil when not recording.
  @usableFromInline
  func beginWillSet(_ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type, inWithMutation: Bool)
    -> WillSetWindow?
  {
    guard obstrace_is_enabled() else { return nil }
    // Untraced scopes that ended before this write end before it in the trace (a write inside one does not fire it).
    if obstrace_has_foreign_scopes() { obstrace_sync_foreign() }
    let id = Interner.shared.keyPathID(keyPath, root: subject, member: member)
    let key = id & ~Interner.equatableBit
    let stack = obstrace_stack_level() >= 1 ? StackCapture.current() : 0
    let flags = inWithMutation ? EventFlags.willSetInWithMutation : EventFlags.willSetDirect
    obstrace_emit(
      EventKind.willSet.rawValue, flags, serial, key, obstrace_innermost_scope(), objectType(subject), stack)
    return WillSetWindow(
      key: key, memberIsEquatable: id & Interner.equatableBit != 0 && obstrace_detects_unchanged(),
      saved: obstrace_set_writing(serial, key))
  }

  @usableFromInline
  func endWillSet(_ window: WillSetWindow) {
    obstrace_restore_writing(window.saved)
  }

  /// The property a didSet is about, or nil when not recording: its id, and whether a value was read at its
  /// willSet for comparison (an Equatable member, unchanged-value detection on).
  @usableFromInline
  func didSetKey(_ keyPath: AnyKeyPath, _ subject: Any.Type, _ member: Any.Type) -> DidSetKey? {
    guard obstrace_is_enabled() else { return nil }
    let id = Interner.shared.keyPathID(keyPath, root: subject, member: member)
    return DidSetKey(
      id: id & ~Interner.equatableBit,
      compared: id & Interner.equatableBit != 0 && obstrace_detects_unchanged())
  }

  /// Records a didSet of the property `key` (from `didSetKey`, or the setter's willSet window).
  @usableFromInline
  func recordDidSet(key: UInt32, _ subject: Any.Type, flags: UInt8 = 0) {
    guard obstrace_is_enabled() else { return }
    // Untimed: a didSet follows its willSet (and the observers that ran) at once; it takes their time.
    obstrace_emit_untimed(
      EventKind.didSet.rawValue, flags, serial, key, obstrace_innermost_scope(), objectType(subject), 0)
  }

  @usableFromInline
  func storeSnapshot(_ value: Any, key: UInt32) {
    snapshots.withLock { $0[key] = value }
  }

  /// The value stored by `willSet` for this property, if any.
  @usableFromInline
  func takeSnapshot(key: UInt32) -> Any? {
    snapshots.withLock { $0.removeValue(forKey: key) }
  }
}

/// The property of a didSet, resolved once for both its comparison and its event.
@usableFromInline
struct DidSetKey {
  @usableFromInline let id: UInt32
  @usableFromInline let compared: Bool
}

/// An open willSet window: the key path id written, and the window it interrupted (writes nest when a change
/// handler writes).
@usableFromInline
struct WillSetWindow {
  @usableFromInline let key: UInt32
  @usableFromInline let memberIsEquatable: Bool
  /// The window this one interrupted, packed (object << 32 | key).
  let saved: UInt64

  init(key: UInt32, memberIsEquatable: Bool, saved: UInt64) {
    self.key = key
    self.memberIsEquatable = memberIsEquatable
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
  static func current(minimumDepth: Int32 = 0) -> UInt32 {
    withUnsafeTemporaryAllocation(of: UInt.self, capacity: Int(OBSTRACE_MAX_STACK_DEPTH)) { buffer in
      let depth = min(max(Int32(obstrace_stack_depth()), minimumDepth), OBSTRACE_MAX_STACK_DEPTH)
      let count = Int(obstrace_capture_stack(buffer.baseAddress!, depth, 1))
      guard count > 0 else { return 0 }
      let frames = UnsafeBufferPointer(rebasing: buffer[0..<count])
      let hash = obstrace_hash_frames(frames.baseAddress!, Int32(count))
      return Interner.shared.stackID(frames, hash: hash)
    }
  }
}
