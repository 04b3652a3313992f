import ObsTraceFormat

/// A property of one object: what Observation tracks.
public struct PropertyKey: Hashable, Sendable, Comparable {
  public var object: UInt32
  public var property: UInt32

  public init(object: UInt32, property: UInt32) {
    self.object = object
    self.property = property
  }

  public static func < (a: Self, b: Self) -> Bool { (a.object, a.property) < (b.object, b.property) }

  /// One word into the hasher, not two: the replay hashes a key per write.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(UInt64(object) << 32 | UInt64(property))
  }
}

/// Counts for one property (by property id, over all objects of its type).
public struct PropertyStatistics: Sendable, Equatable {
  public var reads = 0
  /// Accesses outside any scope at the end of the recording (`ReadFact.atEnd`), not in `reads`: each was a read,
  /// or the access of a `_modify` whose willSet the recording did not reach.
  public var accessesAtEnd = 0
  /// Reads while a tracking scope of ObsTrace's was open.
  public var trackedReads = 0
  public var writes = 0
  /// Writes through `_modify` found to leave the value unchanged (compared: see `comparedWrites`).
  public var noopWrites = 0
  /// Writes through `_modify` whose value was compared with the one before (unchanged or changed).
  public var comparedWrites = 0
  /// Writes through `_modify` that were not compared (a member that is not trivially copyable under the default
  /// `OBSTRACE_COMPARE=trivial`, comparison off, …: `uncomparedBecause`): whether they changed anything is
  /// unknown, and they are not counted as no-op writes. Version-1 traces did not record it (0).
  public var uncomparedWrites = 0
  /// Of `uncomparedWrites`, how many for each reason the trace gives.
  public var uncomparedBecause = UncomparedCounts()
  /// (write, fired scope) pairs caused by writes of this property.
  public var invalidations = 0
  /// Invalidations caused by writes that changed nothing.
  public var wastedInvalidations = 0
  /// Of `invalidations`, those predicted for tracking ObsTrace does not own (`untraced` scopes), not recorded.
  public var predictedInvalidations = 0
  /// Writes after a scope that read this property had fired but before it ran again: they fired nothing. A write is
  /// counted once however many such instances were waiting (each scope's `coalescedWrites` counts it once).
  public var coalescedWrites = 0
  public var staleReads = 0
  /// The most scopes one write of this property fired.
  public var maximumFanOut = 0

  public init() {}
}

/// Counts for one scope label (all the runs that carry it).
public struct ScopeStatistics: Sendable, Equatable {
  public var kind: ScopeKind
  /// Distinct instances, as recorded at the source (a harness, an iterator, an observer re-tracked after its
  /// fire; see docs/analysis.md).
  public var instances = 0
  public var runs = 0
  /// Times a run of this scope was fired by a write.
  public var invalidations = 0
  /// Of those, fired by writes that changed nothing.
  public var wastedInvalidations = 0
  /// Of `invalidations`, fired by writes through `_modify` that were not compared (`PropertyStatistics`'s
  /// `uncomparedWrites`): whether they changed anything is not known, so `wastedInvalidations` is a least count,
  /// short by as many of these as changed nothing.
  public var uncomparedInvalidations = 0
  /// Of `invalidations`, those predicted (an `untraced` scope: tracking ObsTrace does not own), not recorded.
  public var predictedInvalidations = 0
  /// Runs that read only values no real change had touched since the instance's previous run.
  public var redundantRuns = 0
  /// Of `redundantRuns`, those that began with no write having fired their instance's previous run: not a write
  /// that changed nothing, but a re-run by itself (an `Observations` sequence iterated by several tasks re-runs its
  /// closure for each other iterator's fire).
  public var unfiredRedundantRuns = 0
  /// Runs not counted in `redundantRuns` only because a write through `_modify` that was not compared may have
  /// changed what they read: each read only what its previous run read, and no write known to change a value (one
  /// compared and found changed, or a setter's) touched it since that run began, but a write not compared did. So
  /// `redundantRuns` is a least count, short by as many of these as the writes not compared left unchanged.
  public var possiblyRedundantRuns = 0
  /// Of `runs`, untraced ones whose end is not in the trace (their thread recorded nothing after them), counted up
  /// to the trace's end (`ReplayMachine.finish`).
  public var runsEndedAtTraceEnd = 0
  /// Fires with no recorded write in progress on the firing thread: by a write ObsTrace did not record (of an
  /// `@Observable` declared without `import ObsTrace`, or one whose willSet a lossy trace lost).
  public var unexplainedInvalidations = 0
  /// Writes to what the scope read, after it fired and before it ran again.
  public var coalescedWrites = 0
  /// Property id → reads in this scope's runs, with those of runs nested in them (merged, as Observation does).
  public var reads: [UInt32: Int] = [:]
  /// For `Observations` runs: the type of the actor each ran on (0: nonisolated) → runs.
  public var isolations: [UInt32: Int] = [:]
  /// For `Observations`: the sequences (iterators) that ran.
  public var sequences = 0
  /// For `Observations` sequences: how they ended (cancelled, finished, threw, abandoned) → count.
  public var endings: [String: Int] = [:]
  /// For `Observations`: sequences with no end recorded when the trace ended (a loop still waiting, or cut off).
  public var sequencesRunningAtEnd: Int { max(0, sequences - endings.values.reduce(0, +)) }
  /// Runs whose observers were removed without a fire, by reason (sequence ended, objects freed).
  public var endedWithoutFire: [String: Int] = [:]
  /// Threads its runs ran on.
  public var threads: Set<UInt32> = []

  public init(kind: ScopeKind) {
    self.kind = kind
  }

  /// The sum of two labels' statistics, for labels that name one scope.
  public func merging(_ other: ScopeStatistics) -> ScopeStatistics {
    var sum = self
    sum.instances += other.instances
    sum.runs += other.runs
    sum.invalidations += other.invalidations
    sum.predictedInvalidations += other.predictedInvalidations
    sum.wastedInvalidations += other.wastedInvalidations
    sum.uncomparedInvalidations += other.uncomparedInvalidations
    sum.redundantRuns += other.redundantRuns
    sum.possiblyRedundantRuns += other.possiblyRedundantRuns
    sum.unfiredRedundantRuns += other.unfiredRedundantRuns
    sum.runsEndedAtTraceEnd += other.runsEndedAtTraceEnd
    sum.unexplainedInvalidations += other.unexplainedInvalidations
    sum.coalescedWrites += other.coalescedWrites
    sum.reads.merge(other.reads, uniquingKeysWith: +)
    sum.isolations.merge(other.isolations, uniquingKeysWith: +)
    sum.sequences += other.sequences
    sum.endings.merge(other.endings, uniquingKeysWith: +)
    sum.endedWithoutFire.merge(other.endedWithoutFire, uniquingKeysWith: +)
    sum.threads.formUnion(other.threads)
    return sum
  }
}

/// Objects of one type.
public struct TypeStatistics: Sendable, Equatable {
  public var created = 0
  public var freed = 0
  /// Objects made before the recording began and read or written while it ran, whether alive at
  /// its end or not. `created`, `freed` and alive at the end count the objects created in the trace only.
  public var seenOnly = 0
  /// Of `seenOnly`, those freed while recording.
  public var seenOnlyFreed = 0

  public init(created: Int = 0, freed: Int = 0, seenOnly: Int = 0, seenOnlyFreed: Int = 0) {
    self.created = created
    self.freed = freed
    self.seenOnly = seenOnly
    self.seenOnlyFreed = seenOnlyFreed
  }
}

/// `@Observable` registrars that recorded no event (of one creation site, or all of them).
///
/// A registrar is created with its object but can name it only at the object's first recorded event: until then
/// it has no subject and no address. One whose object was never read or written while recording names no object
/// and no type, and one object of a class with `@Observable` at k levels has k of them, so they are counted as
/// registrars, never as objects.
public struct RegistrarStatistics: Sendable, Equatable {
  public var created = 0
  public var freed = 0

  public var aliveAtEnd: Int { created - freed }

  public init(created: Int = 0, freed: Int = 0) {
    self.created = created
    self.freed = freed
  }
}

/// What the replay found worth a person's attention.
public struct Finding: Sendable, Equatable {
  public enum Kind: String, Sendable, CaseIterable {
    case noopWrite = "noop-write"
    case staleRead = "stale-read"
    case fanOut = "fan-out"
    case untrackedRead = "untracked-read"
    case untracedTracking = "untraced-tracking"
    case unrecordedWrite = "unrecorded-write"
    case leakedObject = "leaked-object"
    case aliveAtEnd = "alive-at-end"
    case inconsistentTrace = "inconsistent-trace"
    case redundantRun = "redundant-run"
    case crossThreadWrite = "cross-thread-write"
    case concurrentWrite = "concurrent-write"
    case offMainThread = "off-main-thread"
    case droppedEvents = "dropped-events"
    case truncated
    case damagedChunk = "damaged-chunk"
    case runningAtStop = "running-at-stop"
    case startedWhileRunning = "started-while-running"
    case forked
    case forgottenInstances = "forgotten-instances"
  }

  public var kind: Kind
  public var property: String?
  public var scope: String?
  public var site: String?
  public var count: Int
  public var message: String
  public var hint: String
  /// What the finding rests on: the recorded facts that make it so.
  public var evidence: String = ""
  /// The frame `site` names (file path and line), for outputs that point into the source: GitHub annotations,
  /// the HTML report.
  public var location: SymbolizedFrame? = nil
  /// Of a kind that is a warning when it shows a cost, found without one: a `noop-write` whose writes invalidated no
  /// scope run (nothing watched the value then) is information.
  public var withoutCost = false

  /// Warnings cost something or rest on evidence of a fault; `untracked-read`, `alive-at-end`, `running-at-stop`,
  /// `cross-thread-write`, `off-main-thread`, `started-while-running`, `forked` and `forgotten-instances` are information (what happened, or what
  /// the trace could not see; no fault shown: a race among writes is `concurrent-write`), and so is a finding
  /// `withoutCost`.
  public var isInformational: Bool {
    if withoutCost { return true }
    return switch kind {
    case .untrackedRead, .aliveAtEnd, .runningAtStop, .crossThreadWrite, .offMainThread, .startedWhileRunning, .forked,
      .forgottenInstances:
      true
    default: false
    }
  }
}

/// Writes not compared, counted by their reason (`UncomparedReason`).
public struct UncomparedCounts: Sendable, Equatable {
  var counts: SIMD8<Int32> = .zero

  public init() {}

  public subscript(reason: UncomparedReason) -> Int {
    get { Int(counts[Int(reason.rawValue)]) }
    set { counts[Int(reason.rawValue)] = Int32(clamping: newValue) }
  }

  /// The reasons with at least one write, in `UncomparedReason`'s order, with their counts.
  public var nonzero: [(reason: UncomparedReason, count: Int)] {
    UncomparedReason.allCases.compactMap { self[$0] > 0 ? ($0, self[$0]) : nil }
  }

  public static func + (left: Self, right: Self) -> Self {
    var sum = Self()
    sum.counts = left.counts &+ right.counts
    return sum
  }
}
