import Testing

@testable import ObsTraceFormat

/// An events chunk's payload, byte by byte, as an adversary would write it.
struct ForgedChunk {
  var bytes: [UInt8] = []

  /// `sequence`: the thread's chunk number (a thread's chunks come once each, in order: a number read before is a
  /// copy, skipped).
  init(thread: UInt32 = 1, sequence: UInt64 = 0, firstTime: UInt64 = 0) {
    bytes.appendVarint(thread)
    bytes.appendVarint(UInt32(100))
    bytes.appendVarint(sequence)
    bytes.appendVarint(UInt64(0))
    bytes.appendVarint(firstTime)
    bytes.append(0)
  }

  mutating func type(_ id: UInt32, _ name: String) {
    bytes.append(DefinitionTag.type.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(name)
  }

  mutating func property(_ id: UInt32) {
    bytes.append(DefinitionTag.property.rawValue)
    bytes.appendVarint(id)
    bytes.appendVarint(UInt32(1))
    bytes.appendString("\\Model.<computed 0x0 (Int)>")
    bytes.appendVarint(UInt64(0))
  }

  mutating func label(_ id: UInt32, _ text: String) {
    bytes.append(DefinitionTag.label.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(text)
  }

  mutating func object(_ serial: UInt32, type: UInt32) {
    bytes.append(DefinitionTag.object.rawValue)
    bytes.appendVarint(serial)
    bytes.appendVarint(type)
  }

  mutating func access(delta: UInt64, object: UInt32, key: UInt32) {
    bytes += [EventKind.access.rawValue, 0, 2 | 4]
    bytes.appendVarint(delta)
    bytes.appendVarint(object)
    bytes.appendVarint(key)
  }

  /// The usual opening: type 1, property 1, object 1, one access.
  static func wellFormed(sequence: UInt64 = 0) -> ForgedChunk {
    var chunk = ForgedChunk(sequence: sequence)
    chunk.type(1, "Fixture.Model")
    chunk.property(1)
    chunk.object(1, type: 1)
    chunk.access(delta: 3, object: 1, key: 1)
    return chunk
  }
}

/// Writes a trace of the given events chunks and a footer.
func writeForgedTrace(_ path: String, _ chunks: [ForgedChunk]) throws {
  let writer = try TraceFileWriter(
    path: path,
    header: TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/forged", dropWhenFull: false, ringCapacity: 64,
      stackLevel: 0))
  for chunk in chunks { try writer.writeChunk(.events, payload: chunk.bytes) }
  try writer.writeChunk(
    .footer,
    payload: ChunkPayload.footer(
      TraceFooter(
        durationNanoseconds: 10, chunks: UInt64(chunks.count + 1),
        threads: [ThreadTotals(thread: 1, osThreadID: 100, recorded: 1, dropped: 0)])))
  writer.close()
}

@Suite("Hostile input")
struct HostileInputTests {
  @Test("a time delta near 2^64 costs its chunk, reported with its offset; it never traps")
  func timeOverflow() throws {
    var forged = ForgedChunk.wellFormed(sequence: 1)
    forged.access(delta: UInt64.max - 1, object: 1, key: 1)
    let path = temporaryPath("overflow.trc")
    try writeForgedTrace(path, [ForgedChunk.wellFormed(), forged])
    let (reader, events) = try readAll(path)
    #expect(events.count == 1)
    #expect(reader.damage.count == 1)
    #expect(reader.damage.listed.first?.message.contains("overflows") == true)
  }

  @Test("an events chunk that says it inflates past the limit is skipped unread, with its offset")
  func oversizedChunk() throws {
    let path = temporaryPath("oversized.trc")
    var forged = ForgedChunk.wellFormed(sequence: 1)
    for _ in 0..<((TraceFormat.maximumEventsChunkSize / 6) + 1) { forged.access(delta: 0, object: 1, key: 1) }
    #expect(forged.bytes.count > TraceFormat.maximumEventsChunkSize)
    try writeForgedTrace(path, [ForgedChunk.wellFormed(), forged])
    let (reader, events) = try readAll(path)
    #expect(events.count == 1)
    #expect(reader.damage.listed.map(\.message).first?.contains("past the limit") == true)
  }

  @Test("ids that no definition states are counted and reported, not trusted; a writer's trace has none")
  func unknownIDs() throws {
    let clean = temporaryPath("clean.trc")
    try writeSyntheticTrace(to: clean, chunks: 4, perChunk: 50)
    let (cleanReader, _) = try readAll(clean)
    #expect(cleanReader.unknownIDEvents == 0)
    #expect(cleanReader.damage.isEmpty)

    var forged = ForgedChunk.wellFormed()
    forged.access(delta: 1, object: 1, key: 1 << 28)  // property never defined
    forged.access(delta: 1, object: 1 << 26, key: 1)  // object never defined
    forged.object(2, type: 1 << 28)  // type never defined
    let path = temporaryPath("unknown.trc")
    try writeForgedTrace(path, [forged])
    let (reader, events) = try readAll(path)
    #expect(events.count == 3)
    #expect(reader.unknownIDEvents == 3)
    // An inconsistency, counted, not damage: the chunk decoded whole.
    #expect(reader.damage.isEmpty)
    #expect(reader.firstUnknownID == "property #268435456")
  }

  @Test("an object stated again with another type in a chunk gives its events after it the new type, not the type its events before it had")
  func objectRestatedWithAnotherType() throws {
    // Serials of three bytes (as in a trace of 100 k objects), an event of another object between, and an event
    // without a statement right before it: each event's type is its object's as last stated.
    var forged = ForgedChunk()
    forged.type(1, "Fixture.Model")
    forged.type(2, "Fixture.Other")
    forged.property(1)
    forged.object(70_000, type: 1)
    forged.access(delta: 1, object: 70_000, key: 1)
    forged.access(delta: 200, object: 70_000, key: 1)
    forged.object(70_000, type: 2)
    forged.access(delta: 20_000, object: 70_000, key: 1)
    forged.object(5, type: 1)
    forged.access(delta: 3_000_000, object: 5, key: 1)
    forged.access(delta: 1, object: 70_000, key: 1)
    forged.object(70_000, type: 1)
    forged.access(delta: 1, object: 70_000, key: 1)
    let path = temporaryPath("restated.trc")
    try writeForgedTrace(path, [forged])
    let (reader, events) = try readAll(path)
    #expect(reader.damage.isEmpty)
    #expect(reader.unknownIDEvents == 0)
    #expect(events.map(\.object) == [70_000, 70_000, 70_000, 5, 70_000, 70_000])
    #expect(events.map(\.aux) == [1, 1, 2, 1, 2, 1])
    #expect(events.map(\.time) == [1, 201, 20_201, 3_020_201, 3_020_202, 3_020_203])
  }

  @Test("a chunk of the shortest events: every event, in order, and a malformed one after loses only its own")
  func shortestEvents() throws {
    // Three bytes an event (kind, flags, a mask of `sameTime` alone): as many events as the decoder makes room for
    // (one for every 3 bytes of the payload), and no more. Flags number the events.
    var long = ForgedChunk(firstTime: 7)
    for index in 0..<1_000 { long.bytes += [EventKind.access.rawValue, UInt8(index % 251), EventMask.sameTime] }
    var malformed = ForgedChunk(sequence: 1, firstTime: 9)
    for _ in 0..<500 { malformed.bytes += [EventKind.didSet.rawValue, 0, EventMask.sameTime] }
    malformed.bytes.append(0x7F)
    let path = temporaryPath("shortest.trc")
    try writeForgedTrace(path, [long, malformed, ForgedChunk.wellFormed(sequence: 2)])
    let (reader, events) = try readAll(path)
    #expect(reader.damage.count == 1)
    #expect(events.count == 1_001)
    #expect(events.prefix(1_000).map(\.flags) == (0..<1_000).map { UInt8($0 % 251) })
    #expect(events.prefix(1_000).allSatisfy { $0.kind == .access && $0.time == 7 && $0.object == 0 && $0.thread == 1 })
    #expect(events.last == TraceEvent(kind: .access, thread: 1, time: 3, object: 1, key: 1, aux: 1))
  }

  @Test("a string past the definition limit costs its chunk")
  func longString() throws {
    var forged = ForgedChunk.wellFormed(sequence: 1)
    forged.label(7, String(repeating: "L", count: TraceFormat.maximumDefinitionStringLength + 1))
    let path = temporaryPath("long.trc")
    try writeForgedTrace(path, [ForgedChunk.wellFormed(), forged])
    let (reader, _) = try readAll(path)
    #expect(reader.damage.count == 1)
    #expect(reader.definitions.labels[7] == nil)
  }

  @Test("definitions beyond what the file's size justifies cost their chunks; the first ones are kept")
  func definitionBudget() throws {
    var chunks: [ForgedChunk] = []
    var id: UInt32 = 1
    for sequence in 0..<10 {
      var chunk = ForgedChunk(sequence: UInt64(sequence))
      for _ in 0..<60 {
        chunk.label(id, String(repeating: "L", count: 60 << 10))
        id += 1
      }
      chunks.append(chunk)
    }
    let path = temporaryPath("budget.trc")
    try writeForgedTrace(path, chunks)
    let (reader, _) = try readAll(path)
    #expect(reader.damage.count >= 5)
    #expect(reader.damage.listed.allSatisfy { $0.message.contains("what the file's size justifies") })
    let held = reader.definitions.labels.values.reduce(0) { $0 + $1.utf8.count }
    #expect(held > 0 && UInt64(held) <= DefinitionBudget(fileSize: UInt64(fileBytes(path).count)).allowance)
  }

  @Test("totals read from a file saturate instead of trapping")
  func saturatingTotals() {
    let footer = TraceFooter(
      durationNanoseconds: .max, chunks: .max,
      threads: [
        ThreadTotals(thread: 1, osThreadID: 1, recorded: .max, dropped: .max),
        ThreadTotals(thread: 2, osThreadID: 2, recorded: 5, dropped: 5),
      ])
    #expect(footer.recorded == .max)
    #expect(footer.dropped == .max)
  }
}
