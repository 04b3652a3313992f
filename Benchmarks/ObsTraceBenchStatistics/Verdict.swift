/// Whether a row's figure meets its target, by `BenchTarget.verdict`'s rule.
public enum Verdict: String, Sendable, Equatable {
  /// Every repetition met the target.
  case met = "yes"
  /// No repetition met it.
  case no = "**no**"
  /// Some did, some did not: the figure is too close to the target for this machine to tell.
  case onTheLine = "on the line"
}
