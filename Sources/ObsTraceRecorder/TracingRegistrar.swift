import CObsTraceRing
import Observation

/// The real Observation protocol, for the drop-in module's `Observation.Observable` (which cannot name the real
/// module once it declares an `Observation` of its own).
public typealias _ObservationObservable = Observation.Observable
/// The real registrar, for code that needs it by name.
public typealias _ObservationRegistrar = Observation.ObservationRegistrar

/// A drop-in `ObservationRegistrar` that records every access, willSet and didSet, then forwards it to a real
/// `ObservationRegistrar`, so that `withObservationTracking`, `Observations` and SwiftUI behave exactly as
/// without it.
///
/// You do not create one: in a file that imports ObsTrace, the `@Observable` macro's
/// `Observation.ObservationRegistrar()` resolves to this type. Each registrar gives its object a serial number
/// (addresses are reused; serials are not) and records when the object is freed.
public struct TracingRegistrar: Sendable {
  @usableFromInline let registrar = Observation.ObservationRegistrar()
  @usableFromInline let extent = RegistrarExtent()

  /// Creates a registrar; recording starts here if `OBSTRACE_OUTPUT` is set and no recording is running.
  public init() {}

  /// Records a read of `keyPath` on `subject` and registers it with the real registrar. While recording, a read
  /// that ObsTrace saw made outside any tracking is not forwarded: the real registrar's `access` does nothing then.
  @inlinable
  public func access<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    // Not recording: one load of a flag, inlined, and the real registrar (the extent's call cost a traced build
    // that records nothing ≈ 22 instructions a read; `scripts/instructions-per-op --not-recording read`).
    guard obstrace_is_enabled() else {
      registrar.access(subject, keyPath: keyPath)
      return
    }
    if extent.recordAccess(keyPath, Subject.self, Member.self, Self.address(of: subject)) {
      registrar.access(subject, keyPath: keyPath)
    }
  }

  /// Records that `keyPath` is about to change, then lets the real registrar run its willSet observers.
  ///
  /// Called directly by the macro's `_modify` accessor. To mark a write that changes nothing, the member's old
  /// value is kept until `didSet` as the recording's `WriteComparison` says: by default only a trivially
  /// copyable member, as the bits of its stored field, read in place (no getter, no copy of a Swift value, no
  /// `==`); with `.equatable`, any Equatable member, read through its getter.
  @inlinable @inline(__always)
  public func willSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    guard obstrace_is_enabled() else {
      registrar.willSet(subject, keyPath: keyPath)
      return
    }
    recordingWillSet(subject, keyPath: keyPath)
  }

  /// `willSet` while recording: out of line, so that the path without a recording stays small enough to inline.
  @inlinable @inline(never)
  func recordingWillSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    guard
      let window = extent.beginWillSet(
        keyPath, Subject.self, Member.self, Self.address(of: subject), inWithMutation: false)
    else {
      registrar.willSet(subject, keyPath: keyPath)
      return
    }
    registrar.willSet(subject, keyPath: keyPath)
    // After the observers ran: the bits kept are those the mutation starts from.
    if window.comparison.comparesBits {
      // A located field implies a class root: the subject is an object reference.
      extent.endWillSet(window, storingFieldOf: unsafeBitCast(subject, to: UnsafeRawPointer.self))
      return
    }
    if window.comparison.equatable {
      // The getter is the program's code: read outside the recorder.
      extent.storeSnapshot(SilentRead.value(of: subject, keyPath), key: window.key)
    }
    extent.endWillSet(window)
  }

  /// Lets the real registrar run its didSet observers, then records the didSet of a write through `_modify`:
  /// unchanged, changed, or not compared.
  @inlinable @inline(__always)
  public func didSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    guard obstrace_is_enabled() else {
      registrar.didSet(subject, keyPath: keyPath)
      return
    }
    recordingDidSet(subject, keyPath: keyPath)
  }

  /// `didSet` while recording: out of line, so that the path without a recording stays small enough to inline.
  @inlinable @inline(never)
  func recordingDidSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    // Inside the recorder from the lookup to the store (`obstrace_enter_recorder`); a didSet that finds its thread
    // inside it already (a signal handler's, that interrupted the recorder) is counted, not recorded.
    if obstrace_enter_recorder() {
      if let plan = extent.didSetKey(keyPath, Subject.self, Member.self) {
        var flags = RegistrarExtent.modifyFlag
        if plan.comparesBits {
          let outcome = extent.compareFieldBits(plan, object: unsafeBitCast(subject, to: UnsafeRawPointer.self))
          flags |= outcome != 0 ? outcome : RegistrarExtent.noValueKeptFlag
        } else if plan.equatable {
          // The getter and `==` are the program's code: run outside the recorder.
          obstrace_leave_recorder()
          if let old = extent.takeSnapshot(key: plan.key) {
            flags |= SilentRead.comparisonFlags(old, SilentRead.value(of: subject, keyPath))
          } else {
            flags |= RegistrarExtent.noValueKeptFlag
          }
          obstrace_reenter_recorder()
        } else {
          flags |= plan.uncompared
        }
        extent.recordDidSet(key: plan.key, Subject.self, Self.address(of: subject), flags: flags)
      }
      obstrace_leave_recorder()
    }
    registrar.didSet(subject, keyPath: keyPath)
  }

  /// Records a mutation as the real `withMutation` performs it: willSet, the mutation, didSet.
  @inlinable
  public func withMutation<Subject: Observable, Member, T>(
    of subject: Subject, keyPath: KeyPath<Subject, Member>, _ mutation: () throws -> T
  ) rethrows -> T {
    guard obstrace_is_enabled() else {
      registrar.willSet(subject, keyPath: keyPath)
      defer { registrar.didSet(subject, keyPath: keyPath) }
      return try mutation()
    }
    let window = extent.beginWillSet(
      keyPath, Subject.self, Member.self, Self.address(of: subject), inWithMutation: true)
    registrar.willSet(subject, keyPath: keyPath)
    if let window { extent.endWillSet(window) }
    defer {
      if let window {
        extent.recordSetterDidSet(key: window.key, Subject.self, Self.address(of: subject))
      } else {
        // The willSet found the thread inside the recorder (a signal handler's write): its didSet is counted too.
        obstrace_note_interrupted_event()
      }
      registrar.didSet(subject, keyPath: keyPath)
    }
    return try mutation()
  }

}

extension TracingRegistrar {
  /// The object's address when `Subject` is a class (always, for the macro's models), else nil: how a
  /// registrar finds its object's stored fields. Folds to a constant once specialized.
  @inlinable @inline(__always)
  static func address<Subject>(of subject: Subject) -> UnsafeRawPointer? {
    guard Subject.self is AnyObject.Type else { return nil }
    return unsafeBitCast(subject, to: UnsafeRawPointer.self)
  }
}

extension TracingRegistrar: Codable {
  /// A decoded object gets a fresh registrar, as with `ObservationRegistrar`: its transient state is not encoded.
  public init(from decoder: any Decoder) throws {
    self.init()
  }

  public func encode(to encoder: any Encoder) {}
}

extension TracingRegistrar: Hashable {
  /// Registrars are ignored by their parent type's equality, as with `ObservationRegistrar`.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.registrar == rhs.registrar
  }

  public func hash(into hasher: inout Hasher) {
    registrar.hash(into: &hasher)
  }
}

/// Reflection sees Observation's registrar, as an untraced build shows it: `dump(model)`, a snapshot test of a model
/// and `Mirror(reflecting: model)`'s child print `_$observationRegistrar: Observation.ObservationRegistrar` with its
/// contents, not ObsTrace's bookkeeping (a fresh-clone try-out's F5). Only the child value's own type, asked with
/// `type(of:)`, is still this one.
extension TracingRegistrar: CustomReflectable {
  public var customMirror: Mirror { Mirror(reflecting: registrar) }
}
