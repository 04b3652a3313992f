import Foundation

extension Baseline {
  /// The first name a baseline's JSON gives twice in one object (a property or scope of a section, a place of a
  /// name's sites, a metric of an entry), with the lines of both and what kind of name it is; nil when there is
  /// none. `JSONSerialization` keeps one of two equal keys without a word, so a hand-merged baseline that names
  /// `Model.count` twice was checked against one of its two entries, silently. Keys are compared as JSON decodes
  /// them (`"A\u002ecount"` is `A.count`). `data` must be JSON already (`parse` asks first).
  static func firstDuplicateName(in data: Data) -> (name: String, kind: String, first: Int, second: Int)? {
    struct Object {
      /// The key this object is the value of in its parent (nil at the top or in an array).
      var name: String?
      var keys: [String: Int] = [:]
      var expectsKey = true
      var lastKey: String?
    }
    // The open objects and arrays (nil for an array), innermost last.
    var open: [Object?] = []
    var line = 1
    return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> (String, String, Int, Int)? in
      var index = 0
      while index < bytes.count {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\n"): line += 1
        case UInt8(ascii: "{"):
          let name = open.last.flatMap { $0?.lastKey }
          open.append(Object(name: name))
        case UInt8(ascii: "["): open.append(nil)
        case UInt8(ascii: "}"), UInt8(ascii: "]"): if !open.isEmpty { open.removeLast() }
        case UInt8(ascii: ":"): if let last = open.last, last != nil { open[open.count - 1]!.expectsKey = false }
        case UInt8(ascii: ","): if let last = open.last, last != nil { open[open.count - 1]!.expectsKey = true }
        case UInt8(ascii: "\""):
          // A string: to its closing quote (a valid JSON string holds no raw newline).
          let start = index
          var escaped = false
          index += 1
          while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\") { escaped = true; index += 2; continue }
            if bytes[index] == UInt8(ascii: "\"") { break }
            index += 1
          }
          guard let last = open.last, var object = last, object.expectsKey else { break }
          let raw = UnsafeRawBufferPointer(rebasing: bytes[start...min(index, bytes.count - 1)])
          let key =
            escaped
            ? ((try? JSONSerialization.jsonObject(with: Data("[".utf8) + Data(raw) + Data("]".utf8))) as? [String])?
              .first ?? String(decoding: raw, as: UTF8.self)
            : String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
          if let first = object.keys[key] {
            return (key, Self.kindOfName(in: open.compactMap { $0?.name }), first, line)
          }
          object.keys[key] = line
          object.lastKey = key
          open[open.count - 1] = object
        default: break
        }
        index += 1
      }
      return nil
    }
  }

  /// What a key of the object at `path` (the keys leading to it, the object's own last) names.
  private static func kindOfName(in path: [String]) -> String {
    let section = path.first
    switch path.count {
    case 0: return "key"
    case 1 where section == "properties": return "property"
    case 1 where section == "scopes": return "scope"
    case 1 where section == "sites": return "section"
    case 2 where section == "sites": return path[1] == "scopes" ? "scope (in \"sites\")" : "property (in \"sites\")"
    case 3 where section == "sites": return "place"
    default: return "metric"
    }
  }
}
