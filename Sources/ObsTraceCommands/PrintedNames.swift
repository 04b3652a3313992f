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
        return ObjectProperty(property: "\(text[..<hash]).\(member)", object: object)
      }
      searchFrom = text.index(after: hash)
    }
    return nil
  }

  /// An object as the commands print it, `Model#3`, or as a number, `#3`, `3`; nil for any other text.
  static func object(_ text: String) -> UInt32? {
    if let number = UInt32(text) { return number }
    guard let hash = text.lastIndex(of: "#") else { return nil }
    return UInt32(text[text.index(after: hash)...])
  }
}
