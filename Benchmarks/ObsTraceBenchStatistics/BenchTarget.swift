/// A row's target (issue 12's), and the verdict a spread of repetitions earns against it.
///
/// The rule, printed under the table and said in the README: "met" only when every repetition met the target (the
/// whole spread is inside it), "no" when none did (the whole spread is outside), "on the line" otherwise. A verdict
/// from the median alone flipped between runs of one build whenever the median sat near the target.
public enum BenchTarget: Sendable, Equatable {
  /// The figure must be at most this (a ratio, nanoseconds).
  case atMost(Double)
  /// The figure must be at least this (a rate).
  case atLeast(Double)

  /// The verdict on `spread`.
  public func verdict(_ spread: Spread) -> Verdict {
    switch self {
    case .atMost(let limit):
      if spread.high <= limit { return .met }
      if spread.low > limit { return .no }
      return .onTheLine
    case .atLeast(let limit):
      if spread.low >= limit { return .met }
      if spread.high < limit { return .no }
      return .onTheLine
    }
  }
}
