import CDw
import ObsTraceFormat

/// A key path getter that LLVM's function merging made a thunk: an optimized build (`-O`) merges functions that
/// differ only in the addresses they use into one function (symbol `…TKTm`, demangled `merged key path getter for
/// …`) named after ONE of them, and makes each of the others (and often that one too) a thunk with no symbol that
/// loads its own addresses and calls the merged function: `push %rbp; mov %rsp,%rbp; [sub $n,%rsp; lea field
/// offset, %rcx; mov %rcx,(%rsp);] lea …,%rcx; lea <Module.Class._$observationRegistrar direct field offset>,%r8;
/// lea <access specialized for Module.Class>,%r9; call <merged>; [add $n,%rsp;] pop %rbp; ret` (x86-64). The merged
/// function's name is another property's when classes of one layout share it (`AsyncTestModel.count`'s thunk calls
/// `key path getter for Up.TestModel.value`), so it does not name the thunk's property: what the thunk passes does.
public struct MergedKeyPathGetter: Equatable, Sendable {
  /// The property the merged function is named after (`Up.TestModel.value`), and its value's type (`Swift.Int`).
  public var merged: PropertyName
  public var valueType: String
  /// The merged function's mangled name without `$s` (its type's mangling is a prefix of it).
  public var mergedMangled: String
  /// The class whose field offsets the thunk passes (`Up`, `AsyncTestModel`): every direct field offset it loads is
  /// one of this class's.
  public var module: String
  public var type: String
  /// The stored field whose offset the thunk passes (`_firstName`), when the merged function reads the property
  /// through a field offset it is given; nil when it reads a fixed offset of its own (the same in every class it
  /// serves).
  public var storedField: String?

  /// The property's name when the thunk alone makes it certain: the thunk passes the property's stored field
  /// (`_q` of its class: `q`), or it passes no stored field and its class is the one the merged function is named
  /// after (then it is that property: another property of the class is at another offset, so its getter's code
  /// differs). Nil when only the runtime's field offsets can tell (`storedField` nil, another class).
  public var certainName: PropertyName? {
    if let storedField {
      guard let property = Self.property(ofStoredField: storedField) else { return nil }
      return PropertyName(module: module, type: type, property: property)
    }
    guard module == merged.module, type == merged.type else { return nil }
    return merged
  }

  /// The demangled name of the key path getter of `name`, as a thunk's function is named (`key path getter for
  /// Up.Person.firstName : Swift.String : Up.Person`).
  public func getterSymbol(for name: PropertyName) -> String {
    let qualified = name.module + "." + name.type
    return "key path getter for \(qualified).\(name.property) : \(valueType) : \(qualified)"
  }

  /// `_count` → `count`: the macro stores property `count` in `_count`. Nil for a field of another shape.
  public static func property(ofStoredField field: String) -> String? {
    guard field.count > 1, field.hasPrefix("_"), !field.hasPrefix("_$") else { return nil }
    return String(field.dropFirst())
  }
}

extension Symbolizer {
  /// The merged key path getter that the code at `address` (a key path's getter pointer) is a thunk of, or nil
  /// when it is not exactly such a thunk (`MergedKeyPathGetter`).
  public func mergedKeyPathGetter(at address: UInt64) -> MergedKeyPathGetter? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)) else { return nil }
    return Self.mergedKeyPathGetter(module, Dwarf_Addr(address))
  }

  /// The exact symbol at `address` (raw, mangled), or nil when no symbol starts there.
  static func symbolStarting(_ module: OpaquePointer, _ address: Dwarf_Addr) -> String? {
    var offset: GElf_Off = 0
    var symbol = GElf_Sym()
    guard let raw = dwfl_module_addrinfo(module, address, &offset, &symbol, nil, nil, nil), offset == 0 else {
      return nil
    }
    return String(cString: raw)
  }

  static func mergedKeyPathGetter(_ module: OpaquePointer, _ address: Dwarf_Addr) -> MergedKeyPathGetter? {
    guard let code = Self.thunkCode(module, address) else { return nil }
    // The merged function: `…TKTm`, a key path getter merged.
    guard let mergedRaw = symbolStarting(module, code.call), mergedRaw.hasPrefix("$s"), mergedRaw.hasSuffix("TKTm")
    else { return nil }
    let getter = Demangler.demangle(String(mergedRaw.dropLast(2)))
    guard let merged = PropertyNaming.name(fromKeyPathGetter: getter) else { return nil }
    let parts = getter.split(separator: " : ", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3, !parts[1].isEmpty else { return nil }
    // What the thunk loads: every address with a symbol of its own that is a direct field offset names one class.
    var owner: (module: String, type: String)?
    var storedFields: [String] = []
    var offsets = 0
    for target in code.loads {
      guard let raw = symbolStarting(module, target), raw.hasPrefix("$s"), raw.hasSuffix("Wvd") else { continue }
      let prefix = "direct field offset for "
      let demangled = Demangler.demangle(raw)
      guard demangled.hasPrefix(prefix) else { return nil }
      var path = demangled.dropFirst(prefix.count)
      guard let colon = path.firstRange(of: " : ") else { return nil }
      let fieldType = String(path[colon.upperBound...])
      path = path[..<colon.lowerBound]
      // A private field: `Up.Person.(_firstName in _C6CF…)`.
      var field: String
      if path.hasSuffix(")"), let open = path.lastIndex(of: "("), let space = path[open...].firstRange(of: " in ") {
        field = String(path[path.index(after: open)..<space.lowerBound])
        path = path[..<open]
        guard path.hasSuffix(".") else { return nil }
        path = path.dropLast()
      } else {
        guard let dot = path.lastIndex(of: ".") else { return nil }
        field = String(path[path.index(after: dot)...])
        path = path[..<dot]
      }
      guard !path.hasPrefix("("), let dot = path.firstIndex(of: ".") else { return nil }
      let fieldOwner = (module: String(path[..<dot]), type: String(path[path.index(after: dot)...]))
      if let owner, owner != fieldOwner { return nil }
      owner = fieldOwner
      offsets += 1
      if field != "_$observationRegistrar" {
        guard fieldType == parts[1] else { return nil }
        storedFields.append(field)
      }
    }
    guard let owner, offsets > 0, storedFields.count <= 1 else { return nil }
    return MergedKeyPathGetter(
      merged: merged, valueType: parts[1], mergedMangled: String(mergedRaw.dropFirst(2).dropLast(2)),
      module: owner.module, type: owner.type, storedField: storedFields.first)
  }

  /// The addresses a merged getter's thunk at `address` loads (`lea disp32(%rip)`) and the function it calls, when
  /// its code is exactly such a thunk: `push %rbp; mov %rsp,%rbp`, optionally `sub $n,%rsp`, then only `lea
  /// disp32(%rip),reg` and `mov reg,disp8(%rsp)`, `call rel32`, optionally `add $n,%rsp`, `pop %rbp; ret`.
  static func thunkCode(_ module: OpaquePointer, _ address: Dwarf_Addr) -> (loads: [Dwarf_Addr], call: Dwarf_Addr)?
  {
    #if arch(x86_64)
      guard let bytes = code(module, address, count: 96) else { return nil }
      func displacement(_ at: Int) -> Int64 {
        var value: Int32 = 0
        for shift in 0..<4 { value |= Int32(bytes[at + shift]) << (8 * shift) }
        return Int64(value)
      }
      func target(after end: Int, _ displacement: Int64) -> Dwarf_Addr {
        Dwarf_Addr(bitPattern: Int64(bitPattern: address) &+ Int64(end) &+ displacement)
      }
      guard Array(bytes.prefix(4)) == [0x55, 0x48, 0x89, 0xe5] else { return nil }
      var at = 4
      var adjusted = false
      if bytes[at] == 0x48, bytes[at + 1] == 0x83, bytes[at + 2] == 0xec {
        adjusted = true
        at += 4
      }
      var loads: [Dwarf_Addr] = []
      while at + 8 <= bytes.count {
        let rex = bytes[at]
        if rex == 0x48 || rex == 0x4c, bytes[at + 1] == 0x8d, bytes[at + 2] & 0xc7 == 0x05 {
          // lea disp32(%rip),reg
          loads.append(target(after: at + 7, displacement(at + 3)))
          at += 7
        } else if rex == 0x48 || rex == 0x4c, bytes[at + 1] == 0x89, bytes[at + 2] & 0xc7 == 0x04,
          bytes[at + 3] == 0x24
        {
          at += 4  // mov reg,(%rsp)
        } else if rex == 0x48 || rex == 0x4c, bytes[at + 1] == 0x89, bytes[at + 2] & 0xc7 == 0x44,
          bytes[at + 3] == 0x24
        {
          at += 5  // mov reg,disp8(%rsp)
        } else {
          break
        }
      }
      guard !loads.isEmpty, at + 5 <= bytes.count, bytes[at] == 0xe8 else { return nil }
      let call = target(after: at + 5, displacement(at + 1))
      at += 5
      if adjusted {
        guard at + 4 <= bytes.count, bytes[at] == 0x48, bytes[at + 1] == 0x83, bytes[at + 2] == 0xc4 else {
          return nil
        }
        at += 4
      }
      guard at + 2 <= bytes.count, bytes[at] == 0x5d, bytes[at + 1] == 0xc3 else { return nil }
      return (loads, call)
    #else
      return nil
    #endif
  }

  /// Up to `count` bytes of the module's file at `address` (fewer at the end of its segment), or nil.
  static func code(_ module: OpaquePointer, _ address: Dwarf_Addr, count: Int) -> [UInt8]? {
    var bias: Dwarf_Addr = 0
    guard let elf = dwfl_module_getelf(module, &bias) else { return nil }
    let address = address &- bias
    var headers = 0
    guard elf_getphdrnum(elf, &headers) == 0 else { return nil }
    for index in 0..<headers {
      var header = GElf_Phdr()
      guard gelf_getphdr(elf, Int32(index), &header) != nil, header.p_type == PT_LOAD,
        address >= header.p_vaddr, address < header.p_vaddr + header.p_filesz
      else { continue }
      let available = Int(min(UInt64(count), header.p_vaddr + header.p_filesz - address))
      let offset = address - header.p_vaddr + header.p_offset
      guard let data = elf_getdata_rawchunk(elf, Int64(offset), available, ELF_T_BYTE), let raw = data.pointee.d_buf
      else { return nil }
      return Array(UnsafeRawBufferPointer(start: raw, count: available))
    }
    return nil
  }
}

extension Symbolizer {
  /// The key path getter's name for a getter with no symbol that only calls its property's getter with the root
  /// object as `self`, when `function` (the symbol there, if any) is not a key path getter's: `push %rbp; mov
  /// %rsp,%rbp; push %r13; push %rax; mov (%rdi),%r13; call <Module.Type.property.getter : T>; add $8,%rsp; pop %r13;
  /// pop %rbp; ret` (x86-64). An optimized build makes such a key path getter for a generic class's property
  /// specialized in the user's module (`\Box<Int>.value`: it calls `Gen.Box.value.getter : A`), and gives it no symbol
  /// (before, `Box<Int>.<Int #1>`, not compared). Nil for any other code or callee.
  static func namingGetterCall(_ function: String, _ module: OpaquePointer, _ address: Dwarf_Addr) -> String? {
    #if arch(x86_64)
      guard PropertyNaming.name(fromKeyPathGetter: function) == nil, let target = getterCallTarget(module, address),
        let raw = symbolStarting(module, target), raw.hasPrefix("$s")
      else { return nil }
      let getter = Demangler.demangle(raw)
      // `Gen.Box.value.getter : A`: a property's own getter, nothing else (no specialization, closure or suffix).
      guard let colon = getter.firstRange(of: " : "), getter[colon.upperBound...].firstRange(of: " : ") == nil else {
        return nil
      }
      let path = getter[..<colon.lowerBound]
      let valueType = getter[colon.upperBound...]
      guard path.hasSuffix(".getter"), !path.contains(" "), !path.contains("("), !valueType.contains(" with ") else {
        return nil
      }
      let components = path.dropLast(".getter".count).split(separator: ".")
      guard components.count >= 3 else { return nil }
      let root = components.dropLast().joined(separator: ".")
      return "key path getter for \(root).\(components.last!) : \(valueType) : \(root)"
    #else
      return nil
    #endif
  }

  /// The function the code at `address` calls when it is exactly a key path getter that only calls its property's
  /// getter (the code `namingGetterCall` describes), or nil.
  static func getterCallTarget(_ module: OpaquePointer, _ address: Dwarf_Addr) -> Dwarf_Addr? {
    #if arch(x86_64)
      guard let bytes = code(module, address, count: 24), bytes.count == 24 else { return nil }
      let before: [UInt8] = [0x55, 0x48, 0x89, 0xe5, 0x41, 0x55, 0x50, 0x4c, 0x8b, 0x2f, 0xe8]
      let after: [UInt8] = [0x48, 0x83, 0xc4, 0x08, 0x41, 0x5d, 0x5d, 0xc3]
      guard Array(bytes[0..<11]) == before, Array(bytes[15..<23]) == after else { return nil }
      var displacement: Int32 = 0
      for shift in 0..<4 { displacement |= Int32(bytes[11 + shift]) << (8 * shift) }
      return Dwarf_Addr(bitPattern: Int64(bitPattern: address) &+ 15 &+ Int64(displacement))
    #else
      return nil
    #endif
  }
}
