import ObsTraceFormat
import ObsTraceSymbols
@_spi(Reflection) import Swift

/// Where a property's value is stored in its object, so that a write through `_modify` can be compared bit for
/// bit without calling the property's getter, `==` or the class's own `access(keyPath:)`.
///
/// The key path the macro hands the registrar is the computed property (`\Model.count`); its value lives in the
/// stored field `_count`. On Linux a key path does not say its property's name, so the name comes from the symbol
/// of the key path's getter (`key path getter for Module.Model.count : Swift.Int : Module.Model`, read from the
/// symbol table with libdw, once per key path), and the field from the runtime's reflection metadata
/// (`_forEachField`, which gives every stored field of the class and its superclasses with its offset and type).
/// Every doubt ends in "not compared", never in a false no-op: the getter's symbol must name the key path's root
/// type, exactly one field must be named `_<property>`, its type must be the member's, trivially copyable and at
/// most `OBSTRACE_SNAPSHOT_BYTES` bytes, and the root must be a class.
struct StoredField: Equatable {
  var offset: Int
  var size: Int

  /// Packed for the C table: offset << 8 | size (0: not looked for yet).
  var packed: UInt32 { UInt32(offset) << 8 | UInt32(size) }
  /// In the C table: looked for, not found (not compared: `UncomparedReason.storedFieldNotFound`).
  static let notFound = UInt32.max
  /// In the C table: not looked for, as the member cannot be compared bit for bit: not trivially copyable, or
  /// larger than `maximumSize` (not compared: `UncomparedReason.notTriviallyCopyable`, or `notEquatable`).
  static let notBitwise = UInt32.max - 1

  static let maximumSize = 64
  /// `_EachFieldOptions.classType` (a `static var` in the standard library, hence not named here).
  static let classType = _EachFieldOptions(rawValue: 1 << 0)

  /// The stored field behind a macro property packed for the C table, `notBitwise` when its member cannot be
  /// compared bit for bit, or `notFound` when it cannot be found beyond doubt.
  static func locate(root: Any.Type, member: Any.Type, getterAddress: UInt64) -> UInt32 {
    guard let size = trivialSize(member), size > 0, size <= maximumSize else { return notBitwise }
    return find(root: root, member: member, size: size, getterAddress: getterAddress)?.packed ?? notFound
  }

  /// The stored field of a trivially copyable member of `size` bytes, or nil when it cannot be found beyond doubt.
  static func find(root: Any.Type, member: Any.Type, size: Int, getterAddress: UInt64) -> StoredField? {
    guard root is AnyObject.Type, getterAddress != 0 else { return nil }
    let named = SymbolCache.getterName(at: getterAddress).flatMap(PropertyNaming.name(fromKeyPathGetter:))
    guard let name = named ?? MergedGetterNaming.name(getterAddress: getterAddress, root: root, member: member),
      symbolNames(name, root: root)
    else { return nil }
    return field(named: "_" + name.property, of: root, member: member, size: size)
  }

  /// The one field of `root` (its class and superclasses) named `name`, of type `member`.
  static func field(named name: String, of root: Any.Type, member: Any.Type, size: Int) -> StoredField? {
    var found: [Int] = []
    var typesMatch = true
    _ = _forEachField(of: root, options: classType) { fieldName, offset, type, _ in
      if String(cString: fieldName) == name {
        found.append(offset)
        typesMatch = typesMatch && ObjectIdentifier(type) == ObjectIdentifier(member)
      }
      return true
    }
    guard found.count == 1, typesMatch, found[0] > 0, found[0] < 1 << 24 else { return nil }
    return StoredField(offset: found[0], size: size)
  }

  /// Whether a getter symbol's `Module.Type` is the key path's root: its module and type, generic arguments
  /// aside.
  static func symbolNames(_ name: PropertyName, root: Any.Type) -> Bool {
    var reflected = String(reflecting: root)
    if let angle = reflected.firstIndex(of: "<") { reflected = String(reflected[..<angle]) }
    return reflected == name.module + "." + name.type
  }

  /// The size of `type` when it is trivially copyable (no references, no resources), else nil.
  static func trivialSize(_ type: Any.Type) -> Int? {
    func open<T>(_: T.Type) -> Int? {
      _isPOD(T.self) ? MemoryLayout<T>.size : nil
    }
    return _openExistential(type, do: open)
  }
}
