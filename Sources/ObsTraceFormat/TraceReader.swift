import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Something wrong with a trace that the reader read around: a damaged chunk (skipped) or a cut end.
public struct TraceDamage: Sendable, Equatable, CustomStringConvertible {
  public var offset: UInt64
  public var message: String

  public var description: String { "at byte \(offset): \(message)" }

  /// How a copy of a chunk already read ends its message (`ChunkDecoder.repeated`): its events were read once.
  public static let copyEnding = ": a copy; skipped"
  /// A copy of a thread's chunk already read, skipped: nothing of the trace is lost by it.
  public var isCopy: Bool { message.hasSuffix(Self.copyEnding) }

  /// The trace's footer, which the recording wrote and which cannot be read: malformed (its checksum holds) or
  /// damaged (its checksum does not match).
  public var isFooter: Bool {
    message == TraceReader.malformedFooterMessage || message == TraceReader.damagedFooterMessage
  }

  /// What is wrong with a footer (`isFooter`): "malformed" or "damaged (its checksum does not match)".
  public var footerState: String {
    message == TraceReader.damagedFooterMessage ? "damaged (its checksum does not match)" : "malformed"
  }
}

/// One thread's whole chunk of events, as read.
public struct EventChunk: Sendable {
  /// Where the chunk starts in the file.
  public var offset: UInt64
  public var thread: UInt32
  public var osThreadID: Int32
  /// The thread's chunk number, from 0; a gap means a chunk was lost.
  public var sequence: UInt64
  /// Events the thread dropped (full ring, drop mode) since its previous chunk.
  public var droppedSinceLastChunk: UInt64
  public var firstTime: UInt64
  /// The thread exited; none of its chunks follow.
  public var threadEnded: Bool
  public var events: EventBuffer

  public init(
    offset: UInt64, thread: UInt32, osThreadID: Int32, sequence: UInt64, droppedSinceLastChunk: UInt64,
    firstTime: UInt64, threadEnded: Bool, events: EventBuffer
  ) {
    self.offset = offset
    self.thread = thread
    self.osThreadID = osThreadID
    self.sequence = sequence
    self.droppedSinceLastChunk = droppedSinceLastChunk
    self.firstTime = firstTime
    self.threadEnded = threadEnded
    self.events = events
  }

  /// A chunk of the events `events` (copied into a buffer of their own).
  public init(
    offset: UInt64, thread: UInt32, osThreadID: Int32, sequence: UInt64, droppedSinceLastChunk: UInt64,
    firstTime: UInt64, threadEnded: Bool, events: [TraceEvent]
  ) {
    self.init(
      offset: offset, thread: thread, osThreadID: osThreadID, sequence: sequence,
      droppedSinceLastChunk: droppedSinceLastChunk, firstTime: firstTime, threadEnded: threadEnded,
      events: EventBuffer(events))
  }
}

/// Reads a trace file as a stream of events, in file order (per thread, in the order each thread recorded).
///
/// Opening reads the header and the small chunks that a clean stop writes last (symbols, footer), by walking
/// chunk headers only; `forEachEvent` then decodes one chunk at a time, so memory grows with the definitions
/// (objects, properties, scopes), never with the number of events. A damaged chunk costs only its own events:
/// the reader reports its offset and resynchronizes on the next chunk's magic. A file that ends mid-chunk or
/// without a footer is `truncated`, and read up to its last whole chunk.
public final class TraceReader {
  public let path: String
  public let header: TraceHeader
  public private(set) var footer: TraceFooter?
  /// The modules mapped when the recording started (for `obstrace symbolize`).
  public private(set) var modules: [LoadedModule] = []
  /// Unchecked: changed only by `read` (`apply`, which calls nothing out), between the consumer's calls, on the
  /// consumer's thread; checked, each look of a printer at it (a name resolved, a filter's match) called the
  /// runtime's exclusivity check (≈ 76 instructions).
  @exclusivity(unchecked) public private(set) var definitions = TraceDefinitions()
  /// Damaged chunks skipped so far: counted, the first ones kept with their offsets (`TraceDamageList`: memory
  /// bounded whatever the file holds; `forEachDamage` reads every one again).
  public private(set) var damage = TraceDamageList()
  /// True when the file ends inside a chunk or has no footer (the recording did not stop cleanly), or no footer
  /// that decodes (`malformedFooter`).
  public private(set) var truncated = false
  /// The damage a footer leaves whose checksum holds but whose contents do not decode (among `damage`): the file has
  /// its footer, and the counts it holds are lost. The trace is `truncated` (no footer was read).
  public static let malformedFooterMessage = "the footer is malformed; ignored"
  /// The message of a footer whose checksum does not match: the file's last chunk, its header says footer (a
  /// fresh-clone try-out's Q13: it was told as a chunk never wholly written, or as no footer at all).
  public static let damagedFooterMessage = "the footer's checksum does not match; skipped"
  /// Where the trace's footer is when it does not decode (see `malformedFooterMessage`), or nil.
  public var malformedFooter: TraceDamage? { damage.malformedFooter }
  /// Where the file ends inside a chunk, when it does.
  public private(set) var cutAt: TraceDamage?
  /// The process whose recording holds the file's lock, when one did as the trace was opened: that recording is
  /// still writing it (a recorder locks the file before its header and keeps the lock until it closes the file at
  /// the stop, or exits), so a missing footer is not yet written, not lost. From /proc/locks; nil when no process
  /// held it, or the system does not say.
  public private(set) var recordingProcess: Int32?
  /// Where the file's last bytes, zeros to its end, begin, when reading stopped at them: the end was never written
  /// (a preallocated file, or a crash before the data reached the disk). Everything whole before them is read.
  /// With a footer before them nothing is missing; without one the trace is `truncated`.
  public private(set) var zeroTail: TraceDamage?
  /// Where bytes begin that follow the trace's footer and are not zeros, when there are any: the footer is the last
  /// chunk a recording writes, so they are not part of the trace (appended to the file after its end, or another
  /// file's bytes). Reading stops at the footer; the trace before it is whole. Not a cut, nor damage of the trace.
  public private(set) var afterFooter: TraceDamage?
  /// Events each thread's chunks say were dropped, summed.
  public private(set) var droppedEvents: UInt64 = 0
  /// Events that name a property, label, stack, object or type no definition states (an inconsistent or forged
  /// file). They are passed on under that id, never used to size a table, and counted: an inconsistency of the
  /// trace (the analysis reports it as `inconsistent-trace`), not damage, since the chunk itself decoded whole.
  public private(set) var unknownIDEvents = 0
  /// The first of those references, as `property #268435456`; nil when there is none.
  public private(set) var firstUnknownID: String?
  /// Definitions that give an id already defined another meaning (a recorder states each id with one meaning: a
  /// damaged or forged file), and the first of them, as `type #1: "Shop.A", then "Shop.B"`. The later meaning is
  /// applied; counted as an inconsistency of the trace, as references to undefined ids are.
  public private(set) var redefinitions = 0
  public private(set) var firstRedefinition: String?
  public private(set) var threads: [UInt32: Int32] = [:]
  /// Threads whose last chunk says they exited while recording.
  public private(set) var endedThreads: Set<UInt32> = []
  public private(set) var lastEventTime: UInt64 = 0
  /// Per thread, the chunks read and the numbers skipped (chunks lost to damage), with the times around them.
  public private(set) var chunkLedger = ThreadChunkLedger()

  /// Whether the file has a footer and every event it counts as recorded was read, and no more
  /// (`ThreadChunkLedger.readsEveryEvent(of:)`): then a damaged chunk lost definitions, not events. Read after the
  /// chunks.
  public var readsEveryRecordedEvent: Bool { footer.map { chunkLedger.readsEveryEvent(of: $0) } ?? false }

  /// What went wrong in the chunks read at opening (symbols, modules, footer).
  private var trailingDamage = TraceDamageList()
  /// Told of each damaged spot as it is met, in the order `damage` counts them (`forEachDamage`'s reading).
  private let damageObserver: DamageObserver?
  private let file: ReadableFile
  private let firstChunkOffset: UInt64
  /// Chunks are raw deflate streams (version 3 on), not zlib streams.
  private var rawDeflate: Bool { header.version >= 3 }
  /// Whether `forEachChunk` reads and inflates chunks on a second thread, ahead of decoding: for files of
  /// `readAheadSize` bytes or more.
  var readsAhead: Bool
  static let readAheadSize: UInt64 = 1 << 20
  /// What the definitions may hold in memory: a fixed allowance plus a share of the file's size.
  private var definitionBudget: DefinitionBudget

  public convenience init(path: String) throws(TraceFileError) {
    try self.init(path: path, damageObserver: nil)
  }

  private init(path: String, damageObserver: DamageObserver?) throws(TraceFileError) {
    self.path = path
    self.damageObserver = damageObserver
    file = try ReadableFile(path: path)
    definitionBudget = DefinitionBudget(fileSize: file.size)
    readsAhead = file.size >= Self.readAheadSize
    // A short file is said as what it is: empty; not a trace (its first bytes are not the magic's); or a trace cut
    // inside its header (it begins as one), with how far it goes.
    let prefix = file.read(at: 0, count: 16)
    guard !prefix.isEmpty else {
      throw TraceFileError(.notATrace, path: path, "the file is empty: not an ObsTrace trace (no OBSTRACE header)")
    }
    let magicSeen = min(prefix.count, TraceFormat.magic.count)
    guard prefix[0..<magicSeen].elementsEqual(TraceFormat.magic[0..<magicSeen]) else {
      throw TraceFileError(.notATrace, path: path, "not an ObsTrace trace file (no OBSTRACE header)")
    }
    if prefix.count >= 10 {
      let version = readLittleEndian(UInt16.self, prefix[8..<10])
      guard version >= 1 else {
        throw TraceFileError(.notATrace, path: path, "trace format version 0 was never written (a damaged header)")
      }
      guard version <= TraceFormat.version else {
        throw TraceFileError(
          .unsupportedVersion, path: path,
          "trace format version \(version) is newer than this obstrace reads (\(TraceFormat.version)); update obstrace")
      }
    }
    guard prefix.count == 16 else {
      throw TraceFileError(
        .notATrace, path: path,
        "the trace header is cut short: the file ends after \(prefix.count) byte\(prefix.count == 1 ? "" : "s"), "
          + "inside the header's first 16")
    }
    let version = readLittleEndian(UInt16.self, prefix[8..<10])
    let length = Int(readLittleEndian(UInt32.self, prefix[12..<16]))
    guard length < 1 << 20 else {
      throw TraceFileError(
        .damaged, path: path, offset: 12,
        "the trace header says it is \(length) bytes long, more than any header (1 MiB at most): a damaged header")
    }
    let payload = file.read(at: 16, count: length + 4)
    guard payload.count == length + 4 else {
      throw TraceFileError(
        .notATrace, path: path, offset: 16,
        "the trace header is cut short: the file ends after \(16 + payload.count) of its \(16 + length + 4) bytes")
    }
    let body = Array(payload[0..<length])
    guard crc32Checksum(body) == readLittleEndian(UInt32.self, payload[length...]) else {
      throw TraceFileError(.damaged, path: path, offset: 16, "the trace header's checksum does not match")
    }
    do {
      header = try body.withUnsafeBytes { raw throws(CursorError) in
        var cursor = ByteCursor(raw)
        let wall = try cursor.readVarint()
        let pid = try cursor.readVarint32()
        let executable = try cursor.readString()
        // Version 1: drop mode (0 or 1); version 2: `HeaderFlags`.
        let flags = try cursor.readByte()
        let drop = version >= 2 ? flags & HeaderFlags.dropWhenFull != 0 : flags != 0
        let capacity = try cursor.readVarint()
        let stackLevel = try cursor.readByte()
        return TraceHeader(
          version: version, startWallClockNanoseconds: wall, processID: pid, executable: executable,
          dropWhenFull: drop, ringCapacity: capacity, stackLevel: stackLevel,
          seesUntracedTracking: version >= 2 ? flags & HeaderFlags.seesUntracedTracking != 0 : nil,
          startedWhileRunning: version >= 2 && flags & HeaderFlags.startedWhileRunning != 0)
      }
    } catch {
      throw TraceFileError(.damaged, path: path, offset: 16, "the trace header is malformed")
    }
    firstChunkOffset = UInt64(16 + length + 4)
    recordingProcess = Self.lockHolder(of: file.descriptor)
    loadTrailingChunks()
  }

  /// The process that holds a `flock` on the file open as `descriptor`, from /proc/locks (whose lines read
  /// `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`: the holder's process id, then the file's device, major and
  /// minor in hex, and inode; a line with `->` is a process waiting for the lock, not holding it). Reading the
  /// list takes no lock, so a recorder starting meanwhile is not disturbed.
  static func lockHolder(of descriptor: Int32) -> Int32? {
    var status = stat()
    guard fstat(descriptor, &status) == 0, let file = fopen("/proc/locks", "r") else { return nil }
    defer { fclose(file) }
    let device = UInt64(status.st_dev)
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
    let minor = (device & 0xff) | ((device >> 12) & ~0xff)
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let fields = text.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, fields[1] == "FLOCK" else { continue }
      let place = fields[5].split(separator: ":")
      guard place.count == 3, UInt64(place[0], radix: 16) == major, UInt64(place[1], radix: 16) == minor,
        UInt64(place[2]) == UInt64(status.st_ino), let holder = Int32(fields[4]), holder > 0
      else { continue }
      return holder
    }
    return nil
  }

  /// Calls `body` with every event of the trace, in file order. Definitions met along the way are in
  /// `definitions` by the time an event that uses them is passed.
  public func forEachEvent(_ body: (TraceEvent) throws -> Void) rethrows {
    try forEachChunk { chunk in
      try chunk.events.withEvents(in: chunk.events.indices) { events in
        for event in events { try body(event) }
      }
    }
  }

  /// Calls `body` with the type and payload of every whole chunk, in file order (for rewriting a trace).
  public func forEachWholeChunk(_ body: (ChunkType, [UInt8]) throws -> Void) rethrows {
    var offset = firstChunkOffset
    var scan = ChunkScan(reporting: false, rawDeflate: rawDeflate)
    while let chunk = Self.nextChunk(in: file, from: &offset, &scan) {
      try body(chunk.type, chunk.payload)
      if Self.endsTrace(chunk) { break }
    }
  }

  /// Where the first chunk begins: the bytes before it are the header.
  public var chunksOffset: UInt64 { firstChunkOffset }

  /// Calls `body` with the type and byte range of every whole chunk, in file order; what lies between them is
  /// damage or a cut end (for rewriting a trace that keeps them as they are).
  public func forEachWholeChunkRange(_ body: (ChunkType, Range<UInt64>) throws -> Void) rethrows {
    var offset = firstChunkOffset
    var scan = ChunkScan(reporting: false, rawDeflate: rawDeflate)
    while let chunk = Self.nextChunk(in: file, from: &offset, &scan) {
      try body(chunk.type, chunk.offset..<offset)
      if Self.endsTrace(chunk) { break }
    }
  }

  /// Calls `body` with every whole events chunk, in file order (each thread's chunks in its own order).
  public func forEachChunk(_ body: (EventChunk) throws -> Void) rethrows {
    try read(ordering: nil, chunk: body, stretch: { _ in })
  }

  /// Calls `body` with every event of the trace in the order `ordering` puts them, a stretch at a time. The
  /// ordering runs where the chunks are decoded (on the reader thread, for a big trace), ahead of `body`; the
  /// definitions, damage and counts of each chunk are recorded, in file order, before the stretches its taking
  /// released are passed on, as if `forEachChunk`'s body had passed its chunk to the ordering: `definitions` are,
  /// at each stretch, what they are at the chunk that released it.
  public func forEachStretch(ordering: some EventOrdering, _ body: (EventStretch) throws -> Void) rethrows {
    try read(ordering: ordering, chunk: { _ in }, stretch: body)
  }

  /// Calls `body` with every damaged spot of the trace, in the order `damage` counts them, the malformed footer's
  /// among them: `damage` keeps only the first ones, so the file is opened and read again, on this thread (the
  /// decoding of its chunks too, as damage is found there). For `obstrace dump`, which lists every one. Throws what
  /// opening the file again throws (it is gone, or no longer a trace).
  public func forEachDamage(_ body: @escaping (TraceDamage) -> Void) throws(TraceFileError) {
    let again = try TraceReader(path: path, damageObserver: DamageObserver(body))
    again.readsAhead = false
    again.forEachChunk { _ in }
  }

  /// Reads every chunk, recording what each says in file order; passes each decoded chunk to `chunk` when there is
  /// no ordering, and the stretches the ordering releases to `stretch` when there is one.
  private func read(
    ordering: (any EventOrdering)?, chunk chunkBody: (EventChunk) throws -> Void,
    stretch stretchBody: (EventStretch) throws -> Void
  ) rethrows {
    damage = trailingDamage
    truncated = false
    cutAt = nil
    zeroTail = nil
    afterFooter = nil
    droppedEvents = 0
    chunkLedger = ThreadChunkLedger()
    unknownIDEvents = 0
    firstUnknownID = nil
    redefinitions = 0
    firstRedefinition = nil
    // Two threads for a big trace: a reader thread reads, checks, inflates and decodes the next chunks (and
    // orders their events, with an ordering) while this one replays them; at most `ChunkPipeline.depth` batches
    // wait between them, so memory stays flat. A small trace is read on this thread alone (a thread costs more than
    // it would save). Either way the decoder keeps its own definitions, and this thread applies what each chunk
    // changed in them before passing its events on: `definitions` are, at each chunk, what they would be had this
    // thread decoded it.
    let decoder = ChunkDecoder(definitions: definitions, budget: definitionBudget)
    lastPool = decoder.pool
    let pipeline =
      readsAhead
      ? ChunkPipeline(file: file, from: firstChunkOffset, decoder: decoder, rawDeflate: rawDeflate, ordering: ordering)
      : nil
    activePipeline = pipeline
    defer {
      pipeline?.stop()
      activePipeline = nil
    }
    var producer =
      pipeline == nil
      ? BatchProducer(
        file: file, offset: firstChunkOffset, decoder: decoder, rawDeflate: rawDeflate, ordering: ordering) : nil
    producer?.observer = damageObserver
    while true {
      let batch = pipeline?.next() ?? producer!.next { true }
      for entry in batch.entries {
        switch entry {
        case .item(let item):
          guard let chunk = record(item) else { continue }
          if ordering == nil { try chunkBody(chunk) }
        case .stretch(let stretch):
          try stretchBody(stretch)
        }
      }
      if batch.last { break }
    }
    if footer == nil { truncated = true }
  }

  /// Records what reading met before an item's chunk and what the chunk says (definitions, damage, its thread and
  /// counts); returns the chunk when it decoded.
  private func record(_ item: ChunkPipeline.Item) -> EventChunk? {
    // The scan's spots were told to the observer as they were met (`ChunkScan.note`).
    damage.append(contentsOf: item.scan.damage)
    if item.scan.truncated { truncated = true }
    if let cut = item.scan.cutAt { cutAt = cut }
    if let zeros = item.scan.zeroTail { zeroTail = zeros }
    if let extra = item.scan.afterFooter { afterFooter = extra }
    guard item.more, let decoded = item.decoded else { return nil }
    Self.apply(decoded.definitions, to: &definitions)
    definitionBudget = decoded.budget
    guard let chunk = decoded.chunk else {
      if let problem = decoded.damage {
        damage.append(problem)
        damageObserver?.body(problem)
      }
      return nil
    }
    noteDecoded(chunk, decoded, eventCount: item.eventCount, lastTime: item.lastTime)
    return chunk
  }

  /// Puts a chunk's definitions in, in one access to `definitions`: a class's stored property is checked for
  /// exclusive access at each access, and a chunk of a 100 k-object trace states thousands (≈ 117 instructions an
  /// entry, callgrind, when each was an access of its own).
  private static func apply(_ entries: [TraceDefinitions.Entry], to definitions: inout TraceDefinitions) {
    for entry in entries { definitions.apply(entry) }
  }

  /// Calls `body` with `definitions` in place. A method called on `reader.definitions`, or on a copy of it, is
  /// called on a copy of the whole struct (the compiler cannot know that the call leaves the reader alone): a
  /// retain and a release of each of its tables, ≈ 950 instructions, for each name a printer resolves. `body` must
  /// not reach this reader.
  public func withDefinitions<Result>(_ body: (borrowing TraceDefinitions) throws -> Result) rethrows -> Result {
    try Self.lend(&definitions, body)
  }

  /// Lends `definitions` as they are: an inout parameter is borrowed, not copied, for the call.
  private static func lend<Result>(
    _ definitions: inout TraceDefinitions, _ body: (borrowing TraceDefinitions) throws -> Result
  ) rethrows -> Result {
    try body(definitions)
  }

  /// The read-ahead thread's pipeline while `forEachChunk` runs with `readsAhead` (for tests).
  private(set) var activePipeline: ChunkPipeline?
  /// The pool of event blocks of the last reading (for tests).
  private(set) var lastPool: EventBlockPool?

  /// Keeps what a decoded chunk says about the trace: its thread, the drops it reports, ids no definition states.
  private func noteDecoded(_ chunk: EventChunk, _ decoded: ChunkDecoder.Decoded, eventCount: Int, lastTime: UInt64?) {
    if let first = decoded.firstUnknownID {
      unknownIDEvents += decoded.unknownIDEvents
      if firstUnknownID == nil { firstUnknownID = first }
    }
    if let first = decoded.firstRedefinition {
      redefinitions += decoded.redefinitions
      if firstRedefinition == nil { firstRedefinition = first }
    }
    threads[chunk.thread] = chunk.osThreadID
    if chunk.threadEnded { endedThreads.insert(chunk.thread) }
    droppedEvents = droppedEvents.addingSaturating(chunk.droppedSinceLastChunk)
    chunkLedger.note(chunk, eventCount: eventCount, lastTime: lastTime)
    if let lastTime { lastEventTime = max(lastEventTime, lastTime) }
  }

  // MARK: Chunks

  struct Chunk: Sendable {
    var type: ChunkType
    var offset: UInt64
    var payload: [UInt8]
  }

  /// What reading chunks met on the way: damage skipped, and whether (and where) the file ends inside a chunk.
  struct ChunkScan: Sendable {
    var reporting: Bool
    /// How the file's chunks are compressed: raw deflate since version 3, zlib streams before.
    var rawDeflate: Bool
    /// Spots skipped, counted (the first kept), and told to `observer` as they are met.
    var damage = TraceDamageList()
    var observer: DamageObserver?
    var truncated = false
    var cutAt: TraceDamage?
    var zeroTail: TraceDamage?
    var afterFooter: TraceDamage?
    /// The file's bytes read last while looking past damage (`findMagic`), where the next chunk header is then read.
    var window = ReadWindow()

    mutating func note(_ spot: TraceDamage) {
      damage.append(spot)
      observer?.body(spot)
    }

    mutating func cut(at offset: UInt64, _ message: String) {
      guard reporting else { return }
      truncated = true
      cutAt = TraceDamage(offset: offset, message: message)
    }
  }

  /// Bytes of a file from `start`, read ahead where damage is looked past: spots a few bytes apart (a file of chunk
  /// magics, each a chunk whose length runs past the end) each read the next 64 KiB twice and a chunk header, three
  /// reads of the file a spot (a 20 MB file of them: 5 M spots, over a minute of system time); now one a window.
  struct ReadWindow: Sendable {
    var start: UInt64 = 0
    var bytes: [UInt8] = []

    /// `count` bytes at `offset`, when the window holds them all.
    func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
      guard offset >= start, offset - start + UInt64(count) <= UInt64(bytes.count) else { return nil }
      let from = Int(offset - start)
      return Array(bytes[from..<from + count])
    }
  }

  /// Reads the chunk at `offset` (resynchronizing past damage), advancing `offset` past it; nil at the end. Touches
  /// nothing but `file` and `scan`, so that it can run on the reader thread of `ChunkPipeline`.
  static func nextChunk(in file: ReadableFile, from offset: inout UInt64, _ scan: inout ChunkScan) -> Chunk? {
    let reportingDamage = scan.reporting
    while offset < file.size {
      let headerBytes =
        scan.window.bytes(at: offset, count: TraceFormat.chunkHeaderSize)
        ?? file.read(at: offset, count: TraceFormat.chunkHeaderSize)
      if headerBytes.count < TraceFormat.chunkHeaderSize {
        if endsInZeros(file, at: offset, &scan) { return nil }
        scan.cut(at: offset, "the file ends inside a chunk header")
        return nil
      }
      guard Array(headerBytes[0..<4]) == TraceFormat.chunkMagic else {
        if endsInZeros(file, at: offset, &scan) { return nil }
        if !resynchronize(file, &offset, &scan, "no chunk starts here") { return nil }
        continue
      }
      let typeByte = headerBytes[4]
      let compressedLength = Int(readLittleEndian(UInt32.self, headerBytes[5..<9]))
      let uncompressedLength = Int(readLittleEndian(UInt32.self, headerBytes[9..<13]))
      let expectedChecksum = readLittleEndian(UInt32.self, headerBytes[13..<17])
      let end = offset + UInt64(TraceFormat.chunkHeaderSize) + UInt64(compressedLength)
      if end > file.size {
        // Either the file was cut inside this chunk, or the length is damaged and a later chunk is whole.
        var probe = offset
        if findMagic(file, after: &probe, &scan.window) {
          if !resynchronize(file, &offset, &scan, "a chunk's length runs past the end of the file") { return nil }
          continue
        }
        scan.cut(at: offset, "the file ends inside a chunk")
        return nil
      }
      let compressed = file.read(at: offset + UInt64(TraceFormat.chunkHeaderSize), count: compressedLength)
      let checksum = crc32Checksum(compressed, initial: crc32Checksum(Array(headerBytes[4..<13])))
      guard checksum == expectedChecksum, compressed.count == compressedLength else {
        if endsInZeros(file, at: offset, chunkEnd: end, &scan) { return nil }
        // The file's last chunk, whose header says footer: the footer the recording wrote, damaged since.
        let footer = typeByte == ChunkType.footer.rawValue && end == file.size
        let message = footer ? "the footer's checksum does not match" : "a chunk's checksum does not match"
        if !resynchronize(file, &offset, &scan, message) { return nil }
        continue
      }
      let limit =
        typeByte == ChunkType.events.rawValue ? TraceFormat.maximumEventsChunkSize : TraceFormat.maximumChunkSize
      if uncompressedLength > limit {
        // Whole (its checksum holds) but larger than any writer makes: skipped without inflating a byte of it.
        if reportingDamage {
          scan.note(
            TraceDamage(
              offset: offset,
              message: "a chunk says it inflates to \(uncompressedLength) bytes, past the limit of \(limit); skipped"))
        }
        offset = end
        continue
      }
      guard let type = ChunkType(rawValue: typeByte),
        let payload = compressed.withUnsafeBytes({
          inflateChunk($0, expectedSize: uncompressedLength, raw: scan.rawDeflate)
        })
      else {
        if !resynchronize(file, &offset, &scan, "a chunk could not be decompressed") { return nil }
        continue
      }
      let chunk = Chunk(type: type, offset: offset, payload: payload)
      offset = end
      return chunk
    }
    return nil
  }

  /// Whether `chunk` is a footer that decodes: the last chunk of a trace (a recording writes nothing after it).
  static func endsTrace(_ chunk: Chunk) -> Bool {
    guard chunk.type == .footer else { return false }
    return chunk.payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      return (try? decodeFooter(&cursor)) != nil
    }
  }

  /// Records what follows the footer that ends the trace at `offset` (the footer's end), when anything does: zeros
  /// to the end of the file (its end never written: nothing is missing), or bytes that are not part of the trace.
  static func noteAfterFooter(_ file: ReadableFile, at offset: UInt64, _ scan: inout ChunkScan) {
    guard scan.reporting, offset < file.size, !endsInZeros(file, at: offset, &scan) else { return }
    let count = file.size - offset
    scan.afterFooter = TraceDamage(
      offset: offset,
      message: "the file goes on for \(count) byte\(count == 1 ? "" : "s") after the trace's footer (the last "
        + "thing a recording writes), not part of the trace: ignored")
  }

  /// Whether the file is zeros from `offset` to its end, or from inside the chunk at `offset` (before `chunkEnd`, the
  /// end its header states, within the file) to its end: bytes never written, where a chunk should begin or where
  /// this one should go on. Records it in `scan` (not as damage, nor as a cut: nothing was cut, and a footer before
  /// the zeros leaves nothing missing). Looked at only where a chunk fails to read.
  private static func endsInZeros(
    _ file: ReadableFile, at offset: UInt64, chunkEnd: UInt64? = nil, _ scan: inout ChunkScan
  ) -> Bool {
    let start = zerosStart(file)
    guard start < file.size else { return false }
    let count = file.size - start
    let zeros = "\(count) zero byte\(count == 1 ? "" : "s")"
    if start <= offset {
      if scan.reporting {
        scan.zeroTail = TraceDamage(
          offset: offset,
          message: "the file ends in \(file.size - offset) zero byte\(file.size - offset == 1 ? "" : "s") after its "
            + "last whole chunk: its end was never written")
      }
      return true
    }
    // Zeros from inside the chunk: only a run longer than a chunk's own data ends in. A deflate stream's last byte is
    // often 0 (every sample trace ends in one), so a chunk damaged anywhere that happens to be the file's last would
    // otherwise be told as an end never written, and its damage never said (a fresh-clone try-out's Q13: a footer
    // with one byte changed was "never wholly written: the file ends in 1 zero byte").
    if let chunkEnd, start < chunkEnd, count >= minimumUnwrittenRun {
      if scan.reporting {
        scan.truncated = true
        scan.zeroTail = TraceDamage(
          offset: offset,
          message: "the chunk here was never wholly written: the file ends in \(zeros) from byte \(start)")
      }
      return true
    }
    return false
  }

  /// The fewest zero bytes ending a file inside a chunk that are read as never written rather than as the chunk's
  /// own last bytes: compressed data has no such runs (a disk that did not get the data gives whole blocks of
  /// zeros).
  static let minimumUnwrittenRun: UInt64 = 16

  /// Where the zeros that end the file begin (`file.size` when its last byte is not zero): found once a file, as
  /// it is looked at wherever a chunk fails to read (each spot of a file of chunk magics read its last 64 KiB).
  private static func zerosStart(_ file: ReadableFile) -> UInt64 { file.zerosStart }

  /// Records damage at `offset` and moves it to the next chunk magic; false when there is none.
  private static func resynchronize(
    _ file: ReadableFile, _ offset: inout UInt64, _ scan: inout ChunkScan, _ message: String
  ) -> Bool {
    if scan.reporting { scan.note(TraceDamage(offset: offset, message: message + "; skipped")) }
    if findMagic(file, after: &offset, &scan.window) { return true }
    if scan.reporting { scan.truncated = true }
    return false
  }

  /// Moves `offset` to the next occurrence of the chunk magic after it, looked for in `window` and read into it 64 KiB
  /// at a time.
  private static func findMagic(_ file: ReadableFile, after offset: inout UInt64, _ window: inout ReadWindow) -> Bool {
    var position = offset + 1
    let magic = TraceFormat.chunkMagic
    while position < file.size {
      if position < window.start || position - window.start + UInt64(magic.count) > UInt64(window.bytes.count) {
        window = ReadWindow(start: position, bytes: file.read(at: position, count: 1 << 16))
        if window.bytes.count < magic.count { return false }
      }
      let block = window.bytes
      for index in Int(position - window.start)...(block.count - magic.count)
      where block[index] == magic[0] && block[index + 1] == magic[1] && block[index + 2] == magic[2]
        && block[index + 3] == magic[3]
      {
        offset = window.start + UInt64(index)
        return true
      }
      position = window.start + UInt64(block.count - magic.count + 1)
    }
    return false
  }

  /// Walks chunk headers only, loading symbols and the footer, which a clean stop writes after the events.
  private func loadTrailingChunks() {
    var offset = firstChunkOffset
    while offset + UInt64(TraceFormat.chunkHeaderSize) <= file.size {
      let headerBytes = file.read(at: offset, count: TraceFormat.chunkHeaderSize)
      guard Array(headerBytes[0..<4]) == TraceFormat.chunkMagic else {
        // Damage: fall back to a full scan, which resynchronizes.
        loadTrailingChunksByScanning()
        return
      }
      let length = UInt64(readLittleEndian(UInt32.self, headerBytes[5..<9]))
      if let type = ChunkType(rawValue: headerBytes[4]), type != .events {
        var chunkOffset = offset
        var scan = ChunkScan(reporting: false, rawDeflate: rawDeflate)
        if let chunk = Self.nextChunk(in: file, from: &chunkOffset, &scan) {
          absorbTrailing(chunk)
          // Nothing after the footer is part of the trace.
          if Self.endsTrace(chunk) { return }
        }
      }
      offset += UInt64(TraceFormat.chunkHeaderSize) + length
    }
  }

  private func loadTrailingChunksByScanning() {
    var offset = firstChunkOffset
    var scan = ChunkScan(reporting: false, rawDeflate: rawDeflate)
    while let chunk = Self.nextChunk(in: file, from: &offset, &scan) {
      if chunk.type != .events { absorbTrailing(chunk) }
      if Self.endsTrace(chunk) { return }
    }
  }

  private func noteTrailing(_ spot: TraceDamage) {
    trailingDamage.append(spot)
    damageObserver?.body(spot)
  }

  private func absorbTrailing(_ chunk: Chunk) {
    chunk.payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      switch chunk.type {
      case .footer:
        footer = try? Self.decodeFooter(&cursor)
        if footer == nil {
          noteTrailing(TraceDamage(offset: chunk.offset, message: Self.malformedFooterMessage))
        }
      case .symbols:
        do throws(CursorError) {
          definitions.symbols.merge(try Self.decodeSymbols(&cursor, budget: &definitionBudget))
        } catch {
          let reason =
            error == .overBudget
            ? "pass what the file's size justifies (\(definitionBudget.allowance) bytes)" : "are malformed"
          noteTrailing(TraceDamage(offset: chunk.offset, message: "the symbol table's entries \(reason); ignored"))
        }
      case .modules:
        if let count = try? cursor.readVarint(), count < 1 << 16 {
          var modules: [LoadedModule] = []
          for _ in 0..<count {
            guard let path = try? cursor.readString(), let base = try? cursor.readVarint(),
              (try? definitionBudget.charge(new: path.utf8.count)) != nil
            else { break }
            modules.append(LoadedModule(path: path, base: base))
          }
          self.modules = modules
        }
      case .events:
        break
      }
    }
  }

  static func decodeFooter(_ cursor: inout ByteCursor) throws(CursorError) -> TraceFooter {
    let duration = try cursor.readVarint()
    let chunks = try cursor.readVarint()
    let count = try cursor.readVarint()
    var threads: [ThreadTotals] = []
    for _ in 0..<min(count, 1 << 20) {
      let thread = try cursor.readVarint32()
      let os = Int32(bitPattern: try cursor.readVarint32())
      let recorded = try cursor.readVarint()
      let dropped = try cursor.readVarint()
      threads.append(ThreadTotals(thread: thread, osThreadID: os, recorded: recorded, dropped: dropped))
    }
    // Version 2, added late: footers written before have nothing more.
    var running: [UInt32] = []
    var lost: UInt64 = 0
    var ringless: UInt64 = 0
    if !cursor.isAtEnd {
      let count = try cursor.readVarint()
      for _ in 0..<min(count, 1 << 20) { running.append(try cursor.readVarint32()) }
      lost = try cursor.readVarint()
    }
    // Version 3, added late: footers written before end here.
    if !cursor.isAtEnd { ringless = try cursor.readVarint() }
    // Version 3, added later still: the forks made while recording.
    var forks: UInt64 = 0
    if !cursor.isAtEnd { forks = try cursor.readVarint() }
    // Version 3, added later again: the events of signal handlers that interrupted the recorder.
    var signalHandlerEvents: UInt64 = 0
    if !cursor.isAtEnd { signalHandlerEvents = try cursor.readVarint() }
    return TraceFooter(
      durationNanoseconds: duration, chunks: chunks, threads: threads, runningAtStop: running, lostAtStop: lost,
      ringless: ringless, forks: forks, signalHandlerEvents: signalHandlerEvents)
  }

  static func decodeSymbols(_ cursor: inout ByteCursor, budget: inout DefinitionBudget) throws(CursorError)
    -> SymbolTable
  {
    var table = SymbolTable()
    while !cursor.isAtEnd {
      switch SymbolTag(rawValue: try cursor.readByte()) {
      case .typeName:
        let id = try cursor.readVarint32()
        let name = try cursor.readString()
        try budget.charge(old: table.typeNames[id]?.utf8.count, new: name.utf8.count)
        table.typeNames[id] = name
      case .propertyName:
        let id = try cursor.readVarint32()
        let module = try cursor.readString()
        let type = try cursor.readString()
        let property = try cursor.readString()
        let name = PropertyName(module: module, type: type, property: property)
        try budget.charge(old: table.propertyNames[id]?.size, new: name.size)
        table.propertyNames[id] = name
      case .frame:
        let address = try cursor.readVarint()
        let function = try cursor.readString()
        let file = try cursor.readString()
        let line = try cursor.readVarint32()
        let module = try cursor.readString()
        let frame = SymbolizedFrame(address: address, function: function, file: file, line: line, module: module)
        try budget.charge(old: table.frames[address]?.size, new: frame.size)
        table.frames[address] = frame
      case .labelName:
        let id = try cursor.readVarint32()
        let name = try cursor.readString()
        try budget.charge(old: table.labelNames[id]?.utf8.count, new: name.utf8.count)
        table.labelNames[id] = name
      case .inlinedFrames:
        let address = try cursor.readVarint()
        let count = try cursor.readVarint()
        // Each inlined frame takes at least three bytes: no more frames than the bytes left justify.
        guard count <= UInt64(cursor.bytes.count - cursor.offset) else { throw .malformed }
        var inlined: [SymbolizedFrame] = []
        for _ in 0..<count {
          let function = try cursor.readString()
          let file = try cursor.readString()
          let line = try cursor.readVarint32()
          let frame = SymbolizedFrame(
            address: address, function: function, file: file, line: line,
            module: table.frames[address]?.module ?? "")
          try budget.charge(new: frame.size)
          inlined.append(frame)
        }
        table.frames[address, default: SymbolizedFrame(address: address, function: "")].inlined = inlined
      case .approximateLines:
        let address = try cursor.readVarint()
        let bits = try cursor.readVarint()
        table.frames[address]?.markApproximate(bits)
      case .declaringModule:
        let address = try cursor.readVarint()
        let module = try cursor.readString()
        if table.frames[address] != nil {
          try budget.charge(new: module.utf8.count)
          table.frames[address]!.declaringModule = module
        }
      case nil:
        throw .malformed
      }
    }
    return table
  }

}

/// A file read with `pread`, so that the reader never holds more than one chunk.
/// A trace file open for reading. Immutable after opening, and read with `pread`: safe from several threads.
final class ReadableFile: @unchecked Sendable {
  let descriptor: Int32
  let size: UInt64

  init(path: String) throws(TraceFileError) {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer (forever); the check below then
    // refuses it. A regular file's reads ignore the flag.
    descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else {
      throw TraceFileError(.cannotOpen, path: path, "cannot open the trace (\(String(cString: strerror(errno))))")
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      close(descriptor)
      throw TraceFileError(.notATrace, path: path, "not a regular file")
    }
    size = UInt64(status.st_size)
  }

  deinit { close(descriptor) }

  /// Where the zeros that end the file begin (`size` when its last byte is not zero), worked out at the first ask.
  var zerosStart: UInt64 { zeros.withLock { $0 ?? findZerosStart(&$0) } }
  private let zeros = Mutex<UInt64?>(nil)

  private func findZerosStart(_ found: inout UInt64?) -> UInt64 {
    var end = size
    while end > 0 {
      let start = end - min(end, 1 << 16)
      let block = read(at: start, count: Int(end - start))
      guard block.count == Int(end - start) else { break }
      if let last = block.lastIndex(where: { $0 != 0 }) {
        end = start + UInt64(last) + 1
        break
      }
      end = start
    }
    found = end
    return end
  }

  /// Up to `count` bytes at `offset`; fewer at the end of the file.
  func read(at offset: UInt64, count: Int) -> [UInt8] {
    guard count > 0, offset < size else { return [] }
    let wanted = Int(min(UInt64(count), size - offset))
    var bytes = [UInt8](repeating: 0, count: wanted)
    var filled = 0
    bytes.withUnsafeMutableBytes { buffer in
      while filled < wanted {
        let got = pread(descriptor, buffer.baseAddress! + filled, wanted - filled, off_t(offset) + off_t(filled))
        if got < 0 && errno == EINTR { continue }
        if got <= 0 { break }
        filled += got
      }
    }
    if filled < wanted { bytes.removeSubrange(filled...) }
    return bytes
  }
}

/// What the definitions of a trace may hold in memory: `TraceFormat.definitionAllowance` plus
/// `definitionBytesPerFileByte` per byte of the file. Each new entry costs its bytes and a fixed overhead; an id
/// stated again costs only what it grew.
struct DefinitionBudget {
  /// What one entry costs beyond its bytes (the table's slot, the string's header).
  static let entryOverhead = 32
  let allowance: UInt64
  private(set) var spent: UInt64 = 0

  init(fileSize: UInt64) {
    let (share, overflow) = fileSize.multipliedReportingOverflow(by: TraceFormat.definitionBytesPerFileByte)
    allowance = TraceFormat.definitionAllowance.addingSaturating(overflow ? .max : share)
  }

  /// Charges an entry of `new` bytes that replaces one of `old` bytes (nil: a new entry).
  mutating func charge(old: Int? = nil, new: Int) throws(CursorError) {
    let cost = old.map { max(0, new - $0) } ?? new + Self.entryOverhead
    spent = spent.addingSaturating(UInt64(cost))
    guard spent <= allowance else { throw .overBudget }
  }
}

extension PropertyName {
  var size: Int { module.utf8.count + type.utf8.count + property.utf8.count }
}

extension SymbolizedFrame {
  var size: Int { function.utf8.count + file.utf8.count + module.utf8.count }
}
