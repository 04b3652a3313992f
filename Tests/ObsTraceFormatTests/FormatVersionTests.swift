import Foundation
import Testing

@testable import ObsTraceFormat

/// One reader test per format version: a reader reads every version up to its own.
@Suite("Format versions")
struct FormatVersionTests {
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
      address: 0x10, function: "Demo.Model.count.modify : Swift.Int", file: "/src/macro.swift", line: 21,
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
    #expect(TraceFormat.version == 2)
  }

  @Test("version 2: the footer lists the threads still running at the stop and counts events lost; one without")
  func version2FooterRunningAtStop() throws {
    let totals = [ThreadTotals(thread: 1, osThreadID: 10, recorded: 4, dropped: 0)]
    let footer = TraceFooter(
      durationNanoseconds: 9, chunks: 1, threads: totals, runningAtStop: [2, 7], lostAtStop: 3)
    var bytes = ChunkPayload.footer(footer)
    let decoded = try bytes.withUnsafeBytes { buffer in
      var cursor = ByteCursor(buffer)
      return try TraceReader.decodeFooter(&cursor)
    }
    #expect(decoded == footer)
    // A footer written before the fields existed (version 2 earlier in this session) ends after the threads.
    let plain = ChunkPayload.footer(TraceFooter(durationNanoseconds: 9, chunks: 1, threads: totals))
    bytes = Array(plain.dropLast(2))  // the empty list and the zero count
    let older = try bytes.withUnsafeBytes { buffer in
      var cursor = ByteCursor(buffer)
      return try TraceReader.decodeFooter(&cursor)
    }
    #expect(older == TraceFooter(durationNanoseconds: 9, chunks: 1, threads: totals))
  }
}
