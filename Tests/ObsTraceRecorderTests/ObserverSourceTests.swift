import Testing

@testable import ObsTraceSymbols

/// Where an observer's body lies in the user's text (`ObserverSource`), which places the writes the `@Observable`
/// macro's re-formatting moved (docs/symbols.md, Approximate lines).
@Suite("Observer source")
struct ObserverSourceTests {
  @Test("an observer's body is found in the user's text: all on one line, or to its last line")
  func spans() {
    let text = """
      var level = 0 {
        didSet { if level > 10 { level = 10 } }  // } a brace in a comment
      }
      var target = 20 {
        didSet(old) {
          trail.append("didSet { \\(old) }")
          if target > 30 { target = 30 }
        }
      }
      var mode = 0 { willSet { a(); b() }
      }
      var open = 0 {
        didSet { a()
          b() }
      }
      """
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(ObserverSource.span(lines, first: 2, observer: "didSet").map { [$0.oneLine ? 1 : 0, $0.last] } == [1, 2])
    // From the first statement's line (the `#sourceLocation` line) to the line before the closing brace.
    #expect(ObserverSource.span(lines, first: 6, observer: "didSet").map { [$0.oneLine ? 1 : 0, $0.last] } == [0, 7])
    #expect(
      ObserverSource.span(lines, first: 10, observer: "willSet").map { [$0.oneLine ? 1 : 0, $0.last] } == [1, 10])
    // Opened on one line and closed on the next, after a statement: not one line.
    #expect(
      ObserverSource.span(lines, first: 13, observer: "didSet").map { [$0.oneLine ? 1 : 0, $0.last] } == [0, 14])
    // Never closed, or a line past the end.
    #expect(ObserverSource.span(["  didSet {", "    a()"], first: 1, observer: "didSet") == nil)
    #expect(ObserverSource.span(lines, first: 40, observer: "didSet") == nil)
  }
}
