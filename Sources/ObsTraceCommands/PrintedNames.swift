import ObsTraceAnalysis
import ObsTraceFormat

/// The forms in which the commands print names, read back where a command takes a name: what one command prints
/// for a scope, a property or an object, another accepts. A name the trace knows as it is written is always taken
/// as it is (a label may itself end in parentheses); the printed forms are tried only for a name it does not know.
enum PrintedNames {
  /// A scope's run as the timeline prints it: `ProgressView.body (#4)` or `ProgressView.body (tracking, #4)`.
  struct Run: Equatable {
    var label: String
    var run: UInt32
  }

  /// A property of one object as the timeline and `graph --per-object` print it: `Model#3.items`.
  struct ObjectProperty: Equatable {
    /// `Model.items`.
    var property: String
    var object: UInt32
    /// The type written before the `#` (`Model`): the object must be of that type.
    var type: String
  }

  /// An object as written: its serial and, when written as `Type#n`, the type it must have.
  struct NamedObject: Equatable {
    var object: UInt32
    /// Nil for a bare number (`3`, `#3`).
    var type: String?
  }

  /// `Label (#4)`, `Label (tracking, #4)` → the label and the run; nil for any other text.
  static func run(_ text: String) -> Run? {
    guard text.hasSuffix(")"), let open = text.range(of: " (", options: .backwards) else { return nil }
    let inside = text[open.upperBound..<text.index(before: text.endIndex)]
    let number = inside.split(separator: ", ").last ?? ""
    guard number.hasPrefix("#"), let run = UInt32(number.dropFirst()), !text[..<open.lowerBound].isEmpty else {
      return nil
    }
    return Run(label: String(text[..<open.lowerBound]), run: run)
  }

  /// `Model#3.items` → `Model.items` of object 3 (the first `#` followed by digits and a dot: a property name without
  /// symbols, `Model.<Int #2>`, has none); nil for any other text.
  static func objectProperty(_ text: String) -> ObjectProperty? {
    var searchFrom = text.startIndex
    while let hash = text[searchFrom...].firstIndex(of: "#") {
      let digits = text[text.index(after: hash)...].prefix { $0.isASCII && $0.isNumber }
      if !digits.isEmpty, digits.endIndex < text.endIndex, text[digits.endIndex] == ".", hash > text.startIndex,
        let object = UInt32(digits)
      {
        let member = text[text.index(after: digits.endIndex)...]
        guard !member.isEmpty else { return nil }
        return ObjectProperty(property: "\(text[..<hash]).\(member)", object: object, type: String(text[..<hash]))
      }
      searchFrom = text.index(after: hash)
    }
    return nil
  }

  /// An object as the commands print it, `Model#3`, or as a number, `#3`, `3`; nil for any other text.
  static func object(_ text: String) -> NamedObject? {
    if let number = UInt32(text) { return NamedObject(object: number) }
    guard let hash = text.lastIndex(of: "#"), let number = UInt32(text[text.index(after: hash)...]) else { return nil }
    return NamedObject(object: number, type: hash == text.startIndex ? nil : String(text[..<hash]))
  }

  /// Whether a type answers to a name written before an object's `#`: its display name (`ListView.Model`, `Box<Int>`),
  /// or the type part of its properties' names (the same name, but for a trace whose definitions were damaged).
  static func isType(_ id: UInt32, named name: String, in definitions: TraceDefinitions) -> Bool {
    if definitions.typeName(id) == name { return true }
    return definitions.properties.contains { property, definition in
      guard definition.rootType == id else { return false }
      let qualified = definitions.propertyName(property)
      let short = definitions.shortPropertyName(property)
      return qualified.count == name.count + 1 + short.count && qualified.hasPrefix(name + ".")
        && qualified.hasSuffix(short)
    }
  }

  /// Why `Type#n` names no object of a trace whose object `n` is of another type (or absent): "(Type objects:
  /// Type#3, Type#5)", or, when no object has that type, "(no object is a Type; closest: …)". Nil when object `n` is
  /// of that type.
  static func wrongType(_ type: String, object: UInt32, in definitions: TraceDefinitions) -> String? {
    if let id = definitions.objects[object], isType(id, named: type, in: definitions) { return nil }
    var named: [UInt32: Bool] = [:]
    var serials: [UInt32] = []
    for (serial, id) in definitions.objects {
      let matches = named[id] ?? isType(id, named: type, in: definitions)
      named[id] = matches
      if matches { serials.append(serial) }
    }
    guard !serials.isEmpty else {
      let types = Set(definitions.objects.map { definitions.typeName($0.value) })
      return "(no object is a \(type); " + NameSuggestions.describe(type, in: types.sorted()) + ")"
    }
    serials.sort()
    return "(\(type) objects: " + serials.prefix(5).map { "\(type)#\($0)" }.joined(separator: ", ")
      + (serials.count > 5 ? ", … (\(serials.count) in all)" : "") + ")"
  }
}
