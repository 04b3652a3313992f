import Foundation
import Testing

@testable import ObsTraceCommands
@testable import ObsTraceFormat

/// Definitions for a synthetic trace: every id names itself.
private final class NumberedDefinitions: TraceDefinitionSource {
  func typeName(_ id: UInt32) -> String { "Fixture.Row\(id)" }
  func property(_ id: UInt32) -> PropertyDefinition? {
    PropertyDefinition(rootType: 1, keyPathDescription: "\\Row1.<computed 0x\(id) (Int)>", getterAddress: 0)
  }
  func label(_ id: UInt32) -> String { "label \(id)" }
  func scope(_ id: UInt32) -> ScopeDefinition? { ScopeDefinition(kind: .tracking, label: id, parent: 0) }
  func stack(_ id: UInt32) -> [UInt64] { [] }
}

@Suite("Resolved names")
struct ResolvedNamesTests {
  @Test(
    "a trace whose object serials start far from 0 keeps the timeline's object names in an array from the first serial, not in a dictionary or an array from 0"
  )
  func objectSerialsFarFromZero() throws {
    // Object serials are numbered per process: a trace recorded after 700 k objects were made starts there.
    let first: UInt32 = 700_000
    let objects: UInt32 = 20_000
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-names-\(getpid()).trc").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    let definitions = NumberedDefinitions()
    let stamps = DefinitionStamps()
    var encoder = ChunkEncoder(thread: 1, osThreadID: 42, sequence: 0, firstTime: 1000, stamps: stamps)
    for serial in first..<(first + objects) {
      encoder.append(
        kind: EventKind.objectCreated.rawValue, flags: 0, time: 1000 + UInt64(serial - first), depth: 0,
        object: serial, key: 0, scope: 0, aux: 1, stack: 0, definitions: definitions, stamps: stamps)
    }
    try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: 0, threadEnded: true))
    writer.close()

    let reader = try TraceReader(path: path)
    let names = ResolvedNames(reader: reader)
    let printed = LineWriterTests.CountingOutput()
    let output = LineWriter(output: printed)
    var count = 0
    reader.forEachChunk { chunk in
      for event in chunk.events {
        names.appendObject(event.object, to: output)
        output.endLine()
        count += 1
      }
    }
    output.flush()
    #expect(count == Int(objects))
    let text = printed.text
    #expect(text.hasPrefix("Row1#700000\nRow1#700001\n"))
    #expect(text.hasSuffix("Row1#719999\n"))
    // Each name made once and kept (20,000 serials in a row fit the slots): the old table (from 0) kept every one
    // of them in its dictionary.
    #expect(names.objectNamesMade == Int(objects))
    #expect(names.objectSlots >= Int(objects) && names.objectSlots < 2 * Int(objects))
  }

  @Test(
    "a trace that names 300,000 short-lived objects keeps a bounded number of their names, each printed right (tryout14's H18: the timeline grew 35 bytes an object)"
  )
  func manyObjectsNamesBounded() throws {
    let objects: UInt32 = 300_000
    var trace = try SyntheticTrace("names-many", definitions: SyntheticDefinitions(typeName: { _ in "Fixture.Row1" }))
    defer { try? FileManager.default.removeItem(atPath: trace.path) }
    var sequence: UInt64 = 0
    var chunk = trace.chunk()
    for serial in 1...objects {
      // Each object named twice: as it is made and as it is freed.
      trace.next(&chunk, .objectCreated, object: serial, aux: 1)
      trace.next(&chunk, .objectFreed, object: serial, aux: 1)
      if chunk.eventCount >= 50_000 {
        try trace.write(chunk, threadEnded: false)
        sequence += 1
        chunk = trace.chunk(sequence: sequence, firstTime: trace.lastTime)
      }
    }
    try trace.write(chunk)
    let path = try trace.finish()

    let reader = try TraceReader(path: path)
    let names = ResolvedNames(reader: reader)
    let printed = LineWriterTests.CountingOutput()
    let output = LineWriter(output: printed)
    var count = 0
    reader.forEachChunk { chunk in
      for event in chunk.events {
        names.appendObject(event.object, to: output)
        output.endLine()
        count += 1
      }
    }
    output.flush()
    #expect(count == 2 * Int(objects))
    // Every line right, those made again after the names were emptied too.
    #expect(printed.text == (1...objects).map { "Row1#\($0)\nRow1#\($0)\n" }.joined())
    // Each name made once (its second use finds it), in bounded memory: slots and bytes at most their maximum (the
    // names take 3.3 MB), where a name was kept for every object, a slot and its bytes each.
    #expect(names.objectNamesMade == Int(objects))
    #expect(names.objectSlots <= ObjectNames.maximumSlots)
    #expect(names.objectNameBytes <= ObjectNames.maximumBytes + 64)
  }
}
