import Observation

// The seed guide's scenario (shared/seeds/000, sections 6–7): two views, each reading one property of one model,
// run as SwiftUI runs a body (under tracking, invalidated through a closure holding the view's node), then the
// guide's changes. Built twice from this one file: `obstrace-demo` with ObsTrace (the OBSTRACE define) and
// `obstrace-demo-untraced` without it; both must print the same console.
#if OBSTRACE
  import ObsTrace
#endif

@Observable
final class Model {
  var property = 0
  var otherProperty = 0
}

/// A node of the attribute graph, as the guide's stand-in: a number.
struct AnyAttribute: Sendable {
  let rawValue: UInt32
}

/// The node the graph is visiting (the stand-in for AGGraphGetCurrentAttribute).
nonisolated(unsafe) var runningNode = AnyAttribute(rawValue: 0)

func AGGraphInvalidateValue(_ node: AnyAttribute) {
  print("  AGGraphInvalidateValue(#\(node.rawValue))")
}

protocol View {
  static var name: String { get }
  var body: String { get }
}

struct FirstView: View {
  static let name = "FirstView.body"
  let observableObject: Model
  var body: String { "\(observableObject.property)" }
}

struct NextView: View {
  static let name = "NextView.body"
  let observableObject: Model
  var body: String { "\(observableObject.otherProperty)" }
}

/// What the graph does for one view's node: run the body under tracking, and on change invalidate the node.
func updateValue<V: View>(of view: V) {
  let node = runningNode
  #if OBSTRACE
    _ = withObservationTracking(named: V.name) {
      view.body
    } onChange: {
      AGGraphInvalidateValue(node)
    }
  #else
    _ = withObservationTracking {
      view.body
    } onChange: {
      AGGraphInvalidateValue(node)
    }
  #endif
}

let observableObject = Model()

print("the bodies run: FirstView as node #3176, NextView as node #3228")
runningNode = AnyAttribute(rawValue: 3176)
updateValue(of: FirstView(observableObject: observableObject))
runningNode = AnyAttribute(rawValue: 3228)
updateValue(of: NextView(observableObject: observableObject))

print("observableObject.property += 1")
observableObject.property += 1

print("observableObject.otherProperty += 1")
observableObject.otherProperty += 1

print("observableObject.property += 1 again, before FirstView's body has run again: nothing")
observableObject.property += 1

print("FirstView's body runs again as node #3176, then observableObject.property += 1")
runningNode = AnyAttribute(rawValue: 3176)
updateValue(of: FirstView(observableObject: observableObject))
observableObject.property += 1

print("a read outside any body, then observableObject.otherProperty += 1: nothing")
_ = observableObject.otherProperty
observableObject.otherProperty += 1

print("the short version: FirstView's body runs as node #3176, then property changes")
let another = Model()
runningNode = AnyAttribute(rawValue: 3176)
updateValue(of: FirstView(observableObject: another))
another.property += 1
