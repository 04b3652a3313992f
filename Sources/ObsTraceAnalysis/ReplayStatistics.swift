import ObsTraceFormat

/// Counts per property and per scope label, and the edges of the dependency graph: a consumer of facts.
public struct ReplayStatistics: ReplayConsumer {
  /// An edge of the dependency graph: one object's property and a scope label.
  public struct Edge: Hashable, Sendable {
    public var object: UInt32
    public var property: UInt32
    public var label: UInt32
  }

  public private(set) var properties = DenseTable<PropertyStatistics>()
  /// By label id.
  public var scopes: DenseTable<ScopeStatistics> {
    guard let pending = pendingScopeReads else { return scopeTable }
    var scopes = scopeTable
    scopes.withExisting(pending.label) { $0.reads[pending.property, default: 0] += pending.count }
    return scopes
  }
  private var scopeTable = DenseTable<ScopeStatistics>()
  /// Reads of one property in runs of one label in a row, not yet added to that label's `reads` (one hash per run
  /// of reads, not per read: a scope reads one property of many objects, a row of a list the same of each row).
  private var pendingScopeReads: (label: UInt32, property: UInt32, count: Int)?
  /// Reads of a property inside runs of a scope, per object (a read in a nested run counts for the runs it merged
  /// into too).
  public var readEdges: [Edge: Int] {
    var edges: [Edge: Int] = [:]
    readCounts.forEach { key, counts in
      counts.forEach { edges[Edge(object: key.object, property: key.property, label: $0)] = $1 }
    }
    return edges
  }
  /// The counts behind `readEdges`, by object property (an array lookup), then label: a read in a scope is counted
  /// without hashing.
  private var readCounts = KeyTable<LabelCounts>()
  /// Invalidations of a scope by writes of a property, per object: all, and those by writes that changed nothing.
  public private(set) var invalidationEdges: [Edge: (all: Int, wasted: Int)] = [:]
  /// Whether to keep the graph's edges (two hash lookups per read in a scope).
  public var collectsEdges: Bool
  /// The property of each write whose didSet is not in the trace (`WriteFact.unfinished`), in the order stated.
  public private(set) var unfinishedWrites: [UInt32] = []
  /// Per nested run still open (one begun inside another), its reads so far by object property, its own and those
  /// of the runs nested in it: when it ends they are counted again for the run they merge into
  /// (`RunEndedFact.mergedInto`), as Observation merges a nested tracking's access list into the enclosing one.
  /// Empty while no run is nested, so that a read costs one test.
  private var nestedReads: [UInt32: [PropertyKey: Int]] = [:]

  public init(collectsEdges: Bool = true) {
    self.collectsEdges = collectsEdges
  }

  /// Mutates a label's statistics in place if the label began a run (`scopes[label]?.x += 1` would copy them,
  /// and their dictionaries, on every call).
  private mutating func modifyScope(_ label: UInt32, _ body: (inout ScopeStatistics) -> Void) {
    _ = scopeTable.withExisting(label, body)
  }

  /// Adds the reads still pending to their label's counts, so that `scopes` is the table itself, not a copy with
  /// them added (at the end of a replay).
  public mutating func finish() { flushScopeReads() }

  /// A nested run's reads, counted for the run they merged into (label `label`, scope `run`), and kept for the run
  /// that one merges into in turn if it is nested too. Out of line: once per nested run.
  @inline(never)
  private mutating func mergeNestedReads(_ reads: [PropertyKey: Int], into label: UInt32, run: UInt32) {
    for (key, count) in reads {
      modifyScope(label) { $0.reads[key.property, default: 0] += count }
      if collectsEdges { readCounts.withState(key, default: LabelCounts()) { $0.add(label, count: count) } }
    }
    if nestedReads[run] != nil { nestedReads[run]!.merge(reads, uniquingKeysWith: +) }
  }

  /// Adds the pending reads to their label's counts.
  @inline(never)
  private mutating func flushScopeReads() {
    guard let pending = pendingScopeReads else { return }
    pendingScopeReads = nil
    modifyScope(pending.label) { $0.reads[pending.property, default: 0] += pending.count }
  }

  @inline(__always)
  public mutating func consume(_ fact: ReplayFact) {
    switch fact {
    case .read(let read) where read.atEnd:
      // Stated again at the end, counted when first stated: not known to be a read of the program.
      properties.withValue(read.key.property, default: PropertyStatistics()) {
        $0.reads -= 1
        $0.accessesAtEnd += 1
      }
    case .read(let read):
      properties.withValue(read.key.property, default: PropertyStatistics()) {
        $0.reads += 1
        if read.scope != 0 { $0.trackedReads += 1 }
        if read.stale { $0.staleReads += 1 }
      }
      if read.label != 0 {
        if let pending = pendingScopeReads, pending.label == read.label, pending.property == read.key.property {
          pendingScopeReads!.count += 1
        } else if scopeTable.withExisting(read.label, { _ in true }) == true {
          flushScopeReads()
          pendingScopeReads = (read.label, read.key.property, 1)
        }
        if collectsEdges {
          readCounts.withState(read.key, default: LabelCounts()) { $0.add(read.label) }
        }
        if !nestedReads.isEmpty { nestedReads[read.scope]?[read.key, default: 0] += 1 }
      }
    case .writeBegan(let write):
      // The `_modify`'s own access, counted as a read: part of the write (judged on its thread's events).
      properties.withValue(write.key.property, default: PropertyStatistics()) {
        if write.ownAccess { $0.reads -= 1 }
        $0.writes += 1
        // A write, counted once however many waiting instances it is coalesced into (each scope counts it below).
        if write.coalescedList != nil { $0.coalescedWrites += 1 }
      }
      if let list = write.coalescedList {
        for coalesced in list { modifyScope(coalesced.label) { $0.coalescedWrites += coalesced.instances } }
      }
    case .write(let write):
      if write.unfinished { unfinishedWrites.append(write.key.property) }
      let fanOut = write.firedCount
      properties.withValue(write.key.property, default: PropertyStatistics()) { statistics in
        if fanOut > statistics.maximumFanOut { statistics.maximumFanOut = fanOut }
        if write.throughModify {
          if write.outcome == .unknown {
            statistics.uncomparedWrites += 1
            statistics.uncomparedBecause[write.uncompared] += 1
          } else {
            statistics.comparedWrites += 1
          }
        }
        if write.outcome == .unchanged {
          statistics.noopWrites += 1
          statistics.wastedInvalidations += fanOut
        }
      }
      if write.outcome == .unchanged {
        for fire in write.fired {
          modifyScope(fire.label) { $0.wastedInvalidations += 1 }
          if collectsEdges {
            invalidationEdges[Edge(object: write.key.object, property: write.key.property, label: fire.label)]?
              .wasted += 1
          }
        }
      } else if write.outcome == .unknown && write.throughModify && fanOut > 0 {
        // Not compared: wasted or not, nobody knows; the scopes it fired have a least wasted count.
        for fire in write.fired { modifyScope(fire.label) { $0.uncomparedInvalidations += 1 } }
      }
    case .runBegan(let run):
      // Tested in place: `scopeTable[run.label] == nil` copied the statistics (and their tables) out.
      if scopeTable.withExisting(run.label, { _ in }) == nil { scopeTable[run.label] = ScopeStatistics(kind: run.kind) }
      if run.parent != 0 { nestedReads[run.scope] = [:] }
    case .runEnded(let ended):
      if !nestedReads.isEmpty, let reads = nestedReads.removeValue(forKey: ended.run.scope), ended.mergedInto != 0 {
        mergeNestedReads(reads, into: ended.mergedInto, run: ended.run.parent)
      }
      scopeTable.withValue(ended.run.label, default: ScopeStatistics(kind: ended.run.kind)) { statistics in
        statistics.runs += 1
        if ended.endedAtTraceEnd { statistics.runsEndedAtTraceEnd += 1 }
        if ended.firstOfInstance { statistics.instances += 1 }
        if ended.redundant {
          statistics.redundantRuns += 1
          if !ended.afterFire { statistics.unfiredRedundantRuns += 1 }
        }
        if ended.possiblyRedundant { statistics.possiblyRedundantRuns += 1 }
        if ended.sequence != 0 { statistics.isolations[ended.isolation, default: 0] += 1 }
        if ended.sequence != 0 && ended.firstOfInstance { statistics.sequences += 1 }
        statistics.threads.insert(ended.run.thread)
      }
    case .fire(let fire):
      // The last value's tracking of an ended `Observations` sequence: nothing is invalidated (see FireFact).
      if fire.afterSequenceEnded { return }
      modifyScope(fire.label) {
        $0.invalidations += 1
        if fire.predicted { $0.predictedInvalidations += 1 }
      }
      if let cause = fire.cause {
        properties.withValue(cause.property, default: PropertyStatistics()) {
          $0.invalidations += 1
          if fire.predicted { $0.predictedInvalidations += 1 }
        }
        if collectsEdges {
          invalidationEdges[Edge(object: cause.object, property: cause.property, label: fire.label), default: (0, 0)]
            .all += 1
        }
      } else {
        modifyScope(fire.label) { $0.unexplainedInvalidations += 1 }
      }
    case .sequenceEnded(let ended):
      if let ending = ended.ending, ended.label != 0 {
        modifyScope(ended.label) { $0.endings[ending.description, default: 0] += 1 }
      }
    case .cancel(let cancel):
      if cancel.reason == .sequenceEnded || cancel.reason == .objectsFreed {
        modifyScope(cancel.label) { $0.endedWithoutFire[cancel.reason.description, default: 0] += 1 }
      }
    case .objectCreated, .objectFreed, .anomaly:
      break
    }
  }
}

/// Counts by scope label for one object property: a short list while few labels read it (the rule: no hashing),
/// a dictionary past `listed` of them (a property every scope reads).
struct LabelCounts {
  static let listed = 16
  /// The first label, held inline (most object properties are read by one scope's runs: no list allocated for
  /// them); 0 while none (a read in no scope is never counted here).
  private var firstLabel: UInt32 = 0
  private var firstCount = 0
  private var few: [(label: UInt32, count: Int)] = []
  private var many: [UInt32: Int] = [:]

  mutating func add(_ label: UInt32, count: Int = 1) {
    if firstLabel == label || firstLabel == 0 {
      firstLabel = label
      firstCount += count
      return
    }
    guard many.isEmpty else { return many[label, default: 0] += count }
    if let index = few.firstIndex(where: { $0.label == label }) {
      few[index].count += count
    } else if few.count < Self.listed {
      few.append((label, count))
    } else {
      for (label, count) in few { many[label] = count }
      few = []
      many[label, default: 0] += count
    }
  }

  func forEach(_ body: (UInt32, Int) -> Void) {
    if firstLabel != 0 { body(firstLabel, firstCount) }
    for (label, count) in few { body(label, count) }
    for (label, count) in many { body(label, count) }
  }
}
