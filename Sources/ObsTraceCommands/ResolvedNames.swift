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
  private var objects = DenseTable<NameSpan>()
  private var types = DenseTable<NameSpan>()
  private var properties = DenseTable<NameSpan>()
  /// A property's name without its type: `count` for `Model.count`.
  private var shortProperties = DenseTable<NameSpan>()
  private var labels = DenseTable<NameSpan>()

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
    let typeName = typeName(type)
    var bytes = [UInt8]()
    bytes.reserveCapacity(typeName.count + 11)
    bytes.append(contentsOf: typeName)
    bytes.append(UInt8(ascii: "#"))
    bytes.append(contentsOf: String(serial).utf8)
    let span = arena.add(bytes)
    objects[serial] = span
    writer.append(span, in: arena)
  }

  /// A type's display name (`TraceDefinitions.typeName`), its bytes.
  private func typeName(_ id: UInt32) -> [UInt8] {
    if let span = types[id] { return arena.withBytes(span) { Array($0) } }
    let definitions = reader.definitions
    let bytes = Array(definitions.typeName(id).utf8)
    if definitions.types[id] != nil || definitions.symbols.typeNames[id] != nil { types[id] = arena.add(bytes) }
    return bytes
  }

  /// Appends a type's display name.
  func appendType(_ id: UInt32, to writer: LineWriter) {
    if let span = types[id] { return writer.append(span, in: arena) }
    writer.append(typeName(id))
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
