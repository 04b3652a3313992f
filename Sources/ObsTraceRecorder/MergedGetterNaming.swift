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
