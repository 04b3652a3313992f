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
/// most `OBSTRACE_SNAPSHOT_BYTES` bytes, the root must be a class, and the property's getter must be the
/// `@Observable` macro's, as the line table shows (`Symbolizer.getterOrigin`): only the macro is known to keep the
/// value in `_<property>`. Accessors written by hand (a `_modify` that calls the registrar's `willSet`/`didSet` and
/// keeps the value elsewhere) may have a field of that name that is something else (a cache): comparing it called
/// a real change unchanged (a fresh-clone try-out's H4), so such writes are not compared (`handWritten`). Who wrote
/// the getter is asked on the flusher, never on a program's thread (`originPending`). A private or fileprivate
/// member's or class's symbol names it with its file's discriminator (`Counter.(secret in _8AAE…)`, `(Model in
/// _11E4…).count`): its field is `_secret`, and a private class is the root when its metadata's symbol says so
/// (`symbolNames`); before, neither was found (a fresh-clone try-out's J13).
struct StoredField: Equatable {
  var offset: Int
  var size: Int

  /// Packed for the C table: offset << 8 | size (0: not looked for yet). Sizes are at most `maximumSize`, so bit 7
  /// is free for `originPending`.
  var packed: UInt32 { UInt32(offset) << 8 | UInt32(size) }
  /// In the C table, or'd into a packed field: the field is found, but whether the property's getter is the
  /// `@Observable` macro's (`Symbolizer.getterOrigin`: the line table and DWARF, milliseconds) is not known yet. The
  /// writer's thread that finds a field first leaves that to the flusher (`Interner.settleOrigin`): the write is
  /// compared, and its didSet marked (`RegistrarExtent.originPendingFlag`) for the flusher to keep or to turn into
  /// "not compared" before it is encoded.
  static let originPending: UInt32 = 0x80
  /// The size bits of a packed field.
  static let sizeMask: UInt32 = 0x7F
  /// In the C table: looked for, not found (not compared: `UncomparedReason.storedFieldNotFound`).
  static let notFound = UInt32.max
  /// In the C table: not looked for, as the member cannot be compared bit for bit: not trivially copyable, or
  /// larger than `maximumSize` (not compared: `UncomparedReason.notTriviallyCopyable`, or `notEquatable`).
  static let notBitwise = UInt32.max - 1
  /// In the C table: the property's getter is written by hand, so a field `_name` is not known to be its storage
  /// (not compared: `UncomparedReason.handWrittenAccessor`). No packed field is this large (offsets < 2^24).
  static let handWritten = UInt32.max - 2

  static let maximumSize = 64
  /// `_EachFieldOptions.classType` (a `static var` in the standard library, hence not named here).
  static let classType = _EachFieldOptions(rawValue: 1 << 0)

  /// Whether `packed` (from the C table) is a field whose getter's origin is not known yet.
  static func isOriginPending(_ packed: UInt32) -> Bool {
    packed & originPending != 0 && packed < handWritten
  }

  /// The stored field behind a macro property packed for the C table, `notBitwise` when its member cannot be
  /// compared bit for bit, `handWritten` when its getter is not the macro's, or `notFound` when it cannot be found
  /// beyond doubt (a field, but no line table that says who wrote the getter, included). Without `origin` (the
  /// program's thread), who wrote the getter is not asked: a field found is returned with `originPending`.
  static func locate(root: Any.Type, member: Any.Type, getterAddress: UInt64, origin: Bool = true) -> UInt32 {
    guard let size = trivialSize(member), size > 0, size <= maximumSize else { return notBitwise }
    guard let (field, name) = find(root: root, member: member, size: size, getterAddress: getterAddress) else {
      return notFound
    }
    guard origin else { return field.packed | originPending }
    switch SymbolCache.getterOrigin(keyPathGetter: getterAddress, name: name) {
    case .observationMacro: return field.packed
    case .handWritten: return handWritten
    case nil: return notFound
    }
  }

  /// The stored field `_name` of a trivially copyable member of `size` bytes and the property's name, or nil when
  /// it cannot be found beyond doubt (whether it is the property's storage is `locate`'s question).
  static func find(root: Any.Type, member: Any.Type, size: Int, getterAddress: UInt64) -> (
    StoredField, PropertyName
  )? {
    guard root is AnyObject.Type, getterAddress != 0 else { return nil }
    let named = SymbolCache.getterName(at: getterAddress).flatMap(PropertyNaming.name(fromKeyPathGetter:))
    // A private member's storage is `_secret` for `(secret in _8AAE…)`: fields carry no discriminator.
    guard let name = named ?? MergedGetterNaming.name(getterAddress: getterAddress, root: root, member: member),
      symbolNames(name, root: root),
      let found = field(
        named: "_" + PrivateNames.withoutDiscriminators(name.property), of: root, member: member, size: size)
    else { return nil }
    return (found, name)
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
  /// aside. A private type (or one declared in one) is `Odd.(unknown context at $5581…).Model` to the runtime's
  /// printing, which does not say which file's `Model` it is, and `Odd.(Model in _11E4…)` in the symbol, whose
  /// discriminator does: the root's metadata must then be that type's, by its symbol (`type metadata for Odd.(Model
  /// in _11E4…)`, a class's metadata the compiler emitted: `Symbolizer.typeOfMetadata`); metadata the runtime made
  /// (a generic class's) has none, and is not compared.
  static func symbolNames(_ name: PropertyName, root: Any.Type) -> Bool {
    guard PrivateNames.hasDiscriminator(name.type) else {
      var reflected = String(reflecting: root)
      if let angle = reflected.firstIndex(of: "<") { reflected = String(reflected[..<angle]) }
      return reflected == name.module + "." + name.type
    }
    let metadata = UInt64(UInt(bitPattern: unsafeBitCast(root, to: UnsafeRawPointer.self)))
    return SymbolCache.typeOfMetadata(at: metadata) == "\(name.module).\(name.type)"
  }

  /// The size of `type` when it is trivially copyable (no references, no resources), else nil.
  static func trivialSize(_ type: Any.Type) -> Int? {
    func open<T>(_: T.Type) -> Int? {
      _isPOD(T.self) ? MemoryLayout<T>.size : nil
    }
    return _openExistential(type, do: open)
  }
}
