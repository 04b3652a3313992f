import ObsTraceAnalysis
import ObsTraceFormat

/// Per scope: which properties its runs read, which writes invalidated it (from where), and its first runs, for
/// the HTML report's "who read what" view. A consumer of the timeline; memory grows with scopes, properties and
/// sites, and with at most `runsKept` runs per scope, never with the number of events.
final class WhoReadWhat {
  struct Run {
    var time: UInt64
    var thread: UInt32
    var scope: UInt32
    var reads: [String]
    var redundant: Bool
  }

  struct Invalidation: Hashable {
    var property: String
    var site: String
  }

  struct Scope {
    var runs = 0
    /// Property name → runs that read it.
    var reads: [String: Int] = [:]
    /// (property, site) → (invalidations, of which by writes that changed nothing).
    var invalidatedBy: [Invalidation: (all: Int, wasted: Int)] = [:]
    var firstRuns: [Run] = []
  }

  let runsKept: Int
  private(set) var scopes: [String: Scope] = [:]

  init(runsKept: Int = 8) {
    self.runsKept = runsKept
  }

  func note(_ entry: ReplayFact, _ definitions: TraceDefinitions) {
    func object(_ key: PropertyKey) -> String {
      "\(definitions.typeName(ofObject: key.object))#\(key.object).\(definitions.shortPropertyName(key.property))"
    }
    switch entry {
    case .runEnded(let ended):
      let run = ended.run
      let name = definitions.labelName(run.label)
      var scope = scopes[name] ?? Scope()
      scope.runs += 1
      for property in Set(ended.reads.map(\.property)) {
        scope.reads[definitions.propertyName(property), default: 0] += 1
      }
      if scope.firstRuns.count < runsKept {
        scope.firstRuns.append(
          Run(
            time: run.time, thread: run.thread, scope: run.scope, reads: ended.reads.map(object),
            redundant: ended.redundant))
      }
      scopes[name] = scope
    case .write(let write):
      guard !write.fired.isEmpty else { return }
      let property = definitions.propertyName(write.key.property)
      let site = definitions.site(ofStack: write.stack).map(SiteFormatting.describe) ?? ""
      let key = Invalidation(property: property, site: site)
      for fire in write.fired {
        let name = definitions.labelName(fire.label)
        let previous = scopes[name, default: Scope()].invalidatedBy[key] ?? (0, 0)
        scopes[name, default: Scope()].invalidatedBy[key] = (
          previous.all + 1, previous.wasted + (write.outcome == .unchanged ? 1 : 0)
        )
      }
    default:
      break
    }
  }
}
