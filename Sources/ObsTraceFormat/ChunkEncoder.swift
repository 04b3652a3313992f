/// Builds the payload of one thread's events chunk: a small header, then events with delta timestamps, each
/// preceded by the definitions it uses that this chunk has not yet stated. Restating definitions per chunk is
/// what lets a reader decode the chunks after a damaged one.
public struct ChunkEncoder {
  /// The encoded definitions and events so far (without the chunk's header).
  public private(set) var bytes: [UInt8] = []
  public private(set) var eventCount = 0
  public let thread: UInt32
  public let osThreadID: Int32
  public let sequence: UInt64
  public let firstTime: UInt64
  private var lastTime: UInt64
  private let generation: UInt32

  /// Starts a chunk for `thread`; `sequence` numbers the thread's chunks from 0, and `firstTime` is the absolute
  /// time (nanoseconds since the recording started) that the first event's delta is taken from.
  public init(thread: UInt32, osThreadID: Int32, sequence: UInt64, firstTime: UInt64, stamps: DefinitionStamps) {
    self.thread = thread
    self.osThreadID = osThreadID
    self.sequence = sequence
    self.firstTime = firstTime
    self.lastTime = firstTime
    self.generation = stamps.nextGeneration()
    bytes.reserveCapacity(64 << 10)
  }

  /// The chunk's payload: its header (thread, OS thread id, sequence, events the thread dropped since its
  /// previous chunk, first time, flags), then the encoded items.
  public func payload(droppedSinceLastChunk: UInt64, threadEnded: Bool = false) -> [UInt8] {
    var payload: [UInt8] = []
    payload.reserveCapacity(bytes.count + 32)
    payload.appendVarint(thread)
    payload.appendVarint(UInt32(bitPattern: osThreadID))
    payload.appendVarint(sequence)
    payload.appendVarint(droppedSinceLastChunk)
    payload.appendVarint(firstTime)
    payload.append(threadEnded ? ChunkFlags.threadEnded : 0)
    payload.append(contentsOf: bytes)
    return payload
  }

  /// Appends one event, stating first any definition it needs.
  ///
  /// Layout: kind, flags, a presence mask, the time delta, then only the fields the mask names (depth, object,
  /// key, scope, aux, stack, in that order) that are not zero. An event about an object whose type the chunk has
  /// stated leaves `aux` (the type) out: the reader takes it from the object's definition.
  public mutating func append(
    kind: UInt8, flags: UInt8, time: UInt64, depth: UInt16, object: UInt32, key: UInt32, scope: UInt32, aux: UInt32,
    stack: UInt32, definitions: TraceDefinitionSource, stamps: DefinitionStamps
  ) {
    define(kind: kind, object: object, key: key, scope: scope, aux: aux, stack: stack, definitions, stamps)
    let time = max(time, lastTime)
    let auxIsObjectType = object != 0 && Self.carriesObjectType(kind)
    var mask: UInt8 = 0
    if depth != 0 { mask |= 1 }
    if object != 0 { mask |= 2 }
    if key != 0 { mask |= 4 }
    if scope != 0 { mask |= 8 }
    if aux != 0 && !auxIsObjectType { mask |= 16 }
    if stack != 0 { mask |= 32 }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
      var count = 0
      @inline(__always) func put(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
          buffer[count] = UInt8(truncatingIfNeeded: value) | 0x80
          count += 1
          value >>= 7
        }
        buffer[count] = UInt8(value)
        count += 1
      }
      buffer[0] = kind
      buffer[1] = flags
      buffer[2] = mask
      count = 3
      put(time - lastTime)
      if mask & 1 != 0 { put(UInt64(depth)) }
      if mask & 2 != 0 { put(UInt64(object)) }
      if mask & 4 != 0 { put(UInt64(key)) }
      if mask & 8 != 0 { put(UInt64(scope)) }
      if mask & 16 != 0 { put(UInt64(aux)) }
      if mask & 32 != 0 { put(UInt64(stack)) }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<count]))
    }
    lastTime = time
    eventCount += 1
  }

  /// Kinds whose `aux` is the type of their object (stated by the object's definition).
  @inline(__always)
  static func carriesObjectType(_ kind: UInt8) -> Bool {
    kind == EventKind.access.rawValue || kind == EventKind.willSet.rawValue || kind == EventKind.didSet.rawValue
      || kind == EventKind.objectFreed.rawValue
  }

  private mutating func define(
    kind: UInt8, object: UInt32, key: UInt32, scope: UInt32, aux: UInt32, stack: UInt32,
    _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps
  ) {
    guard let kind = EventKind(rawValue: kind) else { return }
    switch kind {
    case .access, .willSet, .didSet, .objectCreated, .objectFreed:
      if object != 0, aux != 0, stamps.mark(.object, object, generation) {
        defineType(aux, definitions, stamps)
        bytes.append(DefinitionTag.object.rawValue)
        bytes.appendVarint(object)
        bytes.appendVarint(aux)
      }
      if key != 0 { defineProperty(key, definitions, stamps) }
    case .trackingFired:
      if key != 0 { defineProperty(key, definitions, stamps) }
    case .scopeBegin:
      if key != 0 { defineLabel(key, definitions, stamps) }
    case .observationsRun:
      if aux != 0 { defineType(aux, definitions, stamps) }
    case .scopeEnd, .trackingInstalled, .trackingCancelled, .observationsEnd:
      break
    }
    if scope != 0 { defineScope(scope, definitions, stamps) }
    if stack != 0, stamps.mark(.stack, stack, generation) {
      let frames = definitions.stack(stack)
      bytes.append(DefinitionTag.stack.rawValue)
      bytes.appendVarint(stack)
      bytes.appendVarint(frames.count)
      for frame in frames { bytes.appendVarint(frame) }
    }
  }

  private mutating func defineType(_ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps) {
    guard id != 0, stamps.mark(.type, id, generation) else { return }
    bytes.append(DefinitionTag.type.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(definitions.typeName(id))
  }

  private mutating func defineProperty(_ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps) {
    guard stamps.mark(.property, id, generation), let property = definitions.property(id) else { return }
    defineType(property.rootType, definitions, stamps)
    bytes.append(DefinitionTag.property.rawValue)
    bytes.appendVarint(id)
    bytes.appendVarint(property.rootType)
    bytes.appendString(property.keyPathDescription)
    bytes.appendVarint(property.getterAddress)
  }

  private mutating func defineLabel(_ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps) {
    guard stamps.mark(.label, id, generation) else { return }
    bytes.append(DefinitionTag.label.rawValue)
    bytes.appendVarint(id)
    bytes.appendString(definitions.label(id))
  }

  private mutating func defineScope(_ id: UInt32, _ definitions: TraceDefinitionSource, _ stamps: DefinitionStamps) {
    guard stamps.mark(.scope, id, generation), let scope = definitions.scope(id) else { return }
    defineLabel(scope.label, definitions, stamps)
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
public final class DefinitionStamps {
  enum Space: Int, CaseIterable { case type, property, label, object, stack, scope }
  private var stamps: [[UInt32]] = Array(repeating: [], count: Space.allCases.count)
  private var generation: UInt32 = 0

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
