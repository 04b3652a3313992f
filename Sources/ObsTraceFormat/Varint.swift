/// LEB128 variable-length integers, the encoding of every number in a chunk.
extension Array where Element == UInt8 {
  @inlinable
  mutating func appendVarint(_ value: UInt64) {
    var value = value
    while value >= 0x80 {
      append(UInt8(truncatingIfNeeded: value) | 0x80)
      value >>= 7
    }
    append(UInt8(value))
  }

  @inlinable
  mutating func appendVarint<T: BinaryInteger>(_ value: T) {
    appendVarint(UInt64(truncatingIfNeeded: value))
  }

  mutating func appendString(_ string: String) {
    let bytes = Array(string.utf8)
    appendVarint(bytes.count)
    append(contentsOf: bytes)
  }

  /// A name, cut to `TraceFormat.maximumRecordedNameLength`.
  mutating func appendName(_ name: String) {
    appendString(TraceFormat.cutName(name))
  }

  mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }
}

/// Reads what `Array.appendVarint` wrote, throwing at the end of the bytes instead of trapping.
struct ByteCursor {
  let bytes: UnsafeRawBufferPointer
  var offset = 0

  init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  var isAtEnd: Bool { offset >= bytes.count }

  // The readers below are inlined into the decoder's loop, which calls them several times per event: out of line,
  // each byte cost a call (callgrind: ≈ 60 instructions an event on the loop's trace).
  @inline(__always)
  mutating func readByte() throws(CursorError) -> UInt8 {
    guard offset < bytes.count else { throw .endOfData }
    defer { offset += 1 }
    return bytes[offset]
  }

  /// A varint; one of up to three bytes (nearly all of a trace's: object serials, scope ids and time deltas of a
  /// trace of 100 k objects are two or three) is read in place, a longer one, or one within three bytes of the end,
  /// by `readLongVarint`. Out of line, each of those cost a call that also kept the cursor in memory (callgrind: ≈ 68
  /// instructions an event in `readLongVarint` on a many-object trace).
  @inline(__always)
  mutating func readVarint() throws(CursorError) -> UInt64 {
    if bytes.count &- offset >= 3 {
      let start = bytes.baseAddress.unsafelyUnwrapped + offset
      let first = UInt64(start.load(as: UInt8.self))
      if first < 0x80 {
        offset &+= 1
        return first
      }
      let second = UInt64(start.load(fromByteOffset: 1, as: UInt8.self))
      if second < 0x80 {
        offset &+= 2
        return first & 0x7f | second &<< 7
      }
      let third = UInt64(start.load(fromByteOffset: 2, as: UInt8.self))
      if third < 0x80 {
        offset &+= 3
        return first & 0x7f | (second & 0x7f) &<< 7 | third &<< 14
      }
    } else if offset < bytes.count {
      let byte = bytes[offset]
      if byte < 0x80 {
        offset += 1
        return UInt64(byte)
      }
    }
    return try readLongVarint()
  }

  mutating func readLongVarint() throws(CursorError) -> UInt64 {
    // Most long varints are two or three bytes (object serials, scope ids, time deltas) with the chunk's end far
    // away: one bound check for the longest varint, then the bytes read as they come (the byte-by-byte loop below,
    // with its check and `defer` per byte, took ≈ 44 instructions a varint on a many-object trace).
    if bytes.count &- offset >= 10, let base = bytes.baseAddress {
      let start = base + offset
      let first = UInt64(start.load(as: UInt8.self))
      if first < 0x80 {
        offset += 1
        return first
      }
      let second = UInt64(start.load(fromByteOffset: 1, as: UInt8.self))
      if second < 0x80 {
        offset += 2
        return first & 0x7f | second &<< 7
      }
      let third = UInt64(start.load(fromByteOffset: 2, as: UInt8.self))
      if third < 0x80 {
        offset += 3
        return first & 0x7f | (second & 0x7f) &<< 7 | third &<< 14
      }
      var result = first & 0x7f | (second & 0x7f) &<< 7 | (third & 0x7f) &<< 14
      var shift: UInt64 = 21
      for index in 3..<9 {
        let byte = start.load(fromByteOffset: index, as: UInt8.self)
        result |= UInt64(byte & 0x7f) &<< shift
        if byte < 0x80 {
          offset += index + 1
          return result
        }
        shift += 7
      }
      // The tenth byte holds bit 63 only.
      let last = start.load(fromByteOffset: 9, as: UInt8.self)
      guard last <= 1 else { throw .malformed }
      offset += 10
      return result | UInt64(last) &<< 63
    }
    return try readLongVarintNearEnd()
  }

  /// `readLongVarint` within ten bytes of the end: a check per byte.
  private mutating func readLongVarintNearEnd() throws(CursorError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try readByte()
      if shift == 63 && byte > 1 { throw .malformed }
      result |= UInt64(byte & 0x7f) << shift
      if byte < 0x80 { return result }
      shift += 7
      if shift > 63 { throw .malformed }
    }
  }

  @inline(__always)
  mutating func readVarint32() throws(CursorError) -> UInt32 {
    let value = try readVarint()
    guard value <= UInt64(UInt32.max) else { throw .malformed }
    return UInt32(value)
  }

  /// A string of at most `maximumLength` UTF-8 bytes; a longer one is malformed (an adversary's 64 MB label).
  mutating func readString(maximumLength: Int = TraceFormat.maximumDefinitionStringLength) throws(CursorError)
    -> String
  {
    // Escaped as every output prints it (TraceDefinitions.escapingControls): every byte may come from an adversary.
    TraceDefinitions.escapingControls(
      String(decoding: try readStringBytes(maximumLength: maximumLength), as: UTF8.self))
  }

  /// The bytes of a string, as `readString` reads it, in place (valid while the cursor's bytes are).
  mutating func readStringBytes(maximumLength: Int = TraceFormat.maximumDefinitionStringLength) throws(CursorError)
    -> UnsafeRawBufferPointer
  {
    let count = try readVarint()
    guard count <= UInt64(bytes.count - offset) else { throw .endOfData }
    guard count <= UInt64(maximumLength) else { throw .malformed }
    let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(count))])
    offset += Int(count)
    return slice
  }
}

enum CursorError: Error {
  case endOfData
  case malformed
  /// The definitions pass what the file's size can justify.
  case overBudget
  /// A time overflows 64 bits.
  case timeOverflow
  /// An events chunk names `TraceFormat.reservedThread`.
  case reservedThread
}

extension UInt64 {
  /// `self + other`, or `UInt64.max` when that overflows: for totals read from a file, which must never trap.
  @inlinable
  public func addingSaturating(_ other: UInt64) -> UInt64 {
    let (sum, overflow) = addingReportingOverflow(other)
    return overflow ? .max : sum
  }
}

func readLittleEndian<T: FixedWidthInteger>(_ type: T.Type, _ bytes: ArraySlice<UInt8>) -> T {
  var value: T = 0
  for (index, byte) in bytes.prefix(MemoryLayout<T>.size).enumerated() {
    value |= T(byte) << (8 * index)
  }
  return value
}
