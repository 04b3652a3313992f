import ObsTraceAnalysis
import ObsTraceFormat

/// The names of a trace's ids, each resolved once and kept as bytes for the printers that name them on every line
/// (`dump`, `timeline`): an object's `Type#serial`, a type's, a property's and a label's name; and how a write was
/// made, by stack. A name is kept only
/// once the trace has defined its id, so it never freezes as unknown; until then it is worked out again each time.
/// The reader's definitions are looked at only for what is not kept yet (a trace repeats a few names millions of
/// times, and names 100 k objects a handful of times each).
final class ResolvedNames {
  let reader: TraceReader
  let arena = NameArena()
  /// Objects' `Type#serial`, the recent ones (`ObjectNames`): a trace names millions of short-lived objects, and a
  /// name kept for each grew the timeline by ≈ 35 bytes an object for as long as it ran.
  @exclusivity(unchecked) private var objects = ObjectNames()
  /// The bytes of those names, apart from the others' (emptied as they fill): a `let` of its own, so that a line
  /// reaches it without a retain (through `objects` it cost one, ≈ 25 instructions a line on the loop's timeline).
  let objectArena = NameArena()
  @exclusivity(unchecked) private var types = DenseTable<NameSpan>()
  @exclusivity(unchecked) private var properties = DenseTable<NameSpan>()
  /// A property's name without its type: `count` for `Model.count`.
  @exclusivity(unchecked) private var shortProperties = DenseTable<NameSpan>()
  @exclusivity(unchecked) private var labels = DenseTable<NameSpan>()

  init(reader: TraceReader) {
    self.reader = reader
  }

  /// Objects' names made, and the slots and bytes they are kept in (for tests).
  var objectNamesMade: Int { objects.made }
  var objectSlots: Int { objects.slotCount }
  var objectNameBytes: Int { objectArena.byteCount }

  /// Appends `Type#serial`, or `<type not yet recorded>#serial` before the trace has defined the object.
  func appendObject(_ serial: UInt32, to writer: LineWriter) {
    if let span = objects[serial] { return writer.append(span, in: objectArena) }
    guard let type = reader.withDefinitions({ $0.objects[serial] }) else {
      // The recorder defines an object's type at its first read or write, so its creation (a registrar made in
      // an init, the object not yet known to it) is read before that: the type is not unknown, only not yet in
      // the file. (An object the trace never defines is an inconsistency the report counts.)
      writer.append("<type not yet recorded>#")
      writer.appendDecimal(serial)
      return
    }
    // Built in the arena, from the type's name kept there: no String per object (a trace may name 100 k objects
    // a handful of times each).
    let span =
      if let type = typeSpan(type) {
        objects.add(serial, in: objectArena) { names in
          arena.withBytes(type) { names.add($0, UInt8(ascii: "#"), serial) }
        }
      } else {
        objects.add(serial, in: objectArena) {
          $0.add(reader.withDefinitions { $0.typeName(type) }.utf8, UInt8(ascii: "#"), serial)
        }
      }
    writer.append(span, in: objectArena)
  }

  /// A type's display name (`TraceDefinitions.typeName`) kept, or nil while the trace has not defined the type.
  private func typeSpan(_ id: UInt32) -> NameSpan? {
    if let span = types[id] { return span }
    let name = reader.withDefinitions { definitions -> String? in
      guard definitions.types[id] != nil || definitions.symbols.typeNames[id] != nil else { return nil }
      return definitions.typeName(id)
    }
    guard let name else { return nil }
    let span = arena.add(name)
    types[id] = span
    return span
  }

  /// Appends a type's display name.
  func appendType(_ id: UInt32, to writer: LineWriter) {
    if let span = typeSpan(id) { return writer.append(span, in: arena) }
    writer.append(contentsOf: reader.withDefinitions { $0.typeName(id) })
  }

  /// Appends a property's display name, `Type.property`.
  func appendProperty(_ id: UInt32, to writer: LineWriter) {
    if let span = properties[id] { return writer.append(span, in: arena) }
    appendName(id, cachedIn: &properties, defined: { $0.properties[id] != nil }, to: writer) {
      $0.propertyName(id)
    }
  }

  /// Appends a property's name without its type (`TraceDefinitions.shortPropertyName`).
  func appendShortProperty(_ id: UInt32, to writer: LineWriter) {
    if let span = shortProperties[id] { return writer.append(span, in: arena) }
    appendName(id, cachedIn: &shortProperties, defined: { $0.properties[id] != nil }, to: writer) {
      $0.shortPropertyName(id)
    }
  }

  /// Appends a label's text.
  func appendLabel(_ id: UInt32, to writer: LineWriter) {
    if let span = labels[id] { return writer.append(span, in: arena) }
    appendName(id, cachedIn: &labels, defined: { $0.labels[id] != nil }, to: writer) { $0.labelName(id) }
  }

  /// The descriptions of scope kinds (by raw value, below 8), write kinds (from 8) and event kinds (from 16, by raw
  /// value), kept as bytes: a line names one or two, and a `String`'s UTF-8 costs more than the copy.
  @exclusivity(unchecked) private var kindNames = [NameSpan?](repeating: nil, count: 32)

  /// Appends an event kind's description.
  func appendDescription(of kind: EventKind, to writer: LineWriter) {
    appendKindName(16 + Int(kind.rawValue & 15), kind.description, to: writer)
  }

  /// Appends a scope kind's description.
  func appendDescription(of kind: ScopeKind, to writer: LineWriter) {
    appendKindName(Int(kind.rawValue & 7), kind.description, to: writer)
  }

  /// Appends a write kind's description.
  func appendDescription(of kind: WriteKind, to writer: LineWriter) {
    appendKindName(8 + kind.index, kind.description, to: writer)
  }

  @inline(__always)
  private func appendKindName(_ index: Int, _ description: @autoclosure () -> String, to writer: LineWriter) {
    if let span = kindNames[index] { return writer.append(span, in: arena) }
    let span = arena.add(description())
    kindNames[index] = span
    writer.append(span, in: arena)
  }

  /// By stack: how a write through the registrar's `withMutation` was made (the setter or an explicit
  /// `withMutation`), which takes a walk over the stack's frames.
  @exclusivity(unchecked) private var withMutationKinds = DenseTable<WriteKind>()

  /// How a write was made: from its willSet's flags, and for a write through `withMutation` from its stack, once.
  func writeKind(flags: UInt8, stack: UInt32) -> WriteKind {
    if flags & EventFlags.willSetDirect != 0 { return .modify }
    guard flags & EventFlags.willSetInWithMutation != 0 else { return .unknown }
    return withMutationKinds.value(stack) {
      let willSet = TraceEvent(kind: .willSet, flags: flags, thread: 0, time: 0, stack: stack)
      // No stack (backtraces off) is an answer that no later definition changes.
      return reader.withDefinitions { ($0.writeKind(of: willSet), stack == 0 || $0.stacks[stack] != nil) }
    }
  }

  /// Appends the name `cache` keeps for `id`, or works it out with `name`, keeping it once the trace has defined
  /// the id (until then it is worked out again each time, so it never freezes as unknown). The printers keep their
  /// sites this way too, by stack.
  func appendName(
    _ id: UInt32, cachedIn cache: inout DenseTable<NameSpan>, defined: (borrowing TraceDefinitions) -> Bool,
    to writer: LineWriter, _ name: (borrowing TraceDefinitions) -> String
  ) {
    if let span = cache[id] { return writer.append(span, in: arena) }
    // In place (`withDefinitions`): a copy of the definitions per name cost ≈ 950 instructions, as much as the
    // rest of resolving a label (the 100 k-object timeline resolves 10 k).
    let (text, isDefined) = reader.withDefinitions { (name($0), defined($0)) }
    guard isDefined else { return writer.append(contentsOf: text) }
    let span = arena.add(text)
    cache[id] = span
    writer.append(span, in: arena)
  }
}

/// The names of the recent objects (`Type#serial`) by serial, kept in an arena of their own: slots indexed by a
/// serial's low bits, which double (to `maximumSlots`) when two serials meet in one, and the arena emptied with the
/// slots when it passes `maximumBytes`. Bounded whatever the number of objects a trace names (a program that makes millions of
/// short-lived models), while a trace whose objects fit (serials are handed out in increasing order: those less
/// than `maximumSlots` apart never meet) still makes each name once. A name no longer kept is made again.
struct ObjectNames {
  static let maximumSlots = 1 << 17
  static let maximumBytes = 2 << 20

  /// An object's serial and its name (`count` 0: an empty slot; a name is never empty).
  struct Slot {
    var serial: UInt32
    var span: NameSpan
  }

  private var slots = [Slot](repeating: Slot(serial: 0, span: NameSpan(offset: 0, count: 0)), count: 1024)
  private var mask = 1023

  /// Slots, and names made (for tests).
  var slotCount: Int { slots.count }
  private(set) var made = 0

  /// The name kept for `serial`, if it is.
  subscript(serial: UInt32) -> NameSpan? {
    @inline(__always) get {
      let slot = slots[Int(serial) & mask]
      return slot.serial == serial && slot.span.count != 0 ? slot.span : nil
    }
  }

  /// Keeps the name `make` puts in `arena` (the names' own, always the same) as that of `serial`, and returns it.
  mutating func add(_ serial: UInt32, in arena: NameArena, _ make: (NameArena) -> NameSpan) -> NameSpan {
    if arena.byteCount >= Self.maximumBytes {
      for index in slots.indices { slots[index].span.count = 0 }
      arena.removeAll()
    }
    let span = make(arena)
    made += 1
    var index = Int(serial) & mask
    if slots[index].span.count != 0 && slots[index].serial != serial && slots.count < Self.maximumSlots {
      grow()
      index = Int(serial) & mask
    }
    slots[index] = Slot(serial: serial, span: span)
    return span
  }

  /// Twice the slots, each name kept moved to its place in them (of two that meet there, one is kept).
  private mutating func grow() {
    var grown = [Slot](repeating: Slot(serial: 0, span: NameSpan(offset: 0, count: 0)), count: 2 * slots.count)
    let grownMask = grown.count - 1
    for slot in slots where slot.span.count != 0 { grown[Int(slot.serial) & grownMask] = slot }
    slots = grown
    mask = grownMask
  }
}

extension DenseTable {
  /// The value kept for `id`; else what `make` works out, kept when `make` says the trace has defined what it
  /// rests on (until then it is worked out again each time, so that it never freezes as unknown).
  @inline(__always)
  mutating func value(_ id: UInt32, else make: () -> (value: Value, defined: Bool)) -> Value {
    if let value = self[id] { return value }
    let made = make()
    if made.defined { self[id] = made.value }
    return made.value
  }
}

extension WriteKind {
  /// Its place among the cases, for tables indexed by kind.
  fileprivate var index: Int {
    switch self {
    case .set: 0
    case .modify: 1
    case .withMutation: 2
    case .setOrWithMutation: 3
    case .unknown: 4
    }
  }
}
