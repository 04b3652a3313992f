@_spi(Reflection) import Swift

/// The registrars of one object whose class has `@Observable` at several levels (`@Observable class Dog:
/// Animal`, `Animal` itself `@Observable`): each level's macro adds a stored `_$observationRegistrar`, so one
/// object has one `TracingRegistrar` per level. They are found in the object's own stored fields, by the
/// runtime's reflection metadata (`_forEachField`: every stored field of the class and its superclasses, with
/// its offset and type), cached once per class: no code of the program runs, and the object's memory is read
/// only while one of its registrars records an event (the object is alive and fully initialized then).
enum ObjectLevels {
  /// Serializes binding, so that two levels' first events on two threads bind the object once; it counts the
  /// registrars bound (a value of some size: ThreadSanitizer misreads exclusive access to an empty one).
  static let lock = LockedValue<UInt64>(0)
  private static let offsets = LockedValue<[ObjectIdentifier: [Int]]>([:])
  /// Where a `TracingRegistrar` keeps its extent (a class reference).
  private static let extentOffset = MemoryLayout<TracingRegistrar>.offset(of: \TracingRegistrar.extent) ?? -1

  /// The registrar extents stored in the object at `address`, of class `type`, base class first.
  static func registrars(of address: UnsafeRawPointer, _ type: AnyObject.Type) -> [RegistrarExtent] {
    guard extentOffset >= 0 else { return [] }
    return registrarOffsets(type).map { offset in
      let extent = (address + offset + extentOffset).load(as: UnsafeRawPointer.self)
      return Unmanaged<RegistrarExtent>.fromOpaque(extent).takeUnretainedValue()
    }
  }

  /// Offsets of the class's stored fields of type `TracingRegistrar`, at every level.
  static func registrarOffsets(_ type: AnyObject.Type) -> [Int] {
    if let known = offsets.withLock({ $0[ObjectIdentifier(type)] }) { return known }
    var found: [Int] = []
    _ = _forEachField(of: type, options: StoredField.classType) { _, offset, fieldType, _ in
      if ObjectIdentifier(fieldType) == ObjectIdentifier(TracingRegistrar.self) { found.append(offset) }
      return true
    }
    offsets.withLock { $0[ObjectIdentifier(type)] = found }
    return found
  }
}
