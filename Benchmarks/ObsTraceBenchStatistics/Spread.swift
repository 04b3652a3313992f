/// The median of a figure's repetitions, and their range: what `scripts/bench` prints for every repeated row.
///
/// A figure taken once on a shared machine is whatever else ran at that moment; taken several times (each
/// repetition itself the best of a few runs, its case and baseline alternating), its median says where it sits and
/// its range how far one run can stray. A ratio's spread is the range of the per-repetition ratios, each of a case
/// and its baseline measured side by side in that repetition, not the ratio of two medians.
public struct Spread: Sendable, Equatable {
  /// The middle value (the mean of the two middle ones for an even count).
  public var median: Double
  /// The lowest and the highest value.
  public var low: Double
  public var high: Double
  /// How many values.
  public var count: Int

  /// The spread of `values`, which must not be empty.
  public init(_ values: [Double]) {
    precondition(!values.isEmpty, "a spread of no values")
    let sorted = values.sorted()
    let middle = sorted.count / 2
    median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    low = sorted[0]
    high = sorted[sorted.count - 1]
    count = sorted.count
  }

  /// The ratio of `measured` to `baseline`, repetition by repetition (the two arrays in the same order, one value
  /// of each per repetition).
  public static func ofRatios(measured: [Double], baseline: [Double]) -> Spread {
    precondition(measured.count == baseline.count, "a ratio needs one baseline per measurement")
    return Spread(zip(measured, baseline).map { $0 / $1 })
  }

  /// The spread of `transform` of each value (a rate from a time: low and high swap when it decreases).
  public func map(_ transform: (Double) -> Double) -> Spread {
    var mapped = self
    let (a, b) = (transform(low), transform(high))
    mapped.median = transform(median)
    (mapped.low, mapped.high) = (min(a, b), max(a, b))
    return mapped
  }
}
