import ObsTraceAnalysis
import ObsTraceFormat

/// Per scope: which properties its runs read, which writes invalidated it (from where), and its first runs, for
/// the HTML report's "who read what" view. A consumer of the replay's facts: it counts by the trace's ids as the
/// facts come (no name is formed per fact) and names them once, from the trace's definitions, when the page asks
/// (`scopes(named:)`). Memory grows with scopes, properties and sites, and with at most `runsKept` runs per label,
/// never with the number of events.
final class WhoReadWhat {
  struct Run {
    var time: UInt64
    var thread: UInt32
    var scope: UInt32
    var reads: [String]
    var redundant: Bool
    /// Redundant if the writes through `_modify` not compared since its previous run changed nothing: not known.
    var possiblyRedundant: Bool
  }

  struct Invalidation: Hashable {
    var property: String
    var site: String
  }

  /// One scope label as the page prints it (labels that print alike are one).
  struct Scope {
    var runs = 0
    /// Property name → runs that read it.
    var reads: [String: Int] = [:]
    /// (property, site) → (invalidations, of which by writes that changed nothing, of which predicted: the scope is
    /// untraced, and the replay predicted its fire from Observation's rules; of which by writes through `_modify`
    /// not compared, which may have changed nothing: `wasted` is then a least count).
    var invalidatedBy: [Invalidation: Counts] = [:]
    var firstRuns: [Run] = []
  }

  struct Counts {
    var all = 0
    var wasted = 0
    var predicted = 0
    var uncompared = 0

    static func + (a: Counts, b: Counts) -> Counts {
      Counts(
        all: a.all + b.all, wasted: a.wasted + b.wasted, predicted: a.predicted + b.predicted,
        uncompared: a.uncompared + b.uncompared)
    }
  }

  /// A run as it came, named later: `order` places it among the runs of labels that print alike.
  private struct KeptRun {
    var order: Int
    var run: RunFact
    var reads: [PropertyKey]
    var redundant: Bool
    var possiblyRedundant: Bool
  }

  private struct ReadCount {
    var runs = 0
    /// The last run (by `order`) counted, so that a property read twice in one run counts once.
    var lastRun = -1
  }

  private struct Cause: Hashable {
    var property: UInt32
    var stack: UInt32
  }

  /// One label's counts, by id.
  private struct Tally {
    var runs = 0
    var reads: [UInt32: ReadCount] = [:]
    var invalidatedBy: [Cause: Counts] = [:]
    var firstRuns: [KeptRun] = []
  }

  let runsKept: Int
  private var tallies: [UInt32: Tally] = [:]
  private var runsSeen = 0

  init(runsKept: Int = 8) {
    self.runsKept = runsKept
  }

  func note(_ entry: ReplayFact) {
    switch entry {
    case .runEnded(let ended):
      let order = runsSeen
      runsSeen += 1
      let runsKept = runsKept
      Self.update(&tallies[ended.run.label, default: Tally()]) { tally in
        tally.runs += 1
        for read in ended.reads {
          Self.countOnce(&tally.reads[read.property, default: ReadCount()], run: order)
        }
        if tally.firstRuns.count < runsKept {
          tally.firstRuns.append(
            KeptRun(
              order: order, run: ended.run, reads: ended.reads, redundant: ended.redundant,
              possiblyRedundant: ended.possiblyRedundant))
        }
      }
    case .write(let write):
      guard !write.fired.isEmpty else { return }
      let cause = Cause(property: write.key.property, stack: write.stack)
      let wasted = write.outcome == .unchanged ? 1 : 0
      let uncompared = write.throughModify && write.outcome == .unknown ? 1 : 0
      for fire in write.fired {
        let predicted = write.predicted.contains(fire.scope) ? 1 : 0
        Self.update(&tallies[fire.label, default: Tally()]) { tally in
          tally.invalidatedBy[cause, default: Counts()] =
            tally.invalidatedBy[cause, default: Counts()]
            + Counts(all: 1, wasted: wasted, predicted: predicted, uncompared: uncompared)
        }
      }
    default:
      break
    }
  }

  private static func update(_ tally: inout Tally, _ body: (inout Tally) -> Void) { body(&tally) }

  private static func countOnce(_ count: inout ReadCount, run: Int) {
    guard count.lastRun != run else { return }
    count.lastRun = run
    count.runs += 1
  }

  /// The scopes by label as `definitions` print them (those of the whole trace: ids keep their meaning, and the
  /// names known at the end are the most complete), labels that print alike merged.
  func scopes(named definitions: TraceDefinitions) -> [String: Scope] {
    var scopes: [String: Scope] = [:]
    var kept: [String: [KeptRun]] = [:]
    var siteNames: [UInt32: String] = [:]
    func site(_ stack: UInt32) -> String {
      if let name = siteNames[stack] { return name }
      let name = definitions.site(ofStack: stack).map(SiteFormatting.describe) ?? ""
      siteNames[stack] = name
      return name
    }
    for (label, tally) in tallies {
      let name = definitions.labelName(label)
      var scope = scopes.removeValue(forKey: name) ?? Scope()
      scope.runs += tally.runs
      for (property, count) in tally.reads {
        scope.reads[definitions.propertyName(property), default: 0] += count.runs
      }
      for (cause, counts) in tally.invalidatedBy {
        let key = Invalidation(property: definitions.propertyName(cause.property), site: site(cause.stack))
        scope.invalidatedBy[key] = (scope.invalidatedBy[key] ?? Counts()) + counts
      }
      scopes[name] = scope
      kept[name, default: []].append(contentsOf: tally.firstRuns)
    }
    for (name, runs) in kept {
      scopes[name]?.firstRuns = runs.sorted { $0.order < $1.order }.prefix(runsKept).map { kept in
        Run(
          time: kept.run.time, thread: kept.run.thread, scope: kept.run.scope,
          reads: kept.reads.map { key in
            "\(definitions.typeName(ofObject: key.object))#\(key.object).\(definitions.shortPropertyName(key.property))"
          },
          redundant: kept.redundant, possiblyRedundant: kept.possiblyRedundant)
      }
    }
    return scopes
  }
}
