import Dispatch
import Synchronization

/// Reads and decodes a trace's chunks on a thread of its own, ahead of the thread that replays them: reading,
/// checking the CRC, inflating and decoding the next chunks overlap the replay of this one. At most `depth` decoded
/// chunks wait between the two threads, and each chunk's events are freed once the consumer is done with them, so
/// memory stays flat whatever the trace's length.
///
/// The reader thread touches only the file (read with `pread`), its own `ChunkDecoder` (its copy of the
/// definitions) and the items it hands over; what it meets on the way (damage, a cut end, the definitions a chunk
/// changed) travels with the next item, so the consumer records it in file order.
final class ChunkPipeline: Sendable {
  static let depth = 4

  /// What reading the next chunk gave.
  struct Item: Sendable {
    /// What reading met before the chunk (damage skipped, a cut end).
    var scan: TraceReader.ChunkScan
    /// False at the end of the file: there is no chunk, and no item after this one.
    var more: Bool
    /// The chunk decoded, when it is an events chunk.
    var decoded: ChunkDecoder.Decoded?
  }

  private let queue = Mutex<[Item]>([])
  private let stopping = Atomic<Bool>(false)
  /// Signalled once per item handed over / per free place in the queue / when the reader thread has returned.
  /// All start at 0 and are signalled up to their count, so that none is ever freed below its initial value.
  private let itemsReady = DispatchSemaphore(value: 0)
  private let placesFree = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  init(file: ReadableFile, from offset: UInt64, decoder: ChunkDecoder, rawDeflate: Bool) {
    for _ in 0..<Self.depth { placesFree.signal() }
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      var offset = offset
      var decoder = decoder
      while true {
        placesFree.wait()
        if stopping.load(ordering: .acquiring) { break }
        let item = Self.next(in: file, from: &offset, decoder: &decoder, rawDeflate: rawDeflate)
        queue.withLock { $0.append(item) }
        itemsReady.signal()
        if !item.more { break }
      }
      finished.signal()
    }
  }

  /// Reads the next chunk at `offset` and decodes it if it holds events: the work of the reader thread, or of the
  /// reader's own thread for a file too small to be worth a second one.
  static func next(
    in file: ReadableFile, from offset: inout UInt64, decoder: inout ChunkDecoder, rawDeflate: Bool
  ) -> Item {
    var scan = TraceReader.ChunkScan(reporting: true, rawDeflate: rawDeflate)
    guard let chunk = TraceReader.nextChunk(in: file, from: &offset, &scan) else {
      return Item(scan: scan, more: false, decoded: nil)
    }
    if TraceReader.endsTrace(chunk) {
      // The footer ends the trace: what follows is not read as chunks.
      TraceReader.noteAfterFooter(file, at: offset, &scan)
      offset = file.size
    }
    guard chunk.type == .events else { return Item(scan: scan, more: true, decoded: nil) }
    return Item(scan: scan, more: true, decoded: decoder.decode(chunk))
  }

  /// The next item, waiting for the reader thread if it is behind. Call no more after one without `more`.
  func next() -> Item {
    itemsReady.wait()
    let item = queue.withLock { $0.removeFirst() }
    placesFree.signal()
    return item
  }

  /// How many items wait for the consumer now (at most `depth`): for tests that need the reader thread ahead.
  var itemsWaiting: Int { queue.withLock { $0.count } }

  /// Stops the reader thread (after the last item, or early when the consumer gives up) and waits for it.
  func stop() {
    stopping.store(true, ordering: .releasing)
    placesFree.signal()  // wakes it if it waits for a place
    finished.wait()
  }
}
