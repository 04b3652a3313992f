import ObsTraceTestSupport
import Testing

@testable import ObsTraceCommands

@Suite("Line writer")
struct LineWriterTests {
  /// What a writer sends its output, as text.
  func written(_ body: (LineWriter) -> Void) -> (text: String, writes: Int) {
    let output = CountingOutput()
    let writer = LineWriter(output: output)
    body(writer)
    writer.flush()
    return (output.text, output.writes)
  }

  final class CountingOutput: CommandOutput {
    var text = ""
    var writes = 0
    func write(_ text: String) {
      self.text += text
      writes += 1
    }
    func writeError(_ text: String) {}
  }

  @Test("milliseconds are what Formatting.milliseconds and leftPadded print, the double's fallback included")
  func milliseconds() {
    var cases: [UInt64] = [0, 1, 499, 500, 501, 999, 1000, 1_000_500, 1_234_500, 999_999_500, 123_456_789_012]
    cases += [(1 << 50) - 1, 1 << 50, (1 << 50) + 500, 1 << 60, .max]
    for base: UInt64 in [0, 1_000_000, 86_400_000_000_000] {
      for remainder in UInt64(0)..<1200 { cases.append(base + remainder) }
    }
    var generator = SeededGenerator()
    for _ in 0..<5_000 { cases.append(UInt64.random(in: 0...(1 << 52), using: &generator)) }
    for width in [0, 9, 10, 30] {
      let (text, _) = written { writer in
        for nanoseconds in cases {
          writer.appendMilliseconds(nanoseconds, width: width)
          writer.endLine()
        }
      }
      let expected = cases.map { Formatting.milliseconds($0).leftPadded(width) + "\n" }.joined()
      #expect(text == expected, "width \(width), OBSTRACE_TEST_SEED=\(generator.seed)")
    }
  }

  @Test("decimals with and without leading zeros, spaces, text and names kept in an arena that grows")
  func pieces() {
    let names = NameArena()
    // Past the arena's first 64 KiB, so that it grows while spans are held.
    let spans = (0..<20_000).map { names.add("name\($0)·") }
    let (text, _) = written { writer in
      for value: UInt64 in [0, 7, 10, 99, 100, 12_345, 1_000_000, .max] {
        writer.appendDecimal(value)
        writer.append(" ")
        writer.appendDecimal(value, minimumDigits: 3)
        writer.endLine()
      }
      writer.appendSpaces(3)
      writer.appendSpaces(-2)
      writer.append(contentsOf: "é|")
      writer.append(spans[0], in: names)
      writer.append(spans[19_999], in: names)
      writer.endLine()
    }
    let expected =
      ["0 000", "7 007", "10 010", "99 099", "100 100", "12345 12345", "1000000 1000000"].joined(separator: "\n")
      + "\n18446744073709551615 18446744073709551615\n   é|name0·name19999·\n"
    #expect(text == expected)
  }

  @Test("every decimal up to 10^6, and around each power of ten, is what String gives (each digit pair)")
  func decimals() {
    var values = Array(UInt64(0)...1_000_000)
    var power: UInt64 = 10
    for _ in 1...19 {
      values += [power - 1, power, power + 1, power + 99]
      power = power &* 10
    }
    values += [.max - 1, .max]
    let (text, _) = written { writer in
      for value in values {
        writer.appendDecimal(value)
        writer.append(" ")
        writer.appendDecimal(value, minimumDigits: 7)
        writer.endLine()
      }
    }
    let expected = values.map {
      let digits = String($0)
      return digits + " " + String(repeating: "0", count: max(0, 7 - digits.count)) + digits + "\n"
    }.joined()
    #expect(text == expected)
  }

  @Test("lines go out in pieces of about 256 KiB, not one write per line nor one at the end")
  func largeWrites() {
    let line = String(repeating: "x", count: 99)
    let (text, writes) = written { writer in
      for _ in 0..<100_000 {
        writer.append(contentsOf: line)
        writer.endLine()
      }
    }
    #expect(text.utf8.count == 10_000_000)
    #expect(writes == 10_000_000 / LineWriter.flushThreshold + 1)
  }
}
