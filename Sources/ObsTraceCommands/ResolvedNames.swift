import ObsTraceAnalysis
import ObsTraceFormat

/// The names of a trace's ids, each resolved once and kept as bytes for the printers that name them on every line
/// (`dump`, `timeline`): an object's `Type#serial`, a type's, a property's and a label's name. A name is kept only
/// once the trace has defined its id, so it never freezes as unknown; until then it is worked out again each time.
/// The reader's definitions are looked at only for what is not kept yet (a trace repeats a few names millions of
/// times, and names 100 k objects a handful of times each).
final class ResolvedNames {
  let reader: TraceReader
  let arena = NameArena()
  private var objects = IDTable<NameSpan>()
  private var types = IDTable<NameSpan>()
  private var properties = IDTable<NameSpan>()
  /// A property's name without its type: `count` for `Model.count`.
  private var shortProperties = IDTable<NameSpan>()
  private var labels = IDTable<NameSpan>()

  init(reader: TraceReader) {
    self.reader = reader
  }

  /// Appends `Type#serial`.
  func appendObject(_ serial: UInt32, to writer: LineWriter) {
    if let span = objects[serial] { return writer.append(span, in: arena) }
    guard let type = reader.definitions.objects[serial] else {
      // Not defined (yet): what `typeName(ofObject:)` says of it.
      writer.append(contentsOf: "\(reader.definitions.typeName(ofObject: serial))#\(serial)")
      return
    }
    scratch.removeAll(keepingCapacity: true)
    if let span = typeSpan(type) {
      arena.withBytes(span) { scratch.append(contentsOf: $0) }
    } else {
      scratch.append(contentsOf: reader.definitions.typeName(type).utf8)
    }
    scratch.append(UInt8(ascii: "#"))
    scratch.append(contentsOf: String(serial).utf8)
    let span = arena.add(scratch)
    objects[serial] = span
    writer.append(span, in: arena)
  }

  /// Where a name is built before it is kept.
  private var scratch: [UInt8] = []

  /// A type's display name (`TraceDefinitions.typeName`) kept, or nil while the trace has not defined the type.
  private func typeSpan(_ id: UInt32) -> NameSpan? {
    if let span = types[id] { return span }
    let definitions = reader.definitions
    guard definitions.types[id] != nil || definitions.symbols.typeNames[id] != nil else { return nil }
    let span = arena.add(definitions.typeName(id))
    types[id] = span
    return span
  }

  /// Appends a type's display name.
  func appendType(_ id: UInt32, to writer: LineWriter) {
    if let span = typeSpan(id) { return writer.append(span, in: arena) }
    writer.append(contentsOf: reader.definitions.typeName(id))
  }

  /// Appends a property's display name, `Type.property`.
  func appendProperty(_ id: UInt32, to writer: LineWriter) {
    if let span = properties[id] { return writer.append(span, in: arena) }
    let definitions = reader.definitions
    let name = definitions.propertyName(id)
    guard definitions.properties[id] != nil else { return writer.append(contentsOf: name) }
    let span = arena.add(name)
    properties[id] = span
    writer.append(span, in: arena)
  }

  /// Appends a property's name without its type (what follows the first `.` of its display name).
  func appendShortProperty(_ id: UInt32, to writer: LineWriter) {
    if let span = shortProperties[id] { return writer.append(span, in: arena) }
    let definitions = reader.definitions
    let property = definitions.propertyName(id)
    let name = property.firstIndex(of: ".").map { String(property[property.index(after: $0)...]) } ?? property
    guard definitions.properties[id] != nil else { return writer.append(contentsOf: name) }
    let span = arena.add(name)
    shortProperties[id] = span
    writer.append(span, in: arena)
  }

  /// Appends a label's text.
  func appendLabel(_ id: UInt32, to writer: LineWriter) {
    if let span = labels[id] { return writer.append(span, in: arena) }
    let definitions = reader.definitions
    let name = definitions.labelName(id)
    guard definitions.labels[id] != nil else { return writer.append(contentsOf: name) }
    let span = arena.add(name)
    labels[id] = span
    writer.append(span, in: arena)
  }
}
