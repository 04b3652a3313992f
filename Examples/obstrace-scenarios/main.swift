// Small programs whose traces are committed in traces/ (made by scripts/make-traces) and whose reports are the
// golden files of the CLI's tests. Each scenario shows one thing the analysis must find.
//
//   obstrace-scenarios stale-read     seed 004: re-observing from onChange reads the old value; deferring does not
//   obstrace-scenarios fan-out        one property read by twelve rows: each write invalidates all of them
//   obstrace-scenarios noop-modify    writes through _modify that change nothing, and still invalidate
//                                     (`noop-modify worse`: three times, for the CI check's tests)
//   obstrace-scenarios threads        writes on worker threads fire a scope installed on the main thread
//   obstrace-scenarios racing-read    a scope re-run on another thread reads while the write that woke it is in progress
//   obstrace-scenarios fill-disk      the trace file hits its size limit mid-run; the program goes on
//   obstrace-scenarios killed         10,000 writes in two chunks, then SIGKILL: the trace keeps every one of them
import Dispatch
import Foundation
import ObsTrace
import Observation

// MARK: stale-read

@Observable
final class Counter {
  var count = 0
}

/// Seed 004's first observer: re-observes at once from onChange, inside the willSet, so it reads the old value.
final class ImmediateObserver: @unchecked Sendable {
  let counter: Counter
  init(counter: Counter) { self.counter = counter }

  func observe() {
    withObservationTracking(named: "ImmediateObserver.observe") {
      print("  immediate observer reads count: \(counter.count)")
    } onChange: {
      self.observe()
    }
  }
}

/// Seed 004's helper: re-observes on the next turn of the main queue, after the value is stored.
final class DeferredObserver: @unchecked Sendable {
  let counter: Counter
  init(counter: Counter) { self.counter = counter }

  func observe() {
    withObservationTracking(named: "DeferredObserver.observe") {
      print("  deferred observer reads count: \(counter.count)")
    } onChange: {
      DispatchQueue.main.async { self.observe() }
    }
  }
}

func turnMainQueue() {
  RunLoop.main.run(until: Date().addingTimeInterval(0.02))
}

func staleRead() {
  let counter = Counter()
  let immediate = ImmediateObserver(counter: counter)
  let deferred = DeferredObserver(counter: counter)
  immediate.observe()
  deferred.observe()
  for _ in 0..<3 {
    print("count += 1")
    counter.count += 1
    turnMainQueue()
  }
}

// MARK: fan-out

@Observable
final class Theme {
  var accent = "blue"
  var fontSize = 14
}

func fanOut() {
  let theme = Theme()
  func renderRow(_ index: Int) {
    _ = withObservationTracking(named: "Row.body") {
      "\(index): \(theme.accent)"
    } onChange: {
    }
  }
  for index in 0..<12 { renderRow(index) }
  _ = withObservationTracking(named: "Header.body") {
    theme.fontSize
  } onChange: {
  }
  print("theme.accent = red: every row is invalidated")
  theme.accent = "red"
  for index in 0..<12 { renderRow(index) }
  print("theme.accent = green: every row again")
  theme.accent = "green"
}

// MARK: noop-modify

struct Item: Equatable {
  var title: String
  var done: Bool
}

@Observable
final class TodoStore {
  var items = [Item(title: "milk", done: false), Item(title: "bread", done: true)]
  var filter = "all"
}

/// `noop-modify worse`: the same, after a change that writes the unchanged value three times: what a CI check
/// against the baseline of `noop-modify` must catch.
func noopModify() {
  let worse = CommandLine.arguments.dropFirst(2).first == "worse"
  let store = TodoStore()
  func renderList() {
    _ = withObservationTracking(named: "TodoList.body") {
      store.items.map(\.title)
    } onChange: {
    }
  }
  renderList()
  print("store.items[1].done = true (it already is): a write through _modify that changes nothing")
  for _ in 0..<(worse ? 3 : 1) {
    store.items[1].done = true
    renderList()
  }
  print("store.items[0].done = true: a real change")
  store.items[0].done = true
  renderList()
  print("store.filter = \"all\" (equal): the setter skips it")
  store.filter = "all"
}

// MARK: threads

@Observable
final class Progress: @unchecked Sendable {
  var completed = 0
  var total = 3
}

func threads() {
  let progress = Progress()
  let lock = NSLock()
  let installed = DispatchSemaphore(value: 0)
  let fired = DispatchSemaphore(value: 0)
  let written = DispatchSemaphore(value: 0)
  func renderProgress() {
    _ = withObservationTracking(named: "ProgressView.body") {
      "\(progress.completed)/\(progress.total)"
    } onChange: {
      fired.signal()
    }
  }
  let workers = (0..<3).map { index in
    Thread {
      installed.wait()
      lock.lock()
      progress.completed += 1
      lock.unlock()
      written.signal()
      _ = index
    }
  }
  for worker in workers { worker.start() }
  for _ in workers {
    renderProgress()
    installed.signal()
    fired.wait()
    written.wait()  // the store is done: the next render reads the new value
  }
  print("completed \(progress.completed) of \(progress.total)")
}

// MARK: racing-read

/// Re-tracks on another thread as soon as onChange runs, while the write that woke it is still inside its willSet
/// on this thread: the re-run reads the value before it is stored, and its tracking, installed after that read,
/// misses the change (Observations loops woken on another thread hit the same race). The writer waits in onChange
/// until the re-run is done, so the race is won the same way every time.
@Observable
final class Meter: @unchecked Sendable {
  var level = 0
}

func racingRead() {
  let meter = Meter()
  let woke = DispatchSemaphore(value: 0)
  let reran = DispatchSemaphore(value: 0)
  let done = DispatchSemaphore(value: 0)
  let installed = DispatchSemaphore(value: 0)
  @Sendable func observe() -> Int {
    withObservationTracking(named: "RacingObserver.observe") {
      meter.level
    } onChange: {
      woke.signal()
      reran.wait()
    }
  }
  let observer = Thread {
    print("  observer reads level: \(observe())")
    installed.signal()
    woke.wait()
    print("  observer re-reads level while it is being set to 1: \(observe())")
    reran.signal()
    done.signal()
  }
  observer.start()
  installed.wait()
  meter.level = 1
  done.wait()
  print("level is now \(meter.level)")
}

// MARK: fill-disk

#if canImport(Glibc)
  import Glibc
#endif

final class Fired: @unchecked Sendable {
  private(set) var count = 0
  func increment() { count += 1 }
}

/// Limits the size of files this process writes, then records more than fits: the write fails with EFBIG,
/// ObsTrace says so in one line and stops recording, and the program finishes its work and exits 0.
func fillDisk() {
  signal(SIGXFSZ, SIG_IGN)
  var limit = rlimit(rlim_cur: 32 << 10, rlim_max: 32 << 10)
  setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
  let path = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : "fill-disk.trc"
  do {
    try Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  } catch {
    print("could not start: \(error)")
  }
  let counter = Counter()
  let fired = Fired()
  for value in 1...300_000 {
    counter.count = value
    if value % 100_000 == 0 {
      _ = withObservationTracking {
        counter.count
      } onChange: {
        fired.increment()
      }
    }
  }
  counter.count += 1
  Recorder.stop()
  print("done: count \(counter.count), fired \(fired.count)")
}

// MARK: killed

/// Writes a known number of times, waits for the flusher to write them (well past its quarter-second chunk
/// age), then dies by SIGKILL: no exit handler runs, and the trace must still hold every write.
func killed() {
  let counter = Counter()
  // A scope labelled by its call site: a killed process writes no symbol table, so only `obstrace symbolize`
  // can name it.
  withObservationTracking {
    _ = counter.count
  } onChange: {
  }
  // Two halves a chunk's age apart, so that the trace has two events chunks (the test damages one of them).
  for value in 1...5_000 { counter.count = value }
  Thread.sleep(forTimeInterval: 0.5)
  for value in 5_001...10_000 { counter.count = value }
  Thread.sleep(forTimeInterval: 1.5)
  kill(getpid(), SIGKILL)
}

// MARK: exit-race

/// A worker creates and writes a model, signals the main thread, then drops the model (its objectFreed is the
/// worker's last event) while the main thread returns from main: the exit races the free.
func exitRace() {
  let signalled = DispatchSemaphore(value: 0)
  let worker = Thread {
    do {
      let counter = Counter()
      counter.count = 1
      signalled.signal()
    }
  }
  worker.start()
  signalled.wait()
  print("exiting")
}

// MARK: idle-pool

/// Four jobs on Dispatch's global pool each write a model of their own, then the main thread waits for them and
/// exits while the pool's threads, their work done, wait idle for more: they have not exited at the stop.
func idlePool() {
  let group = DispatchGroup()
  for index in 0..<4 {
    DispatchQueue.global().async(group: group) {
      let counter = Counter()
      counter.count = index + 1
    }
  }
  group.wait()
  usleep(50_000)
  print("idle-pool: 4 jobs done")
}

// MARK: outlive

/// hold-trace for a process that outlives the command that started it (`sh -c 'obstrace-scenarios outlive &'`):
/// it first closes every descriptor it inherited past standard error (a test runner's pipes, which would keep
/// the runner's reads waiting on this process), and ends itself after 300 s whatever happens (SIGALRM), so that a
/// test that forgets it cannot hang.
func outlive() {
  closeInheritedDescriptors()
  alarm(300)
  holdTrace()
}

/// Closes every descriptor past standard error: a process that outlives its parent holds none of its pipes.
func closeInheritedDescriptors() {
  var inherited: [Int32] = []
  if let directory = opendir("/proc/self/fd") {
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if let descriptor = Int32(name), descriptor > 2, descriptor != dirfd(directory) { inherited.append(descriptor) }
    }
    closedir(directory)
  }
  for descriptor in inherited { close(descriptor) }
}

/// `outlive`, but nothing traced until a first line comes on standard input: a process of record's command that
/// outlives it and begins recording only later.
func outliveLate() {
  closeInheritedDescriptors()
  alarm(300)
  guard readLine() != nil else { return }
  holdTrace()
}

// MARK: busy-drains

/// Two threads spin for a second (the CPU is loaded), while four writers each write a model in bursts until a
/// different moment (0.2, 0.4, 0.6, 0.8 s after the start) and exit: their rings are drained at different moments
/// (half full, full, at the flusher's wake, when the thread exits), each drain converting ticks to times.
func busyDrains() {
  // One start for every thread: a writer that starts late under load still ends at its own moment.
  let start = Date()
  let end = start.addingTimeInterval(1.0)
  let finished = DispatchGroup()
  for _ in 0..<2 {
    finished.enter()
    Thread {
      var sum = 0.0
      while Date() < end {
        for value in 0..<10_000 { sum += Double(value).squareRoot() }
      }
      if sum < 0 { print(sum) }
      finished.leave()
    }.start()
  }
  for index in 0..<4 {
    finished.enter()
    Thread {
      let counter = Counter()
      let until = start.addingTimeInterval(0.2 * Double(index + 1))
      var value = 0
      // At least one burst: under a heavy load a writer can start after its moment, and wrote nothing.
      repeat {
        for _ in 0..<1_000 {
          value += 1
          counter.count = value
        }
        usleep(1_000)
      } while Date() < until
      finished.leave()
    }.start()
  }
  finished.wait()
  print("done")
}

// MARK: hold-trace

/// Records (a write), says so, then waits for its standard input to close before a second write and its exit: the
/// end-to-end tests start another recorder into the same OBSTRACE_OUTPUT while this one holds the file (no committed
/// trace).
func holdTrace() {
  let counter = Counter()
  counter.count = 1
  print("recording")
  fflush(nil)  // standard output is a pipe: the line goes now
  while let line = readLine() { print("read \(line)") }
  counter.count = 2
  print("done: count \(counter.count)")
}

// Also `obstrace-scenarios exit-race` (no committed trace: its outcome is a race, run 20 times by the end-to-end
// tests): the free is in the trace, or the trace says the worker was still running at the stop; and
// `obstrace-scenarios busy-drains` (the end-to-end tests check its times against the process's lifetime); `idle-pool`
// (pool threads idle, not exited, at the stop) and `outlive` (a process that outlives record's command).
let scenarios: [String: () -> Void] = [
  "stale-read": staleRead, "fan-out": fanOut, "noop-modify": noopModify, "threads": threads, "fill-disk": fillDisk,
  "killed": killed, "racing-read": racingRead, "exit-race": exitRace,
  "busy-drains": busyDrains, "hold-trace": holdTrace, "idle-pool": idlePool, "outlive": outlive,
  "outlive-late": outliveLate,
]
guard CommandLine.arguments.count > 1, let scenario = scenarios[CommandLine.arguments[1]] else {
  print("usage: obstrace-scenarios \(scenarios.keys.sorted().joined(separator: "|"))")
  exit(2)
}
scenario()
