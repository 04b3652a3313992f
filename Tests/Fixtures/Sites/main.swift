// A program whose writes and reads must be reported at their own lines, built debug and optimized by
// Tests/ObsTraceCommandsTests/SiteTests.swift (not a target of the package). Each `// site:` comment names the
// event the line makes; the test finds the lines by these comments.
import ObsTrace
import Observation

@Observable final class Counter {
  var count = 0
  var items: [Int] = []
}

@inline(never) func writeEveryWay(_ counter: Counter) {
  counter.count = 1  // site: set count
  counter.count += 2  // site: modify count
  counter.items.append(3)  // site: modify items
  counter.withMutation(keyPath: \.count) {}  // site: withMutation count
  print(counter.count)  // site: read count
}

@inline(never) func track(_ counter: Counter) {
  // Not in tail position: an optimized build turns a call in tail position into a jump, which leaves no frame.
  let count = withObservationTracking {  // site: tracking
    counter.items.count  // site: tracking body
  } onChange: {
  }
  print(count)
}
@inline(never) func firstPath(_ counter: Counter) { track(counter) }
@inline(never) func secondPath(_ counter: Counter) { track(counter) }

// The ordinary observer: a Void withObservationTracking as its function's last statement, which an optimized build
// makes a jump, leaving the function no frame; called from two lines, one label, the tracking call's line. And a
// nested one as the last statement of the outer one's closure: its own label, not the outer one's.
@inline(never) func watch(_ counter: Counter) {
  withObservationTracking {  // site: tail tracking
    _ = counter.count
  } onChange: {
  }
}
@inline(never) func watchQualified(_ counter: Counter) {
  Observation.withObservationTracking {  // site: qualified tracking
    _ = counter.items.count
  } onChange: {
  }
}
@inline(never) func watchNested(_ counter: Counter) {
  withObservationTracking {  // site: outer tracking
    _ = counter.count
    withObservationTracking {  // site: nested tracking
      _ = counter.items.count
    } onChange: {
    }
  } onChange: {
  }
}

@inline(never) func run(_ body: @escaping () -> Void) { body() }

// Writes and reads in a closure made in a closure.
@inline(never) func writeInClosures(_ counter: Counter) {
  let bodies = (0..<1).map { _ in
    {
      counter.count += 1  // site: modify in closure
      counter.count = 5  // site: set in closure
      print(counter.items.count)  // site: read in closure
    }
  }
  for body in bodies { run(body) }
}

// Writes in a local function and in closures that an optimized build leaves uninlined: their functions are nested
// in their enclosing function's debug information, and the accessors are inlined into them.
@inline(never) func writeInLocalFunctions(_ counter: Counter) {
  @inline(never) func write(_ value: Int) {
    counter.count += value  // site: modify in local function
    counter.count = value  // site: set in local function
  }
  let bodies = (0..<2).map { index in
    {
      counter.count += index  // site: modify in nested closure
    }
  }
  write(3)
  for body in bodies { run(body) }
}

// A function inlined into its caller: the sites are its own lines, not the caller's call.
@inline(__always) func bump(_ counter: Counter) {
  counter.count += 1  // site: modify inlined
  counter.count = 7  // site: set inlined
}
@inline(never) func callsInlined(_ counter: Counter) {
  bump(counter)
  print(counter.count)  // site: read after inlined
}

// A generic model: an optimized build specializes the registrar's generic willSet into this module, where its
// frame is in the user's binary and at the model's or the macro's lines; the site is still the write's line.
@Observable final class Box<T> {
  var value: T
  init(_ value: T) { self.value = value }
}
@inline(never) func writeBox(_ box: Box<Int>) {
  box.value += 1  // site: modify box
  box.value = 9  // site: set box
}

// A write through a key path made at run time: the setter runs from the release of the key path's writeback
// buffer, in the statement's cleanup (line-0 code that runs on into the next statement's row).
@inline(never) func writeThroughKeyPath(_ counter: Counter, _ path: ReferenceWritableKeyPath<Counter, Int>) {
  counter[keyPath: path] += 1  // site: modify key path
  counter.count = 4  // site: set after key path
}

// A write in the user's own `defer`: its frame is a `$defer` function (optimized, an inlined one), as the macro's own
// `defer { didSet }` in its accessors is; the accessor in the macro's name tells those apart.
@inline(never) func writeInDefer(_ counter: Counter) -> Int {
  defer { counter.count += 1 }  // site: modify in defer
  return 2
}

// A write through an existential whose property is `{ get set }`: the `_modify` is called through the protocol
// witness, from line-0 code right after a function inlined into main (its withObservationTracking's rows).
protocol Priced: AnyObject {
  var price: Int { get set }
}
@Observable final class Item: Priced {
  var price = 0
}
@inline(__always) func trackPrice(_ item: Item) {
  withObservationTracking {  // site: tracking price
    _ = item.price  // site: tracking price body
  } onChange: {
  }
}

// Writes right after a statement whose code ends in compiler-generated cleanup (the releases of a `print`'s
// arguments, the end of the `+= 0` before): a debug build's `_modify` call has no line of its own and joins that
// cleanup's line-0 row, and each was sited on the line before it. Through a non-final class the `_modify` is called
// through the class's table, through an existential through the witness: indirect calls.
@Observable class Level {
  var level = 0
}
@inline(never) func writeAfterCleanup(_ counter: Counter, _ level: Level, _ priced: any Priced, _ value: Int) {
  print("before modify")
  counter.count += 1  // site: modify after print
  print("before append")
  counter.items.append(value)  // site: append after print
  counter.count += 0  // site: first of three
  counter.count += 0  // site: second of three
  counter.count += 0  // site: third of three
  print("before class")
  level.level += 1  // site: class modify after print
  print("before existential")
  priced.price += 1  // site: existential modify after print
}

let counter = Counter()
try Recorder.start(to: CommandLine.arguments[1], options: RecordingOptions(backtraces: .all))
writeEveryWay(counter)
firstPath(counter)
secondPath(counter)
watch(counter)
watch(counter)
watchQualified(counter)
watchNested(counter)
writeInClosures(counter)
callsInlined(counter)
writeInLocalFunctions(counter)
writeBox(Box(0))
writeThroughKeyPath(counter, \Counter.count)
_ = writeInDefer(counter)
let item = Item()
trackPrice(item)
let priced: any Priced = item
priced.price += 1  // site: modify existential
counter.count = 8  // site: set after existential
writeAfterCleanup(counter, Level(), priced, 6)
Recorder.stop()
