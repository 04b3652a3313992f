/// A set of small non-negative integers, a bit each up to the largest: for numbers the reader counts (a write's place
/// among the trace's writes), never for ids a trace gives, which a hostile file sets near 2^32 (`DenseTable` for those).
struct BitSet {
  private var words: [UInt64] = []

  mutating func insert(_ member: Int) {
    let word = member >> 6
    if word >= words.count { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
    words[word] |= 1 << UInt64(member & 63)
  }

  func contains(_ member: Int) -> Bool {
    let word = member >> 6
    return word < words.count && words[word] & (1 << UInt64(member & 63)) != 0
  }
}
