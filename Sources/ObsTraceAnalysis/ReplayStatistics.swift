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
  public private(set) var scopes = DenseTable<ScopeStatistics>()  // by label id
  /// Reads of a property inside runs of a scope, per object.
  public private(set) var readEdges: [Edge: Int] = [:]
  /// Invalidations of a scope by writes of a property, per object: all, and those by writes that changed nothing.
  public private(set) var invalidationEdges: [Edge: (all: Int, wasted: Int)] = [:]
  /// Whether to keep the graph's edges (two hash lookups per read in a scope).
  public var collectsEdges: Bool

  public init(collectsEdges: Bool = true) {
    self.collectsEdges = collectsEdges
  }

  public mutating func consume(_ fact: ReplayFact) {
    switch fact {
    case .read(let read):
      properties[read.key.property, default: PropertyStatistics()].reads += 1
      if read.scope != 0 { properties[read.key.property, default: PropertyStatistics()].trackedReads += 1 }
      if read.stale { properties[read.key.property, default: PropertyStatistics()].staleReads += 1 }
      if read.label != 0 {
        scopes[read.label]?.reads[read.key.property, default: 0] += 1
        if collectsEdges {
          readEdges[Edge(object: read.key.object, property: read.key.property, label: read.label), default: 0] += 1
        }
      }
    case .writeBegan(let write):
      properties[write.key.property, default: PropertyStatistics()].writes += 1
      for label in write.coalescedInto {
        properties[write.key.property, default: PropertyStatistics()].coalescedWrites += 1
        scopes[label]?.coalescedWrites += 1
      }
    case .write(let write):
      let fanOut = write.fired.count
      properties.withValue(write.key.property, default: PropertyStatistics()) { statistics in
        if fanOut > statistics.maximumFanOut { statistics.maximumFanOut = fanOut }
        if write.throughModify {
          if write.outcome == .unknown { statistics.uncomparedWrites += 1 } else { statistics.comparedWrites += 1 }
        }
        if write.outcome == .unchanged {
          statistics.noopWrites += 1
          statistics.wastedInvalidations += fanOut
        }
      }
      if write.outcome == .unchanged {
        for fire in write.fired {
          scopes[fire.label]?.wastedInvalidations += 1
          if collectsEdges {
            invalidationEdges[Edge(object: write.key.object, property: write.key.property, label: fire.label)]?
              .wasted += 1
          }
        }
      }
    case .runBegan(let run):
      if scopes[run.label] == nil { scopes[run.label] = ScopeStatistics(kind: run.kind) }
    case .runEnded(let ended):
      scopes.withValue(ended.run.label, default: ScopeStatistics(kind: ended.run.kind)) { statistics in
        statistics.runs += 1
        if ended.firstOfInstance { statistics.instances += 1 }
        if ended.redundant { statistics.redundantRuns += 1 }
        if ended.sequence != 0 { statistics.isolations[ended.isolation, default: 0] += 1 }
        statistics.threads.insert(ended.run.thread)
      }
    case .fire(let fire):
      scopes[fire.label]?.invalidations += 1
      if fire.predicted { scopes[fire.label]?.predictedInvalidations += 1 }
      if let cause = fire.cause {
        properties[cause.property, default: PropertyStatistics()].invalidations += 1
        if fire.predicted { properties[cause.property, default: PropertyStatistics()].predictedInvalidations += 1 }
        if collectsEdges {
          invalidationEdges[Edge(object: cause.object, property: cause.property, label: fire.label), default: (0, 0)]
            .all += 1
        }
      } else {
        scopes[fire.label]?.unexplainedInvalidations += 1
      }
    case .sequenceEnded(let ended):
      if let ending = ended.ending, ended.label != 0 {
        scopes[ended.label]?.endings[ending.description, default: 0] += 1
      }
    case .cancel(let cancel):
      if cancel.reason == .sequenceEnded || cancel.reason == .objectsFreed {
        scopes[cancel.label]?.endedWithoutFire[cancel.reason.description, default: 0] += 1
      }
    case .objectCreated, .objectFreed, .anomaly:
      break
    }
  }
}
