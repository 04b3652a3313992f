import ObsTraceFormat
import ObsTraceSymbols
@_spi(Reflection) import Swift

/// Names a property whose key path getter is a thunk of a merged getter named after another class's property
/// (`MergedKeyPathGetter`; `AsyncTestModel.count`'s thunk calls `merged key path getter for Up.TestModel.value`),
/// by the runtime's field offsets: the merged function reads the value at one fixed offset for every class it
/// serves (it is one function), the offset of the property it is named after in that property's class
/// (`TestModel._value`); the property is the one field of the key path's root class at that offset, when it is
/// named `_q` and has the member's type (`AsyncTestModel._count`: `count`). Every step must hold, else nil (the
/// name stays a fallback): the thunk names the root class by the field offsets it passes, the merged property's
/// class is found by its mangled name and is a class of that name, its field is one of the member's type, and the
/// root has exactly one field there. Only a running process can do this (`obstrace symbolize` cannot: it has the
/// binaries, not their classes' field offsets).
enum MergedGetterNaming {
  static func name(getterAddress: UInt64, root: Any.Type, member: Any.Type) -> PropertyName? {
    guard getterAddress != 0, let thunk = SymbolCache.mergedGetter(at: getterAddress) else { return nil }
    return name(thunk, root: root, member: member)
  }

  static func name(_ thunk: MergedKeyPathGetter, root: Any.Type, member: Any.Type) -> PropertyName? {
    guard root is AnyObject.Type else { return nil }
    let rootName = String(reflecting: root)
    guard !rootName.contains("<"), rootName == thunk.module + "." + thunk.type else { return nil }
    if let certain = thunk.certainName { return certain }
    guard let mergedClass = type(named: thunk.merged, mangled: thunk.mergedMangled),
      let read = StoredField.field(named: "_" + thunk.merged.property, of: mergedClass, member: member, size: 0)
    else { return nil }
    var atOffset: [(name: String, type: Any.Type)] = []
    _ = _forEachField(of: root, options: StoredField.classType) { fieldName, offset, type, _ in
      if offset == read.offset { atOffset.append((String(cString: fieldName), type)) }
      return true
    }
    guard atOffset.count == 1, ObjectIdentifier(atOffset[0].type) == ObjectIdentifier(member),
      let property = MergedKeyPathGetter.property(ofStoredField: atOffset[0].name)
    else { return nil }
    return PropertyName(module: thunk.module, type: thunk.type, property: property)
  }

  /// The class `name` names (`Up.TestModel`), from a prefix of the merged function's mangled name that is its
  /// type's mangling (`2Up9TestModelC` of `2Up9TestModelC5valueSivpACTK`): the prefix whose type is a class of
  /// that name and has no generic parameters; nil when none is.
  static func type(named name: PropertyName, mangled: String) -> Any.Type? {
    let wanted = name.module + "." + name.type
    var prefix = ""
    for character in mangled {
      prefix.append(character)
      guard character == "C", let found = _typeByName(prefix) else { continue }
      if found is AnyObject.Type, String(reflecting: found) == wanted { return found }
    }
    return nil
  }
}

/// Names a property whose key path getter, in an optimized build, has no symbol and only calls the property's getter
/// through the root class's table (`TableGetter`: a property a subclass may override, `Rect.width` overridden by
/// `LoudSquare`; a fresh-clone try-out's H16, `Rect.<Double #11>` in release where debug said `Rect.width`). The
/// entry at that offset of the root class's metadata is the root class's own implementation of the slot; it must
/// be a symbol `<Module>.<Root>.<property>.getter : <Member>`, the root's module and type (`String(reflecting:)`)
/// and the member's type, else nil (the name stays a fallback). The offset is checked against the class's size
/// first (the metadata's `classSize` and `classAddressPoint`). Only the running process has the metadata
/// (`obstrace symbolize` leaves such a property to its fallback name).
enum TableGetterNaming {
  static func name(getterAddress: UInt64, root: Any.Type, member: Any.Type) -> PropertyName? {
    guard getterAddress != 0, root is AnyObject.Type, let offset = SymbolCache.tableGetterOffset(at: getterAddress)
    else { return nil }
    let metadata = unsafeBitCast(root, to: UnsafeRawPointer.self)
    guard let entry = entry(of: metadata, at: offset), let getter = SymbolCache.functionStarting(at: entry) else {
      return nil
    }
    return name(getter: getter, root: String(reflecting: root), member: String(reflecting: member))
  }

  /// The function pointer at `offset` of a class's metadata (`metadata` is its address point), when the offset lies
  /// inside the class object (Swift's class metadata on Linux: kind, superclass, flags, instance address point,
  /// instance size, alignment mask and reserved bits, then `classSize` at 0x20 and `classAddressPoint` at 0x24).
  static func entry(of metadata: UnsafeRawPointer, at offset: Int) -> UInt64? {
    let size = Int(metadata.load(fromByteOffset: 0x20, as: UInt32.self))
    let addressPoint = Int(metadata.load(fromByteOffset: 0x24, as: UInt32.self))
    guard offset >= 0x30, addressPoint < size, offset + 8 <= size - addressPoint else { return nil }
    let value = metadata.load(fromByteOffset: offset, as: UInt64.self)
    return value == 0 ? nil : value
  }

  /// `Models.Rect.width.getter : Swift.Double` for root `Models.Rect` and member `Swift.Double` → `Models`, `Rect`,
  /// `width`; nil for any other function (another class's getter, a setter, a specialization, a coroutine).
  static func name(getter: String, root: String, member: String) -> PropertyName? {
    let parts = getter.split(separator: " : ", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[1] == member, parts[0].hasSuffix(".getter"), !parts[0].contains(" "),
      !parts[0].contains("(")
    else { return nil }
    let path = parts[0].dropLast(".getter".count)
    guard let dot = path.lastIndex(of: "."), path[..<dot] == root, let module = root.split(separator: ".").first,
      root.contains(".")
    else { return nil }
    let type = root.dropFirst(module.count + 1)
    return PropertyName(module: String(module), type: String(type), property: String(path[path.index(after: dot)...]))
  }
}
