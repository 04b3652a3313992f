#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Writes a trace file: the header at once, then whole chunks, each compressed, framed with its lengths and a
/// CRC-32, and written with one `write` loop so that a process killed mid-run leaves whole chunks behind.
public final class TraceFileWriter {
  public let path: String
  private var descriptor: Int32
  /// The file the descriptor was opened on (device, inode): a program may close a descriptor it did not open (a
  /// daemon closing every descriptor) and open a file of its own that gets the same number; then the descriptor is no
  /// longer the trace's, and nothing is written to it or closed through it.
  private var identity: (device: UInt64, inode: UInt64)?
  /// Raw deflate since version 3; a file of an older version (tests write them) gets zlib streams.
  private let deflater: Deflater
  public private(set) var chunksWritten: UInt64 = 0
  public private(set) var bytesWritten: UInt64 = 0

  /// Creates (or truncates) `path` and writes the header. `path` must be a regular file or not exist: a FIFO would
  /// block the traced program in `open` until a reader came (and a trace is read by seeking, so a pipe cannot hold
  /// one), a device such as /dev/null would swallow the trace while the run said it wrote one.
  ///
  /// The file is locked (`flock`, exclusive) for as long as it is open: a recording of another process that names
  /// the same file finds it held and gets `.held` before anything of it is truncated or written (two recorders into
  /// one file made one damaged file). The lock goes with the file's close, or the process's end.
  ///
  /// `keepingWrittenFile` (a recording under `obstrace record`, which removed the file before its command ran): a
  /// file that, once locked, is not empty was written by an earlier process of that command and is kept: `.written`,
  /// nothing of it truncated or written. The first process to record into the file claims it, a later one writes
  /// beside it.
  public convenience init(path: String, header: TraceHeader, keepingWrittenFile: Bool = false) throws(TraceFileError) {
    var status = stat()
    if stat(path, &status) == 0, let kind = Self.notRegular(status.st_mode) {
      throw TraceFileError(.cannotOpen, path: path, "cannot create the trace file (it is \(kind), not a regular file)")
    }
    // O_NONBLOCK: should a FIFO appear at `path` between the check and the open, the open does not wait for a reader
    // (it fails, or succeeds and is refused below). Writes to a regular file are not affected by the flag.
    let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o644)
    guard descriptor >= 0 else {
      throw TraceFileError(
        .cannotOpen, path: path, "cannot create the trace file (\(String(cString: strerror(errno))))")
    }
    if fstat(descriptor, &status) != 0 || Self.notRegular(status.st_mode) != nil {
      let kind = Self.notRegular(status.st_mode) ?? "something other than a file"
      _ = Glibc.close(descriptor)
      throw TraceFileError(.cannotOpen, path: path, "cannot create the trace file (it is \(kind), not a regular file)")
    }
    var locked = flock(descriptor, LOCK_EX | LOCK_NB)
    while locked != 0 && errno == EINTR { locked = flock(descriptor, LOCK_EX | LOCK_NB) }
    let lockError = errno
    // A file system without locks (ENOLCK) is written as before.
    if locked != 0 && lockError == EWOULDBLOCK {
      _ = Glibc.close(descriptor)
      throw TraceFileError(.held, path: path, "the trace file is being written by another process's recording")
    }
    // Tested under the lock: the process that claimed the file wrote its header before it let the lock go.
    if keepingWrittenFile && fstat(descriptor, &status) == 0 && status.st_size > 0 {
      _ = Glibc.close(descriptor)
      throw TraceFileError(.written, path: path, "the trace file was written by an earlier process of this recording")
    }
    guard ftruncate(descriptor, 0) == 0 else {
      let truncateError = errno
      _ = Glibc.close(descriptor)
      throw TraceFileError(
        .cannotWrite, path: path, "cannot truncate the trace file (\(String(cString: strerror(truncateError))))")
    }
    try self.init(descriptor: descriptor, path: path, header: header)
  }

  /// Writes the header to `descriptor`, open for writing, which the writer owns from here on (closed on failure).
  /// Tests give it a device, such as /dev/full, that the public initializer refuses.
  init(descriptor: Int32, path: String, header: TraceHeader) throws(TraceFileError) {
    self.path = path
    self.descriptor = descriptor
    identity = Self.identity(of: descriptor)
    deflater = Deflater(raw: header.version >= 3)
    var payload: [UInt8] = []
    payload.appendVarint(header.startWallClockNanoseconds)
    payload.appendVarint(header.processID)
    payload.appendString(header.executable)
    if header.version >= 2 {
      payload.append(
        (header.dropWhenFull ? HeaderFlags.dropWhenFull : 0)
          | (header.seesUntracedTracking == true ? HeaderFlags.seesUntracedTracking : 0)
          | (header.startedWhileRunning ? HeaderFlags.startedWhileRunning : 0))
    } else {
      payload.append(header.dropWhenFull ? 1 : 0)
    }
    payload.appendVarint(header.ringCapacity)
    payload.append(header.stackLevel)
    var bytes = TraceFormat.magic
    bytes.appendLittleEndian(header.version)
    bytes.appendLittleEndian(UInt16(0))
    bytes.appendLittleEndian(UInt32(payload.count))
    bytes.append(contentsOf: payload)
    bytes.appendLittleEndian(crc32Checksum(payload))
    do {
      try writeAll(bytes)
    } catch {
      close()
      throw error
    }
  }

  deinit {
    if descriptor >= 0 && isStillTheTrace() { _ = Glibc.close(descriptor) }
  }

  private static func identity(of descriptor: Int32) -> (device: UInt64, inode: UInt64)? {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    return (UInt64(status.st_dev), UInt64(status.st_ino))
  }

  /// Whether the descriptor still names the file the trace was opened on (one `fstat`, a chunk's write).
  private func isStillTheTrace() -> Bool {
    guard let identity, let now = Self.identity(of: descriptor) else { return true }
    return now == identity
  }

  /// Where a recording goes when `path` is held by another process's: beside it, with `processID` before its
  /// extension (`run.trc` → `run-4242.trc`).
  public static func pathBeside(_ path: String, processID: Int32) -> String {
    let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
    let name = path[slash...]
    if let dot = name.lastIndex(of: "."), dot != name.startIndex {
      return String(path[..<dot]) + "-\(processID)" + String(path[dot...])
    }
    return path + "-\(processID)"
  }

  /// What a file of mode `mode` is, when it is not a regular file ("a FIFO"), else nil.
  public static func notRegular(_ mode: mode_t) -> String? {
    switch mode & S_IFMT {
    case S_IFREG: nil
    case S_IFIFO: "a FIFO"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFSOCK: "a socket"
    case S_IFDIR: "a directory"
    default: "something other than a file"
    }
  }

  /// Compresses `payload` and appends it as one chunk; its last `storedTail` bytes (an events chunk's time column,
  /// `ChunkEncoder.timeColumnByteCount`) are stored as they are.
  public func writeChunk(_ type: ChunkType, payload: [UInt8], storedTail: Int = 0) throws(TraceFileError) {
    guard let frame = Self.chunk(type, payload: payload, storedTail: storedTail, deflater: deflater) else {
      throw TraceFileError(.cannotWrite, path: path, "zlib could not compress a chunk")
    }
    try writeAll(frame)
    chunksWritten += 1
  }

  /// One whole chunk as it is written in a file of format `version`: framed, compressed, checksummed (for rewriting
  /// a trace byte for byte around it); nil when zlib fails.
  public static func chunk(_ type: ChunkType, payload: [UInt8], version: UInt16) -> [UInt8]? {
    chunk(type, payload: payload, deflater: Deflater(raw: version >= 3))
  }

  private static func chunk(_ type: ChunkType, payload: [UInt8], storedTail: Int = 0, deflater: Deflater)
    -> [UInt8]?
  {
    guard let compressed = deflater.compress(payload, storedTail: storedTail) else { return nil }
    var frame = TraceFormat.chunkMagic
    frame.reserveCapacity(TraceFormat.chunkHeaderSize + compressed.count)
    frame.append(type.rawValue)
    frame.appendLittleEndian(UInt32(compressed.count))
    frame.appendLittleEndian(UInt32(payload.count))
    let checksum = crc32Checksum(compressed, initial: crc32Checksum(Array(frame[4..<13])))
    frame.appendLittleEndian(checksum)
    frame.append(contentsOf: compressed)
    return frame
  }

  /// Closes the file; later writes fail. Returns the error when close(2) fails (an I/O error, or a full quota
  /// that a network file system reports only then): the descriptor is gone either way, but what was written may
  /// not all be in the file. EINTR counts too: Linux releases the descriptor and does not say whether the data
  /// went out. Nil when it closed, or was closed already.
  @discardableResult public func close() -> TraceFileError? {
    guard descriptor >= 0 else { return nil }
    guard isStillTheTrace() else {
      descriptor = -1
      return nil
    }
    let closed = Glibc.close(descriptor)
    let failure = errno
    descriptor = -1
    guard closed != 0 else { return nil }
    return TraceFileError(
      .cannotWrite, path: path, "cannot close the trace file (\(String(cString: strerror(failure))))")
  }

  private func writeAll(_ bytes: [UInt8]) throws(TraceFileError) {
    guard descriptor >= 0 else { throw TraceFileError(.cannotWrite, path: path, "the trace file is closed") }
    guard isStillTheTrace() else {
      let number = descriptor
      descriptor = -1
      throw TraceFileError(
        .cannotWrite, path: path, offset: bytesWritten,
        "cannot write the trace file (the program closed its descriptor, \(number), which now names another file: "
          + "nothing is written to that one)")
    }
    var failure: Int32 = 0
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failure = errno
          return
        }
        offset += written
      }
    }
    if failure != 0 {
      throw TraceFileError(
        .cannotWrite, path: path, offset: bytesWritten,
        "cannot write the trace file (\(String(cString: strerror(failure))))")
    }
    bytesWritten += UInt64(bytes.count)
  }
}

/// Payloads of the chunks that are not events.
public enum ChunkPayload {
  /// The footer: duration, chunk count, per-thread totals, the threads still running at the stop and the events
  /// lost at the stop.
  public static func footer(_ footer: TraceFooter) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendVarint(footer.durationNanoseconds)
    bytes.appendVarint(footer.chunks)
    bytes.appendVarint(footer.threads.count)
    for thread in footer.threads {
      bytes.appendVarint(thread.thread)
      bytes.appendVarint(UInt32(bitPattern: thread.osThreadID))
      bytes.appendVarint(thread.recorded)
      bytes.appendVarint(thread.dropped)
    }
    bytes.appendVarint(footer.runningAtStop.count)
    for thread in footer.runningAtStop { bytes.appendVarint(thread) }
    bytes.appendVarint(footer.lostAtStop)
    bytes.appendVarint(footer.ringless)
    bytes.appendVarint(footer.forks)
    bytes.appendVarint(footer.signalHandlerEvents)
    return bytes
  }

  /// The module map: each module's path and load address.
  public static func modules(_ modules: [LoadedModule]) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.appendVarint(modules.count)
    for module in modules {
      bytes.appendString(module.path)
      bytes.appendVarint(module.base)
    }
    return bytes
  }

  /// The symbol table: readable names of types and properties, and resolved code addresses. Every name is cut to
  /// `TraceFormat.maximumRecordedNameLength` (a demangled generic can be any length).
  public static func symbols(_ table: SymbolTable) -> [UInt8] {
    var bytes: [UInt8] = []
    for (id, name) in table.typeNames.sorted(by: { $0.key < $1.key }) {
      bytes.append(SymbolTag.typeName.rawValue)
      bytes.appendVarint(id)
      bytes.appendName(name)
    }
    for (id, name) in table.propertyNames.sorted(by: { $0.key < $1.key }) {
      bytes.append(SymbolTag.propertyName.rawValue)
      bytes.appendVarint(id)
      bytes.appendName(name.module)
      bytes.appendName(name.type)
      bytes.appendName(name.property)
    }
    for (id, name) in table.labelNames.sorted(by: { $0.key < $1.key }) {
      bytes.append(SymbolTag.labelName.rawValue)
      bytes.appendVarint(id)
      bytes.appendName(name)
    }
    for frame in table.frames.values.sorted(by: { $0.address < $1.address }) {
      bytes.append(SymbolTag.frame.rawValue)
      bytes.appendVarint(frame.address)
      bytes.appendName(frame.function)
      bytes.appendName(frame.file)
      bytes.appendVarint(frame.line)
      bytes.appendName(frame.module)
      if !frame.inlined.isEmpty {
        bytes.append(SymbolTag.inlinedFrames.rawValue)
        bytes.appendVarint(frame.address)
        bytes.appendVarint(UInt64(frame.inlined.count))
        for inlined in frame.inlined {
          bytes.appendName(inlined.function)
          bytes.appendName(inlined.file)
          bytes.appendVarint(inlined.line)
        }
      }
      let approximate = frame.approximateLines
      if approximate != 0 {
        bytes.append(SymbolTag.approximateLines.rawValue)
        bytes.appendVarint(frame.address)
        bytes.appendVarint(approximate)
      }
      if !frame.declaringModule.isEmpty {
        bytes.append(SymbolTag.declaringModule.rawValue)
        bytes.appendVarint(frame.address)
        bytes.appendName(frame.declaringModule)
      }
    }
    return bytes
  }
}

enum SymbolTag: UInt8 {
  case typeName = 0x91
  case propertyName = 0x92
  case frame = 0x93
  case labelName = 0x94
  /// Version 2: the functions inlined at a frame's address, innermost first (after that frame's 0x93).
  case inlinedFrames = 0x95
  /// Version 3: which logical frames at an address have an approximate line (`SymbolizedFrame.lineIsApproximate`),
  /// bit i for the i-th of `logicalFrames` (innermost first); after that address's 0x93 and 0x95.
  case approximateLines = 0x96
  /// Version 3, later: the Swift module that declares the frame's function, where its name does not say it (an
  /// executable's top-level code: `main`, `async_MainTY1_`; `SymbolizedFrame.declaringModule`), from DWARF; after
  /// that address's 0x93. Before it, a write in top-level code was sited without its module (`main.swift:23`).
  case declaringModule = 0x97
}

extension SymbolizedFrame {
  /// Bit i set: the i-th of `logicalFrames` has an approximate line (the symbols chunk's 0x96 record).
  var approximateLines: UInt64 {
    var bits: UInt64 = 0
    for (index, frame) in logicalFrames.enumerated() where frame.lineIsApproximate && index < 64 {
      bits |= 1 << UInt64(index)
    }
    return bits
  }

  /// Marks the logical frames whose bit is set in `bits` as approximate.
  mutating func markApproximate(_ bits: UInt64) {
    for index in inlined.indices where index < 64 && bits & (1 << UInt64(index)) != 0 {
      inlined[index].lineIsApproximate = true
    }
    if inlined.count < 64 && bits & (1 << UInt64(inlined.count)) != 0 { lineIsApproximate = true }
  }
}

/// A property's readable name: `Type.property`, with the module kept apart for disambiguation.
public struct PropertyName: Sendable, Equatable {
  public var module: String
  public var type: String
  public var property: String

  public init(module: String, type: String, property: String) {
    self.module = module
    self.type = type
    self.property = property
  }

  /// `Type.property`, the name every command prints.
  public var qualified: String { "\(type).\(property)" }
}

/// Names and places resolved at stop (or later by `obstrace symbolize`).
public struct SymbolTable: Sendable, Equatable {
  public var typeNames: [UInt32: String] = [:]
  public var propertyNames: [UInt32: PropertyName] = [:]
  public var frames: [UInt64: SymbolizedFrame] = [:]
  /// Scope labels that were call sites, resolved: `Module/File.swift:line`.
  public var labelNames: [UInt32: String] = [:]

  public init() {}

  public var isEmpty: Bool { typeNames.isEmpty && propertyNames.isEmpty && frames.isEmpty && labelNames.isEmpty }

  public mutating func merge(_ other: SymbolTable) {
    labelNames.merge(other.labelNames) { _, new in new }
    typeNames.merge(other.typeNames) { _, new in new }
    propertyNames.merge(other.propertyNames) { _, new in new }
    frames.merge(other.frames) { _, new in new }
  }
}
