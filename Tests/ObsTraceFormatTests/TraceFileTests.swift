import Testing

@testable import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// Definitions for synthetic traces: every id names itself.
final class SyntheticDefinitions: TraceDefinitionSource {
  func typeName(_ id: UInt32) -> String { "Fixture.Type\(id)" }
  func property(_ id: UInt32) -> PropertyDefinition? {
    PropertyDefinition(rootType: 1, keyPathDescription: "\\Type1.<computed 0x\(id) (Int)>", getterAddress: 0)
  }
  func label(_ id: UInt32) -> String { "label \(id)" }
  func scope(_ id: UInt32) -> ScopeDefinition? { ScopeDefinition(kind: .tracking, label: id, parent: 0) }
  func stack(_ id: UInt32) -> [UInt64] { [UInt64(id), UInt64(id) + 1] }
}

func temporaryPath(_ name: String) -> String {
  var template = Array("/tmp/obstrace-test-XXXXXX".utf8CString)
  let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
  return directory + "/" + name
}

/// Writes a trace of `chunks` chunks over `threads` threads, `perChunk` accesses each; returns the events.
@discardableResult
func writeSyntheticTrace(
  to path: String, chunks: Int, perChunk: Int, threads: UInt32 = 2, footer: Bool = true
) throws -> [TraceEvent] {
  let header = TraceHeader(
    startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false, ringCapacity: 64,
    stackLevel: 1)
  let writer = try TraceFileWriter(path: path, header: header)
  let definitions = SyntheticDefinitions()
  let stamps = DefinitionStamps()
  var written: [TraceEvent] = []
  var time: UInt64 = 1000
  for chunkIndex in 0..<chunks {
    let thread = UInt32(chunkIndex) % threads + 1
    var encoder = ChunkEncoder(
      thread: thread, osThreadID: Int32(100 + thread), sequence: UInt64(chunkIndex) / UInt64(threads), firstTime: time,
      stamps: stamps)
    for index in 0..<perChunk {
      time += UInt64(index % 7)
      let event = TraceEvent(
        kind: .access, flags: 1, thread: thread, time: time, depth: 1, object: UInt32(index % 5 + 1),
        key: UInt32(index % 3 + 1), scope: UInt32(chunkIndex + 1), aux: 1, stack: UInt32(index % 2))
      encoder.append(
        kind: event.kind.rawValue, flags: event.flags, time: event.time, depth: event.depth, object: event.object,
        key: event.key, scope: event.scope, aux: event.aux, stack: event.stack, definitions: definitions,
        stamps: stamps)
      written.append(event)
    }
    try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: UInt64(chunkIndex)))
  }
  if footer {
    let totals = (1...threads).map {
      ThreadTotals(thread: $0, osThreadID: Int32(100 + $0), recorded: 0, dropped: 0)
    }
    try writer.writeChunk(
      .footer,
      payload: ChunkPayload.footer(TraceFooter(durationNanoseconds: time, chunks: UInt64(chunks + 1), threads: totals)))
  }
  writer.close()
  return written
}

func readAll(_ path: String) throws -> (TraceReader, [TraceEvent]) {
  let reader = try TraceReader(path: path)
  var events: [TraceEvent] = []
  reader.forEachEvent { events.append($0) }
  return (reader, events)
}

func fileBytes(_ path: String) -> [UInt8] {
  let file = try! ReadableFile(path: path)
  return file.read(at: 0, count: Int(file.size))
}

/// Where each chunk of a whole trace file's bytes starts, walked by the chunks' stored lengths.
func chunkStarts(_ bytes: [UInt8]) -> [Int] {
  var offset = 16 + Int(readLittleEndian(UInt32.self, bytes[12..<16])) + 4
  var starts: [Int] = []
  while offset < bytes.count {
    starts.append(offset)
    offset += TraceFormat.chunkHeaderSize + Int(readLittleEndian(UInt32.self, bytes[(offset + 5)..<(offset + 9)]))
  }
  return starts
}

func writeBytes(_ bytes: [UInt8], to path: String) {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
  close(descriptor)
}

@Suite("Trace files")
struct TraceFileTests {
  @Test("the definitions keep the most recent scopes, not one per run of a long trace")
  func scopeDefinitionsAreBounded() {
    var definitions = TraceDefinitions()
    let count = UInt32(TraceDefinitions.retainedScopes) * 3 + 5
    for id in 1...count {
      definitions.defineScope(id, ScopeDefinition(kind: .tracking, label: id % 7, parent: 0))
      // A chunk restating a scope it already holds changes nothing.
      definitions.defineScope(id, ScopeDefinition(kind: .tracking, label: id % 7, parent: 0))
    }
    #expect(definitions.scopes.count == TraceDefinitions.retainedScopes)
    #expect(definitions.scopes[count]?.label == count % 7)
    #expect(definitions.scopes[count - UInt32(TraceDefinitions.retainedScopes) + 1] != nil)
    #expect(definitions.scopes[count - UInt32(TraceDefinitions.retainedScopes)] == nil)
    #expect(definitions.scopes[1] == nil)
    // The window over recent ids slid along: its slots follow the limit, not the 196 k ids defined.
    #expect(definitions.scopes.windowSlots <= 2 * TraceDefinitions.retainedScopes + ScopeTable.slack)
  }

  @Test("the scope table keeps what a dictionary with first-defined-first-forgotten order keeps, whatever the ids")
  func scopeTableAgainstDictionary() {
    let limit = 64
    var table = ScopeTable(retaining: limit)
    var model: [UInt32: ScopeDefinition] = [:]
    var modelOrder: [UInt32] = []
    var generator = SystemRandomNumberGenerator()
    var next: UInt32 = 1_000
    for step in 0..<20_000 {
      // Mostly ascending ids, with restatements, redefinitions, ids before the window, and forged far ones.
      let id: UInt32 =
        switch (step + 3) % 10 {
        case 0: UInt32.random(in: 0...UInt32.max, using: &generator)
        case 1: next &- UInt32.random(in: 0...200, using: &generator)
        case 2: modelOrder.randomElement(using: &generator) ?? next
        default:
          {
            next &+= UInt32.random(in: 1...3, using: &generator); return next
          }()
        }
      let scope = ScopeDefinition(kind: .tracking, label: UInt32(step), parent: 0)
      table.define(id, scope)
      if model.updateValue(scope, forKey: id) == nil {
        modelOrder.append(id)
        if modelOrder.count > limit { model[modelOrder.removeFirst()] = nil }
      }
      #expect(table.count == model.count)
      #expect(table[id] == model[id])
      // Everything kept is still found (the window slid past some of it), and what was forgotten is not.
      if step % 5 == 0 {
        #expect(model.allSatisfy { table[$0.key] == $0.value })
        #expect(table.ids.allSatisfy { model[$0] != nil })
      }
    }
    #expect(Array(table.ids) == modelOrder)
    for (id, scope) in model { #expect(table[id] == scope) }
    #expect(table.windowSlots <= 2 * limit + ScopeTable.slack)
    // The ids went through the window (the first one placed it), not only the dictionary.
    #expect(table.windowSlots > limit)
  }

  @Test("varints round-trip at every width, and a cut varint throws")
  func varints() throws {
    let values: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max]
    var bytes: [UInt8] = []
    for value in values { bytes.appendVarint(value) }
    let decoded: [UInt64] = try bytes.withUnsafeBytes { raw throws(CursorError) in
      var cursor = ByteCursor(raw)
      var decoded: [UInt64] = []
      while !cursor.isAtEnd { decoded.append(try cursor.readVarint()) }
      return decoded
    }
    #expect(decoded == values)
    let cut = Array(bytes.prefix(bytes.count - 1))
    cut.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      #expect(throws: CursorError.self) {
        for _ in values { _ = try cursor.readVarint() }
      }
    }
  }

  @Test("what is written is read back: header, events, definitions, footer")
  func roundTrip() throws {
    let path = temporaryPath("round.trc")
    let written = try writeSyntheticTrace(to: path, chunks: 4, perChunk: 50)
    let (reader, events) = try readAll(path)
    #expect(reader.header.processID == 42)
    #expect(reader.header.executable == "/bin/fixture")
    #expect(events == written)
    #expect(reader.truncated == false)
    #expect(reader.damage.isEmpty)
    #expect(reader.footer?.chunks == 5)
    #expect(reader.droppedEvents == 0 + 1 + 2 + 3)
    #expect(reader.definitions.typeName(ofObject: 3) == "Type1")
    #expect(reader.definitions.properties[2]?.keyPathDescription == "\\Type1.<computed 0x2 (Int)>")
    #expect(reader.definitions.scopes[4]?.label == 4)
    #expect(reader.definitions.labels[4] == "label 4")
    #expect(reader.definitions.stacks[1] == [1, 2])
  }

  @Test(
    "each version is read: a scope's begin carries its instance since version 2, and nothing in version 1",
    arguments: [(version: UInt16(1), instance: UInt32(0)), (version: UInt16(2), instance: UInt32(77))])
  func versions(version: UInt16, instance: UInt32) throws {
    let path = temporaryPath("v\(version).trc")
    let header = TraceHeader(
      version: version, startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
      ringCapacity: 64, stackLevel: 1)
    let writer = try TraceFileWriter(path: path, header: header)
    let definitions = SyntheticDefinitions()
    let stamps = DefinitionStamps()
    var encoder = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 10, stamps: stamps)
    encoder.append(
      kind: EventKind.scopeBegin.rawValue, flags: ScopeKind.tracking.rawValue, time: 10, depth: 0, object: instance,
      key: 3, scope: 5, aux: 0, stack: 0, definitions: definitions, stamps: stamps)
    encoder.append(
      kind: EventKind.trackingCancelled.rawValue, flags: version >= 2 ? EventFlags.cancelledBySequenceEnd : 0,
      time: 20, depth: 0, object: 0, key: 0, scope: 5, aux: 0, stack: 0, definitions: definitions, stamps: stamps)
    try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: 0))
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(reader.header.version == version)
    #expect(events.map(\.kind) == [.scopeBegin, .trackingCancelled])
    #expect(events.first?.object == instance)
    #expect(events.first?.key == 3)
    #expect(events.last?.flags == (version >= 2 ? 2 : 0))
  }

  @Test("a run of events about one property, without a clock read, is written in three bytes an event and read back")
  func repeatedObjectAndTime() throws {
    let path = temporaryPath("runs.trc")
    let writer = try TraceFileWriter(
      path: path,
      header: TraceHeader(
        startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
        ringCapacity: 64, stackLevel: 1))
    let definitions = SyntheticDefinitions()
    let stamps = DefinitionStamps()
    var encoder = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 100, stamps: stamps)
    var written: [TraceEvent] = []
    var sizes: [Int] = []
    // A write with its stack and its didSet, then reads of the same property at the write's time, twice over; then
    // an event about another object, and one with neither object nor key.
    let kinds: [EventKind] = [.willSet, .didSet, .access, .access, .willSet, .didSet, .access]
    for (index, kind) in kinds.enumerated() {
      let time: UInt64 = index < 4 ? 150 : 170
      written.append(
        TraceEvent(
          kind: kind, flags: 0, thread: 1, time: time, depth: 0, object: 9, key: 4, scope: 0, aux: 2,
          stack: kind == .willSet ? 6 : 0))
    }
    written.append(
      TraceEvent(kind: .access, flags: 0, thread: 1, time: 170, depth: 0, object: 8, key: 4, scope: 0, aux: 2, stack: 0)
    )
    written.append(
      TraceEvent(
        kind: .trackingCancelled, flags: 0, thread: 1, time: 170, depth: 0, object: 0, key: 0, scope: 3, aux: 0,
        stack: 0))
    for event in written {
      let before = encoder.byteCount
      encoder.append(
        kind: event.kind.rawValue, flags: event.flags, time: event.time, depth: event.depth, object: event.object,
        key: event.key, scope: event.scope, aux: event.aux, stack: event.stack, definitions: definitions,
        stamps: stamps)
      sizes.append(encoder.byteCount - before)
    }
    // Kind, flags and mask only: the object and key of the event before, and its time.
    #expect(sizes[1] == 3 && sizes[2] == 3 && sizes[3] == 3 && sizes[5] == 3 && sizes[6] == 3)
    // The second write: kind, flags, mask, its time delta and its stack, nothing else.
    #expect(sizes[4] == 5)
    try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: 0))
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(reader.damage.isEmpty)
    #expect(events == written)
  }

  @Test("time deltas go to the chunk's time column: events that differ only in their times encode the same items")
  func timeColumn() throws {
    func encoded(_ step: UInt64) -> ChunkEncoder {
      let stamps = DefinitionStamps()
      var encoder = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 0, stamps: stamps)
      for index in 1...50 {
        encoder.append(
          kind: EventKind.willSet.rawValue, flags: 0, time: UInt64(index) * step, depth: 0, object: 3, key: 2,
          scope: 0, aux: 1, stack: 0, definitions: SyntheticDefinitions(), stamps: stamps)
      }
      return encoder
    }
    let fast = encoded(40)
    let slow = encoded(170)
    #expect(fast.bytes == slow.bytes)
    #expect(fast.timeColumnByteCount == 50 && slow.timeColumnByteCount == 100)
    // Read back whole, through a file (the column is stored).
    let path = temporaryPath("times.trc")
    let writer = try TraceFileWriter(
      path: path,
      header: TraceHeader(
        startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
        ringCapacity: 64, stackLevel: 1))
    try writer.writeChunk(
      .events, payload: slow.payload(droppedSinceLastChunk: 0), storedTail: slow.timeColumnByteCount)
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(reader.damage.isEmpty)
    #expect(events.map(\.time) == (1...50).map { UInt64($0) * 170 })
  }

  @Test("an encoder that outgrows its buffer keeps its items and its time column whole, in order")
  func encoderGrowth() throws {
    // The smallest buffer: items (at its front) and deltas (at its back) meet and the buffer grows many times,
    // with definitions, multi-byte fields and deltas of every length in between.
    let stamps = DefinitionStamps()
    var encoder = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 0, stamps: stamps, capacity: 1)
    var written: [TraceEvent] = []
    var time: UInt64 = 0
    for index in 0..<3000 {
      time += UInt64(index % 7 == 0 ? 0 : 1 << (index % 40))
      let kind: EventKind = [.willSet, .didSet, .access][index % 3]
      written.append(
        TraceEvent(
          kind: kind, flags: UInt8(index % 3), thread: 1, time: time, depth: UInt16(index % 2),
          object: UInt32(1 + index / 50), key: UInt32(2 + index / 300), scope: 0, aux: 7,
          stack: kind == .willSet ? UInt32(1 + index % 5) * 40_000 : 0))
    }
    for event in written {
      encoder.append(
        kind: event.kind.rawValue, flags: event.flags, time: event.time, depth: event.depth, object: event.object,
        key: event.key, scope: event.scope, aux: event.aux, stack: event.stack, definitions: SyntheticDefinitions(),
        stamps: stamps)
    }
    #expect(encoder.eventCount == written.count)
    let path = temporaryPath("growth.trc")
    let writer = try TraceFileWriter(
      path: path,
      header: TraceHeader(
        startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
        ringCapacity: 64, stackLevel: 1))
    try writer.writeChunk(
      .events, payload: encoder.payload(droppedSinceLastChunk: 0), storedTail: encoder.timeColumnByteCount)
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(reader.damage.isEmpty)
    #expect(events == written)
  }

  @Test("an encoder is a value: a copy and its original each go on appending, neither writing over the other")
  func encoderCopies() {
    let stamps = DefinitionStamps()
    func append(_ encoder: inout ChunkEncoder, time: UInt64) {
      encoder.append(
        kind: EventKind.willSet.rawValue, flags: 0, time: time, depth: 0, object: 3, key: 2, scope: 0, aux: 1,
        stack: 0, definitions: SyntheticDefinitions(), stamps: stamps)
    }
    func encoded(_ times: [UInt64]) -> [UInt8] {
      var encoder = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 0, stamps: stamps)
      for time in times { append(&encoder, time: time) }
      return encoder.payload(droppedSinceLastChunk: 0)
    }
    var original = ChunkEncoder(thread: 1, osThreadID: 101, sequence: 0, firstTime: 0, stamps: stamps)
    append(&original, time: 5)
    var copy = original
    append(&copy, time: 900)
    append(&original, time: 30)
    append(&copy, time: 1000)
    append(&original, time: 40_000)
    #expect(original.payload(droppedSinceLastChunk: 0) == encoded([5, 30, 40_000]))
    #expect(copy.payload(droppedSinceLastChunk: 0) == encoded([5, 900, 1000]))
  }

  @Test(
    "a time column that is longer or shorter than its events need is damage",
    arguments: [
      // Items length past the payload; a delta left over; a delta missing.
      (itemsLength: UInt8(40), times: [UInt8]([5])), (itemsLength: UInt8(3), times: [5, 6]),
      (itemsLength: UInt8(3), times: []),
    ])
  func timeColumnDamage(itemsLength: UInt8, times: [UInt8]) throws {
    let path = temporaryPath("times-damage.trc")
    let writer = try TraceFileWriter(
      path: path,
      header: TraceHeader(
        startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
        ringCapacity: 64, stackLevel: 1))
    // Header (thread 1, OS thread 101, sequence 0, none dropped, first time 0, flags: times apart), the items'
    // length, one event with a time delta and no field, then the column.
    let payload: [UInt8] =
      [1, 101, 0, 0, 0, ChunkFlags.timesApart, itemsLength, EventKind.scopeEnd.rawValue, 0, 0] + times
    try writer.writeChunk(.events, payload: payload)
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(events.isEmpty)
    #expect(reader.damage.count == 1)
  }

  @Test("an event that says its object and key repeat the previous event's and also names them is damage")
  func repeatedObjectAndKeyNamedAgain() throws {
    let path = temporaryPath("repeat-named.trc")
    let writer = try TraceFileWriter(
      path: path,
      header: TraceHeader(
        startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
        ringCapacity: 64, stackLevel: 1))
    let run = EventKind.observationsRun.rawValue
    // Header: thread 1, OS thread 101, sequence 0, none dropped, first time 0, flags 0.
    let header: [UInt8] = [1, 101, 0, 0, 0, 0]
    // An event naming object 5 and key 7 (of a kind whose ids need no definition), then one that repeats them.
    let good =
      header + [run, 0, EventMask.object | EventMask.key | EventMask.scope, 3, 5, 7, 2]
      + [run, 0, EventMask.sameObjectAndKey | EventMask.scope | EventMask.sameTime, 2]
    let bad = header + [run, 0, EventMask.sameObjectAndKey | EventMask.object | EventMask.sameTime, 5]
    try writer.writeChunk(.events, payload: good)
    try writer.writeChunk(.events, payload: bad)
    writer.close()
    let (reader, events) = try readAll(path)
    #expect(events.map(\.object) == [5, 5])
    #expect(events.map(\.key) == [7, 7])
    #expect(events.map(\.time) == [3, 3])
    #expect(reader.damage.count == 1)
    #expect(reader.damage.listed.first?.message.contains("malformed") == true)
  }

  @Test("reading ahead on a second thread: a consumer that stops early stops it, and a second pass reads all")
  func pipelineStopsEarly() throws {
    struct Enough: Error {}
    let path = temporaryPath("pipeline.trc")
    // More chunks than the pipeline holds, so that its reader thread is waiting for room when the consumer stops.
    let written = try writeSyntheticTrace(to: path, chunks: ChunkPipeline.depth * 4, perChunk: 50)
    let reader = try TraceReader(path: path)
    reader.readsAhead = true  // a small file is read on one thread
    var seen = 0
    #expect(throws: Enough.self) {
      try reader.forEachChunk { _ in
        seen += 1
        if seen == 2 { throw Enough() }
      }
    }
    #expect(seen == 2)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    #expect(events == written)
    #expect(reader.damage.isEmpty && !reader.truncated)
  }

  @Test("a file cut at any offset reads its whole chunks and says it was cut")
  func cutAnywhere() throws {
    let path = temporaryPath("whole.trc")
    let written = try writeSyntheticTrace(to: path, chunks: 6, perChunk: 40)
    let bytes = fileBytes(path)
    // The offsets where chunks end: a cut there loses nothing before it.
    let starts = chunkStarts(bytes)
    let chunkEnds = Array(starts.dropFirst()) + [bytes.count]
    let firstChunk = starts[0]
    let cutPath = temporaryPath("cut.trc")
    for cut in stride(from: firstChunk, to: bytes.count, by: 7) {
      writeBytes(Array(bytes.prefix(cut)), to: cutPath)
      let (reader, events) = try readAll(cutPath)
      let wholeChunks = chunkEnds.filter { $0 <= cut }.count
      let expected = Array(written.prefix(min(wholeChunks, 6) * 40))
      #expect(events == expected, "cut at \(cut)")
      #expect(reader.truncated, "cut at \(cut)")
    }
  }

  @Test("a damaged chunk costs only its own events; later chunks still decode")
  func damagedChunk() throws {
    let path = temporaryPath("damaged.trc")
    let written = try writeSyntheticTrace(to: path, chunks: 5, perChunk: 30)
    var bytes = fileBytes(path)
    let starts = chunkStarts(bytes)
    // Flip a byte in the middle of the second chunk's payload.
    bytes[starts[1] + TraceFormat.chunkHeaderSize + 5] ^= 0xff
    writeBytes(bytes, to: path)
    let (reader, events) = try readAll(path)
    #expect(events == Array(written[0..<30]) + Array(written[60...]))
    #expect(reader.damage.count == 1)
    #expect(reader.damage.listed.first?.offset == UInt64(starts[1]))
    #expect(reader.truncated == false)
    // Definitions restated per chunk: objects of later chunks still have their type.
    #expect(reader.definitions.typeName(ofObject: 5) == "Type1")
  }

  @Test("a damaged chunk's thread and time range are known from the numbers of its thread's chunks around it")
  func damagedChunkLedger() throws {
    let path = temporaryPath("damaged-ledger.trc")
    // Chunks alternate threads: T1 writes chunks 0, 2, 4 (its #0, #1, #2), T2 chunks 1, 3.
    let written = try writeSyntheticTrace(to: path, chunks: 5, perChunk: 30)
    var bytes = fileBytes(path)
    let starts = chunkStarts(bytes)
    bytes[starts[2] + TraceFormat.chunkHeaderSize + 5] ^= 0xff
    writeBytes(bytes, to: path)
    let (reader, _) = try readAll(path)
    #expect(
      reader.chunkLedger.gaps == [
        ThreadChunkLedger.Gap(thread: 1, first: 1, count: 1, after: written[29].time, before: written[119].time)
      ])
    #expect(reader.chunkLedger.eventsRead(1) == 60)
    #expect(reader.chunkLedger.eventsRead(2) == 60)
    // Whole, the same trace has no gap.
    let cleanPath = temporaryPath("clean-ledger.trc")
    _ = try writeSyntheticTrace(to: cleanPath, chunks: 5, perChunk: 30)
    let (clean, _) = try readAll(cleanPath)
    #expect(clean.chunkLedger.gaps.isEmpty)
    #expect(clean.chunkLedger.eventsRead(1) == 90)
  }

  @Test("reading ahead on a second thread reads what one thread reads: events, damage in order, the cut end")
  func pipelineMatchesOneThread() throws {
    let path = temporaryPath("pipeline-damaged.trc")
    try writeSyntheticTrace(to: path, chunks: 24, perChunk: 40, footer: false)
    var bytes = fileBytes(path)
    let starts = chunkStarts(bytes)
    // Two damaged chunks, a malformed one, and a file cut inside its last chunk.
    bytes[starts[3] + TraceFormat.chunkHeaderSize + 5] ^= 0xff
    bytes[starts[11]] ^= 0xff
    bytes[starts[17] + TraceFormat.chunkHeaderSize + 7] ^= 0x55
    bytes.removeLast(10)
    writeBytes(bytes, to: path)
    var outcomes: [(events: [TraceEvent], damage: TraceDamageList, truncated: Bool, cut: TraceDamage?)] = []
    for readsAhead in [false, true] {
      let reader = try TraceReader(path: path)
      reader.readsAhead = readsAhead
      var events: [TraceEvent] = []
      reader.forEachEvent { events.append($0) }
      outcomes.append((events, reader.damage, reader.truncated, reader.cutAt))
    }
    #expect(outcomes[0].damage.count >= 3)
    #expect(outcomes[0].cut != nil)
    #expect(outcomes[1].events == outcomes[0].events)
    #expect(outcomes[1].damage == outcomes[0].damage)
    #expect(outcomes[1].truncated == outcomes[0].truncated)
    #expect(outcomes[1].cut == outcomes[0].cut)
  }

  @Test("decoding ahead on a second thread: at each chunk, the definitions are those of the chunks read so far")
  func pipelineDefinitionsKeepPace() throws {
    let path = temporaryPath("pipeline-definitions.trc")
    // Each chunk's accesses are in a scope of its own, which the chunk defines: the decoder, chunks ahead, knows
    // scopes the consumer has not reached.
    let chunks = ChunkPipeline.depth * 4
    try writeSyntheticTrace(to: path, chunks: chunks, perChunk: 50)
    var seen: [[UInt32]] = []
    var waitingAtFirstChunk = 0
    for readsAhead in [false, true] {
      let reader = try TraceReader(path: path)
      reader.readsAhead = readsAhead
      var scopes: [UInt32] = []
      reader.forEachChunk { chunk in
        // The pipeline full before the consumer looks at the first chunk: the decoder holds the definitions of
        // `depth` chunks more. Waited for (under load the reader thread may take its time), never assumed.
        if readsAhead && chunk.sequence == 0, let pipeline = reader.activePipeline {
          let deadline = ContinuousClock.now + .seconds(30)
          while pipeline.itemsWaiting < ChunkPipeline.depth && ContinuousClock.now < deadline { sched_yield() }
          waitingAtFirstChunk = pipeline.itemsWaiting
        }
        scopes.append(reader.definitions.scopes.ids.max() ?? 0)
      }
      seen.append(scopes)
    }
    #expect(waitingAtFirstChunk == ChunkPipeline.depth)
    #expect(seen[0] == (1...UInt32(chunks)).map { $0 })
    #expect(seen[1] == seen[0])
  }

  @Test("a damaged chunk length is skipped by finding the next chunk")
  func damagedLength() throws {
    let path = temporaryPath("length.trc")
    let written = try writeSyntheticTrace(to: path, chunks: 3, perChunk: 20)
    var bytes = fileBytes(path)
    let first = 16 + Int(readLittleEndian(UInt32.self, bytes[12..<16])) + 4
    bytes[first + 8] = 0x7f  // the compressed length now runs far past the end
    writeBytes(bytes, to: path)
    let (reader, events) = try readAll(path)
    #expect(events == Array(written[20...]))
    #expect(reader.damage.count == 1)
  }

  @Test(
    "what is not a trace is refused with the path and a reason",
    arguments: [
      ([UInt8](), "the file is empty: not an ObsTrace trace"),
      (Array("hello, world, this is text".utf8), "not an ObsTrace trace file"),
      (TraceFormat.magic + [9, 0, 0, 0, 0, 0, 0, 0], "newer than this obstrace reads"),
      (TraceFormat.magic + [0, 0, 0, 0, 0, 0, 0, 0], "version 0 was never written"),
      (TraceFormat.magic + [1, 0, 0, 0, 50, 0, 0, 0, 1, 2], "cut short"),
    ])
  func notATrace(bytes: [UInt8], reason: String) throws {
    let path = temporaryPath("bad.trc")
    writeBytes(bytes, to: path)
    do {
      _ = try TraceReader(path: path)
      Issue.record("read \(bytes.count) bytes of garbage as a trace")
    } catch {
      #expect(error.path == path)
      #expect(error.description.contains(reason), "\(error.description)")
    }
  }

  @Test(
    "a file cut anywhere inside its header says so, with how far it goes; empty and foreign files say what they are")
  func cutInsideHeader() throws {
    let source = temporaryPath("whole.trc")
    _ = try writeSyntheticTrace(to: source, chunks: 1, perChunk: 3)
    let bytes = fileBytes(source)
    let headerLength = 16 + Int(readLittleEndian(UInt32.self, bytes[12..<16])) + 4
    for length in 0...headerLength {
      let path = temporaryPath("cut-\(length).trc")
      writeBytes(Array(bytes.prefix(length)), to: path)
      let expected: String
      switch length {
      case 0: expected = "\(path): the file is empty: not an ObsTrace trace (no OBSTRACE header)"
      case 1..<16:
        expected =
          "\(path): the trace header is cut short: the file ends after \(length) byte\(length == 1 ? "" : "s"), "
          + "inside the header's first 16"
      default:
        expected =
          "\(path): at byte 16: the trace header is cut short: the file ends after \(length) of its \(headerLength) bytes"
      }
      do {
        let reader = try TraceReader(path: path)
        // The whole header and nothing after it: a trace with no chunk and no footer, cut short.
        #expect(length == headerLength, "opened \(length) bytes")
        reader.forEachEvent { _ in }
        #expect(reader.truncated)
      } catch {
        #expect(length < headerLength)
        #expect(error.description == expected)
      }
    }
    // The same lengths of what is not a trace: "no OBSTRACE header" from the first byte that differs.
    for text in ["OBSTRACX", "OBS-", "hello, world, this is text"] {
      let path = temporaryPath("foreign.trc")
      writeBytes(Array(text.utf8), to: path)
      #expect(throws: TraceFileError(.notATrace, path: path, "not an ObsTrace trace file (no OBSTRACE header)")) {
        _ = try TraceReader(path: path)
      }
    }
  }

  @Test("a FIFO is refused at once as not a regular file, not waited on for a writer")
  func fifo() throws {
    let path = temporaryPath("fifo.trc")
    #expect(mkfifo(path, 0o600) == 0)
    do {
      _ = try TraceReader(path: path)
      Issue.record("read a FIFO as a trace")
    } catch {
      #expect(error.path == path)
      #expect(error.description.contains("not a regular file"), "\(error.description)")
    }
  }

  @Test(
    "the header reads back in each version: version 1's drop byte, version 2's flags",
    arguments: [(UInt16(1), true, Bool?.none), (2, true, false), (2, false, true), (2, true, true)])
  func headerVersions(version: UInt16, drop: Bool, seesUntraced: Bool?) throws {
    let path = temporaryPath("header.trc")
    let header = TraceHeader(
      version: version, startWallClockNanoseconds: 7, processID: 9, executable: "/bin/x", dropWhenFull: drop,
      ringCapacity: 128, stackLevel: 2, seesUntracedTracking: seesUntraced)
    let writer = try TraceFileWriter(path: path, header: header)
    writer.close()
    let read = try TraceReader(path: path).header
    #expect(read == header)
    #expect(read.version == version)
    #expect(read.dropWhenFull == drop)
    #expect(read.seesUntracedTracking == seesUntraced)
  }

  @Test("a missing file says so")
  func missingFile() {
    #expect(throws: TraceFileError.self) { try TraceReader(path: "/nonexistent/run.trc") }
  }

  @Test("writing to an unwritable path throws a clear error")
  func unwritable() {
    let header = TraceHeader(
      startWallClockNanoseconds: 0, processID: 1, executable: "", dropWhenFull: false, ringCapacity: 64, stackLevel: 0)
    do {
      _ = try TraceFileWriter(path: "/nonexistent/dir/run.trc", header: header)
      Issue.record("created a file in a directory that does not exist")
    } catch {
      #expect(error.code == .cannotOpen)
      #expect(error.description.contains("/nonexistent/dir/run.trc"))
    }
  }

  @Test("a full disk fails the write with ENOSPC rather than losing it silently")
  func fullDisk() throws {
    let header = TraceHeader(
      startWallClockNanoseconds: 0, processID: 1, executable: "", dropWhenFull: false, ringCapacity: 64, stackLevel: 0)
    // /dev/full fails every write with ENOSPC; the public initializer refuses devices, so the test opens it.
    let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
    try #require(descriptor >= 0)
    do {
      _ = try TraceFileWriter(descriptor: descriptor, path: "/dev/full", header: header)
      Issue.record("wrote to /dev/full")
    } catch {
      #expect(error.code == .cannotWrite)
      #expect(error.description == "/dev/full: at byte 0: cannot write the trace file (No space left on device)")
    }
  }

  @Test("a close that fails is returned, once, naming the file; a close that succeeds returns nil")
  func closeFails() throws {
    let header = TraceHeader(
      startWallClockNanoseconds: 0, processID: 1, executable: "", dropWhenFull: false, ringCapacity: 64, stackLevel: 0)
    let path = temporaryPath("close.trc")
    // The descriptor is closed behind the writer's back: its own close(2) then fails (EBADF), as a late I/O error
    // of a network file system would fail it. It is the process's highest possible descriptor, which no other test
    // running meanwhile is given (the lowest free one is), so the writer's close cannot close another's file.
    var limit = rlimit()
    try #require(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
    let opened = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
    try #require(opened >= 0)
    let descriptor = fcntl(opened, F_DUPFD_CLOEXEC, Int32(clamping: limit.rlim_cur - 1))
    _ = Glibc.close(opened)
    try #require(descriptor == Int32(clamping: limit.rlim_cur - 1))
    let writer = try TraceFileWriter(descriptor: descriptor, path: path, header: header)
    _ = Glibc.close(descriptor)
    #expect(writer.close()?.description == "\(path): cannot close the trace file (Bad file descriptor)")
    #expect(writer.close() == nil)
    let good = try TraceFileWriter(path: temporaryPath("closes.trc"), header: header)
    #expect(good.close() == nil)
  }

  @Test("a path that is not a regular file is refused before it is opened, saying what it is")
  func notARegularFile() throws {
    let header = TraceHeader(
      startWallClockNanoseconds: 0, processID: 1, executable: "", dropWhenFull: false, ringCapacity: 64, stackLevel: 0)
    let fifo = "/tmp/obstrace-writer-\(getpid()).fifo"
    unlink(fifo)
    try #require(mkfifo(fifo, 0o644) == 0)
    defer { unlink(fifo) }
    for (path, kind) in [
      ("/dev/full", "a character device"), ("/dev/null", "a character device"), (fifo, "a FIFO"),
      ("/tmp", "a directory"),
    ] {
      do {
        _ = try TraceFileWriter(path: path, header: header)
        Issue.record("created a trace in \(path)")
      } catch {
        #expect(error.code == .cannotOpen)
        #expect(error.description == "\(path): cannot create the trace file (it is \(kind), not a regular file)")
      }
    }
  }
}
