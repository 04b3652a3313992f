import Dispatch
import Synchronization

/// Reads and decodes a trace's chunks on a thread of its own, ahead of the thread that replays them: reading,
/// checking the CRC, inflating and decoding the next chunks overlap the replay of this one. At most `depth` batches
/// wait between the two threads, and each chunk's events go back to the decoder's pool once the consumer is done
/// with them, so memory stays flat whatever the trace's length.
///
/// With an `EventOrdering` (the replay's time order across threads), the reader thread also orders the events: it
/// holds the chunks the ordering holds and hands over the stretches it releases. Before, the consumer held them: a
/// trace of several threads, whose chunks are held until every thread has caught up, then released in bursts, had
/// the consumer wait for each held chunk to be decoded, and the reader thread wait, its `depth` places full, while
/// the consumer replayed a burst; the two threads took turns more than they overlapped.
///
/// The reader thread touches only the file (read with `pread`), its own `ChunkDecoder` (its copy of the
/// definitions), its ordering, and the batches it hands over; what it meets on the way (damage, a cut end, the
/// definitions a chunk changed) travels in the batch, item by item, so the consumer records it in file order.
final class ChunkPipeline: Sendable {
  static let depth = 4

  /// What reading the next chunk gave.
  struct Item: Sendable {
    /// What reading met before the chunk (damage skipped, a cut end).
    var scan: TraceReader.ChunkScan
    /// False at the end of the file: there is no chunk, and no item after this one.
    var more: Bool
    /// The chunk decoded, when it is an events chunk. Its events are left out (`eventCount`, `lastTime` say what
    /// the consumer records of them) when an ordering took them.
    var decoded: ChunkDecoder.Decoded?
    /// How many events the chunk has, and the time of its last.
    var eventCount = 0
    var lastTime: UInt64?
  }

  /// One step of reading, in the order the consumer takes it: an item (what reading a chunk gave, recorded by the
  /// consumer), or a stretch of events the ordering released (passed on).
  enum Entry: Sendable {
    /// Boxed: an item (with what its scan met) is several times a stretch's size, and entries are mostly stretches,
    /// copied at each hand-over (unboxed, the replaying thread did ≈ 4 more instructions an event on a 4-thread trace).
    indirect case item(Item)
    case stretch(EventStretch)
  }

  /// What the reader thread hands over at once: entries in order, each item followed by the stretches its chunk's
  /// taking released (so that, at each stretch, the consumer has recorded the definitions of the chunks up to the one
  /// that released it, and of none after).
  struct Batch: Sendable {
    var entries: [Entry] = []
    /// No batch follows.
    var last = false
  }

  private let queue = Mutex<[Batch]>([])
  private let stopping = Atomic<Bool>(false)
  /// Signalled once per batch handed over / per free place in the queue / when the reader thread has returned.
  /// All start at 0 and are signalled up to their count, so that none is ever freed below its initial value.
  private let itemsReady = DispatchSemaphore(value: 0)
  private let placesFree = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)

  init(file: ReadableFile, from offset: UInt64, decoder: ChunkDecoder, rawDeflate: Bool, ordering: (any EventOrdering)?)
  {
    for _ in 0..<Self.depth { placesFree.signal() }
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      var producer = BatchProducer(
        file: file, offset: offset, decoder: decoder, rawDeflate: rawDeflate, ordering: ordering)
      while true {
        placesFree.wait()
        if stopping.load(ordering: .acquiring) { break }
        let batch = producer.next { queue.withLock { $0.isEmpty } }
        queue.withLock { $0.append(batch) }
        itemsReady.signal()
        if batch.last { break }
      }
      finished.signal()
    }
  }

  /// Reads the next chunk at `offset` and decodes it if it holds events: the work of the reader thread, or of the
  /// reader's own thread for a file too small to be worth a second one.
  static func next(
    in file: ReadableFile, from offset: inout UInt64, decoder: inout ChunkDecoder, rawDeflate: Bool,
    observer: DamageObserver? = nil
  ) -> Item {
    var scan = TraceReader.ChunkScan(reporting: true, rawDeflate: rawDeflate, observer: observer)
    let found = TraceReader.nextChunk(in: file, from: &offset, &scan)
    scan.window = TraceReader.ReadWindow()  // not carried to the consumer
    guard let chunk = found else {
      return Item(scan: scan, more: false, decoded: nil)
    }
    if TraceReader.endsTrace(chunk) {
      // The footer ends the trace: what follows is not read as chunks.
      TraceReader.noteAfterFooter(file, at: offset, &scan)
      offset = file.size
    }
    guard chunk.type == .events else { return Item(scan: scan, more: true, decoded: nil) }
    var decoded = decoder.decode(chunk)
    if let events = decoded.chunk, let copy = decoder.repeated(events) {
      decoded.chunk = nil
      decoded.damage = copy
    }
    let events = decoded.chunk?.events
    return Item(scan: scan, more: true, decoded: decoded, eventCount: events?.count ?? 0, lastTime: events?.last?.time)
  }

  /// The next batch, waiting for the reader thread if it is behind. Call no more after the `last` one.
  func next() -> Batch {
    itemsReady.wait()
    let batch = queue.withLock { $0.removeFirst() }
    placesFree.signal()
    return batch
  }

  /// How many batches wait for the consumer now (at most `depth`): for tests that need the reader thread ahead.
  var itemsWaiting: Int { queue.withLock { $0.count } }

  /// Stops the reader thread (after the last batch, or early when the consumer gives up) and waits for it.
  func stop() {
    stopping.store(true, ordering: .releasing)
    placesFree.signal()  // wakes it if it waits for a place
    finished.wait()
  }
}

/// Makes the batches `ChunkPipeline` hands over: on its reader thread, or on the consumer's own for a small file.
struct BatchProducer {
  /// A batch is handed over once the stretches waiting reach this many events (or the items this many, or the
  /// consumer waits): about a chunk's (the recorder's chunks of 60 KiB hold 10-20 k events), so that the events
  /// waiting between the threads are about what they were when a chunk was handed over at a time (`depth` of them),
  /// and a burst (a trace of several threads releases one when its slowest thread catches up) is handed over in
  /// pieces, not held whole between the threads.
  static let batchEvents = 1 << 14
  static let batchItems = 1024
  /// No chunk is read while this many released events wait to be handed over: after a burst, the reader thread
  /// hands it over before it reads on, so that the events the ordering holds and those released wait, together, no
  /// longer than the ordering's own bound (with a whole burst waiting as well, a 4-thread trace's peak memory
  /// doubled: 86 MiB against 43). Four batches: while the consumer replays them, the next chunks are read and held.
  static let lookahead = 4 * batchEvents

  let file: ReadableFile
  var offset: UInt64
  var decoder: ChunkDecoder
  let rawDeflate: Bool
  var ordering: (any EventOrdering)?
  /// Told of each damaged spot as it is met: only for a reading on the consumer's own thread (`TraceReader.forEachDamage`).
  var observer: DamageObserver?
  /// Entries read and released, not yet handed over, in order from `head` (those before it were handed over and
  /// are nil: moved out, so that a stretch handed over does not keep its chunk's block here); the events of their
  /// stretches; their items. Handed-over slots are dropped from the front once they are half the array, not at
  /// each batch: a burst leaves thousands of entries waiting, and moving them all forward at each batch was ≈ 5 %
  /// of the reader thread on a 4-thread trace (`memmove` from `removeFirst`, callgrind).
  private var waiting: [ChunkPipeline.Entry?] = []
  private var head = 0
  private var waitingEvents = 0
  private var waitingItems = 0
  private var ended = false

  init(file: ReadableFile, offset: UInt64, decoder: ChunkDecoder, rawDeflate: Bool, ordering: (any EventOrdering)?) {
    self.file = file
    self.offset = offset
    self.decoder = decoder
    self.rawDeflate = rawDeflate
    self.ordering = ordering
  }

  /// The next batch. Without an ordering, a batch is one item (the chunk's events in it). With one, chunks are read
  /// (none while `lookahead` released events wait) until the released events waiting reach `batchEvents`, or the
  /// items `batchItems`, or `consumerWaiting()` says the consumer has nothing to do and some are released, or the
  /// end; then the entries waiting are handed over in order, up to `batchEvents` events of stretches.
  mutating func next(consumerWaiting: () -> Bool) -> ChunkPipeline.Batch {
    guard ordering != nil else {
      let item = ChunkPipeline.next(
        in: file, from: &offset, decoder: &decoder, rawDeflate: rawDeflate, observer: observer)
      return ChunkPipeline.Batch(entries: [.item(item)], last: !item.more)
    }
    // Out of `self` while it works (so that its release can keep stretches in `self`), and the only copy.
    var current = ordering!
    ordering = nil
    defer { ordering = current }
    while !ended && waitingEvents < Self.lookahead {
      var item = ChunkPipeline.next(in: file, from: &offset, decoder: &decoder, rawDeflate: rawDeflate)
      let chunk = item.more ? item.decoded?.chunk : nil
      // The ordering holds the events it does not release; the item need not.
      if chunk != nil { item.decoded!.chunk!.events = EventBuffer() }
      waiting.append(.item(item))
      waitingItems += 1
      if !item.more {
        ended = true
        current.releaseAll { keep($0) }
      } else if let chunk {
        current.take(chunk) { keep($0) }
      }
      if waitingItems >= Self.batchItems || waitingEvents >= Self.batchEvents
        || (waitingEvents > 0 && consumerWaiting())
      {
        break
      }
    }
    var events = 0
    var end = head
    while end < waiting.count {
      if case .stretch(let stretch)? = waiting[end] {
        if events > 0 && events + stretch.count > Self.batchEvents { break }
        events += stretch.count
      } else {
        waitingItems -= 1
      }
      end += 1
    }
    // Moved out, into an array made to size (appending grew it by copies).
    var batch = ChunkPipeline.Batch()
    batch.entries.reserveCapacity(end - head)
    for index in head..<end { batch.entries.append(waiting[index].take()!) }
    head = end
    waitingEvents -= events
    if head == waiting.count {
      waiting.removeAll(keepingCapacity: true)
      head = 0
    } else if head * 2 >= waiting.count {
      waiting.removeFirst(head)
      head = 0
    }
    batch.last = ended && head == waiting.count
    return batch
  }

  private mutating func keep(_ stretch: EventStretch) {
    guard !stretch.isEmpty else { return }
    waiting.append(.stretch(stretch))
    waitingEvents += stretch.count
  }
}
