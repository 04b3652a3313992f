// This file does NOT import ObsTrace: `UntracedBasket` keeps Observation's own registrar, and `basketScript` is a
// program run on it and on its traced twin (`TracedBasket`, NotRecordingTests) to compare what each sees.
import Observation
import Synchronization

/// What the script needs of a model; both baskets conform.
protocol Basket: AnyObject, Sendable {
  var count: Int { get set }
  var items: [Int] { get set }
  var name: String { get set }
}

@Observable
final class UntracedBasket: Basket, @unchecked Sendable {
  var count = 0
  var items: [Int] = []
  var name = ""
}

/// Tracked reads, then writes through the setter (`withMutation`), through `_modify` (`+=`, `append`, a subscript)
/// and an equal value the macro skips; returns each step's fires and values, and whether `append` kept the array's
/// buffer (a copy of the value by anything on the way would move it). `track` is the `withObservationTracking` of
/// the caller's file.
func basketScript(
  _ basket: some Basket, track: (_ apply: () -> Void, _ onChange: @escaping @Sendable () -> Void) -> Void
) -> [String] {
  let fires = Mutex<[String]>([])
  var log: [String] = []
  func step(_ name: String, _ body: () -> Void) {
    body()
    log.append("\(name): fired \(fires.withLock { $0 }) count \(basket.count) items \(basket.items) name \(basket.name)")
    fires.withLock { $0 = [] }
  }
  basket.items.reserveCapacity(64)
  let buffer = basket.items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
  step("count += 1") {
    track({ _ = basket.count }, { fires.withLock { $0.append("count") } })
    basket.count += 1
  }
  step("append") {
    track({ _ = basket.items }, { fires.withLock { $0.append("items") } })
    basket.items.append(7)
  }
  log.append("append in place: \(basket.items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } == buffer)")
  step("items[0] += 1") {
    track({ _ = basket.items.first }, { fires.withLock { $0.append("items") } })
    basket.items[0] += 1
  }
  step("name set") {
    track({ _ = basket.name }, { fires.withLock { $0.append("name") } })
    basket.name = "milk"
  }
  step("name set equal") {
    track({ _ = basket.name }, { fires.withLock { $0.append("name") } })
    basket.name = "milk"
  }
  step("untracked writes") {
    basket.count = 5
    basket.items.removeAll(keepingCapacity: true)
  }
  return log
}

/// Observation's own `withObservationTracking`, for the untraced run.
func trackWithObservation(_ apply: () -> Void, _ onChange: @escaping @Sendable () -> Void) {
  withObservationTracking(apply, onChange: onChange)
}
