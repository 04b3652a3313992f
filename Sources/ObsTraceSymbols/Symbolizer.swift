import CDw
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// Resolves code addresses of a live process to functions, files and lines with libdw (elfutils), reading the
/// ELF symbol tables and DWARF of every module the process has mapped.
public final class Symbolizer {
  private let session: OpaquePointer
  private var callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
  var unitIndexes: [UInt: UnitIndex?] = [:]

  /// A symbolizer for binaries that are no longer running: each module's file and where it was loaded.
  public init?(modules: [LoadedModule]) {
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(
      to: Dwfl_Callbacks(
        find_elf: dwfl_build_id_find_elf, find_debuginfo: dwfl_standard_find_debuginfo,
        section_address: dwfl_offline_section_address, debuginfo_path: nil))
    guard let session = dwfl_begin(callbacks) else {
      callbacks.deallocate()
      return nil
    }
    self.session = session
    dwfl_report_begin(session)
    var reported = 0
    for module in modules where access(module.path, R_OK) == 0 {
      if dwfl_report_elf(session, module.path, module.path, -1, Dwarf_Addr(module.base), false) != nil { reported += 1 }
    }
    dwfl_report_end(session, nil, nil)
    if reported == 0 {
      dwfl_end(session)
      callbacks.deallocate()
      return nil
    }
  }

  private init?(processID: pid_t) {
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(
      to: Dwfl_Callbacks(
        find_elf: dwfl_linux_proc_find_elf, find_debuginfo: dwfl_standard_find_debuginfo, section_address: nil,
        debuginfo_path: nil))
    guard let session = dwfl_begin(callbacks) else {
      callbacks.deallocate()
      return nil
    }
    self.session = session
    dwfl_report_begin(session)
    let reported = dwfl_linux_proc_report(session, processID)
    dwfl_report_end(session, nil, nil)
    if reported != 0 {
      dwfl_end(session)
      callbacks.deallocate()
      return nil
    }
  }

  deinit {
    dwfl_end(session)
    callbacks.deallocate()
  }

  /// A symbolizer for this process; nil when libdw cannot read its memory map.
  public static func forCurrentProcess() -> Symbolizer? {
    Symbolizer(processID: getpid())
  }

  /// A symbolizer for another live process (its binaries must still exist); nil when it cannot be read.
  public static func forProcess(_ processID: Int32) -> Symbolizer? {
    Symbolizer(processID: processID)
  }

  /// Resolves each address; addresses no module covers are left out. Return addresses of call stacks are
  /// looked up one byte before, so that the line is the call's, not the next statement's.
  public func resolve(_ addresses: [UInt64], returnAddresses: Set<UInt64> = []) -> [UInt64: SymbolizedFrame] {
    var frames: [UInt64: SymbolizedFrame] = [:]
    for address in addresses {
      let lookup = Dwarf_Addr(returnAddresses.contains(address) ? address &- 1 : address)
      guard let module = dwfl_addrmodule(session, lookup) else { continue }
      var function = ""
      if let raw = dwfl_module_addrname(module, lookup) {
        function = Demangler.demangle(String(cString: raw))
      }
      var file = ""
      var line: Int32 = 0
      if let source = dwfl_module_getsrc(module, lookup) {
        var column: Int32 = 0
        if let path = dwfl_lineinfo(source, nil, &line, &column, nil, nil) {
          file = String(cString: path)
        }
      }
      if line == 0, let found = lineByScanningUnits(module, lookup) {
        (file, line) = found
      }
      var moduleName = ""
      if let raw = dwfl_module_info(module, nil, nil, nil, nil, nil, nil, nil) {
        moduleName = String(cString: raw)
        if let slash = moduleName.lastIndex(of: "/") {
          moduleName = String(moduleName[moduleName.index(after: slash)...])
        }
      }
      frames[address] = SymbolizedFrame(
        address: address, function: function, file: file, line: UInt32(max(0, line)), module: moduleName)
    }
    return frames
  }
}

extension Symbolizer {
  /// The compile units of a module with their address ranges (DWARF addresses, without the load bias).
  struct UnitIndex {
    var bias: Dwarf_Addr
    var ranges: [(start: Dwarf_Addr, end: Dwarf_Addr, unit: Dwarf_Off)]
  }

  /// Finds the line of `address` by walking the module's compile units' ranges. libdw looks addresses up through
  /// `.debug_aranges`, which Swift's compiler does not emit; without it `dwfl_module_getsrc` finds nothing.
  func lineByScanningUnits(_ module: OpaquePointer, _ address: Dwarf_Addr) -> (String, Int32)? {
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(module)))
    if unitIndexes[key] == nil { unitIndexes[key] = Self.indexUnits(module) }
    var bias: Dwarf_Addr = 0
    guard let index = unitIndexes[key] ?? nil, let dwarf = dwfl_module_getdwarf(module, &bias) else { return nil }
    let target = address &- index.bias
    guard let range = index.ranges.first(where: { target >= $0.start && target < $0.end }) else { return nil }
    var unit = Dwarf_Die()
    guard dwarf_offdie(dwarf, range.unit, &unit) != nil else { return nil }
    if let row = dwarf_getsrc_die(&unit, target) {
      var number: Int32 = 0
      if dwarf_lineno(row, &number) == 0, number > 0, let path = dwarf_linesrc(row, nil, nil) {
        return (String(cString: path), number)
      }
    }
    var lines: OpaquePointer?
    var count = 0
    guard dwarf_getsrclines(&unit, &lines, &count) == 0, let lines else { return nil }
    // The last row at or before the address that names a line: compiler-generated code (a coroutine's resume,
    // cleanups) is marked line 0, and belongs to the statement before it.
    var best: (address: Dwarf_Addr, line: OpaquePointer)?
    for index in 0..<count {
      guard let row = dwarf_onesrcline(lines, index) else { continue }
      var rowAddress: Dwarf_Addr = 0
      var number: Int32 = 0
      var endsSequence = false
      guard dwarf_lineaddr(row, &rowAddress) == 0, rowAddress <= target, dwarf_lineno(row, &number) == 0, number > 0,
        dwarf_lineendsequence(row, &endsSequence) == 0, !endsSequence
      else { continue }
      if best == nil || rowAddress >= best!.address { best = (rowAddress, row) }
    }
    guard let best, let path = dwarf_linesrc(best.line, nil, nil) else { return nil }
    var number: Int32 = 0
    dwarf_lineno(best.line, &number)
    return (String(cString: path), number)
  }

  static func indexUnits(_ module: OpaquePointer) -> UnitIndex? {
    var bias: Dwarf_Addr = 0
    guard let dwarf = dwfl_module_getdwarf(module, &bias) else { return nil }
    var index = UnitIndex(bias: bias, ranges: [])
    var offset: Dwarf_Off = 0
    var next: Dwarf_Off = 0
    var headerSize = 0
    while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0 {
      var unit = Dwarf_Die()
      let unitOffset = offset + Dwarf_Off(headerSize)
      if dwarf_offdie(dwarf, unitOffset, &unit) != nil {
        var cursor: Int = 0
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        repeat {
          cursor = dwarf_ranges(&unit, cursor, &base, &start, &end)
          if cursor > 0 && end > start { index.ranges.append((start, end, unitOffset)) }
        } while cursor > 0
      }
      offset = next
    }
    return index
  }
}

extension LoadedModule {
  /// The modules of this process, from /proc/self/maps.
  public static func current() -> [LoadedModule] {
    guard let file = fopen("/proc/self/maps", "r") else { return [] }
    defer { fclose(file) }
    var modules: [String: UInt64] = [:]
    var order: [String] = []
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let fields = text.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, let path = fields.last.map({ String($0).trimmingNewline }), path.hasPrefix("/"),
        let dash = fields[0].firstIndex(of: "-"), let start = UInt64(fields[0][..<dash], radix: 16),
        UInt64(fields[2], radix: 16) == 0
      else { continue }
      if modules[path] == nil { order.append(path) }
      modules[path] = min(modules[path] ?? .max, start)
    }
    return order.map { LoadedModule(path: $0, base: modules[$0]!) }
  }
}

extension String {
  fileprivate var trimmingNewline: String {
    var text = self
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    return text
  }
}

@_silgen_name("swift_demangle")
private func swiftDemangle(
  _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
  _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Swift symbol names made readable with the runtime's own demangler.
public enum Demangler {
  /// The demangled name, or `mangled` unchanged when it is not a Swift symbol.
  public static func demangle(_ mangled: String) -> String {
    guard mangled.hasPrefix("$s") || mangled.hasPrefix("_T") || mangled.hasPrefix("$S") else { return mangled }
    return mangled.withCString { pointer in
      guard let demangled = swiftDemangle(pointer, strlen(pointer), nil, nil, 0) else { return mangled }
      defer { free(demangled) }
      return String(cString: demangled)
    }
  }
}

/// Property names from the symbols of key-path getters.
public enum PropertyNaming {
  /// `key path getter for Demo.Model.property : Swift.Int : Demo.Model` → module `Demo`, type `Model`,
  /// property `property`. Nil for any other kind of symbol.
  public static func name(fromKeyPathGetter function: String) -> PropertyName? {
    let prefix = "key path getter for "
    guard function.hasPrefix(prefix) else { return nil }
    var path = function.dropFirst(prefix.count)
    if let colon = path.firstRange(of: " : ") { path = path[..<colon.lowerBound] }
    // `(extension in Other):Demo.Model.property`: the property's own module is the one after the colon.
    if path.hasPrefix("(extension in "), let close = path.firstRange(of: "):") { path = path[close.upperBound...] }
    let components = path.split(separator: ".").map(String.init)
    guard components.count >= 3 else { return nil }
    return PropertyName(
      module: components[0], type: components[1..<(components.count - 1)].joined(separator: "."),
      property: components[components.count - 1])
  }
}
