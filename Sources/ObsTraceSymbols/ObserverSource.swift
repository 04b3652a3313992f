/// Where the body of a property's observer lies in the user's source text. `@Observable` copies a tracked
/// property's `didSet { … }` into its peer buffer under `#sourceLocation` of the user's file and re-formats it, one
/// statement a line, so the line table's rows count the buffer's lines, not the user's (docs/symbols.md, Approximate
/// lines): a one-line `didSet { if level > 10 { level = 10 } }` says line N+1 for `level = 10` (a fresh-clone
/// try-out's T10 and H6). The binary does not hold the user's text; the source file, when it is there and not newer
/// than the binary, does.
enum ObserverSource {
  /// The span of the observer's body that begins on line `first` (1-based; its first row's line, the
  /// `#sourceLocation` line) of `lines`: whether the whole observer, `didSet {` to its closing brace, is on that one
  /// line (`oneLine`: every statement of it is on `first`, certain), and the last line that holds some of the body's
  /// text. `observer` is `didSet` or `willSet`. Nil when the text does not close the body within 2,000 lines.
  /// Braces in string literals and after `//` are not counted; a `/* … */` comment or a brace inside a string
  /// interpolation's quotes may mislead it, and the caller keeps such a line approximate but for `oneLine`.
  static func span(_ lines: [Substring], first: Int, observer: String) -> (oneLine: Bool, last: Int)? {
    guard first >= 1, first <= lines.count else { return nil }
    var text = lines[first - 1]
    var opensOnFirst = false
    if let opening = observerOpening(text, observer: observer) {
      text = text[opening...]
      opensOnFirst = true
    }
    var depth = 1
    var lastWithText = first
    var line = first
    while true {
      var hasText = false
      // The line's code (`code`): string literals' text and a `//` comment left out, their braces not counted.
      for character in code(text) {
        switch character {
        case "{":
          depth += 1
          hasText = true
        case "}":
          depth -= 1
          if depth == 0 { return (opensOnFirst && line == first, hasText ? line : lastWithText) }
          hasText = true
        default:
          if !character.isWhitespace && character != "/" { hasText = true }
        }
      }
      if hasText { lastWithText = line }
      line += 1
      guard line <= lines.count, line - first < 2000 else { return nil }
      text = lines[line - 1]
    }
  }

  /// The index just after the `{` of `didSet {` (or `didSet(old) {`, `willSet {`) on this line, or nil when the
  /// line has no such opening (the word alone, in a string, is not one).
  static func observerOpening(_ text: Substring, observer: String) -> Substring.Index? {
    var rest = text[...]
    while let keyword = rest.firstRange(of: observer) {
      var index = keyword.upperBound
      func skipSpaces() { while index < text.endIndex, text[index] == " " { index = text.index(after: index) } }
      skipSpaces()
      if index < text.endIndex, text[index] == "(" {
        guard let close = text[index...].firstIndex(of: ")") else { return nil }
        index = text.index(after: close)
        skipSpaces()
      }
      let before = keyword.lowerBound == text.startIndex ? " " : text[text.index(before: keyword.lowerBound)]
      if index < text.endIndex, text[index] == "{", before == " " || before == "{" || before == "\t" {
        return text.index(after: index)
      }
      rest = text[keyword.upperBound...]
    }
    return nil
  }
}

extension ObserverSource {
  /// The characters of a line of source that are code: a string literal's text is left out (its quotes kept), and
  /// the line ends at `//`. `/* … */` comments and interpolations' nested quotes are not told apart.
  static func code(_ line: Substring) -> [Character] {
    var code: [Character] = []
    var inString = false
    var escaped = false
    var previous: Character = " "
    for character in line {
      defer { previous = character }
      if inString {
        if escaped {
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "\"" {
          inString = false
          code.append(character)
        }
        continue
      }
      if character == "/" && previous == "/" {
        code.removeLast()
        break
      }
      if character == "\"" { inString = true }
      code.append(character)
    }
    return code
  }
}

/// Where a function's body lies in the user's source text, for telling whether a call DWARF places in an inlined
/// function is in that function's body at all (`Symbolizer.repairInlinedChain`).
enum SourceExtent {
  /// The lines of the function declared at line `declared` (1-based) of `lines`: from there to the brace that closes
  /// the first brace opened outside parentheses (a default argument's closure is not the body). Nil when the text
  /// does not close it within 5,000 lines.
  static func body(_ lines: [Substring], declaredAt declared: Int) -> ClosedRange<Int>? {
    guard declared >= 1, declared <= lines.count else { return nil }
    var depth = 0
    var parentheses = 0
    var opened = false
    var line = declared
    while line <= lines.count, line - declared < 5000 {
      for character in ObserverSource.code(lines[line - 1]) {
        switch character {
        case "(" where !opened: parentheses += 1
        case ")" where !opened: parentheses = max(0, parentheses - 1)
        case "{" where opened || parentheses == 0:
          depth += 1
          opened = true
        case "}" where opened:
          depth -= 1
          if depth == 0 { return declared...line }
        default: break
        }
      }
      line += 1
    }
    return nil
  }
}
