/// Turns events chunks into events, keeping the definitions they state as it goes: everything decoding needs, owned
/// by one thread (the read-ahead thread of `ChunkPipeline`, or the reader's own for a small file).
///
/// The thread that consumes the events keeps its own copy of the definitions (`TraceReader.definitions`), which must
/// be what they were when each chunk was decoded, not what the decoder, chunks ahead, knows by then. So each decoded
/// chunk lists the definitions it changed, in order, and the consumer applies them before it passes the chunk's
/// events on. Chunks restate what their events use, and a restatement that changes nothing is left out of the list:
/// the consumer's copy pays only for what is new.
struct ChunkDecoder: Sendable {
  /// One chunk, decoded.
  struct Decoded: Sendable {
    /// The chunk's events; nil when the chunk is malformed (all its events are lost, `damage` says why).
    var chunk: EventChunk?
    var damage: TraceDamage?
    /// The definitions the chunk stated that were new or changed, in order, up to where a malformed chunk failed
    /// (definitions are facts, kept as they come, even from a chunk whose events are lost).
    var definitions: [TraceDefinitions.Entry] = []
    /// The budget once the chunk was decoded.
    var budget: DefinitionBudget
    /// Events of the chunk that name an id no definition states, and the first of those references.
    var unknownIDEvents = 0
    var firstUnknownID: String?
    /// Definitions of the chunk that give an id already defined another meaning, and the first of them.
    var redefinitions = 0
    var firstRedefinition: String?
  }

  private(set) var definitions: TraceDefinitions
  private(set) var budget: DefinitionBudget
  /// The chunk being decoded's definitions that contradict an earlier one (`define`).
  private var redefinitions = 0
  private var firstRedefinition: String?
  /// Per thread, the least number its next chunk may have: a thread's chunks are written once each, in order.
  private var nextSequence: [UInt32: UInt64] = [:]

  /// Damage for `chunk` when its thread's chunks read before it include its number or a later one: a copy of a chunk
  /// (a file put together from pieces, a chunk repeated), whose events would be counted twice; nil otherwise, the
  /// chunk then noted. tryout14's H1: a trace whose one events chunk was repeated 300 times read as complete, every
  /// count × 300.
  mutating func repeated(_ chunk: EventChunk) -> TraceDamage? {
    let next = nextSequence[chunk.thread] ?? 0
    guard chunk.sequence >= next else {
      return TraceDamage(
        offset: chunk.offset,
        message: "T\(chunk.thread)'s chunk #\(chunk.sequence) again, after its chunk #\(next - 1) (a thread writes each "
          + "chunk once, in order)" + TraceDamage.copyEnding)
    }
    nextSequence[chunk.thread] = chunk.sequence &+ 1
    return nil
  }
  /// Where the chunks' event blocks come from and go back to: the blocks of the chunks consumed are used again.
  let pool = EventBlockPool(limit: EventBlockPool.defaultLimit)

  init(definitions: TraceDefinitions, budget: DefinitionBudget) {
    self.definitions = definitions
    self.budget = budget
  }

  /// Decodes an events chunk.
  mutating func decode(_ chunk: TraceReader.Chunk) -> Decoded {
    // Events go to an array of the chunk's own, so that a malformed tail costs the chunk's events; definitions are
    // facts and are kept as they come (copying the tables per chunk would cost as much as the objects they hold).
    var failure: CursorError?
    var unknown = UnknownIDs()
    redefinitions = 0
    firstRedefinition = nil
    var stated: [TraceDefinitions.Entry] = []
    let decoded: EventChunk? = chunk.payload.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      do {
        let thread = try cursor.readVarint32()
        guard thread != TraceFormat.reservedThread else { throw CursorError.reservedThread }
        let osThread = Int32(bitPattern: try cursor.readVarint32())
        let sequence = try cursor.readVarint()
        let dropped = try cursor.readVarint()
        let firstTime = try cursor.readVarint()
        let flags = try cursor.readByte()
        var result = EventChunk(
          offset: chunk.offset, thread: thread, osThreadID: osThread, sequence: sequence,
          droppedSinceLastChunk: dropped,
          firstTime: firstTime, threadEnded: flags & ChunkFlags.threadEnded != 0, events: EventBuffer())
        // Version 2: the time deltas in a column after the items, whose length follows the flags.
        let timesApart = flags & ChunkFlags.timesApart != 0
        var times = ByteCursor(UnsafeRawBufferPointer(start: nil, count: 0))
        if timesApart {
          let itemsLength = try cursor.readVarint()
          guard itemsLength <= UInt64(raw.count - cursor.offset) else { throw CursorError.malformed }
          let itemsEnd = cursor.offset + Int(itemsLength)
          times = ByteCursor(UnsafeRawBufferPointer(rebasing: raw[itemsEnd...]))
          var items = ByteCursor(UnsafeRawBufferPointer(rebasing: raw[..<itemsEnd]))
          items.offset = cursor.offset
          cursor = items
        }
        var time = firstTime
        var lastObject: UInt32 = 0
        var lastObjectType: UInt32 = 0
        // The previous event's object and key, for `EventMask.sameObjectAndKey`.
        var previousObject: UInt32 = 0
        var previousKey: UInt32 = 0
        // The last type an object's definition named that was found defined (types are never forgotten).
        var definedType: UInt32?
        // An event takes 3 bytes of the payload or more, so the block is taken with room for every event and they
        // are written in place, one comparison an event: Array.append was a call an event (≈ 35 instructions, not
        // inlined into this loop), and the room it reserved grew by copies. The block comes from the pool and goes
        // back to it when the chunk's events are done with (or now, if the chunk is malformed).
        let storage = EventStorage(capacity: raw.count / 3 + 1, pool: pool)
        let room = storage.capacity
        let base = storage.base
        var count = 0
        do {
          while !cursor.isAtEnd {
            let tag = try cursor.readByte()
            if tag == DefinitionTag.object.rawValue {
              // A chunk restates the object of each of its events (a many-object trace: one per event or two):
              // decoded in place, and a restatement that changes nothing is passed over without an entry.
              let serial = try cursor.readVarint32()
              let type = try cursor.readVarint32()
              if definitions.objects[serial] != type, let entry = try define(.object(serial, type: type)) {
                stated.append(entry)
              }
              if type != definedType {
                // The writer states a type before the first object of that type.
                if definitions.types[type] == nil { unknown.note("type", type) } else { definedType = type }
              }
              // Its events follow (the writer states an object before its first event in the chunk): their type is
              // this one, now in the definitions, and is not looked up again.
              lastObject = serial
              lastObjectType = type
              continue
            }
            if tag == DefinitionTag.scope.rawValue {
              // A chunk restates the scopes and labels its events use (a many-object trace: one scope a run, and
              // runs follow one another): read in place, and a restatement that changes nothing is passed over.
              let id = try cursor.readVarint32()
              guard let kind = ScopeKind(rawValue: try cursor.readByte()) else { throw CursorError.malformed }
              let label = try cursor.readVarint32()
              let scope = ScopeDefinition(kind: kind, label: label, parent: try cursor.readVarint32())
              if definitions.scopes[id] != scope, let entry = try define(.scope(id, scope)) { stated.append(entry) }
              lastObject = 0
              continue
            }
            if tag == DefinitionTag.label.rawValue {
              let id = try cursor.readVarint32()
              let text = try cursor.readStringBytes()
              if !Self.equal(definitions.labels[id], text),
                let entry = try define(.label(id, String(decoding: text, as: UTF8.self)))
              {
                stated.append(entry)
              }
              lastObject = 0
              continue
            }
            if tag >= 0x80 {
              let entry = try Self.decodeDefinition(tag, &cursor)
              if let entry = try define(entry) { stated.append(entry) }
              if case .object(_, let type) = entry, definitions.types[type] == nil {
                // The writer states a type before the first object of that type.
                unknown.note("type", type)
              }
              lastObject = 0
              continue
            }
            guard let kind = Self.eventKind(tag) else { throw CursorError.malformed }
            let flags = try cursor.readByte()
            let mask = try cursor.readByte()
            if mask & EventMask.sameTime == 0 {
              let delta = timesApart ? try times.readVarint() : try cursor.readVarint()
              let (sum, overflow) = time.addingReportingOverflow(delta)
              if overflow { throw CursorError.timeOverflow }
              time = sum
            }
            let depth = mask & EventMask.depth != 0 ? try cursor.readVarint() : 0
            let object: UInt32
            let key: UInt32
            if mask & EventMask.sameObjectAndKey != 0 {
              // The writer never names a field it says is repeated.
              if mask & (EventMask.object | EventMask.key) != 0 { throw CursorError.malformed }
              object = previousObject
              key = previousKey
            } else {
              object = mask & EventMask.object != 0 ? try cursor.readVarint32() : 0
              key = mask & EventMask.key != 0 ? try cursor.readVarint32() : 0
            }
            previousObject = object
            previousKey = key
            let scope = mask & EventMask.scope != 0 ? try cursor.readVarint32() : 0
            var aux = mask & EventMask.aux != 0 ? try cursor.readVarint32() : 0
            let stack = mask & EventMask.stack != 0 ? try cursor.readVarint32() : 0
            if aux == 0, object != 0, ChunkEncoder.carriesObjectType(tag) {
              // Runs of events about one object are the rule: look its type up once per run.
              if object != lastObject {
                lastObject = object
                if let type = definitions.objects[object] {
                  lastObjectType = type
                } else if tag == EventKind.objectFreed.rawValue {
                  // A registrar that recorded no event was never bound to an object: its free has no type to state.
                  lastObject = 0
                  lastObjectType = 0
                } else {
                  lastObjectType = 0
                  unknown.note("object", object)
                }
              }
              aux = lastObjectType
            }
            // Checked only when the ids differ from the last ones checked: passing `definitions` copies the tables.
            if unknown.isNew(kind: kind, key: key, stack: stack) {
              check(&unknown, kind: kind, key: key, stack: stack)
            }
            // Never false (3 bytes an event at least); checked, not trusted.
            guard count < room else { throw CursorError.malformed }
            (base + count).initialize(
              to: TraceEvent(
                kind: kind, flags: flags, thread: thread, time: time, depth: UInt16(truncatingIfNeeded: depth),
                object: object, key: key, scope: scope, aux: aux, stack: stack))
            count += 1
          }
        }
        storage.count = count
        result.events = EventBuffer(storage: storage)
        // Every delta of the column belongs to an event.
        if !times.isAtEnd { throw CursorError.malformed }
        return result
      } catch {
        failure = error as? CursorError
        return nil
      }
    }
    var result = Decoded(chunk: decoded, definitions: stated, budget: budget)
    result.redefinitions = redefinitions
    result.firstRedefinition = firstRedefinition
    guard decoded != nil else {
      let message =
        switch failure {
        case .overBudget:
          "a chunk's definitions pass what the file's size justifies (\(budget.allowance) bytes); skipped"
        case .timeOverflow: "an event's time overflows 64 bits; chunk skipped"
        case .reservedThread:
          "a chunk names thread \(TraceFormat.reservedThread), which no recorder writes (2^32-1); skipped"
        default: "a chunk's events are malformed; skipped"
        }
      result.damage = TraceDamage(offset: chunk.offset, message: message)
      return result
    }
    if let first = unknown.first {
      result.unknownIDEvents = unknown.events
      result.firstUnknownID = "\(first.space) #\(first.id)"
    }
    return result
  }

  /// `EventKind(rawValue:)`, inlined: the synthesized initializer is a call per event (≈ 9 instructions).
  @inline(__always)
  static func eventKind(_ tag: UInt8) -> EventKind? {
    switch tag {
    case 1: .access
    case 2: .willSet
    case 3: .didSet
    case 4: .objectCreated
    case 5: .objectFreed
    case 6: .scopeBegin
    case 7: .scopeEnd
    case 8: .trackingInstalled
    case 9: .trackingFired
    case 10: .trackingCancelled
    case 11: .observationsRun
    case 12: .observationsEnd
    case 13: .objectBound
    default: nil
    }
  }

  /// `unknown.check` against the decoder's definitions, read in place (passed as an argument, the definitions
  /// were copied out of the decoder, retaining each of their tables, per call).
  private func check(_ unknown: inout UnknownIDs, kind: EventKind, key: UInt32, stack: UInt32) {
    unknown.check(kind: kind, key: key, stack: stack, definitions)
  }

  /// Charges `entry` to the budget and puts it in the definitions: an id stated again costs nothing (chunks restate
  /// what their events use), a new one its size. Returns the entry when it changed the definitions, nil when it
  /// restated one unchanged.
  ///
  /// A recorder states each id with one meaning for the whole trace (an id is a serial, never given twice); one
  /// stated again with another (type #1 `Shop.A`, then `Shop.B`) comes from a damaged or forged file, and the
  /// events of that id are named two ways (the report's tables by the last meaning, the timeline by the names it
  /// printed first: a fresh-clone try-out's J9). It is applied, as before, and counted (`redefinitions`):
  /// the report says the trace is inconsistent, and check and baseline refuse it.
  private mutating func define(_ entry: TraceDefinitions.Entry) throws(CursorError) -> TraceDefinitions.Entry? {
    var contradiction: String?
    switch entry {
    case .type(let id, let name):
      let old = definitions.types[id]
      try budget.charge(old: old?.utf8.count, new: name.utf8.count)
      if old == name { return nil }
      if let old { contradiction = "type #\(id): \(Self.quoted(old)), then \(Self.quoted(name))" }
    case .property(let id, let property):
      let old = definitions.properties[id]
      try budget.charge(old: old?.keyPathDescription.utf8.count, new: property.keyPathDescription.utf8.count)
      if old == property { return nil }
      if let old {
        contradiction =
          old.rootType != property.rootType
          ? "property #\(id): of type #\(old.rootType), then of type #\(property.rootType)"
          : old.keyPathDescription != property.keyPathDescription
            ? "property #\(id): \(Self.quoted(old.keyPathDescription)), then \(Self.quoted(property.keyPathDescription))"
            : "property #\(id): its getter at 0x\(String(old.getterAddress, radix: 16)), then at "
              + "0x\(String(property.getterAddress, radix: 16))"
      }
    case .label(let id, let text):
      let old = definitions.labels[id]
      try budget.charge(old: old?.utf8.count, new: text.utf8.count)
      if old == text { return nil }
      if let old { contradiction = "label #\(id): \(Self.quoted(old)), then \(Self.quoted(text))" }
    case .object(let serial, let type):
      let old = definitions.objects[serial]
      if old == nil { try budget.charge(new: 0) }
      if old == type { return nil }
      if let old { contradiction = "object #\(serial): of type #\(old), then of type #\(type)" }
    case .stack(let id, let frames):
      let old = definitions.stacks[id]
      try budget.charge(old: old.map { $0.count * 8 }, new: frames.count * 8)
      if old == frames { return nil }
      if let old { contradiction = "stack #\(id): \(old.count) frames, then \(frames.count) others" }
    case .scope(let id, let scope):
      let old = definitions.scopes[id]
      if old == nil { try budget.charge(new: 0) }
      if old == scope { return nil }
      if let old {
        contradiction =
          "scope #\(id): \(old.kind) of label #\(old.label) in scope #\(old.parent), then \(scope.kind) of label "
          + "#\(scope.label) in scope #\(scope.parent)"
      }
    }
    if let contradiction {
      redefinitions += 1
      if firstRedefinition == nil { firstRedefinition = contradiction }
    }
    definitions.apply(entry)
    return entry
  }

  /// A name a trace states, for a message: its controls escaped, cut at 80 characters.
  private static func quoted(_ text: String) -> String {
    let escaped = TraceDefinitions.escapingControls(text)
    return "\"" + (escaped.count > 80 ? escaped.prefix(80) + "…" : escaped) + "\""
  }

  /// Whether `string`'s UTF-8 is `bytes` (a restated name, compared without making a string of it).
  @inline(__always)
  static func equal(_ string: String?, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let string, string.utf8.count == bytes.count else { return false }
    return string.utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).elementsEqual(bytes) }
      ?? string.utf8.elementsEqual(bytes)
  }

  /// Reads one definition, whose tag was just read.
  static func decodeDefinition(_ tag: UInt8, _ cursor: inout ByteCursor) throws(CursorError) -> TraceDefinitions.Entry {
    switch DefinitionTag(rawValue: tag) {
    case .type:
      let id = try cursor.readVarint32()
      return .type(id, try cursor.readString())
    case .property:
      let id = try cursor.readVarint32()
      let root = try cursor.readVarint32()
      let description = try cursor.readString()
      let getter = try cursor.readVarint()
      return .property(id, PropertyDefinition(rootType: root, keyPathDescription: description, getterAddress: getter))
    case .label:
      let id = try cursor.readVarint32()
      // Kept as given (a lookup takes the name as given); printed through `TraceDefinitions.printable`.
      return .label(id, String(decoding: try cursor.readStringBytes(), as: UTF8.self))
    case .object:
      let serial = try cursor.readVarint32()
      return .object(serial, type: try cursor.readVarint32())
    case .stack:
      let id = try cursor.readVarint32()
      let count = try cursor.readVarint()
      guard count <= UInt64(TraceFormat.maximumStackFrames) else { throw .malformed }
      var frames: [UInt64] = []
      frames.reserveCapacity(Int(count))
      for _ in 0..<count { frames.append(try cursor.readVarint()) }
      return .stack(id, frames)
    case .scope:
      let id = try cursor.readVarint32()
      guard let kind = ScopeKind(rawValue: try cursor.readByte()) else { throw .malformed }
      let label = try cursor.readVarint32()
      let parent = try cursor.readVarint32()
      return .scope(id, ScopeDefinition(kind: kind, label: label, parent: parent))
    case nil:
      throw .malformed
    }
  }
}

extension TraceDefinitions {
  /// One definition as a chunk states it.
  enum Entry: Sendable {
    case type(UInt32, String)
    case property(UInt32, PropertyDefinition)
    case label(UInt32, String)
    case object(UInt32, type: UInt32)
    case stack(UInt32, [UInt64])
    case scope(UInt32, ScopeDefinition)
  }

  /// Puts a definition in, as decoding it did.
  mutating func apply(_ entry: Entry) {
    switch entry {
    case .type(let id, let name): defineType(id, name)
    case .property(let id, let property): defineProperty(id, property)
    case .label(let id, let text): labels[id] = text
    case .object(let serial, let type): objects[serial] = type
    case .stack(let id, let frames): stacks[id] = frames
    case .scope(let id, let scope): defineScope(id, scope)
    }
  }
}

/// References in one chunk to a property, label, stack, object or type that no definition states. Runs of one
/// id are the rule, so the last id found defined is remembered and not looked up again.
struct UnknownIDs {
  var events = 0
  var first: (space: String, id: UInt32)?

  mutating func note(_ space: String, _ id: UInt32) {
    events += 1
    if first == nil { first = (space, id) }
  }

  private var lastProperty: UInt32 = 0
  private var lastLabel: UInt32 = 0
  private var lastStack: UInt32 = 0

  /// Whether `check` could find something new: a key or stack other than the last ones found defined.
  @inline(__always)
  func isNew(kind: EventKind, key: UInt32, stack: UInt32) -> Bool {
    if stack != 0 && stack != lastStack { return true }
    guard key != 0 else { return false }
    switch kind {
    case .access, .willSet, .didSet, .trackingFired: return key != lastProperty
    case .scopeBegin: return key != lastLabel
    default: return false
    }
  }

  mutating func check(kind: EventKind, key: UInt32, stack: UInt32, _ definitions: TraceDefinitions) {
    var missing: (String, UInt32)?
    if key != 0 {
      switch kind {
      case .access, .willSet, .didSet, .trackingFired:
        if key != lastProperty {
          if definitions.properties[key] != nil { lastProperty = key } else { missing = ("property", key) }
        }
      case .scopeBegin:
        if key != lastLabel {
          if definitions.labels[key] != nil { lastLabel = key } else { missing = ("label", key) }
        }
      default:
        break
      }
    }
    if stack != 0, stack != lastStack, missing == nil {
      if definitions.stacks[stack] != nil { lastStack = stack } else { missing = ("stack", stack) }
    }
    guard let missing else { return }
    note(missing.0, missing.1)
  }
}
