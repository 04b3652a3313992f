/// Builds the payload of one thread's events chunk: a small header, then events with delta timestamps, each
/// preceded by the definitions it uses that this chunk has not yet stated. Restating definitions per chunk is
/// what lets a reader decode the chunks after a damaged one.
///
/// The flusher calls `append` once per recorded event, so it does no allocation, no class access and no dynamic
/// exclusivity check in the common case: bytes go into a buffer sized once per chunk, and an event about the
/// same object, property, scope and stack as an earlier one of this chunk skips the definitions table.
public struct ChunkEncoder {
  /// The chunk's bytes so far (without its header) in one buffer: the encoded definitions and events grow from the
  /// front (`storage[0..<itemByteCount]`), the events' time deltas from the back, last byte first
  /// (`storage[(storage.count - timeByteCount)...]`, reversed). One buffer makes an event one capacity check and one
  /// write through one pointer; `payload` puts the deltas back in order, a column after the items
  /// (`ChunkFlags.timesApart`): kept apart, the items of a loop repeat exactly and zlib matches them in long runs,
  /// while the deltas (the noise) are coded alone.
  @usableFromInline var storage: [UInt8]
  @usableFromInline var itemByteCount = 0
  @usableFromInline var timeByteCount = 0
  /// How many bytes `append` has written so far.
  @inlinable public var byteCount: Int { itemByteCount &+ timeByteCount }
  /// The bytes of the time column, which ends the payload (the writer stores it uncompressed).
  public var timeColumnByteCount: Int { timeByteCount }
  @usableFromInline var _eventCount = 0
  public var eventCount: Int { _eventCount }
  public let thread: UInt32
  public let osThreadID: Int32
  public let sequence: UInt64
  public let firstTime: UInt64
  @usableFromInline var lastTime: UInt64
  @usableFromInline let generation: UInt32
  /// The last object, property, scope and stack this chunk has stated (0: none): runs of events about one object
  /// and property are the rule, and they need no look-up.
  @usableFromInline var statedObject: UInt32 = 0
  @usableFromInline var statedProperty: UInt32 = 0
  @usableFromInline var statedScope: UInt32 = 0
  @usableFromInline var statedStack: UInt32 = 0
  /// The object and key of the chunk's previous event (0 before the first), for `EventMask.sameObjectAndKey`.
  @usableFromInline var previousObject: UInt32 = 0
  @usableFromInline var previousKey: UInt32 = 0
  /// The last few object, property and scope triples this chunk has stated in full (`define` of an access, willSet,
  /// didSet or free with the object's type), newest first: code that alternates a few properties (`a = x; b += 1`)
  /// meets a triple other than the stated one at every event, and a triple found here needs no definition, only to
  /// become the stated one, so that `define` and its look-ups of the definition stamps run once per triple a chunk,
  /// not per event. Zeros are no triple (an object id is never 0).
  @usableFromInline var recentObjects: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
  @usableFromInline var recentProperties: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
  @usableFromInline var recentScopes: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
  /// The last few stacks this chunk has stated, newest first (0: none): two writes of two properties from two places
  /// alternate their stacks, each a stack stated earlier in the chunk.
  @usableFromInline var recentStacks: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)

  /// The most bytes one event takes: kind, flags, mask, a 64-bit delta and six 32-bit fields as varints.
  @usableFromInline static let maximumEventSize = 3 + 10 + 6 * 5

  /// Starts a chunk for `thread`; `sequence` numbers the thread's chunks from 0, and `firstTime` is the absolute
  /// time (nanoseconds since the recording started) that the first event's delta is taken from. `capacity`: the
  /// bytes to allocate at once (the chunk's expected size; more are allocated if needed).
  public init(
    thread: UInt32, osThreadID: Int32, sequence: UInt64, firstTime: UInt64, stamps: DefinitionStamps,
    capacity: Int = 64 << 10
  ) {
    self.thread = thread
    self.osThreadID = osThreadID
    self.sequence = sequence
    self.firstTime = firstTime
    self.lastTime = firstTime
    self.generation = stamps.nextGeneration()
    // Uninitialized: every byte is written before it is read (items from the front, deltas from the back).
    let capacity = max(capacity, 2 * Self.maximumEventSize)
    storage = [UInt8](unsafeUninitializedCapacity: capacity) { _, count in count = capacity }
  }

  /// The encoded definitions and events so far (without the chunk's header).
  public var bytes: [UInt8] { Array(storage[0..<itemByteCount]) }

  /// The chunk's payload: its header (thread, OS thread id, sequence, events the thread dropped since its
  /// previous chunk, first time, flags, the items' length), then the encoded items, then the time column (its last
  /// `timeColumnByteCount` bytes).
  public func payload(droppedSinceLastChunk: UInt64, threadEnded: Bool = false) -> [UInt8] {
    var payload: [UInt8] = []
    payload.reserveCapacity(byteCount + 40)
    payload.appendVarint(thread)
    payload.appendVarint(UInt32(bitPattern: osThreadID))
    payload.appendVarint(sequence)
    payload.appendVarint(droppedSinceLastChunk)
    payload.appendVarint(firstTime)
    payload.append((threadEnded ? ChunkFlags.threadEnded : 0) | ChunkFlags.timesApart)
    payload.appendVarint(itemByteCount)
    payload.append(contentsOf: storage[0..<itemByteCount])
    // The deltas, back in order: the column's first byte is the buffer's last.
    let start = payload.count
    let times = timeByteCount
    payload.append(contentsOf: repeatElement(0, count: times))
    payload.withUnsafeMutableBytes { destination in
      storage.withUnsafeBytes { source in
        // Eight bytes at a time, each word byte-swapped (a byte at a time took ≈ 8 instructions an event on the
        // bench's loop), then the bytes left over.
        let end = source.count
        var index = 0
        while index &+ 8 <= times {
          let word = source.loadUnaligned(fromByteOffset: end &- index &- 8, as: UInt64.self)
          destination.storeBytes(of: word.byteSwapped, toByteOffset: start &+ index, as: UInt64.self)
          index &+= 8
        }
        while index < times {
          destination[start &+ index] = source[end &- 1 &- index]
          index &+= 1
        }
      }
    }
    return payload
  }

  /// Room for `count` more bytes between the items and the deltas, growing the buffer (rare: it starts at the
  /// chunk's expected size).
  @inlinable @inline(__always)
  mutating func reserve(_ count: Int) {
    if _slowPath(itemByteCount &+ timeByteCount &+ count > storage.count) {
      grow(itemByteCount + timeByteCount + count)
    }
  }

  /// A buffer of at least `needed` bytes (twice the old one's), the items at its front and the deltas at its back.
  @usableFromInline @inline(never)
  mutating func grow(_ needed: Int) {
    let capacity = max(needed, storage.count * 2)
    let old = storage
    let items = itemByteCount
    let times = timeByteCount
    storage = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
      for index in 0..<items { buffer[index] = old[index] }
      for index in 0..<times { buffer[capacity - times + index] = old[old.count - times + index] }
      count = capacity
    }
  }

  /// Appends bytes built elsewhere (definitions: once per chunk per id).
  @usableFromInline
  mutating func write(_ bytes: [UInt8]) {
    reserve(bytes.count)
    storage.withUnsafeMutableBufferPointer { buffer in
      for (offset, byte) in bytes.enumerated() { buffer[itemByteCount + offset] = byte }
    }
    itemByteCount += bytes.count
  }

  /// Appends one event, stating first any definition it needs.
  ///
  /// Layout: kind, flags, a presence mask, then only the fields the mask names (depth, object, key, scope, aux,
  /// stack, in that order) that are not zero; the time delta goes to the time column. An event about an object whose
  /// type the chunk has stated leaves `aux` (the type) out: the reader takes it from the object's definition. Two
  /// mask bits make the common events short (version 2): `EventMask.sameObjectAndKey` (the object and key of the
  /// chunk's previous event, written once for a run of events about one property) and `EventMask.sameTime` (no time
  /// delta: the event took its thread's previous time, as didSets and most reads do).
  ///
  /// Inlinable, so that the flusher's loop over a ring's records compiles into one loop: the common event (about
  /// what an earlier event of the chunk stated) makes no call, no allocation, and writes its bytes through the one
  /// buffer pointer.
  @inlinable
  public mutating func append(
    kind: UInt8, flags: UInt8, time: UInt64, depth: UInt16, object: UInt32, key: UInt32, scope: UInt32, aux: UInt32,
    stack: UInt32, definitions: TraceDefinitionSource, stamps: DefinitionStamps
  ) {
    let carriesObjectType = Self.carriesObjectType(kind)
    // The common case (an access, willSet or didSet of what an earlier event was about) states nothing, or only a
    // stack: a write's stack alternates with its didSet's and its reads' none.
    if _slowPath(!(carriesObjectType && object == statedObject && key == statedProperty && scope == statedScope)) {
      if carriesObjectType && object != 0 && aux != 0 && isRecent(object: object, key: key, scope: scope) {
        // Stated in full earlier in this chunk: it only becomes the stated triple again (what `define` would do,
        // finding every stamp of this chunk's), and a stack of its own is stated as `define` would state it.
        statedObject = object
        statedProperty = key
        statedScope = scope
        if stack != 0 && stack != statedStack { stateStack(stack, definitions, stamps) }
      } else {
        define(kind: kind, object: object, key: key, scope: scope, aux: aux, stack: stack, definitions, stamps)
      }
    } else if stack != 0 && stack != statedStack {
      stateStack(stack, definitions, stamps)
    }
    let time = max(time, lastTime)
    let delta = time &- lastTime
    let auxIsObjectType = object != 0 && carriesObjectType
    let sameObjectAndKey = object == previousObject && key == previousKey && (object | key) != 0
    var mask: UInt8 = 0
    if depth != 0 { mask |= EventMask.depth }
    if !sameObjectAndKey {
      if object != 0 { mask |= EventMask.object }
      if key != 0 { mask |= EventMask.key }
    } else {
      mask |= EventMask.sameObjectAndKey
    }
    if scope != 0 { mask |= EventMask.scope }
    if aux != 0 && !auxIsObjectType { mask |= EventMask.aux }
    if stack != 0 { mask |= EventMask.stack }
    if delta == 0 { mask |= EventMask.sameTime }
    reserve(Self.maximumEventSize)
    let items = itemByteCount
    let times = timeByteCount
    let (itemsAfter, timesAfter) = storage.withUnsafeMutableBufferPointer { buffer -> (Int, Int) in
      let base = buffer.baseAddress.unsafelyUnwrapped
      var count = items
      @inline(__always) func put(_ value: UInt32) {
        var value = value
        while value >= 0x80 {
          base[count] = UInt8(truncatingIfNeeded: value) | 0x80
          count &+= 1
          value &>>= 7
        }
        base[count] = UInt8(truncatingIfNeeded: value)
        count &+= 1
      }
      base[count] = kind
      base[count &+ 1] = flags
      base[count &+ 2] = mask
      count &+= 3
      if mask & EventMask.depth != 0 { put(UInt32(depth)) }
      if mask & EventMask.object != 0 { put(object) }
      if mask & EventMask.key != 0 { put(key) }
      if mask & EventMask.scope != 0 { put(scope) }
      if mask & EventMask.aux != 0 { put(aux) }
      if mask & EventMask.stack != 0 { put(stack) }
      // The delta, at the back, its bytes going down (`payload` reverses the column).
      var timeEnd = buffer.count &- times
      if delta != 0 {
        var value = delta
        while value >= 0x80 {
          timeEnd &-= 1
          base[timeEnd] = UInt8(truncatingIfNeeded: value) | 0x80
          value &>>= 7
        }
        timeEnd &-= 1
        base[timeEnd] = UInt8(truncatingIfNeeded: value)
      }
      return (count, buffer.count &- timeEnd)
    }
    itemByteCount = itemsAfter
    timeByteCount = timesAfter
    lastTime = time
    previousObject = object
    previousKey = key
    _eventCount &+= 1
  }

  /// The running state `append` keeps between events, for a caller that encodes events into the same buffer itself
  /// (the recorder's loop over common events, `obstrace_encode_common`), which must write exactly the bytes
  /// `append` would and leave the state as `append` would.
  public struct Cursor {
    /// Bytes of items written from the buffer's front, and of time deltas from its back (last byte first).
    public var items: Int
    public var times: Int
    public var events: Int
    /// The time of the chunk's previous event.
    public var lastTime: UInt64
    /// The object, property, scope and stack the chunk last stated: an event about them needs no definition. A
    /// caller may make a triple or a stack the chunk stated earlier (`recentObjects`…) the stated one, as `append`
    /// does; stating anything new is `append`'s work.
    public var statedObject: UInt32
    public var statedProperty: UInt32
    public var statedScope: UInt32
    public var statedStack: UInt32
    /// The object and key of the chunk's previous event (`EventMask.sameObjectAndKey`).
    public var previousObject: UInt32
    public var previousKey: UInt32
    /// The triples and stacks the chunk has stated in full, newest first (zeros: none); read-only here.
    public let recentObjects: (UInt32, UInt32, UInt32, UInt32)
    public let recentProperties: (UInt32, UInt32, UInt32, UInt32)
    public let recentScopes: (UInt32, UInt32, UInt32, UInt32)
    public let recentStacks: (UInt32, UInt32, UInt32, UInt32)

    @usableFromInline
    init(
      items: Int, times: Int, events: Int, lastTime: UInt64, statedObject: UInt32, statedProperty: UInt32,
      statedScope: UInt32, statedStack: UInt32, previousObject: UInt32, previousKey: UInt32,
      recentObjects: (UInt32, UInt32, UInt32, UInt32), recentProperties: (UInt32, UInt32, UInt32, UInt32),
      recentScopes: (UInt32, UInt32, UInt32, UInt32), recentStacks: (UInt32, UInt32, UInt32, UInt32)
    ) {
      self.items = items
      self.times = times
      self.events = events
      self.lastTime = lastTime
      self.statedObject = statedObject
      self.statedProperty = statedProperty
      self.statedScope = statedScope
      self.statedStack = statedStack
      self.previousObject = previousObject
      self.previousKey = previousKey
      self.recentObjects = recentObjects
      self.recentProperties = recentProperties
      self.recentScopes = recentScopes
      self.recentStacks = recentStacks
    }
  }

  /// Whether an event needs nothing but its own bytes, as the recorder's C loop encodes it: an access, willSet or
  /// didSet about the object, property and scope the chunk stated last or about a triple it stated earlier (which
  /// `append` only makes the stated one again), with no stack, the stack stated last or one stated earlier. The
  /// flusher asks before handing a run to the loop, so that an event the loop would refuse costs no call.
  @inlinable
  public func needsNoDefinition(kind: UInt8, object: UInt32, key: UInt32, scope: UInt32, aux: UInt32, stack: UInt32)
    -> Bool
  {
    guard kind &- 1 < 3 && object != 0 else { return false }
    guard
      (object == statedObject && key == statedProperty && scope == statedScope)
        || (aux != 0 && isRecent(object: object, key: key, scope: scope))
    else { return false }
    return stack == 0 || stack == statedStack || isRecent(stack: stack)
  }

  /// Runs `body` with the chunk's whole buffer (items from its front, deltas from its back) and the encoder's
  /// state, and keeps the state `body` leaves: one buffer access for a run of events, not one per event.
  @inlinable
  public mutating func withCursor<Result>(
    _ body: (UnsafeMutableBufferPointer<UInt8>, inout Cursor) -> Result
  ) -> Result {
    var cursor = Cursor(
      items: itemByteCount, times: timeByteCount, events: _eventCount, lastTime: lastTime,
      statedObject: statedObject, statedProperty: statedProperty, statedScope: statedScope, statedStack: statedStack,
      previousObject: previousObject, previousKey: previousKey, recentObjects: recentObjects,
      recentProperties: recentProperties, recentScopes: recentScopes, recentStacks: recentStacks)
    let result = storage.withUnsafeMutableBufferPointer { body($0, &cursor) }
    itemByteCount = cursor.items
    timeByteCount = cursor.times
    _eventCount = cursor.events
    lastTime = cursor.lastTime
    statedObject = cursor.statedObject
    statedProperty = cursor.statedProperty
    statedScope = cursor.statedScope
    statedStack = cursor.statedStack
    previousObject = cursor.previousObject
    previousKey = cursor.previousKey
    return result
  }

  /// Makes `stack` the stated stack: stated already in this chunk (`recentStacks`), or stated now.
  @inlinable @inline(__always)
  mutating func stateStack(_ stack: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps) {
    if isRecent(stack: stack) {
      statedStack = stack
    } else {
      defineStackAlone(stack, definitions, stamps)
    }
  }

  @inlinable @inline(__always)
  func isRecent(stack: UInt32) -> Bool {
    recentStacks.0 == stack || recentStacks.1 == stack || recentStacks.2 == stack || recentStacks.3 == stack
  }

  /// Notes `stack` as stated in this chunk: remembered once (`define` states a stack it may already remember, and
  /// a copy would push out another one).
  @usableFromInline mutating func noteStatedStack(_ stack: UInt32) {
    statedStack = stack
    if !isRecent(stack: stack) { recentStacks = (stack, recentStacks.0, recentStacks.1, recentStacks.2) }
  }

  /// Whether the triple is one of `recentObjects`' (stated in full in this chunk).
  @inlinable @inline(__always)
  func isRecent(object: UInt32, key: UInt32, scope: UInt32) -> Bool {
    (recentObjects.0 == object && recentProperties.0 == key && recentScopes.0 == scope)
      || (recentObjects.1 == object && recentProperties.1 == key && recentScopes.1 == scope)
      || (recentObjects.2 == object && recentProperties.2 == key && recentScopes.2 == scope)
      || (recentObjects.3 == object && recentProperties.3 == key && recentScopes.3 == scope)
  }

  /// Kinds whose `aux` is the type of their object (stated by the object's definition): access, willSet, didSet
  /// and objectFreed (kinds 1, 2, 3 and 5), tested as bits of one mask.
  @inlinable @inline(__always)
  static func carriesObjectType(_ kind: UInt8) -> Bool {
    kind < 8 && (0b0010_1110 as UInt8) & (1 << kind) != 0
  }

  /// States the stack of an event whose object, property and scope the chunk has stated (a write's, whose didSet and
  /// reads carry none).
  @usableFromInline @inline(never)
  mutating func defineStackAlone(
    _ stack: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps
  ) {
    var bytes: [UInt8] = []
    defineStack(stack, definitions, stamps, into: &bytes)
    if !bytes.isEmpty { write(bytes) }
    noteStatedStack(stack)
  }

  @usableFromInline @inline(never)
  mutating func define(
    kind: UInt8, object: UInt32, key: UInt32, scope: UInt32, aux: UInt32, stack: UInt32,
    _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps
  ) {
    guard let kind = EventKind(rawValue: kind) else { return }
    var bytes: [UInt8] = []
    switch kind {
    case .access, .willSet, .didSet, .objectCreated, .objectFreed:
      if object != 0, aux != 0, stamps.mark(.object, object, generation) {
        defineType(aux, definitions, stamps, into: &bytes)
        bytes.append(DefinitionTag.object.rawValue)
        bytes.appendVarint(object)
        bytes.appendVarint(aux)
      }
      if key != 0 { defineProperty(key, definitions, stamps, into: &bytes) }
    case .trackingFired:
      if key != 0 { defineProperty(key, definitions, stamps, into: &bytes) }
    case .scopeBegin:
      if key != 0 { defineLabel(key, definitions, stamps, into: &bytes) }
    case .observationsRun:
      if aux != 0 { defineType(aux, definitions, stamps, into: &bytes) }
    case .scopeEnd, .trackingInstalled, .trackingCancelled, .observationsEnd, .objectBound:
      break
    }
    if scope != 0 { defineScope(scope, definitions, stamps, into: &bytes) }
    if stack != 0 { defineStack(stack, definitions, stamps, into: &bytes) }
    if !bytes.isEmpty { write(bytes) }
    // Remember what is now stated, for `append`'s fast path: an object counts once its type was given with it.
    if Self.carriesObjectType(kind.rawValue) && object != 0 && aux != 0 {
      statedObject = object
      statedProperty = key
      statedScope = scope
      recentObjects = (object, recentObjects.0, recentObjects.1, recentObjects.2)
      recentProperties = (key, recentProperties.0, recentProperties.1, recentProperties.2)
      recentScopes = (scope, recentScopes.0, recentScopes.1, recentScopes.2)
    }
    if stack != 0 { noteStatedStack(stack) }
  }

  private func defineStack(
    _ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps, into bytes: inout [UInt8]
  ) {
    guard stamps.mark(.stack, id, generation) else { return }
    let frames = definitions.stack(id)
    bytes.append(DefinitionTag.stack.rawValue)
    bytes.appendVarint(id)
    bytes.appendVarint(frames.count)
    for frame in frames { bytes.appendVarint(frame) }
  }

  private func defineType(
    _ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps, into bytes: inout [UInt8]
  ) {
    guard id != 0, stamps.mark(.type, id, generation) else { return }
    bytes.append(DefinitionTag.type.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(definitions.typeName(id))
  }

  private func defineProperty(
    _ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps, into bytes: inout [UInt8]
  ) {
    guard stamps.mark(.property, id, generation), let property = definitions.property(id) else { return }
    defineType(property.rootType, definitions, stamps, into: &bytes)
    bytes.append(DefinitionTag.property.rawValue)
    bytes.appendVarint(id)
    bytes.appendVarint(property.rootType)
    bytes.appendString(property.keyPathDescription)
    bytes.appendVarint(property.getterAddress)
  }

  private func defineLabel(
    _ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps, into bytes: inout [UInt8]
  ) {
    guard stamps.mark(.label, id, generation) else { return }
    // The stack a call-site label is named from at stop: stated with the label, since no event need carry it
    // (`obstrace symbolize` names the label from it when the process was killed before stop).
    let stack = definitions.labelStack(id)
    if stack != 0 { defineStack(stack, definitions, stamps, into: &bytes) }
    bytes.append(DefinitionTag.label.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(definitions.label(id))
  }

  private func defineScope(
    _ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps, into bytes: inout [UInt8]
  ) {
    guard stamps.mark(.scope, id, generation), let scope = definitions.scope(id) else { return }
    defineLabel(scope.label, definitions, stamps, into: &bytes)
    bytes.append(DefinitionTag.scope.rawValue)
    bytes.appendVarint(id)
    bytes.append(scope.kind.rawValue)
    bytes.appendVarint(scope.label)
    bytes.appendVarint(scope.parent)
  }
}

/// Which chunk last stated each definition, shared by the flusher's open chunks. A definition is restated when
/// the chunk that last stated it is not the one being written; interleaved chunks may state one twice, which is
/// harmless.
///
/// Used by the flusher's thread only; its storage is exempt from dynamic exclusivity checks (each costs a
/// thread-local look-up), which holds because no call here reenters it.
public final class DefinitionStamps {
  enum Space: Int, CaseIterable { case type, property, label, object, stack, scope }
  @exclusivity(unchecked) private var stamps: [[UInt32]] = Array(repeating: [], count: Space.allCases.count)
  @exclusivity(unchecked) private var generation: UInt32 = 0

  public init() {}

  func nextGeneration() -> UInt32 {
    generation &+= 1
    if generation == 0 { generation = 1 }
    return generation
  }

  /// Records that `id` is stated in chunk `generation`; true when it was not already.
  func mark(_ space: Space, _ id: UInt32, _ generation: UInt32) -> Bool {
    let index = Int(id)
    if index >= stamps[space.rawValue].count {
      stamps[space.rawValue].append(contentsOf: repeatElement(0, count: index + 1 - stamps[space.rawValue].count + 64))
    }
    if stamps[space.rawValue][index] == generation { return false }
    stamps[space.rawValue][index] = generation
    return true
  }
}
