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

  /// Records a read of `keyPath` on `subject` and registers it with the real registrar.
  @inlinable
  public func access<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    if extent.recordAccess(keyPath, Subject.self, Member.self) {
      registrar.access(subject, keyPath: keyPath)
    }
  }

  /// Records that `keyPath` is about to change, then lets the real registrar run its willSet observers.
  ///
  /// Called directly by the macro's `_modify` accessor: for an Equatable member, the value is read (silently)
  /// so that `didSet` can mark a write that left it unchanged.
  @inlinable
  public func willSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    guard let window = extent.beginWillSet(keyPath, Subject.self, Member.self, inWithMutation: false) else {
      registrar.willSet(subject, keyPath: keyPath)
      return
    }
    if window.memberIsEquatable {
      extent.storeSnapshot(SilentRead.value(of: subject, keyPath), key: window.key)
    }
    registrar.willSet(subject, keyPath: keyPath)
    extent.endWillSet(window)
  }

  /// Lets the real registrar run its didSet observers, then records the didSet (marked unchanged when a value
  /// read at `willSet` equals the new one).
  @inlinable
  public func didSet<Subject: Observable, Member>(_ subject: Subject, keyPath: KeyPath<Subject, Member>) {
    if let key = extent.didSetKey(keyPath, Subject.self, Member.self) {
      var flags: UInt8 = 0
      if key.compared, let old = extent.takeSnapshot(key: key.id) {
        flags = SilentRead.comparisonFlags(old, SilentRead.value(of: subject, keyPath))
      }
      extent.recordDidSet(key: key.id, Subject.self, flags: flags)
    }
    registrar.didSet(subject, keyPath: keyPath)
  }

  /// Records a mutation as the real `withMutation` performs it: willSet, the mutation, didSet.
  @inlinable
  public func withMutation<Subject: Observable, Member, T>(
    of subject: Subject, keyPath: KeyPath<Subject, Member>, _ mutation: () throws -> T
  ) rethrows -> T {
    let window = extent.beginWillSet(keyPath, Subject.self, Member.self, inWithMutation: true)
    registrar.willSet(subject, keyPath: keyPath)
    if let window { extent.endWillSet(window) }
    defer {
      if let window { extent.recordDidSet(key: window.key, Subject.self) }
      registrar.didSet(subject, keyPath: keyPath)
    }
    return try mutation()
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
