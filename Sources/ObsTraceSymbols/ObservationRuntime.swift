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
    _ = elf_version(UInt32(EV_CURRENT))
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return found }
    defer { close(descriptor) }
    guard let elf = elf_begin(descriptor, ELF_C_READ, nil) else { return found }
    defer { elf_end(elf) }
    var section: OpaquePointer? = elf_nextscn(elf, nil)
    while let current = section {
      defer { section = elf_nextscn(elf, current) }
      var header = GElf_Shdr()
      guard gelf_getshdr(current, &header) != nil, header.sh_type == UInt32(SHT_SYMTAB), header.sh_entsize > 0,
        let data = elf_getdata(current, nil)
      else { continue }
      let count = Int32(header.sh_size / header.sh_entsize)
      for index in 0..<count {
        var entry = GElf_Sym()
        guard gelf_getsym(data, index, &entry) != nil, entry.st_value != 0,
          let name = elf_strptr(elf, Int(header.sh_link), Int(entry.st_name))
        else { continue }
        for symbol in symbols where found[symbol] == nil && strcmp(name, symbol) == 0 {
          found[symbol] = UInt(entry.st_value)
        }
        if found.count == symbols.count { return found }
      }
    }
    return found
  }
}
