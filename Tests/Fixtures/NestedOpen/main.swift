// Two nested models of one simple name, a generic over a nested type, and a thread still inside its tracking
// closure when the program exits (the try-out's Nest and Obs2). Built by
// Tests/ObsTraceCommandsTests/OpenRunTests.swift with -DOBSTRACE (traced) and without (Observation alone), -Onone
// and -O; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

struct ListView {
  @Observable final class Model: @unchecked Sendable { var count = 0 }
}
struct DetailView {
  @Observable final class Model: @unchecked Sendable { var count = 0 }
}
struct Shelf {
  struct Item: Sendable { var n = 0 }
}
@Observable final class Box<Value: Sendable>: @unchecked Sendable {
  var value: Value
  init(_ value: Value) { self.value = value }
}

let list = ListView.Model()
let detail = DetailView.Model()
let box = Box(Shelf.Item())
withObservationTracking { _ = list.count } onChange: { print("list fired") }
withObservationTracking { _ = detail.count } onChange: { print("detail fired") }
list.count += 1
detail.count = 2
box.value = Shelf.Item(n: 3)
print(list.count, detail.count, box.value.n)

// A thread stays inside its tracking closure while the program exits.
let inside = DispatchSemaphore(value: 0)
let never = DispatchSemaphore(value: 0)
Thread {
  withObservationTracking {  // site: open
    _ = detail.count
    inside.signal()
    never.wait()
  } onChange: { print("never") }
}.start()
inside.wait()
detail.count = 9
print("exit while tracking")
exit(0)
