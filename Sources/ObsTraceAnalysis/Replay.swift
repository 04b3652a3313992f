import ObsTraceFormat

/// The replay every report uses: the machine (`ReplayMachine`) feeding the statistics (`ReplayStatistics`), the
/// evidence of findings (`FindingEvidence`) and, when set, `onFact` (a timeline, an export). A command that needs
/// less runs the machine with its own consumer.
public struct Replay {
  public struct Configuration: Sendable {
    /// A write that fires more scopes than this is a fan-out finding.
    public var fanOutThreshold = 10

    public init(fanOutThreshold: Int = 10) {
      self.fanOutThreshold = fanOutThreshold
    }
  }

  struct Consumers: ReplayConsumer {
    var statistics: ReplayStatistics
    var evidence: FindingEvidence
    var extra: ((ReplayFact) -> Void)? {
      didSet { hasExtra = extra != nil }
    }
    /// Whether `extra` is set: tested per fact instead of `extra` itself, whose optional closure would be copied
    /// (and its context retained and released) on every fact when there is none, as in a plain report.
    private var hasExtra = false

    init(statistics: ReplayStatistics, evidence: FindingEvidence) {
      self.statistics = statistics
      self.evidence = evidence
    }

    @inline(__always) mutating func consume(_ fact: ReplayFact) {
      statistics.consume(fact)
      evidence.consume(fact)
      if hasExtra { extra?(fact) }
    }
  }

  public typealias Edge = ReplayStatistics.Edge

  public let configuration: Configuration
  public private(set) var machine = ReplayMachine()
  private var consumers: Consumers

  /// Called with each fact as the machine establishes it.
  public var onFact: ((ReplayFact) -> Void)? {
    get { consumers.extra }
    set { consumers.extra = newValue }
  }

  /// `collectsEdges`: whether to keep the dependency graph's edges (`readEdges`, `invalidationEdges`), which a
  /// report does not print: a hashed count per read in a scope and per fire when kept.
  public init(configuration: Configuration = Configuration(), collectsEdges: Bool = true) {
    self.configuration = configuration
    consumers = Consumers(
      statistics: ReplayStatistics(collectsEdges: collectsEdges),
      evidence: FindingEvidence(fanOutThreshold: configuration.fanOutThreshold))
  }

  /// Replays a whole recording: each of `events` in order (they must come in time order, see
  /// `TimeOrderedEvents`), then `finish`. What a command or a test that has every event at hand calls, so that none
  /// can forget the end (`TraceAnalysis.replay(_:)` for a trace file).
  public mutating func replay(_ events: some Sequence<TraceEvent>) {
    for event in events { consume(event) }
    finish()
  }

  /// Whether the trace was started by code while the program ran (its header says so): set before the first
  /// event, it lets a write in progress at the start end without its willSet (`ReplayMachine.startedWhileRunning`).
  public var startedWhileRunning: Bool {
    get { machine.startedWhileRunning }
    set { machine.startedWhileRunning = newValue }
  }

  /// Which threads the recording may have ended before their next event (`ReplayMachine.endCut`): set before
  /// `finish` (`replay(_:)` of a reader sets it from the trace).
  public var endCut: ReplayMachine.EndCut {
    get { machine.endCut }
    set { machine.endCut = newValue }
  }

  /// Names untraced scopes' labels as they print (`ReplayMachine.untracedLabelName`): their runs are then one instance
  /// per call site. Set before the first event.
  public mutating func namingUntracedLabels(_ labelName: @escaping (UInt32) -> String) {
    machine.untracedLabelName = labelName
  }

  /// Replays one event; events must come in time order (see `TimeOrderedEvents`). A caller that feeds events one by
  /// one calls `finish` after the last.
  public mutating func consume(_ event: TraceEvent) {
    machine.consume(event, into: &consumers)
  }

  /// Ends the runs whose end is not in the trace (`ReplayMachine.finish`), then settles what the consumers hold
  /// pending (`ReplayStatistics.finish`): reading the statistics after it copies nothing. Call once, after the last
  /// event.
  public mutating func finish() {
    machine.finish(into: &consumers)
    consumers.statistics.finish()
  }

  public var statistics: ReplayStatistics { consumers.statistics }
  public var evidence: FindingEvidence { consumers.evidence }
  public var properties: DenseTable<PropertyStatistics> { consumers.statistics.properties }
  public var scopes: DenseTable<ScopeStatistics> { consumers.statistics.scopes }
  public var readEdges: [ReplayStatistics.Edge: Int] { consumers.statistics.readEdges }
  public var invalidationEdges: [ReplayStatistics.Edge: (all: Int, wasted: Int)] {
    consumers.statistics.invalidationEdges
  }
  public var events: Int { machine.events }
  public var firstTime: UInt64? { machine.firstTime }
  public var lastTime: UInt64 { machine.lastTime }
  public var threadsSeen: Set<UInt32> { machine.threadsSeen }
  public var mainActorThread: UInt32? { machine.mainActorThread }
  public var typeStatistics: [UInt32: TypeStatistics] { machine.typeStatistics }
  public var liveRunCount: Int { machine.liveRunCount }
  public var anomalies: [AnomalyFact.Kind: Int] { machine.anomalies }
}
