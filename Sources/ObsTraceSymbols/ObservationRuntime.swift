import CDw

#if canImport(Glibc)
  import Glibc
#endif

/// Reads Observation's runtime library for what the recorder needs to see tracking it does not own (a
/// `withObservationTracking` called from a file that does not import ObsTrace).
///
/// `_swift_observation_tls_get`, which returns the tracking in progress on the calling thread, is a local symbol of
/// libswiftObservation.so: it is in the library's ELF symbol table (`.symtab`), not in its dynamic one, so `dlsym`
/// cannot find it; it is read from the file with libelf, and the recorder adds the library's load bias.
public enum ObservationRuntime {
  /// The library's file name.
  public static let libraryName = "libswiftObservation.so"
  /// The name of the local symbol that returns the current thread's tracking (its access list), or nil.
  public static let trackingGetterSymbol = "_swift_observation_tls_get"
  /// The name of the local symbol that sets the current thread's tracking (what `withObservationTracking` does
  /// around its closure).
  public static let trackingSetterSymbol = "_swift_observation_tls_set"

  /// The value of a symbol in `path`'s `.symtab` (a file address: add the load bias).
  public static func localSymbol(_ symbol: String, in path: String) -> UInt? {
    localSymbols([symbol], in: path)[symbol]
  }

  /// The values of the symbols of `symbols` found in `path`'s `.symtab`, in one pass over the file.
  public static func localSymbols(_ symbols: [String], in path: String) -> [String: UInt] {
    var wanted = WantedSymbols(symbols)
    forEachSymbol(in: path) { name, entry in
      guard Int32(entry.st_info & 0xf) != STT_FILE else { return true }
      wanted.check(name, value: UInt(entry.st_value))
      return !wanted.isComplete
    }
    return wanted.found
  }

  /// What one pass over the `.symtab` of an executable that links the standard library into itself
  /// (`--static-swift-stdlib`) tells the recorder: the values of `symbols` (file addresses), Observation's code
  /// around the value of `getter` (`StaticImage.observation`), and the code of the other libraries of the
  /// toolchain linked in (`StaticImage.libraries`). Such a table holds ≈ 95 k symbols; each is read once.
  public static func staticImage(in path: String, symbols: [String], getter: String, gap: UInt = 16 * 1024)
    -> StaticImage
  {
    var wanted = WantedSymbols(symbols)
    var observation: [Range<UInt>] = []
    var members = StaticMembers()
    forEachSymbol(in: path) { name, entry in
      let type = Int32(entry.st_info & 0xf)
      if type == STT_FILE {
        members.begin(name)
        return true
      }
      if !wanted.isComplete { wanted.check(name, value: UInt(entry.st_value)) }
      guard entry.st_size > 0, type == STT_FUNC else { return true }
      let start = UInt(entry.st_value)
      let (end, overflow) = start.addingReportingOverflow(UInt(entry.st_size))
      guard !overflow else { return true }
      if strncmp(name, "$s11Observation", 15) == 0 || strncmp(name, "_swift_observation_", 19) == 0 {
        observation.append(start..<end)
      }
      // A member's own local functions: bound LOCAL by its compiler, so of default visibility (the linker makes
      // the hidden functions of every member local too, listed after the last member's, with no member said).
      if Int32(entry.st_info >> 4) == STB_LOCAL, Int32(entry.st_other & 0x3) == STV_DEFAULT {
        members.addLocalFunction(start..<end, named: name)
      }
      return true
    }
    var image = StaticImage(symbols: wanted.found)
    if let address = image.symbols[getter] {
      image.observation = runs(of: observation, gap: gap).filter { $0.contains(address) }
    }
    image.libraries = members.libraryCode()
    return image
  }

  /// Functions less than `gap` bytes apart, as runs.
  static func runs(of functions: [Range<UInt>], gap: UInt) -> [Range<UInt>] {
    var runs: [Range<UInt>] = []
    for function in functions.sorted(by: { $0.lowerBound < $1.lowerBound }) {
      if let last = runs.last, function.lowerBound <= last.upperBound || function.lowerBound - last.upperBound < gap {
        runs[runs.count - 1] = last.lowerBound..<max(last.upperBound, function.upperBound)
      } else {
        runs.append(function)
      }
    }
    return runs
  }

  /// Calls `body` with each named symbol of a nonzero value in `path`'s `.symtab`, and each file symbol (`STT_FILE`,
  /// of value 0: the object file the local symbols after it are of), in the table's order, until it returns false.
  private static func forEachSymbol(in path: String, _ body: (UnsafePointer<CChar>, GElf_Sym) -> Bool) {
    _ = elf_version(UInt32(EV_CURRENT))
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    guard let elf = elf_begin(descriptor, ELF_C_READ, nil) else { return }
    defer { elf_end(elf) }
    var section: OpaquePointer? = elf_nextscn(elf, nil)
    while let current = section {
      defer { section = elf_nextscn(elf, current) }
      var header = GElf_Shdr()
      guard gelf_getshdr(current, &header) != nil, header.sh_type == UInt32(SHT_SYMTAB), header.sh_entsize > 0,
        let data = elf_getdata(current, nil)
      else { continue }
      let count = Int32(clamping: header.sh_size / header.sh_entsize)
      for index in 0..<count {
        var entry = GElf_Sym()
        guard gelf_getsym(data, index, &entry) != nil, entry.st_value != 0 || Int32(entry.st_info & 0xf) == STT_FILE,
          let name = elf_strptr(elf, Int(header.sh_link), Int(entry.st_name))
        else { continue }
        guard body(name, entry) else { return }
      }
    }
  }
}

/// Symbols looked for by name in a symbol table, each compared as the C string the table holds: no `String` is made
/// nor hashed for each of a table's ≈ 100 k names.
private struct WantedSymbols {
  private let names: [String]
  private let cNames: [[CChar]]
  private var values: [UInt?]
  private var remaining: Int

  init(_ names: [String]) {
    self.names = names
    cNames = names.map { Array($0.utf8CString) }
    values = Array(repeating: nil, count: names.count)
    remaining = names.count
  }

  /// Whether every symbol was found.
  var isComplete: Bool { remaining == 0 }

  /// The value of each symbol found, by name.
  var found: [String: UInt] {
    var found: [String: UInt] = [:]
    for (name, value) in zip(names, values) { if let value { found[name] = value } }
    return found
  }

  /// Takes `value` for the symbol named `name`, when it is one looked for and not yet found (the first wins).
  mutating func check(_ name: UnsafePointer<CChar>, value: UInt) {
    for index in cNames.indices where values[index] == nil {
      if cNames[index].withUnsafeBufferPointer({ strcmp(name, $0.baseAddress!) }) == 0 {
        values[index] = value
        remaining -= 1
      }
    }
  }
}
