// The same models with ObsTrace: this file imports it, so the macro uses the tracing registrar and
// `withObservationTracking` is ObsTrace's traced one.
import Foundation
import ObsTrace
import Observation

@Observable
final class TracedCounter {
  var value = 0
  var other = 0
}

/// A model written through `_modify`: an array, a struct of trivially copyable fields, a counter.
@Observable
final class TracedModifyModel {
  var items: [Int] = []
  var point = BenchPoint()
  var count = 0
}

/// `n` writes through `_modify` to a model created here (a local, as the untraced twin's): `kind` 0 appends to
/// the array, 1 writes a struct field, 2 adds 0 to the counter (a no-op write).
@inline(never)
func tracedModifyWrites(_ n: Int, kind: Int) -> Int {
  let model = TracedModifyModel()
  switch kind {
  case 0: for index in 0..<n { model.items.append(index) }
  case 1: for index in 0..<n { model.point.x = index }
  default: for _ in 0..<n { model.count += 0 }
  }
  return model.items.count &+ model.point.x &+ model.count
}

@inline(never)
func tracedScope(_ model: TracedCounter) -> Int {
  withObservationTracking {
    model.value
  } onChange: {
  }
}

/// `iterations` × (a write, a read) on a model created here: the user's loop of the whole-cost rows. Its twin is
/// `plainLoop`, the same code without ObsTrace.
@inline(never)
func tracedLoop(_ iterations: Int) -> Int {
  let model = TracedCounter()
  var sum = 0
  for index in 0..<iterations {
    model.value = index
    sum &+= model.value
  }
  return sum
}

/// `iterations` reads of a model created here.
@inline(never)
func tracedReads(_ iterations: Int) -> Int {
  let model = TracedCounter()
  var sum = 0
  for _ in 0..<iterations { sum &+= model.value }
  return sum
}

/// A model used only by `tracedFirstUse`: its type, key paths and stored fields are met for the first time there.
@Observable
final class TracedFirstModel {
  var title = ""
  var count = 0
  var point = BenchPoint()
}

/// A tracking scope's first run and two first writes, on a model of a type nothing touched before (`--profile first
/// 1`): what a first frame pays, ObsTrace's first-use work (interning, naming, finding stored fields) included. Its
/// twin is `plainFirstUse`.
@inline(never)
func tracedFirstUse(_ iterations: Int) -> Int {
  let model = TracedFirstModel()
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

/// `iterations` writes to a model created here.
@inline(never)
func tracedWrites(_ iterations: Int) -> Int {
  let model = TracedCounter()
  for index in 0..<iterations { model.value = index }
  return model.other
}

/// `iterations` tracking scopes of one read each, on a model created here.
@inline(never)
func tracedScopes(_ iterations: Int) -> Int {
  let model = TracedCounter()
  var sum = 0
  for _ in 0..<iterations { sum &+= tracedScope(model) }
  return sum
}

/// The demo's workload, repeated: two views each reading one property under tracking, the guide's writes.
func demoWorkload(_ rounds: Int) {
  let model = TracedCounter()
  for round in 0..<rounds {
    _ = withObservationTracking(named: "FirstView.body") {
      model.value
    } onChange: {
    }
    _ = withObservationTracking(named: "NextView.body") {
      model.other
    } onChange: {
    }
    model.value += 1
    model.other += 1
    model.value = round
    _ = model.other
  }
}

/// Many objects and many scopes, for the reader's memory: `objects` models; each round, `scopes` tracking scopes
/// (each with its own label) read `objects / scopes` models each, then every model is written once, which fires
/// (and cancels) every scope.
func manyObjectsWorkload(objects: Int, scopes: Int, rounds: Int) {
  let models = (0..<objects).map { _ in TracedCounter() }
  let labels = (0..<scopes).map { "Row\($0).body" }
  let perScope = max(1, objects / scopes)
  for round in 0..<rounds {
    for scope in 0..<scopes {
      _ = withObservationTracking(named: labels[scope]) {
        var sum = 0
        for index in (scope * perScope)..<min(objects, (scope + 1) * perScope) { sum &+= models[index].value }
        return sum
      } onChange: {
      }
    }
    for (index, model) in models.enumerated() { model.value = round &+ index }
  }
}

/// One call site re-tracked faster than its writes fire it (tryout13 G15's Racy program, on one thread, so that its
/// trace is the same every time): each round `perRound` runs of `withObservationTracking { model.value }` with
/// nothing in `onChange`, then `writes` writes: the first fires every run installed, the others fire nothing (the
/// writers write on, as Racy's two threads do). A re-track continues one of the call's fired instances while the
/// recorder keeps any (the last 1024 fired): past them each run is a new instance that no later run continues,
/// ≈ 3,000 a round with 4096 runs.
func retrackWorkload(rounds: Int, perRound: Int = 4096, writes: Int = 256) {
  let model = TracedCounter()
  for round in 0..<rounds {
    for _ in 0..<perRound {
      _ = withObservationTracking {
        model.value
      } onChange: {
      }
    }
    for write in 0..<writes { model.value = round &* writes &+ write &+ 1 }
  }
}

/// Short-lived models, the shape of tryout14's Churn program: `count` models, each created, tracked once by one call
/// (`withObservationTracking`), every other one written (which fires the tracking), then freed (≈ 8 events a model).
func churnWorkload(_ count: Int) -> Int {
  var fired = 0
  for index in 0..<count {
    let model = TracedCounter()
    withObservationTracking {
      _ = model.value
    } onChange: {
    }
    if index % 2 == 0 {
      model.value = index
      fired += 1
    }
  }
  return fired
}

/// Several threads writing at once, the shape of tryout10's Stress program: `threads` threads, each `writes` times
/// `+= 1` (through `_modify`) on a model of its own; returns the sum of the models' values.
func threadsWorkload(threads: Int, writes: Int) -> Int {
  let total = Locked(0)
  let group = DispatchGroup()
  for _ in 0..<threads {
    group.enter()
    Thread {
      let model = TracedCounter()
      for _ in 0..<writes { model.value += 1 }
      total.withLock { $0 += model.value }
      group.leave()
    }.start()
  }
  group.wait()
  return total.withLock { $0 }
}

/// `threads` threads that come and go, two at a time (a thread per job): each makes a model, writes it 10 times and
/// reads it in a tracked scope, then exits, so its ring's last chunk is flagged "exited" (`--write-trace comeandgo`).
func comeAndGoWorkload(threads: Int) -> Int {
  let total = Locked(0)
  for first in stride(from: 0, to: threads, by: 2) {
    let group = DispatchGroup()
    for _ in first..<min(first + 2, threads) {
      group.enter()
      Thread {
        let model = TracedCounter()
        for _ in 0..<10 { model.value += 1 }
        let seen = withObservationTracking { model.value } onChange: {}
        total.withLock { $0 += seen }
        group.leave()
      }.start()
    }
    group.wait()
  }
  return total.withLock { $0 }
}

/// `iterations` of a loop that alternates two properties of one model, as a program's code does: a setter of one,
/// an add through `_modify` of the other, and a read of each (the flusher's encoder then meets a property other
/// than the one before at each event; `--profile alternate`).
@inline(never)
func tracedAlternate(_ iterations: Int) -> Int {
  let model = TracedCounter()
  var sum = 0
  for index in 0..<iterations {
    model.value = index
    model.other += 1
    sum &+= model.value &+ model.other
  }
  return sum
}

/// Five types nothing else touches, for `--first-writes`: each property's first compared write is measured.
@Observable final class FirstWriteA {
  var n = 0
  var s = 0
}
@Observable final class FirstWriteB { var n = 0 }
@Observable final class FirstWriteC { var n = 0 }
@Observable final class FirstWriteD { var n = 0 }
@Observable final class FirstWriteE { var n = 0 }

/// The writing thread's wall and CPU time of one write, in microseconds: what a first write's stall is.
@inline(never)
func timedWrite(_ body: () -> Void) -> (wall: Double, cpu: Double) {
  var wall0 = timespec()
  var wall1 = timespec()
  var cpu0 = timespec()
  var cpu1 = timespec()
  clock_gettime(CLOCK_MONOTONIC, &wall0)
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0)
  body()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1)
  clock_gettime(CLOCK_MONOTONIC, &wall1)
  func micro(_ a: timespec, _ b: timespec) -> Double {
    Double(b.tv_sec - a.tv_sec) * 1e6 + Double(b.tv_nsec - a.tv_nsec) / 1e3
  }
  return (micro(wall0, wall1), micro(cpu0, cpu1))
}

/// tryout16's FirstWrite (P10): the first event of the process (a setter write), then each type's first `+= 1` (a
/// `_modify` write, compared: its stored field is looked for on this thread) and a second one, timed on the writing
/// thread. Lines `what wall-µs cpu-µs`.
func firstWriteTimes() -> [(String, Double, Double)] {
  let a = FirstWriteA()
  let b = FirstWriteB()
  let c = FirstWriteC()
  let d = FirstWriteD()
  let e = FirstWriteE()
  var rows: [(String, Double, Double)] = []
  func row(_ name: String, _ body: () -> Void) {
    let (wall, cpu) = timedWrite(body)
    rows.append((name, wall, cpu))
  }
  row("A.s = 1 (first event)") { a.s = 1 }
  row("A.n += 1 first") { a.n += 1 }
  row("A.n += 1 second") { a.n += 1 }
  row("B.n += 1 first") { b.n += 1 }
  row("B.n += 1 second") { b.n += 1 }
  row("C.n += 1 first") { c.n += 1 }
  row("D.n += 1 first") { d.n += 1 }
  row("E.n += 1 first") { e.n += 1 }
  blackHole(a.n &+ b.n &+ c.n &+ d.n &+ e.n &+ a.s)
  return rows
}
