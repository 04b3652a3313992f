/// Output built line by line into one reusable byte buffer and handed to the output in pieces of about 256 KiB:
/// what the commands that print a line per event or fact (`dump`, `timeline`) write through, so that a line costs
/// a few copies of cached bytes, not a `String` and its formatting.
///
/// The buffer is owned here and reached only through the `append` methods, which make room before they write.
///
/// The stored properties of the writer, of `NameArena`, `ResolvedNames` and the printers are
/// `@exclusivity(unchecked)`: a printer runs on one thread, and none of them is reached by two overlapping accesses
/// (each method touches its own fields and hands bytes to the next). Checked, every access of a class's stored
/// property calls the runtime's exclusivity check (≈ 80 instructions with its thread-local lookup): a line makes
/// dozens, and on the timeline of 100 k objects they were a third of the instructions.
final class LineWriter {
  /// Past this many bytes, a finished line sends the buffer to the output.
  static let flushThreshold = 256 << 10

  private let output: CommandOutput
  @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
  @exclusivity(unchecked) private var capacity: Int
  @exclusivity(unchecked) private var count = 0
  /// Bytes handed to the output so far, and lines finished.
  @exclusivity(unchecked) private(set) var bytesWritten = 0
  @exclusivity(unchecked) private(set) var lines = 0

  init(output: CommandOutput) {
    self.output = output
    capacity = Self.flushThreshold + (16 << 10)
    storage = .allocate(capacity: capacity)
  }

  deinit { storage.deallocate() }

  /// Makes room for `extra` more bytes.
  @inline(__always) private func reserve(_ extra: Int) {
    if count + extra > capacity { grow(count + extra) }
  }

  private func grow(_ needed: Int) {
    growBytes(&storage, &capacity, keeping: count, toHold: needed)
  }

  @inline(__always) func append(_ byte: UInt8) {
    reserve(1)
    storage[count] = byte
    count += 1
  }

  func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { append($0) }
  }

  @inline(__always) func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    reserve(bytes.count)
    (storage + count).update(from: base, count: bytes.count)
    count += bytes.count
  }

  @inline(__always) func append(_ text: StaticString) {
    text.withUTF8Buffer { append($0) }
  }

  /// A string's UTF-8 (a literal goes to the `StaticString` overload, without a `String`).
  func append(contentsOf text: String) {
    var text = text
    text.withUTF8 { append($0) }
  }

  /// A name kept in `names`.
  @inline(__always) func append(_ name: NameSpan, in names: NameArena) {
    names.withBytes(name) { append($0) }
  }

  /// `count` spaces (none when not positive).
  @inline(__always) func appendSpaces(_ count: Int) {
    guard count > 0 else { return }
    reserve(count)
    (storage + self.count).initialize(repeating: UInt8(ascii: " "), count: count)
    self.count += count
  }

  /// How many decimal digits `value` has.
  @inline(__always) static func digitCount(_ value: UInt64) -> Int {
    // Compares, no divisions: 10^19 is the last power of ten below 2^64.
    var digits = 1
    var limit: UInt64 = 10
    while digits < 20 && value >= limit {
      digits += 1
      limit &*= 10
    }
    return digits
  }

  /// `value` in decimal, at least `minimumDigits` digits (zeros in front).
  @inline(__always) func appendDecimal(_ value: UInt64, minimumDigits: Int = 1) {
    let digits = max(Self.digitCount(value), minimumDigits)
    reserve(digits)
    Self.writeDecimal(value, digits: digits, endingAt: storage + count + digits)
    count += digits
  }

  @inline(__always) func appendDecimal(_ value: UInt32) { appendDecimal(UInt64(value)) }

  /// Writes the last `digits` decimal digits of `value` into the `digits` bytes before `end`.
  @inline(__always)
  static func writeDecimal(_ value: UInt64, digits: Int, endingAt end: UnsafeMutablePointer<UInt8>) {
    let pairs = digitPairs.utf8Start
    var rest = value
    var position = end
    var left = digits
    while left >= 2 {
      let pair = Int(truncatingIfNeeded: rest % 100)
      rest /= 100
      position -= 2
      position[0] = pairs[2 &* pair]
      position[1] = pairs[2 &* pair &+ 1]
      left -= 2
    }
    if left == 1 { (position - 1).pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10) }
  }

  /// "00" "01" … "99": two digits per division, read in place (a literal: no array, no bounds check, no lazy
  /// initialization).
  private static let digitPairs: StaticString = """
    00010203040506070809101112131415161718192021222324252627282930313233343536373839\
    40414243444546474849505152535455565758596061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899
    """

  /// The microseconds `appendMilliseconds` shows for `nanoseconds`, when it takes its integer path (all but times
  /// within a few nanoseconds of a half microsecond, or past 2^50): two times with the same are printed the same.
  @inline(__always) static func shownMicroseconds(_ nanoseconds: UInt64) -> UInt64? {
    // The integer path of `Formatting.milliseconds`, without its String (the same cases take it).
    let remainder = nanoseconds % 1000
    guard nanoseconds < 1 << 50, remainder < 497 || remainder > 503 else { return nil }
    return (nanoseconds + 500) / 1000
  }

  /// `Formatting.milliseconds(nanoseconds)` right-aligned in `width` columns, as `leftPadded(width)` gives it.
  @inline(__always) func appendMilliseconds(_ nanoseconds: UInt64, width: Int) {
    guard let microseconds = Self.shownMicroseconds(nanoseconds) else {
      return appendMillisecondsAsFormatted(nanoseconds, width: width)
    }
    let whole = microseconds / 1000
    let wholeDigits = Self.digitCount(whole)
    let length = wholeDigits + 4
    let spaces = max(0, width - length)
    reserve(spaces + length)
    var position = storage + count
    if spaces > 0 {
      position.initialize(repeating: UInt8(ascii: " "), count: spaces)
      position += spaces
    }
    Self.writeDecimal(whole, digits: wholeDigits, endingAt: position + wholeDigits)
    position[wholeDigits] = UInt8(ascii: ".")
    Self.writeDecimal(microseconds % 1000, digits: 3, endingAt: position + length)
    count += spaces + length
  }

  /// The double's path of `Formatting.milliseconds`, within a few nanoseconds of a half microsecond or past 2^50.
  private func appendMillisecondsAsFormatted(_ nanoseconds: UInt64, width: Int) {
    let text = Formatting.milliseconds(nanoseconds)
    appendSpaces(width - text.utf8.count)
    append(contentsOf: text)
  }

  /// Where the next byte goes in the line being built: `copyBytes(from:into:)` copies what was written since.
  var position: Int { count }

  /// Copies the bytes written since `position` (of the line not yet ended) into `destination`, which holds
  /// `capacity`; how many, or nil when they do not fit.
  func copyBytes(from position: Int, into destination: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int? {
    precondition(position >= 0 && position <= count)
    let length = count - position
    guard length <= capacity else { return nil }
    destination.update(from: storage + position, count: length)
    return length
  }

  /// Ends the line; past the threshold, hands the buffer to the output.
  @inline(__always) func endLine() {
    append(UInt8(ascii: "\n"))
    lines += 1
    if count >= Self.flushThreshold { flush() }
  }

  /// Hands everything buffered to the output.
  func flush() {
    guard count > 0 else { return }
    output.write(UnsafeRawBufferPointer(start: storage, count: count))
    bytesWritten += count
    count = 0
  }
}

/// Where a name kept in a `NameArena` is: plain integers, so that looking a name up copies no reference.
struct NameSpan {
  var offset: UInt32
  var count: UInt32
}

/// The bytes of names resolved once (an object's `Type#serial`, a label, a site), one after another in one buffer
/// that grows: a printer keeps a `NameSpan` per id and copies the bytes into each line that names it. What it
/// holds is bounded by what the trace defines (a name is kept once per defined id), which the reader bounds; objects'
/// names, of which a trace may name millions, are kept in one of their own, emptied as it fills (`ObjectNames`).
final class NameArena {
  @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
  @exclusivity(unchecked) private var capacity = 64 << 10
  @exclusivity(unchecked) private var count = 0

  init() { storage = .allocate(capacity: capacity) }

  deinit { storage.deallocate() }

  /// Keeps `bytes` and says where.
  func add(_ bytes: some Collection<UInt8>) -> NameSpan {
    let start = count
    append(bytes)
    return span(since: start)
  }

  /// Keeps `text`'s UTF-8.
  func add(_ text: String) -> NameSpan { add(text.utf8) }

  /// Keeps `bytes`, then `separator`, then `value` in decimal (an object's `Type#serial` from its type's name).
  func add(_ bytes: some Collection<UInt8>, _ separator: UInt8, _ value: UInt32) -> NameSpan {
    let start = count
    append(bytes)
    let digits = LineWriter.digitCount(UInt64(value))
    reserve(1 + digits)
    appendSeparatorAndDecimal(separator, value, digits)
    return span(since: start)
  }

  /// Bytes kept.
  var byteCount: Int { count }

  /// Forgets every name kept (their spans are no longer valid); the buffer stays.
  func removeAll() { count = 0 }

  private func appendSeparatorAndDecimal(_ separator: UInt8, _ value: UInt32, _ digits: Int) {
    storage[count] = separator
    LineWriter.writeDecimal(UInt64(value), digits: digits, endingAt: storage + count + 1 + digits)
    count += 1 + digits
  }

  private func reserve(_ extra: Int) {
    if count + extra > capacity { growBytes(&storage, &capacity, keeping: count, toHold: count + extra) }
  }

  private func append(_ bytes: some Collection<UInt8>) {
    reserve(bytes.count)
    _ = UnsafeMutableBufferPointer(start: storage + count, count: bytes.count).initialize(from: bytes)
    count += bytes.count
  }

  private func span(since start: Int) -> NameSpan {
    NameSpan(offset: UInt32(start), count: UInt32(count - start))
  }

  @inline(__always) func withBytes<Result>(_ span: NameSpan, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    precondition(Int(span.offset) + Int(span.count) <= count)
    return body(UnsafeBufferPointer(start: storage + Int(span.offset), count: Int(span.count)))
  }
}

/// Doubles `capacity` until it holds `needed` bytes and moves the first `count` of `storage` there: the growth of
/// the line buffer and of the name arena.
private func growBytes(
  _ storage: inout UnsafeMutablePointer<UInt8>, _ capacity: inout Int, keeping count: Int, toHold needed: Int
) {
  var newCapacity = capacity * 2
  while newCapacity < needed { newCapacity *= 2 }
  let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
  newStorage.update(from: storage, count: count)
  storage.deallocate()
  storage = newStorage
  capacity = newCapacity
}
