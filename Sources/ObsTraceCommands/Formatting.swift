import ObsTraceAnalysis

/// Numbers as people read them, the same in every command.
enum Formatting {
  static func duration(_ nanoseconds: UInt64) -> String {
    if nanoseconds >= 1_000_000_000 { return fixed(Double(nanoseconds) / 1e9, 2) + " s" }
    if nanoseconds >= 1_000_000 { return fixed(Double(nanoseconds) / 1e6, 2) + " ms" }
    if nanoseconds >= 1_000 { return fixed(Double(nanoseconds) / 1e3, 1) + " µs" }
    return "\(nanoseconds) ns"
  }

  static func bytes(_ count: UInt64) -> String {
    if count >= 1 << 20 { return fixed(Double(count) / Double(1 << 20), 1) + " MiB" }
    if count >= 1 << 10 { return fixed(Double(count) / Double(1 << 10), 1) + " KiB" }
    return "\(count) bytes"
  }

  /// `value` with `digits` decimals, without Foundation.
  static func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
      let decimals = text.distance(from: dot, to: text.endIndex) - 1
      if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
      if digits == 0 { text = String(text[..<dot]) }
    }
    return text
  }

  /// Milliseconds since the start, for timelines: `12.345`.
  static func milliseconds(_ nanoseconds: UInt64) -> String {
    // Integer arithmetic where it gives what `fixed` gives (a timeline prints one per line): below 2^50 ns (13
    // days) the double's rounding and printing are exact, except within a few ns of a half microsecond.
    let remainder = nanoseconds % 1000
    guard nanoseconds < 1 << 50, remainder < 497 || remainder > 503 else {
      return fixed(Double(nanoseconds) / 1e6, 3)
    }
    let microseconds = (nanoseconds + 500) / 1000
    let fraction = microseconds % 1000
    let digits = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
    return "\(microseconds / 1000).\(digits)\(fraction)"
  }

  /// A string as a JSON literal.
  static func json(_ string: String) -> String { jsonString(string) }

}
