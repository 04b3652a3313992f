import ObsTraceAnalysis
import Testing

@Suite("JSON strings")
struct JSONStringTests {
  @Test("a name with nothing to escape is quoted as it is; quotes, backslashes and control characters are escaped")
  func escapes() {
    #expect(jsonString("TodoList.items") == "\"TodoList.items\"")
    #expect(jsonString("Box<Int>.café ✓") == "\"Box<Int>.café ✓\"")
    #expect(jsonString("") == "\"\"")
    #expect(jsonString("a\"b\\c") == "\"a\\\"b\\\\c\"")
    #expect(jsonString("l1\nl2\r\t\u{1}é") == "\"l1\\nl2\\r\\t\\u0001é\"")
  }
}
