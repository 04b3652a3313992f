import Observation
import Synchronization

#if OBSTRACE
  import ObsTrace
#endif

// One-shot trackings, each in a task of its own, none ever re-tracked (tryout15's J12): a task that begins after
// another ended is often allocated at the dead task's address. Built by Tests/ObsTraceCommandsTests/
// TaskContextTests.swift with -DOBSTRACE (traced) and without (Observation alone); both print the same.
//
// Usage: TaskContexts KIND COUNT
//   detached   COUNT tasks, one after the other (tryout15's Tasks): each tracks `shared.x` once, then the top-level
//              code's no-op write fires it
//   group      COUNT orders shipped one after the other (tryout15's App, `ship`), order n in a task group of
//              (n % 6) + 1 children: each child tracks its own Shipment once, then its write fires it
// Prints the fires and the trackings made.

@Observable final class Shared: @unchecked Sendable {
  var x = 0
}

@Observable final class Shipment: @unchecked Sendable {
  var delivered = false
}

let shared = Shared()
let fires = Atomic<Int>(0)
let arguments = CommandLine.arguments
let kind = arguments.count > 1 ? arguments[1] : "detached"
let count = arguments.count > 2 ? Int(arguments[2]) ?? 200 : 200
var trackings = 0

switch kind {
case "detached":
  for _ in 0..<count {
    await Task.detached {
      withObservationTracking {  // site: detached
        _ = shared.x
      } onChange: {
        fires.add(1, ordering: .relaxed)
      }
    }.value
    shared.x += 0
    trackings += 1
  }
case "group":
  for order in 0..<count {
    let lines = order % 6 + 1
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<lines {
        group.addTask {
          let shipment = Shipment()
          withObservationTracking {  // site: group
            _ = shipment.delivered
          } onChange: {
            fires.add(1, ordering: .relaxed)
          }
          shipment.delivered = true
        }
      }
    }
    trackings += lines
  }
default:
  print("usage: TaskContexts detached|group COUNT")
}
print("\(kind): trackings \(trackings) fires \(fires.load(ordering: .relaxed))")
