import Dispatch
import Synchronization

/// Reads a trace's chunks on a thread of its own, ahead of the thread that decodes them: reading, checking the
/// CRC and inflating the next chunks overlaps the decoding and the replay of this one. At most `depth` chunks wait
/// between the two threads, so memory stays flat whatever the trace's length.
///
/// The reader thread touches only the file (read with `pread`) and the items it hands over; what it meets on the
/// way (damage, a cut end) travels with the next item, so the consumer records it in file order.
final class ChunkPipeline: Sendable {
  static let depth = 8

  struct Item: Sendable {
    /// What reading met before `chunk` (damage skipped, a cut end).
    var scan: TraceReader.ChunkScan
    /// The next whole chunk; nil at the end of the file.
    var chunk: TraceReader.Chunk?
  }

  private let queue = Mutex<[Item]>([])
  private let stopping = Atomic<Bool>(false)
  /// Signalled once per item handed over / per free place in the queue / when the reader thread has returned.
  /// All start at 0 and are signalled up to their count, so that none is ever freed below its initial value.
  private let itemsReady = DispatchSemaphore(value: 0)
  private let placesFree = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  init(file: ReadableFile, from offset: UInt64) {
    for _ in 0..<Self.depth { placesFree.signal() }
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      var offset = offset
      while true {
        placesFree.wait()
        if stopping.load(ordering: .acquiring) { break }
        var scan = TraceReader.ChunkScan(reporting: true)
        let chunk = TraceReader.nextChunk(in: file, from: &offset, &scan)
        queue.withLock { $0.append(Item(scan: scan, chunk: chunk)) }
        itemsReady.signal()
        if chunk == nil { break }
      }
      finished.signal()
    }
  }

  /// The next item, waiting for the reader thread if it is behind. The last has no chunk: call no more after it.
  func next() -> Item {
    itemsReady.wait()
    let item = queue.withLock { $0.removeFirst() }
    placesFree.signal()
    return item
  }

  /// Stops the reader thread (after the last item, or early when the consumer gives up) and waits for it.
  func stop() {
    stopping.store(true, ordering: .releasing)
    placesFree.signal()  // wakes it if it waits for a place
    finished.wait()
  }
}
