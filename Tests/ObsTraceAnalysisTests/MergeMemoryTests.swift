import Foundation
import Testing

@testable import ObsTraceAnalysis
@testable import ObsTraceFormat

@Suite("Time order's memory")
struct MergeMemoryTests {
  final class Definitions: TraceDefinitionSource {
    func typeName(_ id: UInt32) -> String { "Fixture.Model" }
    func property(_ id: UInt32) -> PropertyDefinition? {
      PropertyDefinition(rootType: 1, keyPathDescription: "\\Model.<computed 0x\(id) (Int)>", getterAddress: 0)
    }
    func label(_ id: UInt32) -> String { "label \(id)" }
    func scope(_ id: UInt32) -> ScopeDefinition? { nil }
    func stack(_ id: UInt32) -> [UInt64] { [] }
    func labelStack(_ id: UInt32) -> UInt32 { 0 }
  }

  /// A trace of `threads` threads that each read twice in one chunk and exit, the next thread's times after the
  /// previous one's, and a footer naming them all: a program that starts a thread per job.
  static func writeThreads(_ threads: UInt32, to path: String) throws {
    let header = TraceHeader(
      startWallClockNanoseconds: 1, processID: 42, executable: "/bin/fixture", dropWhenFull: false,
      ringCapacity: 64, stackLevel: 0)
    let writer = try TraceFileWriter(path: path, header: header)
    let definitions = Definitions()
    let stamps = DefinitionStamps()
    for thread in 1...threads {
      let first = UInt64(thread) * 1_000
      var encoder = ChunkEncoder(
        thread: thread, osThreadID: Int32(thread), sequence: 0, firstTime: first, stamps: stamps, capacity: 256)
      for time in [first, first + 10] {
        encoder.append(
          kind: EventKind.access.rawValue, flags: 0, time: time, depth: 0, object: 0, key: 1, scope: 0, aux: 0,
          stack: 0, definitions: definitions, stamps: stamps)
      }
      try writer.writeChunk(.events, payload: encoder.payload(droppedSinceLastChunk: 0, threadEnded: true))
    }
    let totals = (1...threads).map { ThreadTotals(thread: $0, osThreadID: Int32($0), recorded: 2, dropped: 0) }
    try writer.writeChunk(
      .footer,
      payload: ChunkPayload.footer(
        TraceFooter(durationNanoseconds: UInt64(threads + 1) * 1_000, chunks: UInt64(threads) + 1, threads: totals)))
    writer.close()
  }

  @Test("chunks the merge holds keep their events, not the decoder's 4,096-event blocks: one block, not one a chunk")
  func heldChunksGiveTheirBlocksBack() throws {
    // tryout15's J6: with a footer, a thread not heard from yet holds every event back, and each held chunk kept the
    // pooled block it was decoded into (160 KiB) for its few events: 10,000 threads took 919 MB.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-merge-\(UUID())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/threads.trc"
    let threads: UInt32 = 300
    try Self.writeThreads(threads, to: path)
    for readsAhead in [false, true] {
      let reader = try TraceReader(path: path)
      reader.readsAhead = readsAhead
      let ordered = TimeOrderedEvents(threads: reader.footer.map { Set($0.threads.map(\.thread)) })
      var times: [UInt64] = []
      reader.forEachStretch(ordering: ordered) { times += $0.map(\.time) }
      #expect(times.count == 2 * Int(threads))
      #expect(times == times.sorted())
      let allocated = reader.lastPool?.blocksAllocated ?? 0
      #expect(allocated >= 1 && allocated <= ChunkPipeline.depth + 2, "readsAhead \(readsAhead): \(allocated) blocks")
    }
  }
}
