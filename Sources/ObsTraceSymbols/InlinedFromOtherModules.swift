import CDw
import ObsTraceFormat

extension Symbolizer {
  /// Places the frames of functions inlined from another module of the program. An optimized build inlines a
  /// public function of a library target into its caller in another target (cross-module optimization: `retitle`,
  /// a specialization of a generic `retitleGeneric`, a `@dynamicMemberLookup` lens's `nonmutating set`), from the
  /// library's serialized body, which carries no lines: DWARF names the inlined function, and every row of its code,
  /// and every call inlined in it, has the caller's line or line 0 (`<compiler-generated>`). The frame was sited at
  /// its caller's line in its own module's name, a file that does not exist (`Screens/main.swift:78 (retitle(_:_:))`,
  /// the call being App/main.swift:78), or at `Screens/<compiler-generated>:0` (a fresh-clone try-out's J4). Such a
  /// function's abstract origin has no `DW_AT_decl_file`; its out-of-line definition, compiled in its own module
  /// and linked into the same binary, does: the frame takes the definition's place (its declaration's line, or the
  /// first row of its code for an accessor, whose DWARF declaration has no line), marked approximate unless the
  /// user's source shows the whole function on that line (`func retitle(…) { m.title += suffix }`, `nonmutating set
  /// { base[keyPath: kp] = newValue }`), where every statement of it is. A specialization (`generic specialization
  /// <Product> of retitleGeneric`) is placed by the generic function it specializes. When no definition is found
  /// (the library is a shared library, or has no debug information), a frame whose place is its caller's or line 0
  /// is left with no line (`<compiler-generated>`, line 0: printed "line unknown"), never its caller's line under
  /// its own module. A frame whose own rows name a file of the user's other than its caller's place is kept. The
  /// frames of ObsTrace, Observation and the standard library are left as they are (they are not sites). `scopes`
  /// are the inlined scopes, innermost first; `module` is the binary that holds them.
  func placeInlinedFromOtherModules(
    _ frame: inout SymbolizedFrame, scopes: [Dwarf_Die], module: OpaquePointer, binary: String?
  ) {
    guard !frame.inlined.isEmpty, frame.inlined.count == scopes.count else { return }
    for index in scopes.indices {
      var scope = scopes[index]
      let function = frame.inlined[index].function
      // Machinery wherever it is placed (ObsTrace's, Observation's, the standard library's, the macro's helpers).
      let anywhere = SymbolizedFrame(address: 0, function: function, file: "/", module: frame.module)
      guard dwarf_decl_file(&scope) == nil, !SiteFilter.isMachinery(anywhere), let name = Self.linkageName(&scope)
      else { continue }
      // Where the frame is now: the line table's row or the call site of the function inlined in it.
      let placed = frame.inlined[index]
      let caller = index + 1 < frame.inlined.count ? frame.inlined[index + 1] : frame
      let noPlace =
        placed.line == 0 || !Self.isUserFile(placed.file) || (placed.file == caller.file && placed.line == caller.line)
      let specialization = SiteFilter.withoutQualifiers(Substring(function)).count != function.count
      guard let place = definitionPlace(of: name, isSpecialization: specialization, in: module) else {
        if noPlace {
          frame.inlined[index].file = "<compiler-generated>"
          frame.inlined[index].line = 0
          frame.inlined[index].lineIsApproximate = false
        }
        continue
      }
      if !noPlace && Self.sameFile(placed.file, place.file) { continue }
      var certain = false
      if let binary, let source = userSource(place.file, notNewerThan: binary),
        let body = SourceExtent.body(source, declaredAt: Int(place.line))
      {
        certain = body.count == 1
      }
      frame.inlined[index].file = place.file
      frame.inlined[index].line = UInt32(place.line)
      frame.inlined[index].lineIsApproximate = !certain
    }
  }

  /// The linkage (mangled) name of a function's DIE, through its abstract origin or specification.
  static func linkageName(_ die: inout Dwarf_Die) -> String? {
    var attribute = Dwarf_Attribute()
    for name in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name] {
      if dwarf_attr_integrate(&die, UInt32(name), &attribute) != nil, let raw = dwarf_formstring(&attribute) {
        return String(cString: raw)
      }
    }
    return nil
  }

  /// Where the function of linkage name `name` is defined in `module`'s code: the file and line of its declaration
  /// (an accessor's DWARF declaration has none: the first row of its code), from a function with code of that name
  /// whose place is a file of the user's. For a specialization (`generic specialization <Product> of
  /// retitleGeneric`) that has none, the function it specializes: the longest name with code that `name` begins
  /// with (`…retitleGeneric…F` of `…F…Tg5`). When that function's own code has no line (an optimized build's
  /// out-of-line generic `nonmutating set` only calls its specialization, in line-0 rows), another specialization
  /// of it (`…Tf4gnn_n`, whose rows are the body's). Nil when none is found (the library is another binary, or has
  /// no debug information). Cached per name.
  func definitionPlace(of name: String, isSpecialization: Bool, in module: OpaquePointer)
    -> (file: String, line: Int32)?
  {
    let key = UInt(bitPattern: module)
    if definitionIndexes[key] == nil { definitionIndexes[key] = Self.indexDefinitions(module) }
    guard let index = definitionIndexes[key], let dwarf = index.dwarf else { return nil }
    if let known = index.places[name] { return known }
    func place(named candidate: String) -> (file: String, line: Int32)? {
      for offset in index.functions[candidate] ?? [] {
        var die = Dwarf_Die()
        if dwarf_offdie(dwarf, offset, &die) != nil, let place = Self.place(ofDefinition: &die) { return place }
      }
      return nil
    }
    var found = place(named: name)
    if found == nil, isSpecialization {
      // The function it specializes, then that function's other specializations.
      var prefix = Substring(name).dropLast()
      while prefix.count > 2, index.functions[String(prefix)] == nil { prefix = prefix.dropLast() }
      let original = String(prefix)
      if prefix.count > 2 { found = place(named: original) }
      if found == nil, prefix.count > 2 {
        let unspecialized = Demangler.demangle(original)
        // The first name after `original` in order: its specializations follow it.
        var at = 0
        var end = index.names.count
        while at < end {
          let middle = (at + end) / 2
          if index.names[middle] <= original { at = middle + 1 } else { end = middle }
        }
        while found == nil, at < index.names.count, index.names[at].hasPrefix(original) {
          let other = index.names[at]
          let demangled = Demangler.demangle(other)
          if SiteFilter.withoutQualifiers(Substring(demangled)) == unspecialized, demangled != unspecialized {
            found = place(named: other)
          }
          at += 1
        }
      }
    }
    definitionIndexes[key]?.places.updateValue(found, forKey: name)
    return found
  }

  /// The file and line a function with code is declared at, for a file of the user's (an absolute path, not
  /// `<compiler-generated>`): its `DW_AT_decl_file` and `DW_AT_decl_line`, or, when it has none (an accessor), the
  /// first row of its code that names a line.
  static func place(ofDefinition die: inout Dwarf_Die) -> (file: String, line: Int32)? {
    var unit = Dwarf_Die()
    guard dwarf_diecu(&die, &unit, nil, nil) != nil else { return nil }
    var line: Int32 = 0
    if let raw = dwarf_decl_file(&die), dwarf_decl_line(&die, &line) == 0, line > 0 {
      let file = String(cString: raw)
      guard let path = sourcePath(file, in: &unit), isUserFile(path) else { return nil }
      return (path, line)
    }
    guard let start = addressRanges(of: &die).map(\.start).min() else { return nil }
    var lines: OpaquePointer?
    var count = 0
    guard dwarf_getsrclines(&unit, &lines, &count) == 0, let lines else { return nil }
    var best: (address: Dwarf_Addr, file: String, line: Int32)?
    for row in 0..<count {
      guard let raw = dwarf_onesrcline(lines, row) else { continue }
      var address: Dwarf_Addr = 0
      var rowLine: Int32 = 0
      guard dwarf_lineaddr(raw, &address) == 0, address >= start, best.map({ address < $0.address }) ?? true,
        dwarf_lineno(raw, &rowLine) == 0, rowLine > 0, dwarf_haspc(&die, address) == 1,
        let path = dwarf_linesrc(raw, nil, nil)
      else { continue }
      best = (address, String(cString: path), rowLine)
    }
    guard let best, let path = sourcePath(best.file, in: &unit), isUserFile(path) else { return nil }
    return (path, best.line)
  }

  /// A source file of the user's: an absolute path, not the compiler's (`/<compiler-generated>`) nor a macro's
  /// expansion buffer.
  static func isUserFile(_ path: String) -> Bool {
    path.hasPrefix("/") && !path.contains("<compiler-generated>") && !path.contains("@__swiftmacro_")
  }

  /// Every function with code in `module`'s DWARF, by linkage name: the DIE offsets of each (none without DWARF).
  static func indexDefinitions(_ module: OpaquePointer) -> DefinitionIndex {
    var bias: Dwarf_Addr = 0
    guard let dwarf = dwfl_module_getdwarf(module, &bias) else { return DefinitionIndex(dwarf: nil) }
    var index = DefinitionIndex(dwarf: dwarf)
    var offset: Dwarf_Off = 0
    var next: Dwarf_Off = 0
    var headerSize = 0
    while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0 {
      var unit = Dwarf_Die()
      if dwarf_offdie(dwarf, offset + Dwarf_Off(headerSize), &unit) != nil {
        var functions: [Dwarf_Die] = []
        collectFunctions(in: &unit, into: &functions)
        for var function in functions {
          guard let name = linkageName(&function) else { continue }
          index.functions[name, default: []].append(dwarf_dieoffset(&function))
        }
      }
      offset = next
    }
    index.names = index.functions.keys.sorted()
    return index
  }

  /// A module's functions with code by linkage name, and the places found for names looked up.
  struct DefinitionIndex {
    var dwarf: OpaquePointer?
    var functions: [String: [Dwarf_Off]] = [:]
    /// The names of `functions`, sorted: a function's specializations follow it.
    var names: [String] = []
    var places: [String: (file: String, line: Int32)?] = [:]
  }
}
