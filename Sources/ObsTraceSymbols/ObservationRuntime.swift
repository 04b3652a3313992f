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
    var found: [String: UInt] = [:]
    forEachSymbol(in: path) { name, entry in
      for symbol in symbols where found[symbol] == nil && strcmp(name, symbol) == 0 {
        found[symbol] = UInt(entry.st_value)
      }
      return found.count < symbols.count
    }
    return found
  }

  /// Where Observation's code is in an executable that links it statically (`--static-swift-stdlib`): the file
  /// addresses of the run of Observation's functions (named `$s11Observation…` or `_swift_observation_…` in
  /// `path`'s `.symtab`) around `address`, the tracking getter's. The linker lays out the library's objects
  /// together; the functions the library's code specialized from the standard library (`$sSh5union…Tg5` and the
  /// like) lie among them, so functions of Observation less than `gap` bytes apart are one run. Types of
  /// Observation's that another module copies or destroys give that module small functions named after them
  /// (outlined copies, value witnesses); they lie elsewhere, and are not Observation's code. Empty when the table
  /// has no such function at `address` (a stripped file).
  public static func staticCode(in path: String, around address: UInt, gap: UInt = 16 * 1024) -> [Range<UInt>] {
    var functions: [Range<UInt>] = []
    forEachSymbol(in: path) { name, entry in
      guard entry.st_size > 0, Int32(entry.st_info & 0xf) == STT_FUNC,
        strncmp(name, "$s11Observation", 15) == 0 || strncmp(name, "_swift_observation_", 19) == 0
      else { return true }
      let start = UInt(entry.st_value)
      let (end, overflow) = start.addingReportingOverflow(UInt(entry.st_size))
      if !overflow { functions.append(start..<end) }
      return true
    }
    functions.sort { $0.lowerBound < $1.lowerBound }
    var runs: [Range<UInt>] = []
    for function in functions {
      if let last = runs.last, function.lowerBound <= last.upperBound || function.lowerBound - last.upperBound < gap {
        runs[runs.count - 1] = last.lowerBound..<max(last.upperBound, function.upperBound)
      } else {
        runs.append(function)
      }
    }
    return runs.filter { $0.contains(address) }
  }

  /// Calls `body` with each named symbol of a nonzero value in `path`'s `.symtab`, until it returns false.
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
        guard gelf_getsym(data, index, &entry) != nil, entry.st_value != 0,
          let name = elf_strptr(elf, Int(header.sh_link), Int(entry.st_name))
        else { continue }
        guard body(name, entry) else { return }
      }
    }
  }
}
