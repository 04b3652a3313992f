// The models of Tests/Fixtures/GenericGetter (see main.swift): generic classes read and written only from this file.
// An optimized build compiled as `swift build -c release` does makes the key path getter of `\Box<Int>.value` (the
// one the macro's accessors pass) a function with no symbol that only calls `Box.value.getter`.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable final class Box<T> {
  var value: T
  init(_ value: T) { self.value = value }
}

@Observable final class Pair<T> {
  var first: T
  init(_ first: T) { self.first = first }
}

@Observable final class Counter {
  var count = 0
}

func readAll(_ box: Box<Int>, _ pair: Pair<Int>, _ counter: Counter) -> String {
  "\(box.value) \(pair.first) \(counter.count)"
}

func leaveAll(_ box: Box<Int>, _ pair: Pair<Int>, _ counter: Counter) {
  box.value += 0
  pair.first += 0
  counter.count += 0
}
