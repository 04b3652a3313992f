// Models without ObsTrace: this file does not import it, so the macro uses Observation's own registrar. Each
// function is the twin of the traced one of the same shape (TracedModels.swift): same local model, same loop.
import Observation

@Observable
final class PlainCounter {
  var value = 0
  var other = 0
}

/// Trivially copyable: compared bit for bit by default when traced.
struct BenchPoint {
  var x = 0
  var y = 0
}

/// `TracedModifyModel` without ObsTrace.
@Observable
final class PlainModifyModel {
  var items: [Int] = []
  var point = BenchPoint()
  var count = 0
}

/// `TracedFirstModel` without ObsTrace.
@Observable
final class PlainFirstModel {
  var title = ""
  var count = 0
  var point = BenchPoint()
}

/// `tracedFirstUse` without ObsTrace.
@inline(never)
func plainFirstUse(_ iterations: Int) -> Int {
  let model = PlainFirstModel()
  var sum = 0
  for _ in 0..<iterations {
    sum &+= withObservationTracking {
      model.title.count &+ model.count &+ model.point.x
    } onChange: {
    }
    model.count += 1
    model.point.x += 1
    model.title = "t"
  }
  return sum
}

/// `tracedModifyWrites` without ObsTrace.
@inline(never)
func plainModifyWrites(_ n: Int, kind: Int) -> Int {
  let model = PlainModifyModel()
  switch kind {
  case 0: for index in 0..<n { model.items.append(index) }
  case 1: for index in 0..<n { model.point.x = index }
  default: for _ in 0..<n { model.count += 0 }
  }
  return model.items.count &+ model.point.x &+ model.count
}

/// One `withObservationTracking` scope with one read, through Observation's own function.
@inline(never)
func plainScope(_ model: PlainCounter) -> Int {
  withObservationTracking {
    model.value
  } onChange: {
  }
}

/// `reads` reads of `read()` inside one of Observation's own tracking scopes: this file does not import ObsTrace,
/// so for a traced model this is tracking ObsTrace does not own (an untraced scope).
@inline(never)
func readsInsideObservationTracking(_ reads: Int, _ read: () -> Int) -> Int {
  withObservationTracking {
    var sum = 0
    for _ in 0..<reads { sum &+= read() }
    return sum
  } onChange: {
  }
}

@inline(never)
func plainLoop(_ iterations: Int) -> Int {
  let model = PlainCounter()
  var sum = 0
  for index in 0..<iterations {
    model.value = index
    sum &+= model.value
  }
  return sum
}

@inline(never)
func plainReads(_ iterations: Int) -> Int {
  let model = PlainCounter()
  var sum = 0
  for _ in 0..<iterations { sum &+= model.value }
  return sum
}

@inline(never)
func plainWrites(_ iterations: Int) -> Int {
  let model = PlainCounter()
  for index in 0..<iterations { model.value = index }
  return model.other
}

@inline(never)
func plainScopes(_ iterations: Int) -> Int {
  let model = PlainCounter()
  var sum = 0
  for _ in 0..<iterations { sum &+= plainScope(model) }
  return sum
}

/// `tracedAlternate`'s untraced twin.
@inline(never)
func plainAlternate(_ iterations: Int) -> Int {
  let model = PlainCounter()
  var sum = 0
  for index in 0..<iterations {
    model.value = index
    model.other += 1
    sum &+= model.value &+ model.other
  }
  return sum
}
