/// Output built line by line into one reusable byte buffer and handed to the output in pieces of about 256 KiB:
/// what the commands that print a line per event or fact (`dump`, `timeline`) write through, so that a line costs
/// a few copies of cached bytes, not a `String` and its formatting.
///
/// The buffer is owned here and reached only through the `append` methods, which make room before they write.
final class LineWriter {
  /// Past this many bytes, a finished line sends the buffer to the output.
  static let flushThreshold = 256 << 10

  private let output: CommandOutput
  private var storage: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private var count = 0
  /// Bytes handed to the output so far, and lines finished.
  private(set) var bytesWritten = 0
  private(set) var lines = 0

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

  func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    reserve(bytes.count)
    (storage + count).update(from: base, count: bytes.count)
    count += bytes.count
  }

  func append(_ text: StaticString) {
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
  func appendSpaces(_ count: Int) {
    guard count > 0 else { return }
    reserve(count)
    (storage + self.count).initialize(repeating: UInt8(ascii: " "), count: count)
    self.count += count
  }

  /// How many decimal digits `value` has.
  @inline(__always) static func digitCount(_ value: UInt64) -> Int {
    var digits = 1
    var rest = value
    while rest >= 10 {
      rest /= 10
      digits += 1
    }
    return digits
  }

  /// `value` in decimal, at least `minimumDigits` digits (zeros in front).
  func appendDecimal(_ value: UInt64, minimumDigits: Int = 1) {
    let digits = max(Self.digitCount(value), minimumDigits)
    reserve(digits)
    var rest = value
    var index = count + digits - 1
    while rest >= 100 {
      let pair = Int(rest % 100)
      rest /= 100
      storage[index] = Self.digitPairs[2 * pair + 1]
      storage[index - 1] = Self.digitPairs[2 * pair]
      index -= 2
    }
    while index >= count {
      storage[index] = UInt8(ascii: "0") + UInt8(rest % 10)
      rest /= 10
      index -= 1
    }
    count += digits
  }

  func appendDecimal(_ value: UInt32) { appendDecimal(UInt64(value)) }

  /// "00" "01" … "99": two digits per division.
  private static let digitPairs: [UInt8] = (0..<100).flatMap {
    [UInt8(ascii: "0") + UInt8($0 / 10), UInt8(ascii: "0") + UInt8($0 % 10)]
  }

  /// `Formatting.milliseconds(nanoseconds)` right-aligned in `width` columns, as `leftPadded(width)` gives it.
  func appendMilliseconds(_ nanoseconds: UInt64, width: Int) {
    // The integer path of `Formatting.milliseconds`, without its String (the same cases take it).
    let remainder = nanoseconds % 1000
    guard nanoseconds < 1 << 50, remainder < 497 || remainder > 503 else {
      let text = Formatting.milliseconds(nanoseconds)
      appendSpaces(width - text.utf8.count)
      append(contentsOf: text)
      return
    }
    let microseconds = (nanoseconds + 500) / 1000
    let whole = microseconds / 1000
    appendSpaces(width - (Self.digitCount(whole) + 4))
    appendDecimal(whole)
    append(UInt8(ascii: "."))
    appendDecimal(microseconds % 1000, minimumDigits: 3)
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
/// that only grows: a printer keeps a `NameSpan` per id and copies the bytes into each line that names it. What it
/// holds is bounded by what the trace defines (a name is kept once per defined id), which the reader bounds.
final class NameArena {
  private var storage: UnsafeMutablePointer<UInt8>
  private var capacity = 64 << 10
  private var count = 0

  init() { storage = .allocate(capacity: capacity) }

  deinit { storage.deallocate() }

  /// Keeps `bytes` and says where.
  func add(_ bytes: some Collection<UInt8>) -> NameSpan {
    let needed = count + bytes.count
    if needed > capacity { growBytes(&storage, &capacity, keeping: count, toHold: needed) }
    let span = NameSpan(offset: UInt32(count), count: UInt32(bytes.count))
    _ = UnsafeMutableBufferPointer(start: storage + count, count: bytes.count).initialize(from: bytes)
    count = needed
    return span
  }

  /// Keeps `text`'s UTF-8.
  func add(_ text: String) -> NameSpan { add(text.utf8) }

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
