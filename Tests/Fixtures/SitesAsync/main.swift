// Writes in async code whose models are another module's (their `_modify` and setters are calls): in an async
// function before and after an await, in an async main's top-level code, in a Task's closure, in an async let's
// child task and in a `for await` body; each a `+= 0` right after a `print` (an optimized build gives that write
// no line of its own), a `+= 1`, a setter and an `append`. Built by Tests/ObsTraceCommandsTests/SiteTests.swift
// with -DOBSTRACE (traced) and without, -Onone and -O; both print the same. Each site comment names the write
// its line makes.
import AsyncModels
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@inline(never) func settle() async { await Task.yield() }

@inline(never) func inFunction(_ store: Store) async {
  print("function: start")
  store.discount += 0  // site: function no-op after print
  store.total += 1  // site: function add
  await settle()
  store.discount += 0  // site: function no-op after await
  print("function: after await")
  store.discount += 0  // site: function no-op after print after await
  store.discount = 2  // site: function set
  store.items.append(1)  // site: function append
  await settle()
}

@inline(never) func child(_ store: Store) async -> Int {
  print("async let")
  store.discount += 0  // site: async let no-op after print
  store.total += 1  // site: async let add
  return store.total
}

@inline(never) func inTask(_ store: Store) async {
  await Task {
    print("task")
    store.discount += 0  // site: task no-op after print
    store.total += 1  // site: task add
    await settle()
    store.discount = 3  // site: task set
  }.value
}

@inline(never) func inAsyncLet(_ store: Store) async {
  async let total = child(store)
  print("async let:", await total)
}

@inline(never) func inForAwait(_ store: Store) async {
  let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
  for value in 1...2 { continuation.yield(value) }
  continuation.finish()
  for await value in stream {
    print("for await:", value)
    store.discount += 0  // site: for await no-op after print
    store.total += value  // site: for await add
  }
}

let store = Store()
#if OBSTRACE
  try Recorder.start(to: CommandLine.arguments[1], options: RecordingOptions(backtraces: .writes))
#endif
await inFunction(store)
await inTask(store)
await inAsyncLet(store)
await inForAwait(store)
print("top-level")
store.discount += 0  // site: top-level no-op after print
await settle()
print("top-level after await")
store.discount += 0  // site: top-level no-op after print after await
store.total += 1  // site: top-level add
print(store.discount, store.total, store.items)
#if OBSTRACE
  Recorder.stop()
#endif
