import Synchronization

/// The events of one chunk, in a block of memory that is used again: the decoder writes a chunk's events in place
/// into a block taken from its pool, and the block goes back to the pool when the last copy of the buffer (the
/// consumer's, or the time-ordered merge's that held some of its events) is gone. A fresh array a chunk made the
/// allocator map and unmap its pages: on the bench's loop trace, 18,422 minor page faults against 4,554 when the
/// decoder refilled its arrays (`/usr/bin/time -v obstrace report`).
///
/// A value, read like an array of events (a random-access collection from 0); its block is never written once the
/// buffer is made, so copies may be read on any thread.
public struct EventBuffer: RandomAccessCollection, Sendable {
  @usableFromInline let storage: EventStorage?

  /// No events.
  @inlinable public init() { storage = nil }

  /// The events of `events`, copied into a block of their own (for chunks made by hand: tests, tools).
  public init(_ events: [TraceEvent]) {
    guard !events.isEmpty else {
      storage = nil
      return
    }
    let storage = EventStorage(capacity: events.count, pool: nil)
    events.withUnsafeBufferPointer { source in
      storage.base.initialize(from: source.baseAddress!, count: source.count)
    }
    storage.count = events.count
    self.storage = storage
  }

  init(storage: EventStorage) { self.storage = storage.count == 0 ? nil : storage }

  @inlinable public var startIndex: Int { 0 }
  @inlinable public var endIndex: Int { storage?.count ?? 0 }

  @inlinable public subscript(position: Int) -> TraceEvent {
    @inline(__always) get {
      precondition(position >= 0 && position < endIndex, "event index out of range")
      return storage.unsafelyUnwrapped.base[position]
    }
  }

  /// How many events its block has room for: a decoded chunk's block is pooled and sized in steps of 4,096 events,
  /// so a chunk of a few events has a block far bigger than they are.
  public var blockCapacity: Int { storage?.capacity ?? 0 }

  /// The same events in a block of their own, just big enough (from no pool): for a chunk whose events are held
  /// long (the time-ordered merge's), which would otherwise keep its whole pooled block for them.
  public func compacted() -> EventBuffer {
    guard let storage else { return self }
    let copy = EventStorage(capacity: storage.count, pool: nil)
    copy.base.initialize(from: storage.base, count: storage.count)
    copy.count = storage.count
    return EventBuffer(storage: copy)
  }

  /// Calls `body` with the events `range` in place (for a consumer's loop: no bounds check an event).
  @inlinable
  public func withEvents<Result>(
    in range: Range<Int>, _ body: (UnsafeBufferPointer<TraceEvent>) throws -> Result
  ) rethrows -> Result {
    precondition(range.lowerBound >= 0 && range.upperBound <= endIndex, "event range out of bounds")
    guard let storage else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
    return try withExtendedLifetime(storage) {
      try body(UnsafeBufferPointer(start: storage.base + range.lowerBound, count: range.count))
    }
  }
}

extension EventBuffer: Equatable {
  public static func == (left: EventBuffer, right: EventBuffer) -> Bool { left.elementsEqual(right) }
}

/// A block of events and how many are written. Its memory goes back to its pool (or is freed) when it goes.
@usableFromInline
final class EventStorage: @unchecked Sendable {
  @usableFromInline let base: UnsafeMutablePointer<TraceEvent>
  let capacity: Int
  /// Events `0..<count` are initialized. Set by the decoder before the buffer is made, never after.
  @usableFromInline var count = 0
  private let pool: EventBlockPool?

  init(capacity: Int, pool: EventBlockPool?) {
    if let block = pool?.take(capacity) {
      base = block.base
      self.capacity = block.capacity
    } else {
      // Pooled blocks are sized in steps of 4,096 events, so that one serves the next chunks of about its size.
      let size = pool == nil ? capacity : (capacity + 4095) & ~4095
      base = .allocate(capacity: size)
      self.capacity = size
      pool?.noteAllocated()
    }
    self.pool = pool
  }

  deinit {
    // TraceEvent is trivial: nothing to deinitialize.
    if let pool {
      pool.put(EventBlockPool.Block(base: base, capacity: capacity))
    } else {
      base.deallocate()
    }
  }
}

/// Blocks of event memory no buffer uses now, kept to be used again (at most `limit`; more are freed). Shared by the
/// thread that decodes (takes) and the threads that drop buffers (put).
final class EventBlockPool: Sendable {
  struct Block: @unchecked Sendable {
    var base: UnsafeMutablePointer<TraceEvent>
    var capacity: Int
  }

  /// Blocks kept: about the chunks that wait between the decoding thread and the consumer (`ChunkPipeline.depth`),
  /// the one consumed and the one decoded, and a few more; more are freed (a burst the time-ordered merge held).
  static let defaultLimit = 8

  private let blocks = Mutex<[Block]>([])
  let limit: Int
  private let allocated = Atomic<Int>(0)

  /// Blocks allocated, not taken from the pool (for tests).
  var blocksAllocated: Int { allocated.load(ordering: .relaxed) }

  func noteAllocated() { allocated.add(1, ordering: .relaxed) }

  init(limit: Int) { self.limit = limit }

  deinit {
    blocks.withLock { blocks in
      for block in blocks { block.base.deallocate() }
      blocks = []
    }
  }

  /// A kept block of `capacity` events or more, if there is one (the pool is small: looked for in order).
  func take(_ capacity: Int) -> Block? {
    blocks.withLock { blocks in
      guard let index = blocks.lastIndex(where: { $0.capacity >= capacity }) else { return nil }
      return blocks.remove(at: index)
    }
  }

  func put(_ block: Block) {
    let kept = blocks.withLock { blocks in
      guard blocks.count < limit else { return false }
      blocks.append(block)
      return true
    }
    if !kept { block.base.deallocate() }
  }
}
