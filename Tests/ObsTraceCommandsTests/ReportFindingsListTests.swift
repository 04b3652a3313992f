import Testing

@testable import ObsTraceAnalysis
@testable import ObsTraceCommands

/// tryout15's K1: a realistic app's report had 152 findings, 134 of them `untracked-read`; the text showed the first
/// ten informational ones (all `untracked-read`) and `… 140 more informational`, so the `running-at-stop` its status
/// line pointed to ("see running-at-stop") and three `cross-thread-write` findings were not in it.
@Suite("The report's text lists of findings")
struct ReportFindingsListTests {
  static func finding(_ kind: Finding.Kind, _ number: Int) -> Finding {
    Finding(
      kind: kind, property: "Model.p\(number)", scope: nil, site: nil, count: 1, message: "\(kind.rawValue) \(number)",
      hint: "")
  }

  @Test("trace-wide information is always shown, and each kind's first finding before any kind's second")
  func everyKindShown() {
    let information =
      (0..<12).map { Self.finding(.untrackedRead, $0) } + [Self.finding(.runningAtStop, 0)]
      + (0..<3).map { Self.finding(.crossThreadWrite, $0) } + [Self.finding(.aliveAtEnd, 0)]
    let (shown, left) = ReportPrinter.shownInformation(information, top: 4)
    #expect(shown.map(\.message) == [
      "running-at-stop 0", "untracked-read 0", "untracked-read 1", "cross-thread-write 0", "alive-at-end 0",
    ])
    #expect(left.count == 12)
    #expect(Set(shown.map(\.message)).union(left.map(\.message)).count == information.count)
    // The line under the list says what was left, by kind.
    #expect(
      ReportPrinter.moreInformation(left)
        == "  … 12 more informational: 10 untracked-read, 2 cross-thread-write (see --top or --format json)")
    #expect(ReportPrinter.moreInformation([]) == nil)
  }
}
