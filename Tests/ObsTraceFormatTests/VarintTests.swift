import Testing

@testable import ObsTraceFormat

@Suite("Varints")
struct VarintTests {
  /// Reads varints from `bytes` until the end or an error: the values, and the error if one stopped it.
  func read(_ bytes: [UInt8], as32 bits32: Bool = false) -> (values: [UInt64], error: CursorError?) {
    bytes.withUnsafeBytes { raw in
      var cursor = ByteCursor(raw)
      var values: [UInt64] = []
      do {
        while !cursor.isAtEnd {
          values.append(bits32 ? UInt64(try cursor.readVarint32()) : try cursor.readVarint())
        }
        return (values, nil)
      } catch {
        return (values, error as? CursorError)
      }
    }
  }

  @Test("one-byte varints (read in place) and longer ones (read apart) give their values, in order")
  func values() {
    var bytes: [UInt8] = []
    let values: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, UInt64.max, 5]
    for value in values { bytes.appendVarint(value) }
    #expect(read(bytes).values == values)
    #expect(read(bytes).error == nil)
  }

  @Test("a varint cut by the end, one past 64 bits, and one past 32 bits read as 32 are errors, not values")
  func errors() {
    #expect(read([0x05, 0x80]).values == [5])
    #expect(read([0x05, 0x80]).error == .endOfData)
    #expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).error == .malformed)
    #expect(read([0x80, 0x80, 0x80, 0x80, 0x10], as32: true).error == .malformed)
    #expect(read([0xff, 0xff, 0xff, 0xff, 0x0f], as32: true).values == [UInt64(UInt32.max)])
  }

  @Test("far from the end (one bound check) and near it (a check per byte), varints of every length read the same")
  func farAndNear() {
    var values: [UInt64] = [UInt64.max, 1 << 63, (1 << 63) - 1]
    for bits in stride(from: 7, through: 63, by: 7) {
      values += [(1 << UInt64(bits)) - 1, 1 << UInt64(bits), (1 << UInt64(bits)) + 1]
    }
    var bytes: [UInt8] = []
    for value in values { bytes.appendVarint(value) }
    // Far: ten bytes of padding (zeros, read as values) keep every varint of the list away from the end.
    let far = read(bytes + [UInt8](repeating: 0, count: 10))
    #expect(far.error == nil)
    #expect(Array(far.values.prefix(values.count)) == values)
    // Near: each varint alone, so the end is within ten bytes of it.
    for value in values {
      var alone: [UInt8] = []
      alone.appendVarint(value)
      #expect(read(alone).values == [value])
    }
  }

  @Test("varints of every length read the same at every distance from the end, and one cut by the end is an error")
  func everyDistanceFromTheEnd() {
    var values: [UInt64] = [0, UInt64.max]
    for bits in stride(from: 7, through: 63, by: 7) {
      values += [(1 << UInt64(bits)) - 1, 1 << UInt64(bits)]
    }
    for value in values {
      var encoded: [UInt8] = []
      encoded.appendVarint(value)
      for padding in 0...12 {
        // The value, then `padding` one-byte zeros: the end is `padding` bytes after the varint.
        let whole = read(encoded + [UInt8](repeating: 0, count: padding))
        #expect(whole.error == nil)
        #expect(whole.values == [value] + [UInt64](repeating: 0, count: padding), "\(value), \(padding) after")
        // After `padding` zeros, the varint without its last byte: cut by the end.
        if encoded.count > 1 {
          let cut = read([UInt8](repeating: 0, count: padding) + encoded.dropLast())
          #expect(cut.error == .endOfData, "\(value) cut, \(padding) before")
          #expect(cut.values == [UInt64](repeating: 0, count: padding))
        }
      }
    }
  }

  @Test("far from the end, a tenth byte past bit 63 or an eleventh byte is an error, as near it")
  func farErrors() {
    let padding = [UInt8](repeating: 0, count: 12)
    #expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02] + padding).error == .malformed)
    #expect(read([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00] + padding).error == .malformed)
    #expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01] + padding).values.first == UInt64.max)
    #expect(read([0x80, 0x80, 0x80, 0x80, 0x10] + padding, as32: true).error == .malformed)
  }
}
