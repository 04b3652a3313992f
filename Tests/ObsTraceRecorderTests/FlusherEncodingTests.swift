import CObsTraceRing
import Foundation
import ObsTraceFormat
import ObsTraceTestSupport
import Testing

@testable import ObsTraceRecorder

/// The flusher encodes most events in C (`obstrace_encode_common`) and the rest through `ChunkEncoder.append`: the
/// bytes must be those `append` alone writes.
@Suite struct FlusherEncodingTests {
  /// A thread's records as a program makes them: runs of writes (a willSet with its stack, its didSet) and reads
  /// about one property, switches to other objects and properties and back to those of a few switches before (which
  /// the chunk may remember as stated), scopes that begin and end around reads, stacks that change and come back,
  /// ticks that repeat (untimed events), jump far, fall in earlier segments of the mapping or past its last sample,
  /// and ids and deltas long enough for multi-byte varints.
  static let seed = SeededGenerator().seed

  static func records(count: Int) -> [obstrace_record] {
    var random = SeededGenerator(seed: seed)
    var records: [obstrace_record] = []
    records.reserveCapacity(count)
    var ticks: UInt64 = 1_000
    var object: UInt32 = 3
    var key: UInt32 = 1
    var scope: UInt32 = 0
    var depth: UInt16 = 0
    var stack: UInt32 = 2
    func record(_ kind: EventKind, flags: UInt8 = 0, timed: Bool, aux: UInt32 = 7, stack: UInt32 = 0) -> obstrace_record
    {
      if timed {
        switch random.next() % 50 {
        case 0: ticks &+= 5_000_000  // past the mapping's last sample
        case 1: ticks = 500 + random.next() % 400_000  // an earlier segment, or before the first sample
        default: ticks &+= 20 + random.next() % 3_000
        }
      }
      return obstrace_record(
        time: ticks, kind: kind.rawValue, flags: flags, depth: depth, object: object, key: key, scope: scope, aux: aux,
        stack: stack)
    }
    // The last few objects, keys and stacks switched to, newest first.
    var recent: [(object: UInt32, key: UInt32, stack: UInt32)] = []
    func remember() {
      recent.insert((object, key, stack), at: 0)
      if recent.count > 6 { recent.removeLast() }
    }
    while records.count < count {
      switch random.next() % 40 {
      case 0:
        object = UInt32(1 + random.next() % 300)  // new objects, some past 127
        remember()
      case 1:
        key = UInt32(1 + random.next() % 200)
        remember()
      case 2:
        stack = UInt32(1 + random.next() % 20_000)
        remember()
      case 5...14 where !recent.isEmpty:
        // Back to an object and property of a few switches before (code that alternates a few properties), with
        // its stack or another recent one.
        let back = recent[Int(random.next() % UInt64(recent.count))]
        (object, key) = (back.object, back.key)
        stack = recent[Int(random.next() % UInt64(recent.count))].stack
      case 3:
        scope = UInt32(16_000 + random.next() % 5_000)
        depth = 1
        var begin = record(.scopeBegin, flags: ScopeKind.tracking.rawValue, timed: true, aux: 0)
        begin.object = 0
        begin.key = 9
        records.append(begin)
      case 4 where scope != 0:
        var end = record(.scopeEnd, timed: true, aux: 0)
        end.object = 0
        end.key = 0
        records.append(end)
        scope = 0
        depth = 0
      default: break
      }
      records.append(record(.willSet, timed: true, stack: stack))
      records.append(record(.didSet, flags: UInt8(random.next() % 3), timed: false))
      for _ in 0..<(random.next() % 4) { records.append(record(.access, timed: random.next() % 8 == 0)) }
    }
    return records
  }

  /// Encodes `records` as the flusher does (chunks closed at its target), every event through `append` or not.
  static func encode(_ records: [obstrace_record], commonLoop: Bool, clock: TickMapping? = nil) -> [[UInt8]] {
    var clock = clock ?? TickMapping(ticks: 1_000, monotonicNanoseconds: 10_000)
    if clock.ticks.count == 1 {
      clock.add(ticks: 200_000, monotonicNanoseconds: 90_000)
      clock.add(ticks: 3_000_000, monotonicNanoseconds: 1_100_000)
      clock.add(ticks: 60_000_000, monotonicNanoseconds: 25_000_000)
    }
    let stamps = DefinitionStamps()
    let definitions = FlusherDefinitions(names: FixedNames())
    var payloads: [[UInt8]] = []
    var sequence: UInt64 = 0
    var chunk = ChunkEncoder(
      thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: stamps, capacity: Flusher.chunkTarget + 4096)
    var state = obstrace_encode_state()
    state.last_ticks = UInt64.max
    clock.setLastSegment(of: &state)
    records.withUnsafeBufferPointer { buffer in
      var index = 0
      while index < buffer.count {
        index = Flusher.encode(
          buffer, from: index, into: &chunk, state: &state, clock: clock, definitions: definitions, stamps: stamps,
          tapThread: nil, commonLoop: commonLoop)
        if chunk.byteCount >= Flusher.chunkTarget {
          payloads.append(chunk.payload(droppedSinceLastChunk: 0))
          sequence += 1
          chunk = ChunkEncoder(
            thread: 1, osThreadID: 1, sequence: sequence, firstTime: state.thread_time, stamps: stamps,
            capacity: Flusher.chunkTarget + 4096)
        }
      }
    }
    payloads.append(chunk.payload(droppedSinceLastChunk: 0))
    return payloads
  }

  @Test("the C loop over common events writes exactly the bytes ChunkEncoder.append writes")
  func commonLoopMatchesAppend() {
    let records = Self.records(count: 200_000)
    let reference = Self.encode(records, commonLoop: false)
    let flusher = Self.encode(records, commonLoop: true)
    #expect(reference.count > 2)  // chunks closed at the target, by either loop
    #expect(flusher.count == reference.count)
    for (index, (mine, theirs)) in zip(flusher, reference).enumerated() {
      // The first byte that differs, not the whole chunks (≈ 60 KiB each).
      let differs = zip(mine, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      #expect(
        differs == nil && mine.count == theirs.count,
        "seed \(Self.seed): chunk \(index): \(mine.count) bytes against \(theirs.count), first difference at \(differs.map { "\($0)" } ?? "the end")"
      )
    }
  }

  @Test("ticks in a segment of 2^62 ticks or more are converted as TickMapping converts them, not by the C loop")
  func commonLoopLeavesHugeSegments() {
    // The C loop converts with signed conversions (one instruction each), right below 2^63 ticks: a segment longer
    // than 2^62 is left to `TickMapping`. Ticks past 2^63 in one, converted as signed, would come out negative.
    var clock = TickMapping(ticks: 1_000, monotonicNanoseconds: 10_000)
    clock.add(ticks: 1 << 63 | 1 << 62, monotonicNanoseconds: 3_000_000_000)
    var records: [obstrace_record] = []
    for index in 0..<2_000 {
      let ticks: UInt64 = 1 << 63 + UInt64(index / 2) * 1_000
      records.append(
        obstrace_record(
          time: ticks, kind: (index % 2 == 0 ? EventKind.willSet : EventKind.didSet).rawValue, flags: 0, depth: 0,
          object: 5, key: 2, scope: 0, aux: 7, stack: 0))
    }
    let reference = Self.encode(records, commonLoop: false, clock: clock)
    let flusher = Self.encode(records, commonLoop: true, clock: clock)
    #expect(flusher == reference)
    // The times are the mapping's: 2^63 ticks in, about two thirds of its 3 s.
    let middle = clock.nanoseconds(1 << 63)
    #expect(middle > 1_900_000_000 && middle < 2_100_000_000)
  }

  @Test("the C loop takes a run of common events whole, and stops at the first that needs a definition")
  func commonLoopTakesCommonRuns() {
    let stamps = DefinitionStamps()
    let definitions = FlusherDefinitions(names: FixedNames())
    var chunk = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: stamps)
    // The first write states its object, property and stack through `append`.
    chunk.append(
      kind: EventKind.willSet.rawValue, flags: 0, time: 10, depth: 0, object: 5, key: 2, scope: 0, aux: 7, stack: 4,
      definitions: definitions, stamps: stamps)
    var records: [obstrace_record] = []
    for index in 0..<300 {
      let kind: EventKind = [.willSet, .didSet, .access][index % 3]
      records.append(
        obstrace_record(
          time: 1_000 + UInt64(index / 3) * 40, kind: kind.rawValue, flags: 0, depth: 0, object: 5, key: 2, scope: 0,
          aux: 7, stack: kind == .willSet ? 4 : 0))
    }
    // Another object: its definition is `append`'s to state.
    records.append(
      obstrace_record(
        time: 20_000, kind: EventKind.access.rawValue, flags: 0, depth: 0, object: 6, key: 2, scope: 0, aux: 7, stack: 0
      ))
    var clock = TickMapping(ticks: 0, monotonicNanoseconds: 0)
    clock.add(ticks: 100_000, monotonicNanoseconds: 100_000)
    var state = obstrace_encode_state()
    state.last_ticks = UInt64.max
    clock.setLastSegment(of: &state)
    let encoded = records.withUnsafeBufferPointer { buffer in
      chunk.withCursor { bytes, cursor in
        Flusher.encodeCommon(buffer, from: 0, into: bytes, cursor: &cursor, state: &state)
      }
    }
    #expect(encoded == 300)
    #expect(chunk.eventCount == 301)
  }
}

extension FlusherEncodingTests {
  @Test("the C loop takes events that alternate among triples and stacks the chunk stated earlier, as append does")
  func commonLoopTakesRecentTriples() {
    let definitions = FlusherDefinitions(names: FixedNames())
    // Two writes and a read of (5, 2) and (6, 3), then (5, 2) again: every event after the first two is about a
    // triple and a stack the chunk has stated, each a switch from the previous event's object and key.
    func record(_ index: Int) -> obstrace_record {
      let first = index % 6 < 3
      let kind: EventKind = [.willSet, .didSet, .access][index % 3]
      return obstrace_record(
        time: 1_000 + UInt64(index / 3) * 40, kind: kind.rawValue, flags: 0, depth: index % 12 < 6 ? 0 : 1,
        object: first ? 5 : 6, key: first ? 2 : 3, scope: first ? 0 : 40, aux: 7,
        stack: kind == .willSet ? (first ? 4 : 9) : 0)
    }
    let records = (0..<660).map(record)
    var clock = TickMapping(ticks: 0, monotonicNanoseconds: 0)
    clock.add(ticks: 100_000, monotonicNanoseconds: 100_000)
    func append(_ range: Range<Int>, to chunk: inout ChunkEncoder, _ stamps: DefinitionStamps) {
      for record in records[range] {
        chunk.append(
          kind: record.kind, flags: 0, time: clock.nanoseconds(record.time), depth: record.depth, object: record.object,
          key: record.key, scope: record.scope, aux: record.aux, stack: record.stack, definitions: definitions,
          stamps: stamps)
      }
    }
    // The first event of each triple stated through `append`, the next 593 by the C loop, the last 63 by `append`
    // again, from the state the loop left (the stated triple and stack, the previous event's object and key), which is
    // the state `append` leaves.
    let stamps = DefinitionStamps()
    var chunk = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: stamps)
    append(0..<4, to: &chunk, stamps)
    var state = obstrace_encode_state()
    state.last_ticks = UInt64.max
    clock.setLastSegment(of: &state)
    let taken = records[0..<597].withUnsafeBufferPointer { buffer in
      clock.withSamples(in: &state) { state in
        chunk.withCursor { bytes, cursor in
          Flusher.encodeCommon(buffer, from: 4, into: bytes, cursor: &cursor, state: &state)
        }
      }
    }
    #expect(taken == 593)
    let referenceStamps = DefinitionStamps()
    var reference = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: referenceStamps)
    append(0..<597, to: &reference, referenceStamps)
    func stated(_ chunk: inout ChunkEncoder) -> [UInt32] {
      chunk.withCursor { _, cursor in
        [
          cursor.statedObject, cursor.statedProperty, cursor.statedScope, cursor.statedStack, cursor.previousObject,
          cursor.previousKey,
        ]
      }
    }
    // The last write (record 594) was (5, 2) with stack 4, after (6, 3, 40) with stack 9.
    #expect(stated(&chunk) == [5, 2, 0, 4, 5, 2])
    #expect(stated(&chunk) == stated(&reference))
    append(597..<660, to: &chunk, stamps)
    append(597..<660, to: &reference, referenceStamps)
    #expect(chunk.eventCount == 660)
    #expect(chunk.payload(droppedSinceLastChunk: 0) == reference.payload(droppedSinceLastChunk: 0))
  }

  @Test("the C loop leaves to append an event about a triple or a stack the chunk has not stated")
  func commonLoopLeavesWhatNeedsADefinition() {
    let stamps = DefinitionStamps()
    let definitions = FlusherDefinitions(names: FixedNames())
    var chunk = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: stamps)
    chunk.append(
      kind: EventKind.willSet.rawValue, flags: 0, time: 10, depth: 0, object: 5, key: 2, scope: 0, aux: 7, stack: 4,
      definitions: definitions, stamps: stamps)
    var clock = TickMapping(ticks: 0, monotonicNanoseconds: 0)
    clock.add(ticks: 100_000, monotonicNanoseconds: 100_000)
    func taken(_ record: obstrace_record) -> Int {
      var copy = chunk
      var state = obstrace_encode_state()
      state.last_ticks = UInt64.max
      clock.setLastSegment(of: &state)
      return [record].withUnsafeBufferPointer { buffer in
        copy.withCursor { bytes, cursor in
          Flusher.encodeCommon(buffer, from: 0, into: bytes, cursor: &cursor, state: &state)
        }
      }
    }
    func access(object: UInt32 = 5, key: UInt32 = 2, scope: UInt32 = 0, aux: UInt32 = 7, stack: UInt32 = 0)
      -> obstrace_record
    {
      obstrace_record(
        time: 1_000, kind: EventKind.access.rawValue, flags: 0, depth: 0, object: object, key: key, scope: scope,
        aux: aux, stack: stack)
    }
    #expect(taken(access()) == 1)
    #expect(taken(access(stack: 4)) == 1)
    #expect(taken(access(stack: 8)) == 0)  // a stack not stated
    #expect(taken(access(object: 6)) == 0)  // an object not stated
    #expect(taken(access(key: 3)) == 0)
    #expect(taken(access(scope: 9)) == 0)
    #expect(taken(access(object: 0, key: 0)) == 0)
    var objectCreated = access()
    objectCreated.kind = EventKind.objectCreated.rawValue
    #expect(taken(objectCreated) == 0)
  }

  @Test("given the mapping's samples, the C loop takes a run in an earlier segment of the tick mapping whole")
  func commonLoopTakesEarlierSegments() {
    let stamps = DefinitionStamps()
    let definitions = FlusherDefinitions(names: FixedNames())
    var clock = TickMapping(ticks: 0, monotonicNanoseconds: 0)
    clock.add(ticks: 100_000, monotonicNanoseconds: 50_000)
    clock.add(ticks: 300_000, monotonicNanoseconds: 250_000)
    clock.add(ticks: 900_000, monotonicNanoseconds: 400_000)
    // Reads about one property, their ticks in the first segment, each read timed.
    let records = (0..<200).map { index in
      obstrace_record(
        time: 1_000 + UInt64(index) * 400, kind: EventKind.access.rawValue, flags: 0, depth: 0, object: 5, key: 2,
        scope: 0, aux: 7, stack: 0)
    }
    func encoded(givenTheSamples: Bool) -> (taken: Int, chunk: ChunkEncoder) {
      var chunk = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: stamps)
      chunk.append(
        kind: EventKind.access.rawValue, flags: 0, time: 0, depth: 0, object: 5, key: 2, scope: 0, aux: 7, stack: 0,
        definitions: definitions, stamps: stamps)
      var state = obstrace_encode_state()
      state.last_ticks = UInt64.max
      clock.setLastSegment(of: &state)
      let taken = records.withUnsafeBufferPointer { buffer in
        chunk.withCursor { bytes, cursor in
          givenTheSamples
            ? clock.withSamples(in: &state) {
              Flusher.encodeCommon(buffer, from: 0, into: bytes, cursor: &cursor, state: &$0)
            } : Flusher.encodeCommon(buffer, from: 0, into: bytes, cursor: &cursor, state: &state)
        }
      }
      return (taken, chunk)
    }
    #expect(encoded(givenTheSamples: false).taken == 0)
    let (taken, chunk) = encoded(givenTheSamples: true)
    #expect(taken == 200)
    // The same bytes as `append` with the mapping's own times.
    let referenceStamps = DefinitionStamps()
    var reference = ChunkEncoder(thread: 1, osThreadID: 1, sequence: 0, firstTime: 0, stamps: referenceStamps)
    reference.append(
      kind: EventKind.access.rawValue, flags: 0, time: 0, depth: 0, object: 5, key: 2, scope: 0, aux: 7, stack: 0,
      definitions: definitions, stamps: referenceStamps)
    for record in records {
      reference.append(
        kind: record.kind, flags: 0, time: clock.nanoseconds(record.time), depth: 0, object: 5, key: 2, scope: 0,
        aux: 7, stack: 0, definitions: definitions, stamps: referenceStamps)
    }
    #expect(chunk.payload(droppedSinceLastChunk: 0) == reference.payload(droppedSinceLastChunk: 0))
  }
}

/// Names for the records' ids that do not depend on the process's interner (other tests intern as these run): every
/// id names itself.
final class FixedNames: TraceDefinitionSource {
  func typeName(_ id: UInt32) -> String { "Fixture.Type\(id)" }
  func property(_ id: UInt32) -> PropertyDefinition? {
    PropertyDefinition(rootType: 7, keyPathDescription: "\\Type7.<computed 0x\(id) (Int)>", getterAddress: UInt64(id))
  }
  func label(_ id: UInt32) -> String { "label \(id)" }
  func scope(_ id: UInt32) -> ScopeDefinition? { nil }
  func stack(_ id: UInt32) -> [UInt64] { [UInt64(id), UInt64(id) + 1] }
}

/// A chunk states what its events use, so that each decodes alone: events that alternate among a few objects,
/// properties and stacks (which the encoder remembers as stated in the chunk, `ChunkEncoder.recentObjects` and
/// `recentStacks`) still find every definition in their own chunk, whichever chunk stated it before.
@Suite struct AlternatingEncodingTests {
  /// Writes and reads that cycle over 5 (object, property) pairs (so past the 4 remembered), each write with its own
  /// stack, in chunks closed at the flusher's target, encoded as the flusher does (C loop and `append`).
  static func records() -> [obstrace_record] {
    var records: [obstrace_record] = []
    var ticks: UInt64 = 1_000
    for index in 0..<40_000 {
      let pair = UInt32(index % 5)
      let object = 1 + pair % 3
      let key = 1 + pair
      ticks += 50
      records.append(
        obstrace_record(
          time: ticks, kind: EventKind.willSet.rawValue, flags: 0, depth: 0, object: object, key: key, scope: 0, aux: 7,
          stack: 100 + pair))
      records.append(
        obstrace_record(
          time: ticks, kind: EventKind.didSet.rawValue, flags: 0, depth: 0, object: object, key: key, scope: 0, aux: 7,
          stack: 0))
      records.append(
        obstrace_record(
          time: ticks + 10, kind: EventKind.access.rawValue, flags: 0, depth: 0, object: 1 + (pair + 1) % 3,
          key: 1 + (pair + 1) % 5, scope: 0, aux: 7, stack: 0))
    }
    return records
  }

  @Test("the flusher's encoding of alternating events is append's, byte for byte")
  func alternatingMatchesAppend() {
    let records = Self.records()
    #expect(
      FlusherEncodingTests.encode(records, commonLoop: true) == FlusherEncodingTests.encode(records, commonLoop: false))
  }

  @Test("each chunk of alternating events decodes alone, every object, property and stack defined in it")
  func chunksDecodeAlone() throws {
    let payloads = FlusherEncodingTests.encode(Self.records(), commonLoop: true)
    #expect(payloads.count > 2)
    for (index, payload) in payloads.enumerated() {
      let path = RecordingSupport.temporaryPath("alternating-\(index).trc")
      let writer = try TraceFileWriter(
        path: path,
        header: TraceHeader(
          startWallClockNanoseconds: 1, processID: 1, executable: "/bin/fixture", dropWhenFull: false,
          ringCapacity: 64, stackLevel: 1))
      try writer.writeChunk(.events, payload: payload)
      writer.close()
      defer { try? FileManager.default.removeItem(atPath: path) }
      let reader = try TraceReader(path: path)
      var events = 0
      var undefined: [String] = []
      reader.forEachEvent { event in
        events += 1
        if reader.definitions.properties[event.key] == nil { undefined.append("property \(event.key)") }
        if reader.definitions.objects[event.object] == nil { undefined.append("object \(event.object)") }
        if event.stack != 0 && reader.definitions.stacks[event.stack] == nil {
          undefined.append("stack \(event.stack)")
        }
      }
      #expect(events > 0)
      #expect(undefined.isEmpty, "chunk \(index): \(Set(undefined).sorted())")
    }
  }
}
