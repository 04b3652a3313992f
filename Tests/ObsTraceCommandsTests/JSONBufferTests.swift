import ObsTraceAnalysis
import ObsTraceTestSupport
import Testing

@testable import ObsTraceCommands

@Suite("JSON buffer")
struct JSONBufferTests {
  @Test("strings come out as jsonString quotes them: as they are, or with quotes, backslashes and controls escaped")
  func stringsAsJSONString() {
    var texts = [
      "TodoList.items", "Box<Int>.café ✓", "", "a\"b\\c", "l1\nl2\r\t\u{1}é", "\u{1f}\u{0}\u{7f}", "\\", "\"", "end\n",
    ]
    var generator = SeededGenerator()
    let alphabet = Array("ab\"\\\n\r\t\u{1}\u{1f} é✓<>")
    for _ in 0..<2_000 {
      let length = Int.random(in: 0...12, using: &generator)
      texts.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
    }
    for text in texts {
      var buffer = JSONBuffer()
      buffer.string(text)
      #expect(buffer.text == jsonString(text), "\(text.debugDescription), OBSTRACE_TEST_SEED=\(generator.seed)")
    }
    var none = JSONBuffer()
    none.string(nil as String?)
    #expect(none.text == "null")
  }

  @Test("numbers and booleans come out as string interpolation writes them")
  func numbersAsInterpolation() {
    let integers = [0, 1, 9, 10, 99, 100, 12_345, -1, -10, Int.max, Int.min]
    for value in integers {
      var buffer = JSONBuffer()
      buffer.number(value)
      #expect(buffer.text == "\(value)")
    }
    for value in [UInt64(0), 7, 1 << 40, UInt64.max] {
      var buffer = JSONBuffer()
      buffer.number(value)
      #expect(buffer.text == "\(value)")
    }
    var buffer = JSONBuffer()
    buffer.array([UInt32(3), 0, 12]) { $0.number($1) }
    buffer.bool(true)
    buffer.bool(false)
    buffer.array([String]()) { $0.string($1) }
    #expect(buffer.text == "[3,0,12]truefalse[]")
  }
}
