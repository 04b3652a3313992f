import ObsTraceAnalysis
import ObsTraceFormat

/// Which slices a filtered export keeps, decided by a first replay where a slice's end says what its begin cannot:
/// a run is kept when the timeline would show its line (what it read is known at its end: --object, --property),
/// and a write when the timeline would show its line (whom it invalidated is known at its end: --scope). The export's
/// replay then begins only those slices. Memory: a bit per run and per write.
struct ExportSelection: ReplayConsumer {
  private var matcher: TimelineFilter.Matcher
  /// Runs kept, by scope id (ids a trace gives, which a hostile one puts near 2^32: a table, not a bit per id).
  private(set) var runs = DenseTable<Void>()
  /// Writes kept, by their place among the trace's writes (the replay's `writeBegan` facts, in order).
  private(set) var writes = BitSet()
  private var writesBegun = 0
  /// Per thread, the writes begun and not yet ended: key, time and place (a write's fact names its begin's time).
  private var openWrites: [UInt32: [(key: PropertyKey, time: UInt64, place: Int)]] = [:]

  init(matcher: TimelineFilter.Matcher) {
    self.matcher = matcher
  }

  mutating func consume(_ fact: ReplayFact) {
    switch fact {
    case .runEnded(let ended):
      let run = ended.run
      if matcher.matches(time: run.time, thread: run.thread, keys: ended.reads, label: run.label, scope: run.scope) {
        runs[run.scope] = ()
      }
    case .writeBegan(let write):
      openWrites[write.thread, default: []].append((write.key, write.time, writesBegun))
      writesBegun += 1
    case .write(let write):
      guard
        let index = openWrites[write.thread]?.lastIndex(where: { $0.key == write.key && $0.time == write.time })
      else { return }
      let place = openWrites[write.thread]!.remove(at: index).place
      if matcher.matches(
        time: write.time, thread: write.thread, keys: CollectionOfOne(write.key), label: nil, labels: write.fired)
      {
        writes.insert(place)
      }
    default: break
    }
  }
}
