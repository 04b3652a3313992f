/// JSON written as UTF-8 bytes into one growing array: what `report --format json` builds its document in, so that
/// a field costs a copy of its bytes, not a `String` made, concatenated and joined (a report of 10 k scopes wrote
/// ≈ 3 MB through ≈ 110 instructions a byte that way).
struct JSONBuffer {
  private(set) var bytes: [UInt8] = []

  init(capacity: Int = 1 << 12) {
    bytes.reserveCapacity(capacity)
  }

  /// Text that needs no escaping: JSON punctuation and keys, written as they are.
  @inline(__always) mutating func raw(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  @inline(__always) mutating func byte(_ byte: UInt8) {
    bytes.append(byte)
  }

  /// A number in decimal, as string interpolation writes it.
  mutating func number(_ value: Int) {
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
      number(UInt64(value.magnitude))
    } else {
      number(UInt64(value))
    }
  }

  mutating func number(_ value: UInt64) {
    var divisor: UInt64 = 1
    while value / divisor >= 10 { divisor &*= 10 }
    var rest = value
    repeat {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor))
      rest %= divisor
      divisor /= 10
    } while divisor > 0
  }

  mutating func number(_ value: UInt32) { number(UInt64(value)) }

  mutating func bool(_ value: Bool) {
    if value { raw("true") } else { raw("false") }
  }

  /// A JSON string: quoted, with `"`, `\` and control characters escaped as `jsonString` escapes them.
  mutating func string(_ text: String) {
    bytes.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { utf8 in
      var start = 0
      for (index, byte) in utf8.enumerated()
      where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
        escape(byte)
        start = index + 1
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// A string, or `null`.
  mutating func string(_ text: String?) {
    if let text { string(text) } else { raw("null") }
  }

  private mutating func escape(_ byte: UInt8) {
    switch byte {
    case UInt8(ascii: "\""): raw("\\\"")
    case UInt8(ascii: "\\"): raw("\\\\")
    case UInt8(ascii: "\n"): raw("\\n")
    case UInt8(ascii: "\r"): raw("\\r")
    case UInt8(ascii: "\t"): raw("\\t")
    default:
      let hex: [UInt8] = Array("0123456789abcdef".utf8)
      raw("\\u00")
      bytes.append(hex[Int(byte >> 4)])
      bytes.append(hex[Int(byte & 0xf)])
    }
  }

  /// `[a,b,c]`, each element written by `body`.
  mutating func array<Element>(_ elements: some Sequence<Element>, _ body: (inout JSONBuffer, Element) -> Void) {
    bytes.append(UInt8(ascii: "["))
    var first = true
    for element in elements {
      if !first { bytes.append(UInt8(ascii: ",")) }
      first = false
      body(&self, element)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  /// The document as a string (its bytes are UTF-8 already: names are copied whole).
  var text: String { String(decoding: bytes, as: UTF8.self) }
}
