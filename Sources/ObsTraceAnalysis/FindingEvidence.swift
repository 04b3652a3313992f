import ObsTraceFormat

/// What findings rest on, gathered from facts by where it happens: writes that changed nothing and stale reads
/// by site, untracked reads, fan-outs, the threads that wrote each object property and used each type. `Findings` turns it into findings.
public struct FindingEvidence: ReplayConsumer {
  struct SiteKey: Hashable {
    var property: UInt32
    var stack: UInt32
  }

  struct LabelKey: Hashable {
    var property: UInt32
    var label: UInt32
  }

  /// A set of threads that costs nothing until a second thread joins: the common case is one.
  struct ThreadSet {
    /// None is `TraceFormat.reservedThread`, which the reader never yields.
    var first = TraceFormat.reservedThread
    var others: Set<UInt32> = []

    mutating func insert(_ thread: UInt32) {
      if first == TraceFormat.reservedThread {
        first = thread
      } else if thread != first {
        others.insert(thread)
      }
    }

    var count: Int { first == TraceFormat.reservedThread ? 0 : 1 + others.count }
    var all: [UInt32] { first == TraceFormat.reservedThread ? [] : ([first] + others).sorted() }
  }

  public let fanOutThreshold: Int
  private(set) var noopWrites: [SiteKey: Int] = [:]
  /// Scope runs invalidated by those writes, by site (not the property's total over every site).
  private(set) var noopWastedInvalidations: [SiteKey: Int] = [:]
  private(set) var staleReads: [SiteKey: Int] = [:]
  /// Reads in a scope that raced a write of their property on another thread, by property and scope label.
  private(set) var racingReads: [LabelKey: Int] = [:]
  /// The racing reads of an object property whose raced write has not ended yet, by that object property: taken
  /// back from `racingReads` when the next write of it to end changed nothing (compared, unchanged), since there
  /// was no old value to see (tryout18's R11: `g.level += 0` on one thread, an `Observations` loop reading it on
  /// another, was a stale-read warning). Empty but while such a write is in progress: one test a write.
  private var racingUntilWriteEnds: [PropertyKey: [LabelKey: Int]] = [:]
  /// Reads outside any scope, by site.
  var untrackedReads: [SiteKey: Int] {
    guard let pending = pendingUntrackedReads, pending.count != 0 else { return untrackedReadCounts }
    var counts = untrackedReadCounts
    counts[pending.site, default: 0] += pending.count
    return counts
  }
  private var untrackedReadCounts: [SiteKey: Int] = [:]
  /// Accesses outside any scope at the end of the recording (`ReadFact.atEnd`), by site: not in `untrackedReads`.
  private(set) var accessesAtEnd: [SiteKey: Int] = [:]
  /// Untracked reads of one site in a row, not yet added to `untrackedReadCounts` (one hash per run of reads, not
  /// per read: a loop reads one property at one site millions of times).
  private var pendingUntrackedReads: (site: SiteKey, count: Int)?
  /// Writes that fired more than `fanOutThreshold` scopes, by property and site: how many, and the most fired.
  private(set) var fanOuts: [SiteKey: (count: Int, largest: Int)] = [:]
  /// The threads that wrote an object property written on several: its first writer (`WriteBeganFact.firstWriter`,
  /// which the machine keeps in its state of each object property), the others, and the stack of the first write
  /// from another thread with one recorded (0: none), the site its cross-thread-write finding names. Only object
  /// properties written on more than one thread: no table of every object property here.
  private var sharedWriters: [PropertyKey: CrossThreadWrite] = [:]
  /// The object properties written on more than one thread, in the order they became so: what
  /// `crossThreadWrites` reads, rather than every object's entry.
  private var sharedKeys: [PropertyKey] = []
  /// Writes that began while another thread was writing the same object property (`WriteBeganFact.overlapping`),
  /// by property: how many, of which objects, and the stack of the first with one recorded (its site).
  private var overlappingWrites: [UInt32: (writes: Int, objects: Set<UInt32>, stack: UInt32)] = [:]
  private var typeThreads = DenseTable<ThreadSet>()
  /// The last (type, thread) put in the sets above: inserting it again changes nothing, and runs of one thread's
  /// events about one type are the rule.
  private var lastTypeThread: (type: UInt32, thread: UInt32) = (0, TraceFormat.reservedThread)

  public init(fanOutThreshold: Int = 10) {
    self.fanOutThreshold = fanOutThreshold
  }

  @inline(__always)
  public mutating func consume(_ fact: ReplayFact) {
    switch fact {
    case .read(let read) where read.atEnd:
      // Stated again at the end: taken out of the untracked reads it was counted in, and kept apart.
      let site = SiteKey(property: read.key.property, stack: read.stack)
      uncountOwnAccess(site)
      Self.add(1, at: site, in: &accessesAtEnd)
    case .read(let read):
      noteTypeThread(read.type, read.thread)
      if read.stale { Self.add(1, at: SiteKey(property: read.key.property, stack: read.stack), in: &staleReads) }
      if read.racing, read.scope != 0 {
        let key = LabelKey(property: read.key.property, label: read.label)
        Self.add(1, at: key, in: &racingReads)
        racingUntilWriteEnds[read.key, default: [:]][key, default: 0] += 1
      }
      if read.scope == 0 {
        let site = SiteKey(property: read.key.property, stack: read.stack)
        if let pending = pendingUntrackedReads, pending.site == site {
          pendingUntrackedReads!.count += 1
        } else {
          if let pending = pendingUntrackedReads, pending.count != 0 {
            Self.add(pending.count, at: pending.site, in: &untrackedReadCounts)
          }
          pendingUntrackedReads = (site, 1)
        }
      }
    case .writeBegan(let write):
      if write.ownAccess { uncountOwnAccess(SiteKey(property: write.key.property, stack: write.ownAccessStack)) }
      noteTypeThread(write.type, write.thread)
      if write.firstWriter != write.thread { noteSharedWrite(write.key, write.thread, write.stack, write.firstWriter) }
      if write.overlapping { noteOverlappingWrite(write.key, write.stack) }
    case .write(let write):
      if !racingUntilWriteEnds.isEmpty { settleRacingReads(write) }
      if write.outcome == .unchanged {
        let site = SiteKey(property: write.key.property, stack: write.stack)
        Self.add(1, at: site, in: &noopWrites)
        Self.add(write.firedCount, at: site, in: &noopWastedInvalidations)
      }
      if write.firedCount > fanOutThreshold {
        noteFanOut(SiteKey(property: write.key.property, stack: write.stack), write.firedCount)
      }
    case .objectCreated, .objectFreed, .runBegan, .runEnded, .fire, .cancel, .sequenceEnded, .anomaly:
      break
    }
  }

  /// Adds to a count, out of line: the counts above change on a few facts only, and `counts[key, default: 0] += n`
  /// written inline made the optimizer create and consume its default closures on every fact (callgrind: 18
  /// instructions an event on the loop's trace).
  @inline(never)
  private static func add<Key: Hashable>(_ amount: Int, at key: Key, in counts: inout [Key: Int]) {
    counts[key, default: 0] += amount
  }

  /// Settles the racing reads of the property `write` ended: a write that changed nothing (compared) had no old
  /// value to show them, and they are taken back; any other leaves them counted (a write not compared may have
  /// changed it). The first write of the property to end after the reads settles them: another thread's write of it
  /// in progress at once is a `concurrent-write` of its own.
  @inline(never)
  private mutating func settleRacingReads(_ write: WriteFact) {
    guard let reads = racingUntilWriteEnds.removeValue(forKey: write.key), write.outcome == .unchanged else { return }
    for (key, count) in reads {
      let left = (racingReads[key] ?? 0) - count
      racingReads[key] = left > 0 ? left : nil
    }
  }

  /// Takes back the untracked read a `_modify` write made of its own property (`WriteBeganFact.ownAccess`), or an
  /// access stated again at the end (`ReadFact.atEnd`), at its site: in the pending run when no other site's read came in between (one thread, as a rule), else in the
  /// counts (another thread read elsewhere in between).
  private mutating func uncountOwnAccess(_ site: SiteKey) {
    if let pending = pendingUntrackedReads, pending.site == site, pending.count > 0 {
      pendingUntrackedReads!.count -= 1
    } else if let count = untrackedReadCounts[site] {
      untrackedReadCounts[site] = count > 1 ? count - 1 : nil
    }
  }

  /// A write at `site` that fired `fired` scopes, more than the threshold. Out of line: a rare case.
  @inline(never)
  private mutating func noteFanOut(_ site: SiteKey, _ fired: Int) {
    let previous = fanOuts[site] ?? (0, 0)
    fanOuts[site] = (previous.count + 1, max(previous.largest, fired))
  }

  /// A write of `key` on `thread`, not the thread that wrote it first: the property is written on several. Out of
  /// line: a rare case.
  @inline(never)
  private mutating func noteSharedWrite(_ key: PropertyKey, _ thread: UInt32, _ stack: UInt32, _ firstWriter: UInt32) {
    if sharedWriters[key] == nil {
      sharedKeys.append(key)
      sharedWriters[key] = CrossThreadWrite(object: key.object, firstWriter: firstWriter, otherWriters: [], stack: 0)
    }
    sharedWriters[key]!.otherWriters.insert(thread)
    if stack != 0, sharedWriters[key]!.stack == 0 { sharedWriters[key]!.stack = stack }
  }

  /// A write that began inside another thread's write of the same object property. Out of line: a rare case.
  @inline(never)
  private mutating func noteOverlappingWrite(_ key: PropertyKey, _ stack: UInt32) {
    overlappingWrites[key.property, default: (0, [], 0)].writes += 1
    overlappingWrites[key.property]!.objects.insert(key.object)
    if overlappingWrites[key.property]!.stack == 0 { overlappingWrites[key.property]!.stack = stack }
  }

  @inline(__always)
  private mutating func noteTypeThread(_ type: UInt32, _ thread: UInt32) {
    guard type != 0, lastTypeThread.type != type || lastTypeThread.thread != thread else { return }
    lastTypeThread = (type, thread)
    typeThreads.withValue(type, default: ThreadSet()) { $0.insert(thread) }
  }

  /// One object's property written from more than one thread: which threads, and where another thread than its
  /// first writer first wrote it.
  public struct CrossThreadWrite: Sendable, Equatable {
    public var object: UInt32
    /// The thread that wrote it first in the trace.
    public var firstWriter: UInt32
    /// The other threads that wrote it.
    public var otherWriters: Set<UInt32>
    /// The stack of the first write from one of `otherWriters` that has one recorded (0: none).
    public var stack: UInt32

    /// Every thread that wrote it, in increasing order.
    public var threads: [UInt32] { ([firstWriter] + otherWriters.subtracting([firstWriter])).sorted() }
  }

  /// Objects whose property more than one thread wrote, by property, each with its own threads and site, in the
  /// order they became so (a finding says each object's numbers and site, never one object's site with another's
  /// count of threads).
  public var crossThreadWrites: [UInt32: [CrossThreadWrite]] {
    var result: [UInt32: [CrossThreadWrite]] = [:]
    for key in sharedKeys {
      guard let writes = sharedWriters[key] else { continue }
      result[key.property, default: []].append(writes)
    }
    return result
  }

  /// Properties written by two threads at once (one's willSet between the other's willSet and didSet, on one
  /// object): how many such writes, on how many objects, and the first one's stack (0: none recorded), by property.
  public var concurrentWrites: [UInt32: (writes: Int, objects: Int, stack: UInt32)] {
    overlappingWrites.mapValues { ($0.writes, $0.objects.count, $0.stack) }
  }

  /// The objects of each property that two threads wrote at once (`concurrentWrites`).
  public var concurrentlyWrittenObjects: [UInt32: Set<UInt32>] { overlappingWrites.mapValues(\.objects) }

  /// Per type, the threads its objects were read or written on.
  public var threadsByType: [UInt32: [UInt32]] {
    var result: [UInt32: [UInt32]] = [:]
    for (type, threads) in typeThreads { result[type] = threads.all }
    return result
  }
}
