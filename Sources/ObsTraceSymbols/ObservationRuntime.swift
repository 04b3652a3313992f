import CDw

#if canImport(Glibc)
  import Glibc
#endif

/// Where Observation's runtime is in this process: the function that returns the tracking in progress on the
/// calling thread, and the code of the library, so that the recorder can see tracking it does not own (a
/// `withObservationTracking` called from a file that does not import ObsTrace).
///
/// `_swift_observation_tls_get` is a local symbol of libswiftObservation.so: it is in the library's ELF symbol
/// table (`.symtab`), not in its dynamic one, so `dlsym` cannot find it; it is read from the file with libelf and
/// relocated by the library's load address.
public struct ObservationRuntime: Sendable {
  /// The address of `_swift_observation_tls_get` in this process.
  public var trackingGetter: UInt
  /// The library's executable mappings: frames inside them are Observation's own.
  public var code: [Range<UInt>]
  /// The library's file.
  public var path: String

  /// The name of the local symbol that returns the current thread's tracking (its access list), or nil.
  public static let trackingGetterSymbol = "_swift_observation_tls_get"

  /// Finds Observation's runtime in this process, or says why it cannot (`symbol`: the getter's name; another
  /// name is for tests of the failure).
  public static func locate(symbol: String = trackingGetterSymbol) -> Result<ObservationRuntime, LocateError> {
    let mappings = Self.mappings(ofLibraryNamed: "libswiftObservation.so")
    guard let path = mappings.first?.path else {
      return .failure(LocateError(message: "libswiftObservation.so is not loaded in this process"))
    }
    guard let (value, codeSegment) = Self.localSymbol(symbol, in: path) else {
      return .failure(LocateError(message: "\(symbol) is not in \(path)'s symbol table"))
    }
    // The load address comes from the library's executable mapping, the one the dynamic loader made for its code
    // segment: a tool that maps the file to read it (libdw does, when ObsTrace symbolizes) adds read-only
    // mappings of the same file, at offset 0 too, that must never be taken for the loaded image.
    let page = UInt(max(sysconf(Int32(_SC_PAGESIZE)), 1))
    let code = mappings.filter(\.executable)
    guard let loaded = code.first(where: { $0.offset == codeSegment.offset & ~(page - 1) }) else {
      return .failure(LocateError(message: "\(path) has no executable mapping of its code segment"))
    }
    let base = loaded.range.lowerBound &- (codeSegment.address & ~(page - 1))
    let getter = base &+ value
    guard code.contains(where: { $0.range.contains(getter) }) else {
      return .failure(LocateError(message: "\(symbol) in \(path) is not inside the library's loaded code"))
    }
    return .success(ObservationRuntime(trackingGetter: getter, code: code.map(\.range), path: path))
  }

  /// Why Observation's runtime could not be located.
  public struct LocateError: Error, Sendable {
    public var message: String
  }

  struct Mapping {
    var range: Range<UInt>
    var offset: UInt
    var executable: Bool
    var path: String
  }

  /// The mappings of /proc/self/maps whose file's name is `name`.
  static func mappings(ofLibraryNamed name: String) -> [Mapping] {
    guard let file = fopen("/proc/self/maps", "r") else { return [] }
    defer { fclose(file) }
    var result: [Mapping] = []
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let fields = text.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, let path = fields.last.map(String.init), path.hasPrefix("/"),
        path.split(separator: "/").last == Substring(name),
        let dash = fields[0].firstIndex(of: "-"), let start = UInt(fields[0][..<dash], radix: 16),
        let end = UInt(fields[0][fields[0].index(after: dash)...], radix: 16), end > start,
        let offset = UInt(fields[2], radix: 16)
      else { continue }
      result.append(Mapping(range: start..<end, offset: offset, executable: fields[1].contains("x"), path: path))
    }
    return result
  }

  /// The value of a symbol in `path`'s `.symtab`, and the file offset and address of the library's executable
  /// loadable segment (what its executable mapping corresponds to).
  static func localSymbol(_ symbol: String, in path: String) -> (UInt, (offset: UInt, address: UInt))? {
    _ = elf_version(UInt32(EV_CURRENT))
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let elf = elf_begin(descriptor, ELF_C_READ, nil) else { return nil }
    defer { elf_end(elf) }
    var codeSegment: (offset: UInt, address: UInt)?
    var segmentCount = 0
    if elf_getphdrnum(elf, &segmentCount) == 0 {
      for index in 0..<Int32(segmentCount) {
        var header = GElf_Phdr()
        if gelf_getphdr(elf, index, &header) != nil, header.p_type == UInt32(PT_LOAD),
          header.p_flags & UInt32(PF_X) != 0, codeSegment == nil
        {
          codeSegment = (UInt(header.p_offset), UInt(header.p_vaddr))
        }
      }
    }
    guard let codeSegment else { return nil }
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
          let name = elf_strptr(elf, Int(header.sh_link), Int(entry.st_name)), strcmp(name, symbol) == 0
        else { continue }
        return (UInt(entry.st_value), codeSegment)
      }
    }
    return nil
  }
}
