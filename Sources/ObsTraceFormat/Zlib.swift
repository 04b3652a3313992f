import CObsTraceZlib

/// A deflate stream that compresses one chunk at a time (each chunk is a whole stream, so chunks decode
/// independently). Level 1: level 6 costs about four times the CPU for a few percent smaller files. Since format
/// version 3 a chunk is a raw deflate stream (`raw`): zlib's wrapper added an Adler-32 of every byte before
/// compression, ≈ 14 instructions an event on the bench's loop, which the chunk's own CRC-32 makes redundant.
final class Deflater {
  private var stream = z_stream()
  private let ready: Bool
  private let level: Int32

  /// `raw`: a raw deflate stream (format version 3 on); otherwise a zlib stream (versions 1 and 2).
  init(level: Int32 = 1, raw: Bool = true) {
    self.level = level
    ready =
      deflateInit2_(
        &stream, level, Z_DEFLATED, raw ? -MAX_WBITS : MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
        Int32(MemoryLayout<z_stream>.size)) == Z_OK
  }

  deinit {
    if ready { deflateEnd(&stream) }
  }

  /// Compresses `input` whole, into one stream; nil only if zlib fails (out of memory). Its last `storedTail` bytes
  /// (an events chunk's time column: the deltas, a trace's noise) are stored, not compressed: deflate's level 0,
  /// set with `deflateParams` where they begin, copies them. Coded with `Z_HUFFMAN_ONLY` (the choice before) they
  /// took ≈ 60 of zlib's ≈ 120 instructions an event on the bench's loop to save half their bytes (see
  /// docs/trace-format.md, "Choices"). Any inflate reads the stream as one.
  func compress(_ input: [UInt8], storedTail: Int = 0) -> [UInt8]? {
    // The level stays set across a reset: every chunk starts with the matcher's.
    guard ready, deflateReset(&stream) == Z_OK, deflateParams(&stream, level, Z_DEFAULT_STRATEGY) == Z_OK else {
      return nil
    }
    let tail = max(0, min(storedTail, input.count))
    // Room for the block the level change ends, and the stored blocks' headers (5 bytes per 16 KiB at most).
    let bound = Int(deflateBound(&stream, uLong(input.count))) + 64 + 5 * (tail >> 14 + 1)
    // Uninitialized: only the bytes deflate writes are kept (zeroing the bound cost ≈ 4 instructions an event).
    var status = Z_OK
    let output: [UInt8] = input.withUnsafeBufferPointer { source in
      [UInt8](unsafeUninitializedCapacity: bound) { destination, initialized in
        stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
        stream.avail_in = uInt(source.count - tail)
        stream.next_out = destination.baseAddress
        stream.avail_out = uInt(destination.count)
        if tail > 0 {
          // Takes the head whole (the output has room for all of it); the change of level then codes it.
          status = deflate(&stream, Z_NO_FLUSH)
          if status == Z_OK && stream.avail_in == 0 { status = deflateParams(&stream, 0, Z_DEFAULT_STRATEGY) }
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

/// Decompresses one chunk whose uncompressed size is known from its header: a raw deflate stream (`raw`, format
/// version 3 on) or a zlib stream (versions 1 and 2).
func inflateChunk(_ input: UnsafeRawBufferPointer, expectedSize: Int, raw: Bool) -> [UInt8]? {
  var stream = z_stream()
  guard
    inflateInit2_(&stream, raw ? -MAX_WBITS : MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
  else { return nil }
  defer { inflateEnd(&stream) }
  // Uninitialized: a chunk is kept only when inflate filled all of it (zeroing it first cost ≈ 15 instructions an
  // event on a many-object trace); a short or failed stream keeps no byte.
  var status = Z_OK
  let output = [UInt8](unsafeUninitializedCapacity: expectedSize) { destination, initialized in
    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
    stream.avail_in = uInt(input.count)
    stream.next_out = destination.baseAddress
    stream.avail_out = uInt(destination.count)
    let result = inflate(&stream, Z_FINISH)
    let complete = stream.avail_out == 0
    stream.next_in = nil
    stream.next_out = nil
    status = result == Z_STREAM_END && complete ? Z_STREAM_END : (result == Z_OK ? Z_DATA_ERROR : result)
    initialized = status == Z_STREAM_END ? destination.count : 0
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
