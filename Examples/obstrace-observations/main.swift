import Foundation
import Observation

// The seed guide's Observations run (shared/seeds/000, sections 9–10) and the other behaviours of
// `Observations`, built twice from this one file: `obstrace-observations` with ObsTrace (the OBSTRACE define)
// and `obstrace-observations-untraced` with Observation's own. Every mode must print the same in both.
//
//   guide            a loop over Observations({ model.property }), the guide's changes, then a self-saving model
//   leaky            the self-saving model with a strong self, let go, then a second one: neither is freed
//   actor            the closure isolated to a custom actor
//   until-finished   untilFinished: the closure ends the sequence
//   throws           a closure that throws ends the sequence, and the error is rethrown
//   two-iterators    two iterators of one sequence each get their values
//   race             Observation's willSet-time race, for scripts/observations-race (prints what the scheduler decides)
#if OBSTRACE
  import ObsTrace
#endif

@Observable
final class Model: @unchecked Sendable {
  var property = 0
  var otherProperty = 0
}

func pause() async {
  try? await Task.sleep(for: .milliseconds(50))
}

/// The loop lives with the data: it starts with the model and ends with it (the guide's SavingModel).
@MainActor
@Observable
final class SavingModel {
  var property = 0

  @ObservationIgnored private var saving: Task<Void, Never>?

  init() {
    saving = Task { [weak self] in
      for await _ in Observations({ [weak self] in self?.property }) {
        self?.save()
      }
    }
  }

  isolated deinit {
    saving?.cancel()
    print("  freed")
  }

  func save() {
    print("  save: property is \(property)")
  }
}

/// The same with a strong self: the model holds the task, the task the closure, the closure the model.
@MainActor
@Observable
final class LeakySavingModel {
  var property = 0

  @ObservationIgnored private var saving: Task<Void, Never>?

  init() {
    saving = Task {
      for await _ in Observations({ self.property }) {
        self.save()
      }
    }
  }

  isolated deinit {
    saving?.cancel()
    print("  freed")
  }

  func save() {
    print("  save: property is \(property)")
  }
}

@MainActor
func guide() async {
  let observableObject = Model()
  print("a loop over Observations({ observableObject.property })")
  let loop = Task {
    for await value in Observations({ observableObject.property }) {
      print("  value: \(value)")
    }
    print("  the loop ended")
  }
  await pause()
  print("property += 1")
  observableObject.property += 1
  await pause()
  print("otherProperty += 1")
  observableObject.otherProperty += 1
  await pause()
  print("property += 1, three times in a row")
  observableObject.property += 1
  observableObject.property += 1
  observableObject.property += 1
  await pause()
  print("cancel the loop's task")
  loop.cancel()
  await loop.value

  print("a model that saves itself, then goes away")
  var saving: SavingModel? = SavingModel()
  await pause()
  saving?.property += 1
  await pause()
  saving = nil
  await pause()
}

@MainActor
func leaky() async {
  print("a model that saves itself with a strong self, then is let go")
  var saving: LeakySavingModel? = LeakySavingModel()
  await pause()
  saving?.property += 1
  await pause()
  saving = nil
  await pause()
  print("  (never freed)")
  print("the screen is opened again: a new model, let go in turn")
  saving = LeakySavingModel()
  await pause()
  saving?.property += 1
  await pause()
  saving = nil
  await pause()
  print("  (never freed either)")
}

actor Counter {
  let model = Model()

  func bump() { model.property += 1 }

  func values(_ count: Int) async -> [Int] {
    var seen: [Int] = []
    for await value in Observations({ self.model.property }) {
      seen.append(value)
      if seen.count == count { break }
      bump()
    }
    return seen
  }
}

func actorIsolated() async {
  let counter = Counter()
  print("an Observations closure isolated to a custom actor")
  let values = await counter.values(3)
  print("  values: \(values)")
}

@MainActor
func untilFinished() async {
  let model = Model()
  let sequence = Observations<Int, Never>.untilFinished {
    model.property < 2 ? .next(model.property) : .finish
  }
  let loop = Task {
    for await value in sequence { print("  value: \(value)") }
    print("  finished")
  }
  for _ in 0..<3 {
    await pause()
    print("property += 1")
    model.property += 1
  }
  await loop.value
}

struct TooBig: Error {}

@MainActor
func throwing() async {
  let model = Model()
  let sequence = Observations<Int, TooBig> { () throws(TooBig) -> Int in
    if model.property > 1 { throw TooBig() }
    return model.property
  }
  let loop = Task {
    do {
      for try await value in sequence { print("  value: \(value)") }
    } catch {
      print("  threw \(type(of: error))")
    }
  }
  for _ in 0..<2 {
    await pause()
    print("property += 1")
    model.property += 1
  }
  await loop.value
}

@MainActor
func twoIterators() async {
  let model = Model()
  let sequence = Observations { model.property }
  let first = Task {
    var seen: [Int] = []
    for await value in sequence {
      seen.append(value)
      if seen.count == 2 { break }
    }
    return seen
  }
  let second = Task {
    var seen: [Int] = []
    for await value in sequence {
      seen.append(value)
      if seen.count == 2 { break }
    }
    return seen
  }
  await pause()
  print("property += 1")
  model.property += 1
  print("  first: \(await first.value), second: \(await second.value)")
  // Observation's tracking of each iterator's last value outlives the iterator: this write fires both, and no
  // loop runs again.
  print("property += 1 after both loops ended")
  model.property += 1
}

/// Observation's own race, not a side-by-side mode (its outcome is the scheduler's): a detached loop that stops at
/// 3 while this thread writes 1, 2, 3 50 ms apart. The change handler resumes the loop inside the writer's willSet,
/// so the loop may re-read the old value and wait for a change that already happened: it prints `hung` when the
/// loop has not seen 3 within 2 s. `scripts/observations-race` counts how often, untraced and traced.
func race() async { blockingRace() }

/// The race's writer blocks its thread between writes, as the loop that found it did (top-level code).
func blockingRace() {
  let model = Model()
  let done = DispatchSemaphore(value: 0)
  Task.detached {
    for await value in Observations({ model.property }) where value >= 3 { break }
    done.signal()
  }
  Thread.sleep(forTimeInterval: 0.05)
  for value in 1...3 {
    model.property = value
    Thread.sleep(forTimeInterval: 0.05)
  }
  print(done.wait(timeout: .now() + 2) == .timedOut ? "hung" : "saw 3")
}

let modes: [String: @MainActor () async -> Void] = [
  "guide": guide, "leaky": leaky, "actor": actorIsolated, "until-finished": untilFinished, "throws": throwing,
  "two-iterators": twoIterators, "race": race,
]
let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "guide"
guard let run = modes[mode] else {
  print("usage: obstrace-observations [\(modes.keys.sorted().joined(separator: "|"))]")
  exit(2)
}
await run()
