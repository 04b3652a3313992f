import CDw
import ObsTraceFormat

/// Who wrote a property's getter, as the line table shows it: the `@Observable` macro, whose value is then in the
/// stored field `_name` its `ObservationTracked` accessor macro reads, or the program's author, whose accessors may
/// keep the value anywhere (a `_name` field of the right type may be something else: a cache, another unit).
public enum GetterOrigin: Sendable, Equatable {
  /// Written by the `ObservationTracked` accessor macro: its rows are in the macro's expansion buffer
  /// (`@__swiftmacro_…ObservationTrackedfMa_.swift`), in a debug build and in an optimized one alike.
  case observationMacro
  /// Written by hand: its rows are in a source file of the program, none in that buffer.
  case handWritten
}

extension Symbolizer {
  /// Who wrote the getter of the property whose key path getter is at `address` (a key path's getter pointer),
  /// from the rows of the line table; nil when no rows tell (no debug information, or a getter not found).
  ///
  /// A debug build's key path getter only calls the property's getter (through the class's vtable for a class that
  /// is not final), and its own rows are `<compiler-generated>`: the getter is found by its symbol, whose mangled
  /// name is the key path getter's with `vp<root>TK` made `vg` (`$s6Models6LedgerC7percentSivpACTK` →
  /// `$s6Models6LedgerC7percentSivg`), and its rows tell. An optimized build inlines the getter into the key path
  /// getter, whose rows then hold the getter's, in its buffer or file; the getter's own symbol, when it is still
  /// there, tells the same. Key path getters that are thunks are followed: a jump (`followingThunk`), a merged
  /// getter's thunk (`thunkCode`: the merged function is one of identical key path getters), a thunk that only
  /// calls the getter (`getterCallTarget`).
  ///
  /// Only the buffer of this property's own accessors counts (`property` of `type`, as the key path getter's symbol
  /// names them): an optimized build also inlines into a hand-written getter the macro's getter of another property
  /// it reads. The exception is a merged getter (LLVM's function merging made one function of key path getters of
  /// identical code, named after one of them): its rows are that one's, and identical code is the macro's.
  ///
  /// When no rows tell (LLVM's function merging left the key path getter and the getter thunks of a merged
  /// function that has no rows, in an optimized build), the getter's declaration does: DWARF declares it in its
  /// class with the file that declares it (`DW_AT_decl_file`), the macro's buffer or a source file
  /// (`declaredGetterFile`).
  public func getterOrigin(keyPathGetter address: UInt64, name: PropertyName) -> GetterOrigin? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)) else { return nil }
    let subject = Self.accessorMacroSubject(of: name)
    let isOwnBuffer = { (file: String) in self.accessorMacroSubject(file) == subject }
    let (keyPathModule, keyPathGetter) = followingThunk(module, Dwarf_Addr(address))
    let own = rowFiles(keyPathModule, keyPathGetter)
    if own?.contains(where: isOwnBuffer) == true { return .observationMacro }
    let merged = Self.thunkCode(keyPathModule, keyPathGetter)?.call
    if let merged, let files = rowFiles(at: merged), files.contains(where: { accessorMacroSubject($0) != nil }) {
      return .observationMacro
    }
    let getters = [
      namedGetter(keyPathModule, keyPathGetter), merged.flatMap { namedGetter(at: $0) },
      Self.getterCallTarget(keyPathModule, keyPathGetter),
    ].compactMap { $0 }
    var written = false
    for getter in getters {
      guard let files = rowFiles(at: getter) else { continue }
      if files.contains(where: isOwnBuffer) { return .observationMacro }
      written = written || files.contains(where: Self.isSourceFile)
    }
    if written { return .handWritten }
    // No getter of its own (inlined everywhere and gone): the key path getter's rows are the inlined getter's.
    if getters.isEmpty, own?.contains(where: Self.isSourceFile) == true { return .handWritten }
    for code in [keyPathGetter] + [merged].compactMap({ $0 }) + getters {
      guard let codeModule = dwfl_addrmodule(session, code), let file = declaredGetterFile(codeModule, code, name)
      else { continue }
      if isOwnBuffer(file) { return .observationMacro }
      if Self.isSourceFile(file) { return .handWritten }
    }
    return nil
  }

  /// The file that declares the getter of property `name` (`DW_AT_decl_file` of its `DW_TAG_subprogram`
  /// declaration, found by its linkage name among the declarations of the types of the compile unit that holds
  /// `address`), or nil. The linkage name is demangled and compared by what it names
  /// (`Settings.Settings.darkMode.getter : Swift.Bool` for `$s8SettingsAAC8darkModeSbvg`), not re-spelled: the mangler
  /// shortens repeated names by substitution and spells non-ASCII ones in punycode (`getterNames`).
  func declaredGetterFile(_ module: OpaquePointer, _ address: Dwarf_Addr, _ name: PropertyName) -> String? {
    guard var unit = compileUnit(module, address) else { return nil }
    let getter = Self.qualifiedName(of: name) + ".getter : "
    func search(_ parent: inout Dwarf_Die) -> String? {
      var child = Dwarf_Die()
      guard dwarf_child(&parent, &child) == 0 else { return nil }
      while true {
        switch Int(dwarf_tag(&child)) {
        case DW_TAG_subprogram:
          var attribute = Dwarf_Attribute()
          if dwarf_attr(&child, UInt32(DW_AT_linkage_name), &attribute) != nil, let raw = dwarf_formstring(&attribute) {
            let linkage = String(cString: raw)
            if Self.mayBeGetter(linkage), Self.names(getter, Demangler.demangle(linkage)),
              let file = dwarf_decl_file(&child)
            {
              return String(cString: file)
            }
          }
        case DW_TAG_module, DW_TAG_namespace, DW_TAG_structure_type, DW_TAG_class_type, DW_TAG_union_type,
          DW_TAG_enumeration_type:
          if let found = search(&child) { return found }
        default:
          break
        }
        var sibling = Dwarf_Die()
        guard dwarf_siblingof(&child, &sibling) == 0 else { return nil }
        child = sibling
      }
    }
    return search(&unit.die)
  }

  /// Whether a linkage name may be a property getter's, by a cheap look before it is demangled: a Swift symbol with
  /// a `vg` (a getter) and no `TK` (a key path getter) in it.
  static func mayBeGetter(_ linkage: String) -> Bool {
    linkage.hasPrefix("$s") && linkage.contains("vg") && !linkage.contains("TK")
  }

  /// Whether the demangled symbol `demangled` is the getter `getter` (`Demo.Box.value.getter : `, its type after),
  /// or a generic specialization of it; not a thunk, a merged function or anything else named after it.
  static func names(_ getter: String, _ demangled: String) -> Bool {
    if demangled.hasPrefix(getter) { return true }
    guard demangled.hasPrefix("generic specialization <"), let of = demangled.firstRange(of: "> of ") else {
      return false
    }
    return demangled[of.upperBound...].hasPrefix(getter)
  }

  /// `Module.Type.property` as the demangler prints a declaration of property `name`: its type's path without
  /// generic arguments (`Demo.Box.value` for `Box<Int>.value`), a private declaration with its file's discriminator
  /// (`Odd.(Model in _11E4…).count`, `Demo.Counter.(secret in _8AAE…)`).
  static func qualifiedName(of name: PropertyName) -> String {
    "\(name.module).\(withoutGenericArguments(name.type)).\(name.property)"
  }

  /// What the `ObservationTracked` buffer of property `name` is of, as the demangler says it: `darkMode in
  /// Settings.Settings` (`accessorMacroSubject(_:)`).
  static func accessorMacroSubject(of name: PropertyName) -> String {
    "\(name.property) in \(name.module).\(withoutGenericArguments(name.type))"
  }

  /// What the `ObservationTracked` accessor macro's expansion buffer `file` (the accessors `@Observable` gives each
  /// stored property) is of: its file name (`@__swiftmacro_<mangling>.swift`) demangled, `accessor macro
  /// @ObservationTracked expansion #1 of darkMode in Settings.Settings`, after its `of `; nil for any other file.
  /// Demangled rather than compared with a spelling of the mangling: the mangler substitutes a name said before
  /// (`8SettingsAAC8darkMode…` for class `Settings` of module `Settings`; `12TrackedValueC5value011ObservationB0fMa_`,
  /// whose macro name reuses the type's word `Tracked`), and spells non-ASCII names in punycode
  /// (`0013ncd_skaCeHaFdC007caf_dma…` for `Ünïcødé.café`): a literal spelling missed those buffers, and every write
  /// through `_modify` of such a property was "not compared" (tryout17's Q5). Once per file (`macroBufferSubjects`).
  func accessorMacroSubject(_ file: String) -> String? {
    if let known = macroBufferSubjects[file] { return known }
    let subject = Self.accessorMacroSubject(demangling: file)
    macroBufferSubjects[file] = subject
    return subject
  }

  static func accessorMacroSubject(demangling file: String) -> String? {
    let marker = "@__swiftmacro_"
    guard file.hasSuffix(".swift"), let last = file.split(separator: "/").last, last.hasPrefix(marker) else {
      return nil
    }
    let mangled = "$s" + last.dropFirst(marker.count).dropLast(".swift".count)
    let demangled = Demangler.demangle(mangled)
    let prefix = "accessor macro @ObservationTracked expansion #"
    guard demangled.hasPrefix(prefix) else { return nil }
    let rest = demangled.dropFirst(prefix.count).drop(while: { $0.isASCII && $0.isNumber })
    guard rest.hasPrefix(" of ") else { return nil }
    return String(rest.dropFirst(" of ".count))
  }

  /// A type's path without generic arguments at any level (`Outer<Int>.Inner<Int>` → `Outer.Inner`).
  static func withoutGenericArguments(_ type: String) -> String {
    guard type.contains("<") else { return type }
    var depth = 0
    var plain = ""
    for character in type {
      if character == "<" {
        depth += 1
      } else if character == ">" {
        depth -= 1
      } else if depth == 0 {
        plain.append(character)
      }
    }
    return plain
  }

  /// Whether `file` is a source file of the program: not a macro's buffer, not `<compiler-generated>`.
  static func isSourceFile(_ file: String) -> Bool {
    !file.contains("@__swiftmacro_") && !file.hasSuffix("<compiler-generated>") && file.hasSuffix(".swift")
  }

  /// The files of the line table's rows (those that name a line) of the function whose code holds `address`, or nil
  /// when the module has no line table there.
  func rowFiles(at address: Dwarf_Addr) -> Set<String>? {
    guard let module = dwfl_addrmodule(session, address) else { return nil }
    return rowFiles(module, address)
  }

  func rowFiles(_ module: OpaquePointer, _ address: Dwarf_Addr) -> Set<String>? {
    guard var unit = compileUnit(module, address) else { return nil }
    guard var function = inlinedScopes(in: &unit.die, at: address &- unit.bias).function else { return nil }
    let ranges = Symbolizer.addressRanges(of: &function)
    var lines: OpaquePointer?
    var count = 0
    guard !ranges.isEmpty, dwarf_getsrclines(&unit.die, &lines, &count) == 0, let lines, count > 0 else { return nil }
    func rowAddress(_ index: Int) -> Dwarf_Addr? {
      var found: Dwarf_Addr = 0
      guard let raw = dwarf_onesrcline(lines, index), dwarf_lineaddr(raw, &found) == 0 else { return nil }
      return found
    }
    var files = Set<String>()
    for range in ranges {
      // The first row at or after the range's start (libdw sorts rows by address).
      var low = 0
      var high = count
      while low < high {
        let middle = (low + high) / 2
        if let found = rowAddress(middle), found < range.start { low = middle + 1 } else { high = middle }
      }
      var index = low
      while index < count, let found = rowAddress(index), found < range.end {
        var line: Int32 = 0
        if let raw = dwarf_onesrcline(lines, index), dwarf_lineno(raw, &line) == 0, line > 0,
          let path = dwarf_linesrc(raw, nil, nil)
        {
          files.insert(String(cString: path))
        }
        index += 1
      }
    }
    return files
  }

  /// The address of the property getter named after the key path getter at `address` (its symbol `…vp<root>TK`, or
  /// a merged one's `…TKTm`, made `…vg`), or nil when no symbol starts there or the module defines no such getter.
  func namedGetter(at address: Dwarf_Addr) -> Dwarf_Addr? {
    guard let module = dwfl_addrmodule(session, address) else { return nil }
    return namedGetter(module, address)
  }

  func namedGetter(_ module: OpaquePointer, _ address: Dwarf_Addr) -> Dwarf_Addr? {
    guard let raw = Self.symbolStarting(module, address), raw.hasPrefix("$s") else { return nil }
    var name = Array(raw.utf8)
    if name.count > 2, name.suffix(2).elementsEqual("Tm".utf8) { name.removeLast(2) }
    guard name.count > 4, name.suffix(2).elementsEqual("TK".utf8) else { return nil }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(module)))
    if getterSymbols[key] == nil { getterSymbols[key] = Self.getterSymbols(module) }
    let getters = getterSymbols[key] ?? [:]
    // The storage's mangling ends at a `vp`; the root's after it seldom holds one, but a name may: the last first.
    var index = name.count - 2
    while index > 2 {
      index -= 1
      guard name[index] == UInt8(ascii: "v"), name[index + 1] == UInt8(ascii: "p") else { continue }
      let getter = String(decoding: name[..<index], as: UTF8.self) + "vg"
      if let found = getters[getter] { return found }
    }
    return nil
  }

  /// The module's defined functions whose mangled name is a property getter's (`$s…vg`), by name.
  static func getterSymbols(_ module: OpaquePointer) -> [String: Dwarf_Addr] {
    var getters: [String: Dwarf_Addr] = [:]
    let count = dwfl_module_getsymtab(module)
    guard count > 0 else { return getters }
    for index in 0..<count {
      var symbol = GElf_Sym()
      var address: GElf_Addr = 0
      guard let raw = dwfl_module_getsym_info(module, index, &symbol, &address, nil, nil, nil), symbol.st_value != 0,
        Int32(symbol.st_info & 0xf) == STT_FUNC
      else { continue }
      let name = String(cString: raw)
      if name.hasPrefix("$s") && name.hasSuffix("vg") { getters[name] = Dwarf_Addr(address) }
    }
    return getters
  }
}

extension Symbolizer {
  /// The type whose class metadata is at `address`, as its symbol names it (`Odd.(Model in _11E4…)`, a private
  /// type's file's discriminator included, which the runtime's printing leaves out): the metadata the compiler emitted,
  /// `…CN` (a debug build) or inside its full metadata `…CMf` (an optimized one drops `…CN`). Nil when no such symbol
  /// holds the address (metadata the runtime made, a binary without symbols).
  public func typeOfMetadata(at address: UInt64) -> String? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)) else { return nil }
    var offset: GElf_Off = 0
    var symbol = GElf_Sym()
    guard let raw = dwfl_module_addrinfo(module, Dwarf_Addr(address), &offset, &symbol, nil, nil, nil) else {
      return nil
    }
    let mangled = String(cString: raw)
    guard mangled.hasPrefix("$s"),
      (mangled.hasSuffix("CN") && offset == 0) || (mangled.hasSuffix("CMf") && offset < symbol.st_size)
    else { return nil }
    let demangled = Demangler.demangle(mangled)
    for prefix in ["full type metadata for ", "type metadata for "] where demangled.hasPrefix(prefix) {
      return String(demangled.dropFirst(prefix.count))
    }
    return nil
  }
}
