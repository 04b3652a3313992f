import Foundation
import Testing

@testable import ObsTraceFormat

/// One reader test per format version: a reader reads every version up to its own.
@Suite("Format versions")
struct FormatVersionTests {
  /// The footer that `bytes` (a footer chunk's payload) decodes to.
  static func footer(decoding bytes: some Collection<UInt8>) throws -> TraceFooter {
    try Array(bytes).withUnsafeBytes { buffer in
      var cursor = ByteCursor(buffer)
      return try TraceReader.decodeFooter(&cursor)
    }
  }

  static let fixtures: String = {
    var url = URL(fileURLWithPath: #filePath)
    url.deleteLastPathComponent()
    return url.appendingPathComponent("Fixtures").path
  }()

  @Test("version 1: the seed guide's trace as version 1 wrote it reads whole, with its names and sites")
  func version1() throws {
    let reader = try TraceReader(path: Self.fixtures + "/guide-version1.trc")
    #expect(reader.header.version == 1)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    #expect(events.count == 45)
    #expect(reader.footer?.recorded == 45)
    #expect(reader.footer?.runningAtStop == [] && reader.footer?.lostAtStop == 0)
    #expect(reader.damage.isEmpty && !reader.truncated)
    let access = try #require(events.first { $0.kind == .access })
    #expect(reader.definitions.propertyName(access.key) == "Model.property")
    let begin = try #require(events.first { $0.kind == .scopeBegin })
    #expect(reader.definitions.labelName(begin.key) == "FirstView.body")
    let site = try #require(reader.definitions.site(ofStack: begin.stack))
    #expect(site.file.hasSuffix("main.swift") && site.line == 50)
  }

  @Test("version 2: the frames inlined at an address are written, read back, and expand a stack's frames")
  func version2InlinedFrames() throws {
    var table = SymbolTable()
    let accessor = SymbolizedFrame(
      address: 0x10, function: "Demo.Model.count.modify : Swift.Int",
      file: "/src/@__swiftmacro_4Demo5ModelC5count18ObservationTrackedfMa_.swift", line: 21,
      module: "demo")
    table.frames[0x10] = SymbolizedFrame(
      address: 0x10, function: "Demo.run() -> ()", file: "/src/main.swift", line: 14, module: "demo",
      inlined: [accessor])
    table.frames[0x20] = SymbolizedFrame(address: 0x20, function: "main", file: "/src/main.swift", line: 30)
    let payload = ChunkPayload.symbols(table)
    let decoded = try payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      var budget = DefinitionBudget(fileSize: UInt64(payload.count))
      return try TraceReader.decodeSymbols(&cursor, budget: &budget)
    }
    #expect(decoded == table)
    var definitions = TraceDefinitions()
    definitions.symbols = decoded
    definitions.stacks[1] = [0x10, 0x20]
    #expect(definitions.frames(ofStack: 1).map(\.function) == [accessor.function, "Demo.run() -> ()", "main"])
    #expect(definitions.frames(ofStack: 1).map(\.line) == [21, 14, 30])
    #expect(definitions.site(ofStack: 1)?.line == 14)
  }

  @Test("version 3: which logical frames have an approximate line is written and read back with the frames")
  func version3ApproximateLines() throws {
    var table = SymbolTable()
    var observer = SymbolizedFrame(
      address: 0x10, function: "Demo.Holder.(_level in _1).didset : Swift.Int", file: "Demo/Models.swift", line: 28,
      module: "demo")
    observer.lineIsApproximate = true
    let accessor = SymbolizedFrame(
      address: 0x10, function: "Demo.Holder.level.modify : Swift.Int",
      file: "/src/@__swiftmacro_4Demo6HolderC5level18ObservationTrackedfMa_.swift", line: 21, module: "demo")
    table.frames[0x10] = SymbolizedFrame(
      address: 0x10, function: "main", file: "/src/main.swift", line: 14, module: "demo",
      inlined: [accessor, observer])
    var call = SymbolizedFrame(address: 0x20, function: "main", file: "/src/main.swift", line: 46, module: "demo")
    call.lineIsApproximate = true
    table.frames[0x20] = call
    table.frames[0x30] = SymbolizedFrame(address: 0x30, function: "main", file: "/src/main.swift", line: 47)
    let payload = ChunkPayload.symbols(table)
    let decoded = try payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      var budget = DefinitionBudget(fileSize: UInt64(payload.count))
      return try TraceReader.decodeSymbols(&cursor, budget: &budget)
    }
    #expect(decoded == table)
    #expect(decoded.frames[0x10]?.logicalFrames.map(\.lineIsApproximate) == [false, true, false])
    #expect(decoded.frames[0x20]?.lineIsApproximate == true && decoded.frames[0x30]?.lineIsApproximate == false)
  }

  @Test("version 3, later: the module that declares top-level code is written and read back, and names its site")
  func version3DeclaringModule() throws {
    var table = SymbolTable()
    var topLevel = SymbolizedFrame(
      address: 0x10, function: "async_MainTY1_", file: "/src/App/main.swift", line: 23, module: "app",
      inlined: [
        SymbolizedFrame(
          address: 0x10, function: "App.Model.value.setter : Swift.Int", file: "/tmp/@__swiftmacro_3App5Model.swift",
          line: 15, module: "app")
      ])
    topLevel.declaringModule = "App"
    table.frames[0x10] = topLevel
    table.frames[0x20] = SymbolizedFrame(address: 0x20, function: "main", file: "/src/App/main.swift", line: 30)
    let payload = ChunkPayload.symbols(table)
    let decoded = try payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      var budget = DefinitionBudget(fileSize: UInt64(payload.count))
      return try TraceReader.decodeSymbols(&cursor, budget: &budget)
    }
    #expect(decoded == table)
    #expect(decoded.frames[0x10]?.declaringModule == "App" && decoded.frames[0x20]?.declaringModule == "")
    var definitions = TraceDefinitions()
    definitions.symbols = decoded
    definitions.stacks[1] = [0x10]
    #expect(definitions.site(ofStack: 1).map(SiteFilter.callSiteLabel) == "App/main.swift:23")
  }

  @Test("version 2: the footer lists the threads still running at the stop and counts events lost; one without")
  func version2FooterRunningAtStop() throws {
    let totals = [ThreadTotals(thread: 1, osThreadID: 10, recorded: 4, dropped: 0)]
    let footer = TraceFooter(
      durationNanoseconds: 9, chunks: 1, threads: totals, runningAtStop: [2, 7], lostAtStop: 3)
    var bytes = ChunkPayload.footer(footer)
    let decoded = try Self.footer(decoding: bytes)
    #expect(decoded == footer)
    // A footer written before the fields existed (version 2 earlier in this session) ends after the threads.
    let plain = ChunkPayload.footer(TraceFooter(durationNanoseconds: 9, chunks: 1, threads: totals))
    // The empty list, the zero count, the zero ringless, fork and signal handlers' counts.
    bytes = Array(plain.dropLast(5))
    let older = try Self.footer(decoding: bytes)
    #expect(older == TraceFooter(durationNanoseconds: 9, chunks: 1, threads: totals))
  }

  @Test("version 3: the footer counts the events of threads that could not get a ring; one written before has none")
  func version3FooterRingless() throws {
    let totals = [ThreadTotals(thread: 1, osThreadID: 10, recorded: 4, dropped: 0)]
    let footer = TraceFooter(
      durationNanoseconds: 9, chunks: 1, threads: totals, runningAtStop: [2], lostAtStop: 3, ringless: 200)
    let decoded = try Self.footer(decoding: ChunkPayload.footer(footer))
    #expect(decoded == footer)
    // Written before the field existed: the footer ends after the events lost at the stop.
    // 200 is a two-byte varint, then no forks, no signal handlers' events.
    let earlier = Array(ChunkPayload.footer(footer).dropLast(4))
    let older = try Self.footer(decoding: earlier)
    #expect(older.lostAtStop == 3)
    #expect(older.ringless == 0)
  }

  @Test("version 3, later: the footer counts the forks made while recording; one written before has none")
  func version3FooterForks() throws {
    let totals = [ThreadTotals(thread: 1, osThreadID: 10, recorded: 4, dropped: 0)]
    let footer = TraceFooter(
      durationNanoseconds: 9, chunks: 1, threads: totals, runningAtStop: [], lostAtStop: 0, ringless: 200, forks: 2)
    let decoded = try Self.footer(decoding: ChunkPayload.footer(footer))
    #expect(decoded == footer)
    // Written before the field existed: the footer ends after the ringless count (no forks, no handlers' events).
    let earlier = Array(ChunkPayload.footer(footer).dropLast(2))
    let older = try Self.footer(decoding: earlier)
    #expect(older.ringless == 200 && older.forks == 0)
  }

  @Test("version 3, later still: the footer counts the events of signal handlers that interrupted the recorder")
  func version3FooterSignalHandlerEvents() throws {
    let totals = [ThreadTotals(thread: 1, osThreadID: 10, recorded: 4, dropped: 0)]
    let footer = TraceFooter(
      durationNanoseconds: 9, chunks: 1, threads: totals, runningAtStop: [], lostAtStop: 0, ringless: 0, forks: 2,
      signalHandlerEvents: 300)
    let decoded = try Self.footer(decoding: ChunkPayload.footer(footer))
    #expect(decoded == footer)
    // Written before the field existed: the footer ends after the fork count (300 is a two-byte varint).
    let earlier = Array(ChunkPayload.footer(footer).dropLast(2))
    let older = try Self.footer(decoding: earlier)
    #expect(older.forks == 2 && older.signalHandlerEvents == 0)
  }

  @Test("version 2: the seed guide's trace as version 2 wrote it (zlib streams) reads whole, with its names and sites")
  func version2() throws {
    let reader = try TraceReader(path: Self.fixtures + "/guide-version2.trc")
    #expect(reader.header.version == 2)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    #expect(events.count == 45)
    #expect(reader.footer?.recorded == 45)
    #expect(reader.damage.isEmpty && !reader.truncated)
    let access = try #require(events.first { $0.kind == .access })
    #expect(reader.definitions.propertyName(access.key) == "Model.property")
    let begin = try #require(events.first { $0.kind == .scopeBegin })
    #expect(reader.definitions.labelName(begin.key) == "FirstView.body")
  }

  @Test("version 3: every chunk is a raw deflate stream (no zlib wrapper, no Adler-32), and reads back")
  func version3RawDeflate() throws {
    #expect(TraceFormat.version == 3)
    let path = temporaryPath("v3.trc")
    try writeSyntheticTrace(to: path, chunks: 2, perChunk: 40)
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    var offset = 16 + Int(bytes[12]) + Int(bytes[13]) << 8 + 4
    var chunks = 0
    while offset + TraceFormat.chunkHeaderSize <= bytes.count {
      #expect(Array(bytes[offset..<offset + 4]) == TraceFormat.chunkMagic)
      let compressed = Int(bytes[offset + 5]) | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7]) << 16
      let inflated = Int(bytes[offset + 9]) | Int(bytes[offset + 10]) << 8 | Int(bytes[offset + 11]) << 16
      let start = offset + TraceFormat.chunkHeaderSize
      let stream = Array(bytes[start..<start + compressed])
      let raw = stream.withUnsafeBytes { inflateChunk($0, expectedSize: inflated, raw: true) }
      let wrapped = stream.withUnsafeBytes { inflateChunk($0, expectedSize: inflated, raw: false) }
      #expect(raw?.count == inflated)
      #expect(wrapped == nil)
      offset = start + compressed
      chunks += 1
    }
    #expect(chunks >= 3)
    let reader = try TraceReader(path: path)
    var events = 0
    reader.forEachEvent { _ in events += 1 }
    #expect(events == 80 && reader.damage.isEmpty)
  }

  @Test("an events chunk's time column is stored: its bytes are in the compressed stream as they are")
  func timeColumnStored() throws {
    // Items that repeat (compressed to little) and a column of noise (left as it is).
    var state: UInt32 = 12
    let items = [UInt8]((0..<4000).map { UInt8($0 % 10) })
    let column = (0..<600).map { _ -> UInt8 in
      state = state &* 1_664_525 &+ 1_013_904_223
      return UInt8(truncatingIfNeeded: state >> 24)
    }
    for raw in [true, false] {
      let compressed = try #require(Deflater(raw: raw).compress(items + column, storedTail: column.count))
      #expect(compressed.count < items.count / 4 + column.count + 40)
      let found = (0...(compressed.count - column.count)).contains {
        Array(compressed[$0..<$0 + column.count]) == column
      }
      #expect(found)
      let back = compressed.withUnsafeBytes { inflateChunk($0, expectedSize: items.count + column.count, raw: raw) }
      #expect(back == items + column)
    }
  }
}
