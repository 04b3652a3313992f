import Foundation
import Testing

@testable import ObsTraceFormat

/// An ordering that holds events and releases them late, in pieces: each chunk's first half when the chunk after it
/// comes, its second half two chunks later (and its first event alone, at once, when it is stretch-worthy), the
/// rest at the end. Not the replay's order: what matters is that it holds and releases across chunks.
struct LaggingOrdering: EventOrdering {
  var held: [(buffer: EventBuffer, range: Range<Int>, age: Int)] = []

  mutating func take(_ chunk: EventChunk, release: (EventStretch) -> Void) {
    let count = chunk.events.count
    if count > 2 {
      release(EventStretch(events: chunk.events, range: 0..<1))
      held.append((chunk.events, 1..<(count / 2), 0))
      held.append((chunk.events, (count / 2)..<count, -1))
    } else {
      held.append((chunk.events, 0..<count, 0))
    }
    var kept: [(buffer: EventBuffer, range: Range<Int>, age: Int)] = []
    for var entry in held {
      entry.age += 1
      if entry.age >= 2 { release(EventStretch(events: entry.buffer, range: entry.range)) } else { kept.append(entry) }
    }
    held = kept
  }

  mutating func releaseAll(_ release: (EventStretch) -> Void) {
    for entry in held { release(EventStretch(events: entry.buffer, range: entry.range)) }
    held = []
  }
}

@Suite("Ordering events where they are decoded")
struct EventOrderingTests {
  /// What a consumer sees: the events in order, the highest scope id defined when each stretch was passed on, and
  /// the reader's state at the end.
  struct Seen: Equatable {
    var events: [TraceEvent] = []
    var scopesDefined: [UInt32] = []
    var damage = TraceDamageList()
    var truncated = false
    var cut: TraceDamage?
    var dropped: UInt64 = 0
    var gaps: [ThreadChunkLedger.Gap] = []
    var eventsRead: [UInt64] = []
    var lastEventTime: UInt64 = 0
  }

  func finish(_ seen: inout Seen, _ reader: TraceReader) {
    seen.damage = reader.damage
    seen.truncated = reader.truncated
    seen.cut = reader.cutAt
    seen.dropped = reader.droppedEvents
    seen.gaps = reader.chunkLedger.gaps
    seen.eventsRead = [1, 2, 3].map { reader.chunkLedger.eventsRead($0) }
    seen.lastEventTime = reader.lastEventTime
  }

  /// The ordering run by the consumer over `forEachChunk`, as the replay did before it ran where chunks are decoded.
  func byTheConsumer(_ path: String, readsAhead: Bool) throws -> Seen {
    let reader = try TraceReader(path: path)
    reader.readsAhead = readsAhead
    var ordering = LaggingOrdering()
    var seen = Seen()
    func pass(_ stretch: EventStretch) {
      seen.events.append(contentsOf: stretch)
      seen.scopesDefined.append(reader.definitions.scopes.ids.max() ?? 0)
    }
    reader.forEachChunk { chunk in ordering.take(chunk, release: pass) }
    ordering.releaseAll(pass)
    finish(&seen, reader)
    return seen
  }

  func byTheReader(_ path: String, readsAhead: Bool) throws -> Seen {
    let reader = try TraceReader(path: path)
    reader.readsAhead = readsAhead
    var seen = Seen()
    reader.forEachStretch(ordering: LaggingOrdering()) { stretch in
      stretch.withEvents { seen.events.append(contentsOf: $0) }
      seen.scopesDefined.append(reader.definitions.scopes.ids.max() ?? 0)
    }
    finish(&seen, reader)
    return seen
  }

  @Test(
    "the reader thread orders what the consumer would: the same events in the same order, each with the definitions of the chunk that released it, and the same damage, cut and counts",
    arguments: [false, true])
  func sameAsTheConsumer(damaged: Bool) throws {
    let path = temporaryPath("ordering-\(damaged).trc")
    // Each chunk's events are in a scope the chunk defines: a stretch passed on before its chunk's definitions are
    // applied shows a smaller scope id. More chunks than a batch holds events, so that batches are cut.
    let written = try writeSyntheticTrace(
      to: path, chunks: 60, perChunk: 3000, threads: 3, footer: !damaged)
    if damaged {
      var bytes = fileBytes(path)
      let starts = chunkStarts(bytes)
      bytes[starts[7] + TraceFormat.chunkHeaderSize + 5] ^= 0xff
      bytes[starts[31] + TraceFormat.chunkHeaderSize + 9] ^= 0x55
      bytes.removeLast(100)
      writeBytes(bytes, to: path)
    }
    let expected = try byTheConsumer(path, readsAhead: false)
    if !damaged { #expect(expected.events.count == written.count) }
    #expect(expected.damage.isEmpty == !damaged)
    #expect(expected.scopesDefined.last == (damaged ? 59 : 60))
    for readsAhead in [false, true] {
      let seen = try byTheReader(path, readsAhead: readsAhead)
      #expect(seen == expected, "readsAhead \(readsAhead)")
      #expect(try byTheConsumer(path, readsAhead: readsAhead) == expected)
    }
  }

  @Test("a consumer that stops early stops the reader thread, and a second pass reads all")
  func stopsEarly() throws {
    struct Enough: Error {}
    let path = temporaryPath("ordering-stop.trc")
    let written = try writeSyntheticTrace(to: path, chunks: 40, perChunk: 2000)
    let reader = try TraceReader(path: path)
    reader.readsAhead = true
    var stretches = 0
    #expect(throws: Enough.self) {
      try reader.forEachStretch(ordering: LaggingOrdering()) { _ in
        stretches += 1
        if stretches == 3 { throw Enough() }
      }
    }
    #expect(stretches == 3)
    var events = 0
    reader.forEachStretch(ordering: LaggingOrdering()) { events += $0.count }
    #expect(events == written.count)
  }

  @Test("chunks' event blocks go back to the pool and are used again: reading a trace allocates a few, not one a chunk")
  func blocksAreUsedAgain() throws {
    let path = temporaryPath("ordering-pool.trc")
    try writeSyntheticTrace(to: path, chunks: 48, perChunk: 500)
    for readsAhead in [false, true] {
      let reader = try TraceReader(path: path)
      reader.readsAhead = readsAhead
      var chunks = 0
      reader.forEachChunk { _ in chunks += 1 }
      #expect(chunks == 48)
      let allocated = reader.lastPool?.blocksAllocated ?? 0
      // At most the chunks waiting between the threads, the one consumed and the one being decoded.
      #expect(allocated >= 1 && allocated <= ChunkPipeline.depth + 2, "readsAhead \(readsAhead): \(allocated)")
    }
  }
}
