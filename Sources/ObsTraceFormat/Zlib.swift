import CObsTraceZlib

/// A zlib stream that compresses one chunk at a time (each chunk is a whole zlib stream, so chunks decode
/// independently). Level 1: level 6 costs about four times the CPU for a few percent smaller files.
final class Deflater {
  private var stream = z_stream()
  private let ready: Bool
  private let level: Int32

  init(level: Int32 = 1) {
    self.level = level
    ready = deflateInit_(&stream, level, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
  }

  deinit {
    if ready { deflateEnd(&stream) }
  }

  /// Compresses `input` whole, into one zlib stream; nil only if zlib fails (out of memory). Its last
  /// `huffmanOnlyTail` bytes (an events chunk's time column: short varints with no repeats worth finding) are coded
  /// with `Z_HUFFMAN_ONLY`, which skips the string matching that costs most on such bytes; any inflate reads the
  /// stream as one.
  func compress(_ input: [UInt8], huffmanOnlyTail: Int = 0) -> [UInt8]? {
    // The strategy stays set across a reset: every chunk starts with the default one.
    guard ready, deflateReset(&stream) == Z_OK, deflateParams(&stream, level, Z_DEFAULT_STRATEGY) == Z_OK else {
      return nil
    }
    let tail = max(0, min(huffmanOnlyTail, input.count))
    // Room for the extra block the strategy change ends.
    let bound = Int(deflateBound(&stream, uLong(input.count))) + 64
    // Uninitialized: only the bytes deflate writes are kept (zeroing the bound cost ≈ 4 instructions an event).
    var status = Z_OK
    let output: [UInt8] = input.withUnsafeBufferPointer { source in
      [UInt8](unsafeUninitializedCapacity: bound) { destination, initialized in
        stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
        stream.avail_in = uInt(source.count - tail)
        stream.next_out = destination.baseAddress
        stream.avail_out = uInt(destination.count)
        if tail > 0 {
          // Takes the head whole (the output has room for all of it); the change of strategy then codes it.
          status = deflate(&stream, Z_NO_FLUSH)
          if status == Z_OK && stream.avail_in == 0 { status = deflateParams(&stream, level, Z_HUFFMAN_ONLY) }
          stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress.map { $0 + (source.count - tail) })
          stream.avail_in = uInt(tail)
        }
        if status == Z_OK { status = deflate(&stream, Z_FINISH) }
        initialized = status == Z_STREAM_END ? destination.count - Int(stream.avail_out) : 0
        // The stream must not keep pointers into buffers that are about to go away.
        stream.next_in = nil
        stream.next_out = nil
        stream.avail_in = 0
        stream.avail_out = 0
      }
    }
    guard status == Z_STREAM_END else { return nil }
    return output
  }
}

/// Decompresses one chunk whose uncompressed size is known from its header.
func inflateChunk(_ input: UnsafeRawBufferPointer, expectedSize: Int) -> [UInt8]? {
  var stream = z_stream()
  guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
  defer { inflateEnd(&stream) }
  var output = [UInt8](repeating: 0, count: expectedSize)
  let status: Int32 = output.withUnsafeMutableBufferPointer { destination in
    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
    stream.avail_in = uInt(input.count)
    stream.next_out = destination.baseAddress
    stream.avail_out = uInt(destination.count)
    let status = inflate(&stream, Z_FINISH)
    let complete = stream.avail_out == 0
    stream.next_in = nil
    stream.next_out = nil
    return status == Z_STREAM_END && complete ? Z_STREAM_END : (status == Z_OK ? Z_DATA_ERROR : status)
  }
  return status == Z_STREAM_END ? output : nil
}

/// CRC-32 (zlib's polynomial), continuing from `initial`.
func crc32Checksum(_ bytes: UnsafeRawBufferPointer, initial: UInt32 = 0) -> UInt32 {
  guard let base = bytes.baseAddress else { return initial }
  return UInt32(crc32(uLong(initial), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
}

func crc32Checksum(_ bytes: [UInt8], initial: UInt32 = 0) -> UInt32 {
  bytes.withUnsafeBytes { crc32Checksum($0, initial: initial) }
}
