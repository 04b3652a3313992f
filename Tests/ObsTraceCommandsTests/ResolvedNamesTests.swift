import Foundation
import Testing

@testable import ObsTraceCommands
@testable import ObsTraceFormat

@Suite("Resolved names")
struct ResolvedNamesTests {
  /// A trace's objects, each named `names` times (as it is made, and as it is freed), and the slots the names may
  /// take.
  struct Objects: Sendable, CustomTestStringConvertible {
    var first: UInt32
    var count: UInt32
    var names: Int
    var slots: ClosedRange<Int>
    var testDescription: String { "\(count) objects from serial \(first), each named \(names) times" }
  }

  /// Object serials are numbered per process: a trace recorded after 700 k objects were made starts there, and
  /// the timeline keeps its names in an array from the first serial (20,000 serials in a row fit the slots), not
  /// in a dictionary or an array from 0. A trace that names 300,000 short-lived objects (tryout14's H18: the
  /// timeline grew 35 bytes an object) keeps a bounded number of their names, slots and bytes at most their
  /// maximum (the names take 3.3 MB), where a name was kept for every object, a slot and its bytes each. Either
  /// way each name is made once (its second use finds it) and every line is right, those made again after the
  /// names were emptied too.
  @Test(
    "the timeline's object names are each made once, printed right, in slots from the first serial and in bounded memory",
    arguments: [
      Objects(first: 700_000, count: 20_000, names: 1, slots: 20_000...39_999),
      Objects(first: 1, count: 300_000, names: 2, slots: 1...ObjectNames.maximumSlots),
    ])
  func objectNames(_ objects: Objects) throws {
    var trace = try SyntheticTrace("names", definitions: SyntheticDefinitions(typeName: { _ in "Fixture.Row1" }))
    defer { try? FileManager.default.removeItem(atPath: trace.path) }
    var sequence: UInt64 = 0
    var chunk = trace.chunk()
    for serial in objects.first..<(objects.first + objects.count) {
      trace.next(&chunk, .objectCreated, object: serial, aux: 1)
      if objects.names == 2 { trace.next(&chunk, .objectFreed, object: serial, aux: 1) }
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
    #expect(count == objects.names * Int(objects.count))
    let expected = (objects.first..<(objects.first + objects.count)).map {
      String(repeating: "Row1#\($0)\n", count: objects.names)
    }
    #expect(printed.text == expected.joined())
    #expect(names.objectNamesMade == Int(objects.count))
    #expect(objects.slots.contains(names.objectSlots), "\(names.objectSlots) slots")
    #expect(names.objectNameBytes <= ObjectNames.maximumBytes + 64)
  }
}
