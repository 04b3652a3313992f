/// The known names closest to a name that is not known, for errors that say what was probably meant.
public enum NameSuggestions {
  /// Up to `count` of `known`, closest to `name` first (by edit distance, ignoring case); a name sharing no more
  /// than chance with `name` is left out, so an empty result means nothing is close.
  public static func closest(to name: String, in known: some Sequence<String>, count: Int = 3) -> [String] {
    let target = Array(name.lowercased())
    let scored = Set(known).map { candidate -> (String, Int) in
      (candidate, distance(target, Array(candidate.lowercased())))
    }
    let limit = max(3, target.count / 2)
    return scored.filter { $0.1 <= limit }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(count).map(\.0)
  }

  /// "closest: A, B" or, when nothing is close, "known: A, B, … (N in all)"; "nothing is known" for none.
  public static func describe(_ name: String, in known: [String]) -> String {
    let close = closest(to: name, in: known)
    if !close.isEmpty { return "closest: " + close.joined(separator: ", ") }
    if known.isEmpty { return "the trace has none" }
    let sorted = known.sorted()
    return "known: " + sorted.prefix(5).joined(separator: ", ")
      + (sorted.count > 5 ? ", … (\(sorted.count) in all)" : "")
  }

  /// Levenshtein distance.
  static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[b.count]
  }
}
