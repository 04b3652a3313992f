/// Puts the events of a trace's chunks in the order a consumer reads them, on the thread that decodes the chunks
/// (`TraceReader.forEachStretch`): the order the file does not give (time order across threads) is worked out there,
/// ahead of the consumer, which reads stretches of events already in order.
///
/// Chunks come in file order. Each stretch passed on is a run of consecutive events of one chunk; stretches are
/// passed on in the order the consumer reads them.
public protocol EventOrdering: Sendable {
  /// Takes the next chunk and passes on the stretches of events it makes safe to release, in order.
  mutating func take(_ chunk: EventChunk, release: (EventStretch) -> Void)
  /// Passes on every event still held, in order: the trace has no more chunks.
  mutating func releaseAll(_ release: (EventStretch) -> Void)
}

/// Events `range` of a chunk's buffer, in order: what an `EventOrdering` releases. Holding one keeps the chunk's
/// block from going back to its pool.
public struct EventStretch: RandomAccessCollection, Sendable {
  public let events: EventBuffer
  public let range: Range<Int>

  @inlinable public init(events: EventBuffer, range: Range<Int>) {
    precondition(range.lowerBound >= 0 && range.upperBound <= events.endIndex, "stretch out of its buffer")
    self.events = events
    self.range = range
  }

  @inlinable public var startIndex: Int { range.lowerBound }
  @inlinable public var endIndex: Int { range.upperBound }
  @inlinable public subscript(position: Int) -> TraceEvent {
    precondition(range.contains(position), "event index out of its stretch")
    return events[position]
  }

  /// Calls `body` with the stretch's events in place (a consumer's loop: no bounds check an event).
  @inlinable
  public func withEvents<Result>(_ body: (UnsafeBufferPointer<TraceEvent>) throws -> Result) rethrows -> Result {
    try events.withEvents(in: range, body)
  }
}
