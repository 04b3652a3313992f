import Foundation

@testable import ObsTraceFormat

/// What a synthetic trace's ids stand for, each a function of the id (what the recorder's interner answers the
/// flusher with). Unset: no property, scope or stack, an empty label.
final class SyntheticDefinitions: TraceDefinitionSource {
  private let typeNames: (UInt32) -> String
  private let properties: (UInt32) -> PropertyDefinition?
  private let labels: (UInt32) -> String
  private let scopes: (UInt32) -> ScopeDefinition?
  private let stacks: (UInt32) -> [UInt64]

  init(
    typeName: @escaping (UInt32) -> String,
    property: @escaping (UInt32) -> PropertyDefinition? = { _ in nil },
    label: @escaping (UInt32) -> String = { _ in "" },
    scope: @escaping (UInt32) -> ScopeDefinition? = { _ in nil },
    stack: @escaping (UInt32) -> [UInt64] = { _ in [] }
  ) {
    typeNames = typeName
    properties = property
    labels = label
    scopes = scope
    stacks = stack
  }

  /// Property `id` of type `id` (or of `rootType`), described as the runtime describes a computed key path.
  static func computedProperty(root: String, rootType: UInt32? = nil) -> (UInt32) -> PropertyDefinition? {
    { id in
      PropertyDefinition(
        rootType: rootType ?? id, keyPathDescription: "\\\(root).<computed 0x\(id) (Int)>", getterAddress: UInt64(id))
    }
  }

  /// One type, `Fixture.Model`, and its one property, `\\Model.count`.
  static var modelCount: SyntheticDefinitions {
    SyntheticDefinitions(
      typeName: { _ in "Fixture.Model" },
      property: { _ in PropertyDefinition(rootType: 1, keyPathDescription: "\\Model.count", getterAddress: 0) })
  }

  func typeName(_ id: UInt32) -> String { typeNames(id) }
  func property(_ id: UInt32) -> PropertyDefinition? { properties(id) }
  func label(_ id: UInt32) -> String { labels(id) }
  func scope(_ id: UInt32) -> ScopeDefinition? { scopes(id) }
  func stack(_ id: UInt32) -> [UInt64] { stacks(id) }
}

/// A trace file written as the flusher writes one (a header; each thread's events in chunks, numbered from 0 per
/// thread; symbols; a footer that counts what was written), for the events no fixture program makes: the tests that
/// read it assert what the commands print of exactly these events.
struct SyntheticTrace {
  let path: String
  private let writer: TraceFileWriter
  private let definitions: SyntheticDefinitions
  private let stamps = DefinitionStamps()
  /// Per thread in the order first written: its OS thread id, events written and said dropped.
  private var totals: [ThreadTotals] = []
  /// The last time of any event appended, the footer's duration unless given.
  private(set) var lastTime: UInt64 = 0

  /// A new file in the temporary folder, named from `name`, this process and a random number (tests run at once).
  init(
    _ name: String, definitions: SyntheticDefinitions, executable: String = "/bin/fixture", stackLevel: UInt8 = 0,
    dropWhenFull: Bool = false, seesUntracedTracking: Bool = false
  ) throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "obstrace-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).trc"
      ).path
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: executable, dropWhenFull: dropWhenFull,
      ringCapacity: 64, stackLevel: stackLevel, seesUntracedTracking: seesUntracedTracking)
    writer = try TraceFileWriter(path: path, header: header)
    self.definitions = definitions
  }

  /// A chunk of `thread`'s events, to `append` to and then `write`.
  func chunk(thread: UInt32 = 1, osThreadID: Int32 = 42, sequence: UInt64 = 0, firstTime: UInt64 = 1000)
    -> ChunkEncoder
  {
    ChunkEncoder(thread: thread, osThreadID: osThreadID, sequence: sequence, firstTime: firstTime, stamps: stamps)
  }

  /// One event of `chunk`'s thread at `time`.
  mutating func append(
    _ chunk: inout ChunkEncoder, _ kind: EventKind, at time: UInt64, flags: UInt8 = 0, object: UInt32 = 0,
    key: UInt32 = 0, scope: UInt32 = 0, aux: UInt32 = 0, depth: UInt16 = 0, stack: UInt32 = 0
  ) {
    chunk.append(
      kind: kind.rawValue, flags: flags, time: time, depth: depth, object: object, key: key, scope: scope, aux: aux,
      stack: stack, definitions: definitions, stamps: stamps)
    lastTime = max(lastTime, time)
  }

  /// One event of `chunk`'s thread 1000 ns after the trace's last one (or after the chunk's first time).
  mutating func next(
    _ chunk: inout ChunkEncoder, _ kind: EventKind, flags: UInt8 = 0, object: UInt32 = 0, key: UInt32 = 0,
    scope: UInt32 = 0, aux: UInt32 = 0, depth: UInt16 = 0
  ) {
    append(
      &chunk, kind, at: max(lastTime, chunk.firstTime) + 1000, flags: flags, object: object, key: key, scope: scope,
      aux: aux, depth: depth)
  }

  /// Writes `chunk`, with `dropped` events said dropped on its thread before it.
  mutating func write(_ chunk: ChunkEncoder, dropped: UInt64 = 0, threadEnded: Bool = true) throws {
    try writer.writeChunk(.events, payload: chunk.payload(droppedSinceLastChunk: dropped, threadEnded: threadEnded))
    let recorded = UInt64(chunk.eventCount)
    if let index = totals.firstIndex(where: { $0.thread == chunk.thread }) {
      let before = totals[index]
      totals[index] = ThreadTotals(
        thread: before.thread, osThreadID: before.osThreadID, recorded: before.recorded + recorded,
        dropped: before.dropped + dropped)
    } else {
      totals.append(
        ThreadTotals(thread: chunk.thread, osThreadID: chunk.osThreadID, recorded: recorded, dropped: dropped))
    }
  }

  func write(_ symbols: SymbolTable) throws {
    try writer.writeChunk(.symbols, payload: ChunkPayload.symbols(symbols))
  }

  /// Writes the footer (the threads' totals; `chunks`, unless given, the chunks written with the footer, as the
  /// flusher counts them; the last event's time as the duration unless given), closes the file and returns its path.
  func finish(duration: UInt64? = nil, chunks: UInt64? = nil, runningAtStop: [UInt32] = []) throws -> String {
    try writer.writeChunk(
      .footer,
      payload: ChunkPayload.footer(
        TraceFooter(
          durationNanoseconds: duration ?? lastTime, chunks: chunks ?? writer.chunksWritten + 1,
          threads: totals, runningAtStop: runningAtStop)))
    writer.close()
    return path
  }
}
