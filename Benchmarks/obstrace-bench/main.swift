// obstrace-bench: what tracing costs, as ratios measured in one run (scripts/bench builds it in release).
// Every figure is taken several times (repetitions) and printed as its median and range; a ratio is taken
// repetition by repetition between a case and its baseline timed side by side (alternating, so that a burst of load
// from other processes falls on both), and its verdict is "met" only when every repetition's ratio meets the target
// (BenchTarget.verdict).
import CObsTraceBench
import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceBenchStatistics
import ObsTraceFormat

@inline(never)
func blackHole<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

/// How many times each figure is taken (its repetitions), and how many timings each repetition keeps the fastest
/// of. A row prints the median of its repetitions and their range (min–max); a ratio's range is that of the ratios
/// of each repetition, whose case and baseline were timed side by side (`BenchTarget.verdict` says the verdict).
let repetitions = 7
let bestOf = 5

/// One timing of `body(iterations)`, in nanoseconds per iteration. The recorder (when on) is flushed first, so that
/// the timing's events fit its thread's ring: what is measured is the hot path, never a wait for the flusher
/// (sustained throughput and the whole-cost loop are measured on their own).
func timeOnce(_ iterations: Int, _ body: (Int) -> Void) -> Double {
  Recorder.flush()
  let start = obstrace_bench_now()
  body(iterations)
  return Double(obstrace_bench_now() - start) / Double(iterations)
}

/// Runs `body` with the calling thread kept on one CPU, the next one each repetition (`repetition` modulo the CPUs),
/// then lets it run on all of them again. This VM's two CPUs are not equally fast, and which is the slower changes
/// over minutes: the untraced read outside tracking, pinned with taskset, took 16.7 ns on one and 26 ns on the other
/// at the same moment (`obstrace-bench --cpus read 30000` shows it); a thread the scheduler moves between them
/// changes speed by that much, and a case timed on one and its baseline on the other is a ratio ≈ 1.5× off (the size
/// of the jumps between figures of one build in /work/notes/s10's runs: the untraced loop's 66 and 97 ns, the
/// untraced read's 16.5 and 24.4 ns; inferred from the size, not caught in the act). Pinned, a
/// repetition's case and baseline run on the same CPU, and the repetitions cover each CPU. Threads started inside
/// `body` inherit the pin: start a recording (its flusher) before calling this.
func withPinnedThread<R>(_ repetition: Int, _ body: () -> R) -> R {
  let cpus = Int(obstrace_bench_cpus())
  guard cpus > 1 else { return body() }
  obstrace_bench_pin(Int32(repetition % cpus))
  defer { obstrace_bench_pin(-1) }
  return body()
}

/// `repetitions` figures of `body(iterations)`, in nanoseconds per iteration, each the fastest of `bestOf` timings.
func repeated(_ iterations: Int, _ body: (Int) -> Void) -> [Double] {
  (0..<repetitions).map { repetition in
    withPinnedThread(repetition) {
      (0..<bestOf).map { _ in timeOnce(iterations, body) }.min()!
    }
  }
}

/// `repetitions` figures of each of `baseline(iterations)` and `measured(iterations)`, in nanoseconds per
/// iteration, each the fastest of `bestOf` timings; within a repetition the two alternate (which goes first swaps
/// each time), so that a burst of load from other processes falls on both sides of that repetition's ratio.
func repeatedPair(_ iterations: Int, baseline: (Int) -> Void, measured: (Int) -> Void) -> (
  baseline: [Double], measured: [Double]
) {
  var result = (baseline: [Double](), measured: [Double]())
  for repetition in 0..<repetitions {
    withPinnedThread(repetition) {
      var best = (baseline: Double.infinity, measured: Double.infinity)
      for timing in 0..<bestOf {
        if timing % 2 == 0 {
          best.baseline = min(best.baseline, timeOnce(iterations, baseline))
          best.measured = min(best.measured, timeOnce(iterations, measured))
        } else {
          best.measured = min(best.measured, timeOnce(iterations, measured))
          best.baseline = min(best.baseline, timeOnce(iterations, baseline))
        }
      }
      result.baseline.append(best.baseline)
      result.measured.append(best.measured)
    }
  }
  return result
}

/// The same on `threads` threads at once: the slowest thread's fastest of `bestOf` timings, in ns per iteration.
func timeThreads(_ threads: Int, _ iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
  // The threads run their timings at once; flushes between timings are per call, so they line up loosely.
  let results = Locked([Double](repeating: 0, count: threads))
  let group = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for index in 0..<threads {
    group.enter()
    Thread {
      start.wait()
      let nanoseconds = (0..<bestOf).map { _ in timeOnce(iterations, body) }.min()!
      results.withLock { $0[index] = nanoseconds }
      group.leave()
    }.start()
  }
  for _ in 0..<threads { start.signal() }
  group.wait()
  return results.withLock { $0.max() ?? 0 }
}

final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func withLock<R>(_ body: (inout Value) -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}

/// What people write first: a mutex-protected array of events, timestamped with ContinuousClock.
final class NaiveRecorder: @unchecked Sendable {
  struct Event {
    var time: ContinuousClock.Instant
    var kind: UInt8
    var object: UInt32
    var key: UInt32
  }

  private let lock = NSLock()
  private var events: [Event] = []

  func record(_ kind: UInt8, _ object: UInt32, _ key: UInt32) {
    let event = Event(time: .now, kind: kind, object: object, key: key)
    lock.lock()
    events.append(event)
    lock.unlock()
  }

  func reset() {
    lock.lock()
    events.removeAll(keepingCapacity: true)
    lock.unlock()
  }
}

/// A line of the table; every figure already formatted.
struct Row {
  var name: String
  var baseline = ""
  var measured: String
  var ratio = ""
  var spread = ""
  var target = ""
  var verdict: Verdict?
}

var rows: [Row] = []
let directory = NSTemporaryDirectory() + "obstrace-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

func fixed(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

func range(_ spread: Spread, _ digits: Int = 1, _ unit: String = "") -> String {
  "\(fixed(spread.low, digits))–\(fixed(spread.high, digits))\(unit)"
}

/// A ratio row: the medians of the baseline's and the case's repetitions (ns per operation), the median of the
/// per-repetition ratios and their range, and the verdict on that range.
func compare(_ name: String, baseline: [Double], measured: [Double], limit: Double?) {
  let ratios = Spread.ofRatios(measured: measured, baseline: baseline)
  let target = limit.map { BenchTarget.atMost($0) }
  rows.append(
    Row(
      name: name, baseline: fixed(Spread(baseline).median), measured: fixed(Spread(measured).median),
      ratio: fixed(ratios.median, 2) + "×", spread: range(ratios, 2, "×"),
      target: limit.map { "≤ \(fixed($0, 2))×" } ?? "", verdict: target?.verdict(ratios)))
}

/// A row of one figure taken several times: its median and range (`digits` decimals, then `unit`), and the verdict
/// on that range when it has a target.
func figure(
  _ name: String, _ values: [Double], digits: Int = 1, unit: String = "", target: BenchTarget? = nil,
  targetText: String = ""
) {
  let spread = Spread(values)
  rows.append(
    Row(
      name: name, measured: fixed(spread.median, digits) + unit, spread: range(spread, digits, unit),
      target: targetText, verdict: target?.verdict(spread)))
}

/// Records with the default ring (64K records); a repeat emits at most `iterations` × 2 events, which fit.
func withRecording<T>(_ backtraces: RecordingOptions.Backtraces = .off, _ body: () throws -> T) rethrows -> T {
  let path = directory + "/case.trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: backtraces))
  defer { Recorder.stop() }
  return try body()
}

// `obstrace-bench --write-trace loop|many|demo|threads|retrack|churn|comeandgo PATH N`: only write a trace (for
// profiling the CLI): `loop`, N iterations of the whole-cost loop (stacks on writes, 3 events an iteration); `many`, N
// rounds of the many-object workload; `demo`, N rounds of the demo's workload; `threads` (`threads32`…), 4 (32…)
// threads at once, each N writes (the multi-thread rows' workload); `retrack`, N rounds of 4096 re-tracks of one call
// and 256 writes (≈ 25 k events a round, ≈ 3,000 instances left behind a round: the re-track row's workload); `churn`,
// N short-lived models, each tracked once, every other one written, then freed (tryout14's Churn); `comeandgo`, N
// threads that come and go, two at a time, each a model written 10 times and read in a tracked scope (a thread per
// job: a trace of N threads, each with one chunk flagged "exited"; tryout15's J6). Options from the environment
// (`OBSTRACE_BACKTRACES=off` gives the many-object traces of the report rows, which record without stacks).
if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--write-trace",
  let count = Int(CommandLine.arguments[4])
{
  let options = RecordingOptions.fromEnvironment(ProcessInfo.processInfo.environment).options
  try! Recorder.start(to: CommandLine.arguments[3], options: options)
  switch CommandLine.arguments[2] {
  case "many": manyObjectsWorkload(objects: 100_000, scopes: 10_000, rounds: count)
  case "demo": demoWorkload(count)
  case "retrack": retrackWorkload(rounds: count)
  case "churn": blackHole(churnWorkload(count))
  case "comeandgo": blackHole(comeAndGoWorkload(threads: count))
  case let mode where mode.hasPrefix("threads"):
    blackHole(threadsWorkload(threads: Int(mode.dropFirst("threads".count)) ?? 4, writes: count))
  default:
    blackHole(tracedLoop(count))
  }
  Recorder.stop()
  exit(0)
}

// `obstrace-bench --first-writes [off]`: tryout16's FirstWrite (P10), recording (`off`: the same build, not recording):
// the first event of the process, then the first and second `+= 1` of properties of five new types, each timed on the
// writing thread (wall and that thread's CPU, µs), on stdout. Run it a few times (`scripts/first-writes` does): a
// first write's figures are one sample each. Options from the environment (`OBSTRACE_COMPARE=off`…).
if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "--first-writes" {
  let recording = CommandLine.arguments.count < 3 || CommandLine.arguments[2] != "off"
  let path = NSTemporaryDirectory() + "obstrace-first-writes-\(getpid()).trc"
  if recording {
    let options = RecordingOptions.fromEnvironment(ProcessInfo.processInfo.environment).options
    try! Recorder.start(to: path, options: options)
  }
  let rows = firstWriteTimes()
  if recording {
    Recorder.stop()
    unlink(path)
  }
  for (what, wall, cpu) in rows { print("\(what)\t\(fixed(wall))\t\(fixed(cpu))") }
  exit(0)
}

// `obstrace-bench --profile scope|read|write|modify|loop|first|alternate N`: only run one traced case N times, recording with the
// options of the environment (`OBSTRACE_BACKTRACES`…), for perf record or callgrind; prints the case's ns per
// operation and the whole run's CPU (every thread, from before the start to after the stop) on stderr.
// `--profile-off …` runs it without recording, `--profile-plain …` its untraced twin.
if CommandLine.arguments.count == 4, CommandLine.arguments[1].hasPrefix("--profile"),
  let count = Int(CommandLine.arguments[3])
{
  let mode = CommandLine.arguments[1]
  let cpuBefore = obstrace_bench_process_cpu()
  if mode == "--profile" {
    let options = RecordingOptions.fromEnvironment(ProcessInfo.processInfo.environment).options
    try! Recorder.start(to: NSTemporaryDirectory() + "obstrace-profile.trc", options: options)
  }
  let plain = mode == "--profile-plain"
  let start = obstrace_bench_now()
  switch CommandLine.arguments[2] {
  case "scope": blackHole(plain ? plainScopes(count) : tracedScopes(count))
  case "read": blackHole(plain ? plainReads(count) : tracedReads(count))
  case "write": blackHole(plain ? plainWrites(count) : tracedWrites(count))
  case "modify": blackHole(plain ? plainModifyWrites(count, kind: 2) : tracedModifyWrites(count, kind: 2))
  // A scope's first run and first writes on a type met for the first time (`first 1`): its first-use cost.
  case "first": blackHole(plain ? plainFirstUse(count) : tracedFirstUse(count))
  case "alternate": blackHole(plain ? plainAlternate(count) : tracedAlternate(count))
  default: blackHole(plain ? plainLoop(count) : tracedLoop(count))
  }
  let elapsed = obstrace_bench_now() - start
  let drains = mode == "--profile" ? Recorder.stop()?.drains : nil
  let cpu = obstrace_bench_process_cpu() - cpuBefore
  let batches = drains.map { "; flusher: \($0.batches) batches in \($0.passes) passes, \($0.smallBatches) short" } ?? ""
  FileHandle.standardError.write(
    "\(fixed(Double(elapsed) / Double(count))) ns/op; CPU \(fixed(Double(cpu) / Double(count))) ns/op\(batches)\n"
      .data(using: .utf8)!)
  exit(0)
}

// `obstrace-bench --cpus read|write|modify|loop N`: the untraced case and its traced twin (not recording), N operations
// a timing, the fastest of `bestOf` timings with the thread kept on each CPU in turn, four times over: whether the
// CPUs run the same code at the same speed (on this VM they often do not; see `withPinnedThread`).
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--cpus", let count = Int(CommandLine.arguments[3]) {
  let kind = CommandLine.arguments[2]
  func run(_ plain: Bool, _ n: Int) {
    switch kind {
    case "read": blackHole(plain ? plainReads(n) : tracedReads(n))
    case "write": blackHole(plain ? plainWrites(n) : tracedWrites(n))
    case "modify": blackHole(plain ? plainModifyWrites(n, kind: 2) : tracedModifyWrites(n, kind: 2))
    default: blackHole(plain ? plainLoop(n) : tracedLoop(n))
    }
  }
  let cpus = Int(obstrace_bench_cpus())
  for pass in 1...4 {
    for cpu in 0..<cpus {
      obstrace_bench_pin(Int32(cpu))
      let plain = (0..<bestOf).map { _ in timeOnce(count) { run(true, $0) } }.min()!
      let traced = (0..<bestOf).map { _ in timeOnce(count) { run(false, $0) } }.min()!
      obstrace_bench_pin(-1)
      print("pass \(pass), CPU #\(cpu): untraced \(fixed(plain)) ns, traced not recording \(fixed(traced)) ns")
    }
  }
  exit(0)
}

// `obstrace-bench --threads-effect N`: the untraced loop (`plainLoop`, N iterations) in a process that has had one
// thread only, then again after one thread was created and joined, and once more: what glibc's locks (taken by
// Observation's registrar in every willSet and didSet) cost once a process has had a second thread (README, "What
// it costs"). Starts no thread before the first measurement.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--threads-effect",
  let count = Int(CommandLine.arguments[2])
{
  func measured() -> Double {
    let start = obstrace_bench_now()
    blackHole(plainLoop(count))
    return Double(obstrace_bench_now() - start) / Double(count)
  }
  let alone = [measured(), measured()]
  var thread = pthread_t()
  pthread_create(&thread, nil, { _ in nil }, nil)
  pthread_join(thread, nil)
  let after = [measured(), measured()]
  print("plainLoop, one thread so far: \(alone.map { fixed($0) }.joined(separator: ", ")) ns an iteration")
  print(
    "plainLoop, after one more thread was created and joined: \(after.map { fixed($0) }.joined(separator: ", ")) ns an iteration"
  )
  exit(0)
}

let iterations = 30_000
print(
  "obstrace-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(iterations) operations per timing; each "
    + "figure taken \(repetitions) times (each the fastest of \(bestOf) timings, a case and its baseline alternating)"
)

// MARK: Clocks and the event floor

figure("clock: TSC (the hot path's)", repeated(iterations) { blackHole(obstrace_bench_rdtsc(UInt64($0))) })
figure(
  "clock: clock_gettime(MONOTONIC)", repeated(iterations) { blackHole(obstrace_bench_clock_gettime(UInt64($0))) })
figure(
  "clock: ContinuousClock.now",
  repeated(iterations) { n in
    var last = ContinuousClock.now
    for _ in 0..<n { last = .now }
    blackHole(last)
  })

let (floor, emit) = withRecording {
  repeatedPair(
    iterations, baseline: { blackHole(obstrace_bench_floor(UInt64($0))) },
    measured: { blackHole(obstrace_bench_emit(UInt64($0))) })
}
compare("one event (1 thread) vs floor: clock + 32-byte store", baseline: floor, measured: emit, limit: 1.5)

// Two threads at once, repetition by repetition: the floor, then the recorder's event (recording).
var (floorTwo, emitTwo) = ([Double](), [Double]())
for _ in 0..<repetitions {
  floorTwo.append(timeThreads(2, iterations) { blackHole(obstrace_bench_floor(UInt64($0))) })
  emitTwo.append(withRecording { timeThreads(2, iterations) { blackHole(obstrace_bench_emit(UInt64($0))) } })
}
compare("one event (2 threads at once) vs floor, per thread", baseline: floorTwo, measured: emitTwo, limit: 1.5)

let naive = NaiveRecorder()
let (emitBeside, naiveOne) = withRecording {
  repeatedPair(
    iterations, baseline: { blackHole(obstrace_bench_emit(UInt64($0))) },
    measured: { n in
      for index in 0..<n { naive.record(1, UInt32(truncatingIfNeeded: index), 2) }
      naive.reset()
    })
}
compare(
  "naive recorder (mutex + array), 1 thread, vs ObsTrace's event", baseline: emitBeside, measured: naiveOne,
  limit: nil)
var naiveTwo = [Double]()
for _ in 0..<repetitions {
  naiveTwo.append(
    timeThreads(2, iterations) { n in
      for index in 0..<n { naive.record(1, UInt32(truncatingIfNeeded: index), 2) }
    })
  naive.reset()
}
compare("naive recorder, 2 threads at once, vs ObsTrace's", baseline: emitTwo, measured: naiveTwo, limit: nil)

// MARK: Observation, with and without ObsTrace (each case and its baseline on a model local to its loop)

// Recording is on for both sides of a pair (the untraced baseline records nothing), so that both run beside the
// flusher thread.
let (plainRead, tracedRead) = withRecording {
  repeatedPair(iterations, baseline: { blackHole(plainReads($0)) }, measured: { blackHole(tracedReads($0)) })
}
compare("read outside tracking: traced vs untraced", baseline: plainRead, measured: tracedRead, limit: 1.5)

// What seeing untraced tracking costs a read: one call of Observation's `_swift_observation_tls_get` through a
// function pointer (the recorder finds it at start; turned off here for the baseline).
let (tracedReadUnchecked, tracedReadChecked) = withRecording {
  let getter = unsafeBitCast(obstrace_observation_tracking, to: UnsafeRawPointer?.self)
  defer { obstrace_set_tracking_getter(getter) }
  return repeatedPair(
    iterations,
    baseline: {
      obstrace_set_tracking_getter(nil)
      blackHole(tracedReads($0))
    },
    measured: {
      obstrace_set_tracking_getter(getter)
      blackHole(tracedReads($0))
    })
}
compare(
  "read outside tracking: traced, untraced-tracking check vs none", baseline: tracedReadUnchecked,
  measured: tracedReadChecked, limit: nil)

// A read inside tracking ObsTrace does not own (`withObservationTracking` from a file without the import):
// recorded into its untraced scope. Both sides pay Observation's access-list update; both models are made here,
// the same way.
let readsPerScope = 1000
let (plainReadInside, tracedReadInside) = withRecording { () -> ([Double], [Double]) in
  let plainModel = PlainCounter()
  let tracedModel = TracedCounter()
  let pair = repeatedPair(
    iterations / readsPerScope,
    baseline: { n in
      for _ in 0..<n { blackHole(readsInsideObservationTracking(readsPerScope) { plainModel.value }) }
    },
    measured: { n in
      for _ in 0..<n { blackHole(readsInsideObservationTracking(readsPerScope) { tracedModel.value }) }
    })
  return (pair.baseline.map { $0 / Double(readsPerScope) }, pair.measured.map { $0 / Double(readsPerScope) })
}
compare(
  "read inside untraced tracking (no import there): traced vs untraced", baseline: plainReadInside,
  measured: tracedReadInside, limit: 1.5)

var plainWrite = [Double]()
for (level, limit) in [(RecordingOptions.Backtraces.off, 1.3), (.writes, 1.6), (.all, nil)] {
  let (plain, tracedWrite) = withRecording(level) {
    repeatedPair(iterations, baseline: { blackHole(plainWrites($0)) }, measured: { blackHole(tracedWrites($0)) })
  }
  plainWrite += plain
  compare("write: traced (stacks \(level.rawValue)) vs untraced", baseline: plain, measured: tracedWrite, limit: limit)
}

// Writes through `_modify`, on a model each timing creates (a local in both cases, stored the same way): an append
// to an [Int] (not compared by default: O(1), no copy), a field of a struct of Ints and a `+= 0` (both compared
// bit for bit, the default).
for (kind, name) in [(0, "array append"), (1, "struct field"), (2, "+= 0 (a no-op, compared)")] {
  let (plainModify, tracedModify) = withRecording(.writes) {
    repeatedPair(
      iterations, baseline: { n in blackHole(plainModifyWrites(n, kind: kind)) },
      measured: { n in blackHole(tracedModifyWrites(n, kind: kind)) })
  }
  compare(
    "write through _modify, \(name): traced (stacks writes) vs untraced", baseline: plainModify,
    measured: tracedModify, limit: nil)
}

// A traced build that is not recording, on the writes and reads real code makes most (`+=` and `append` go through
// `_modify`; the whole-cost loop below uses the setter): the registrar's flag check, inlined, and the real registrar.
for (kind, name) in [(2, "+= 0"), (0, "array append")] {
  let (plainOff, tracedOff) = repeatedPair(
    iterations, baseline: { n in blackHole(plainModifyWrites(n, kind: kind)) },
    measured: { n in blackHole(tracedModifyWrites(n, kind: kind)) })
  compare(
    "write through _modify, \(name): traced, not recording vs untraced", baseline: plainOff, measured: tracedOff,
    limit: 1.05)
}
let (plainReadOff, tracedReadOff) = repeatedPair(
  iterations, baseline: { blackHole(plainReads($0)) }, measured: { blackHole(tracedReads($0)) })
compare(
  "read outside tracking: traced, not recording vs untraced", baseline: plainReadOff, measured: tracedReadOff,
  limit: 1.05)

let scopes = iterations / 6
let (plainTracking, tracedTracking) = withRecording(.writes) {
  repeatedPair(scopes, baseline: { blackHole(plainScopes($0)) }, measured: { blackHole(tracedScopes($0)) })
}
compare(
  "withObservationTracking scope, one read: traced vs untraced", baseline: plainTracking, measured: tracedTracking,
  limit: 1.1)

// MARK: The whole cost: a loop long enough to overflow the rings, every thread's CPU, start to stop

/// One case of the whole cost: what runs, and whether (with which stacks, into which file) it records; or, with
/// `inChild`, the untraced loop in a child process of this binary that starts no thread (`--profile-plain`).
struct WholeCostCase {
  var backtraces: RecordingOptions.Backtraces?
  var path: String?
  var inChild = false
  var body: () -> Void = {}
}

/// One run of `--profile-plain loop N` in a child process: its loop's wall and CPU time, in nanoseconds.
func singleThreadedLoopRun(_ iterations: Int) -> (wall: Double, cpu: Double) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  process.arguments = ["--profile-plain", "loop", String(iterations)]
  let errors = Pipe()
  process.standardError = errors
  try! process.run()
  let output = errors.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  // "86.1 ns/op; CPU 86.1 ns/op"
  let fields = String(decoding: output, as: UTF8.self).split(separator: " ")
  guard fields.count >= 4, let wall = Double(fields[0]), let cpu = Double(fields[3]) else {
    fatalError("obstrace-bench --profile-plain loop: unexpected output '\(String(decoding: output, as: UTF8.self))'")
  }
  return (wall * Double(iterations), cpu * Double(iterations))
}

/// Wall and whole-process CPU (every thread: the flusher's encoding and compression included) of each case, from
/// before `Recorder.start` (when it records) to after `Recorder.stop` returned, `repetitions` times: per case, one
/// value per repetition. Every repetition runs each case once, starting one case later than the repetition before
/// (so that no case always follows the same one), its program thread kept on one CPU as in `repeated`; a ratio is
/// taken repetition by repetition, between runs a few hundred milliseconds apart.
func wholeCost(_ cases: [WholeCostCase], iterations: Int) -> [(wall: [Double], cpu: [Double], events: UInt64)] {
  var results = [(wall: [Double], cpu: [Double], events: UInt64)](repeating: ([], [], 0), count: cases.count)
  for repetition in 0..<repetitions {
    for offset in 0..<cases.count {
      let index = (repetition + offset) % cases.count
      let run = cases[index]
      if run.inChild {
        // The child inherits the pin.
        let child = withPinnedThread(repetition) { singleThreadedLoopRun(iterations) }
        results[index].wall.append(child.wall)
        results[index].cpu.append(child.cpu)
        continue
      }
      let cpuBefore = obstrace_bench_process_cpu()
      let start = obstrace_bench_now()
      // The recording starts (its flusher thread with it) before the pin, so that the flusher may run anywhere.
      if let backtraces = run.backtraces {
        try! Recorder.start(
          to: run.path ?? directory + "/loop.trc", options: RecordingOptions(backtraces: backtraces))
      }
      withPinnedThread(repetition) { run.body() }
      if run.backtraces != nil { results[index].events = Recorder.stop()!.events }
      results[index].wall.append(Double(obstrace_bench_now() - start))
      results[index].cpu.append(Double(obstrace_bench_process_cpu() - cpuBefore))
    }
  }
  return results
}

let loopIterations = 3_000_000
let loopTracePath = directory + "/loop-writes.trc"
// The baselines run in this process, which has had other threads for a while (as has any program with a Dispatch
// queue, a Task or a UI): glibc's locks, which Observation's registrar takes in every willSet and didSet, then take
// their multi-threaded path. A program that never had a second thread runs the same untraced loop faster, and a
// recording gives it one (the flusher), for good. So the recording rows are compared with that loop too: the same
// `plainLoop`, in a child process of this binary that starts no thread (`--profile-plain`), one of the cases.
let loopCosts = wholeCost(
  [
    WholeCostCase(backtraces: nil) { blackHole(plainLoop(loopIterations)) },
    WholeCostCase(backtraces: nil) { blackHole(tracedLoop(loopIterations)) },
    WholeCostCase(backtraces: .off) { blackHole(tracedLoop(loopIterations)) },
    WholeCostCase(backtraces: .writes, path: loopTracePath) { blackHole(tracedLoop(loopIterations)) },
    WholeCostCase(backtraces: nil, inChild: true),
  ], iterations: loopIterations)
let (loopUntraced, loopNotRecording, loopStacksOff, loopDefault, loopSingleThreaded) = (
  loopCosts[0], loopCosts[1], loopCosts[2], loopCosts[3], loopCosts[4]
)
let perIteration = Double(loopIterations)
func perOp(_ values: [Double]) -> [Double] { values.map { $0 / perIteration } }
let loopName = "3M × (write; read), local model"
compare(
  "\(loopName), wall: traced, not recording vs untraced", baseline: perOp(loopUntraced.wall),
  measured: perOp(loopNotRecording.wall), limit: 1.05)
compare(
  "\(loopName), wall: recording (stacks off) vs untraced", baseline: perOp(loopUntraced.wall),
  measured: perOp(loopStacksOff.wall), limit: 1.4)
compare(
  "\(loopName), wall: recording (stacks writes) vs untraced", baseline: perOp(loopUntraced.wall),
  measured: perOp(loopDefault.wall), limit: 1.6)
compare(
  "\(loopName), CPU all threads: recording (stacks off) vs untraced", baseline: perOp(loopUntraced.cpu),
  measured: perOp(loopStacksOff.cpu), limit: nil)
compare(
  "\(loopName), CPU all threads: recording (stacks writes) vs untraced", baseline: perOp(loopUntraced.cpu),
  measured: perOp(loopDefault.cpu), limit: 2.5)
figure(
  "\(loopName), untraced, in a process that never had a second thread (wall, ns an iteration)",
  perOp(loopSingleThreaded.wall))
compare(
  "\(loopName), wall: recording (stacks off) vs untraced in a single-threaded process",
  baseline: perOp(loopSingleThreaded.wall), measured: perOp(loopStacksOff.wall), limit: 1.4)
compare(
  "\(loopName), wall: recording (stacks writes) vs untraced in a single-threaded process",
  baseline: perOp(loopSingleThreaded.wall), measured: perOp(loopDefault.wall), limit: 1.6)
compare(
  "\(loopName), CPU all threads: recording (stacks writes) vs untraced in a single-threaded process",
  baseline: perOp(loopSingleThreaded.cpu), measured: perOp(loopDefault.cpu), limit: 2.5)
let loopEvents = Double(max(1, loopDefault.events))
figure(
  "  CPU added per event, all threads (\(loopDefault.events) events, stacks writes)",
  zip(loopDefault.cpu, loopUntraced.cpu).map { ($0 - $1) / loopEvents }, unit: " ns", target: .atMost(40),
  targetText: "≤ 40 ns")
figure(
  "  CPU added per event over the single-threaded untraced loop",
  zip(loopDefault.cpu, loopSingleThreaded.cpu).map { ($0 - $1) / loopEvents }, unit: " ns", target: .atMost(40),
  targetText: "≤ 40 ns")

// MARK: Sustained to disk, without loss

/// Records `body` on `threads` threads with stacks off, lossless. `eventsPerSecond`: every event over the time from
/// the start to the stop's return (all on disk: the stop's final drain, symbol table and footer included);
/// `writerEventsPerSecond`: every event over the time until the threads' last write returned (lossless: each waited
/// for the flusher whenever its ring was full, so at most a ring of events per thread, 64 K, was not yet drained);
/// `stopSeconds`: the stop alone.
typealias SustainedRun = (
  eventsPerSecond: Double, writerEventsPerSecond: Double, stopSeconds: Double, dropped: UInt64, events: UInt64
)

/// The writer threads are kept on CPU `repetition` modulo the CPUs (as `withPinnedThread` does), the flusher on any.
func sustained(threads: Int, repetition: Int, _ body: @escaping @Sendable () -> Void) -> SustainedRun {
  let path = directory + "/sustained.trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  let start = obstrace_bench_now()
  let group = DispatchGroup()
  for _ in 0..<threads {
    group.enter()
    Thread {
      withPinnedThread(repetition) { body() }
      group.leave()
    }.start()
  }
  group.wait()
  let written = obstrace_bench_now()
  let summary = Recorder.stop()!
  let stopped = obstrace_bench_now()
  let events = Double(summary.events)
  return (
    events / (Double(stopped - start) / 1e9), events / (Double(written - start) / 1e9),
    Double(stopped - written) / 1e9, summary.droppedEvents, summary.events
  )
}
/// Repetitions of each sustained run (a second or so each).
let sustainedRepetitions = 5
for (name, run) in [
  ("1 writer thread", { sustained(threads: 1, repetition: $0) { blackHole(tracedWrites(5_000_000)) } }),
  // The recorder's own sustained rate: a thread of reads, one event each, the densest events a program makes.
  ("1 thread of reads", { sustained(threads: 1, repetition: $0) { blackHole(tracedReads(20_000_000)) } }),
] as [(String, (Int) -> SustainedRun)] {
  let results = (0..<sustainedRepetitions).map { run($0) }
  let writer = name == "1 writer thread"
  figure(
    "sustained to disk, lossless, \(name), stacks off (M events/s to the stop's return, all on disk)",
    results.map { $0.eventsPerSecond / 1e6 }, unit: " M/s", target: writer ? .atLeast(25) : nil,
    targetText: writer ? "≥ 25 M/s" : "")
  let stopMilliseconds = Spread(results.map { $0.stopSeconds * 1e3 })
  figure(
    "  the same runs to their last write (M events/s; then the stop: \(fixed(stopMilliseconds.median, 0)) ms, median)",
    results.map { $0.writerEventsPerSecond / 1e6 }, unit: " M/s")
  let dropped = results.reduce(0) { $0 + $1.dropped }
  let events = results.reduce(0) { $0 + $1.events }
  rows.append(
    Row(
      name: "  dropped in those \(sustainedRepetitions) runs", measured: "\(dropped) of \(events)", target: "0",
      verdict: dropped == 0 ? .met : .no))
  if writer {
    // What bounds the writer's rows: a write makes two events (willSet, didSet), and the same writes untraced (on
    // the same local model, stored the same way: `plainWrites` against `tracedWrites`) already take `plainWrite` ns
    // each, so no recorder can carry that thread past this rate.
    figure(
      "  its bound: 2 events per write at the untraced write's cost (M events/s)", plainWrite.map { 2e3 / $0 },
      unit: " M/s")
  }
}

let demoPath = directory + "/demo.trc"
try! Recorder.start(to: demoPath, options: RecordingOptions())
demoWorkload(200_000)
let demoSummary = Recorder.stop()!
let bytesPerEvent = Double(demoSummary.bytes) / Double(demoSummary.events)
// One run: the same events compress to the same bytes (the chunks' boundaries move with the flusher's timing only).
rows.append(
  Row(
    name: "file bytes per event, the demo's workload (stacks on writes; one run)", measured: fixed(bytesPerEvent, 2),
    target: "≤ 3", verdict: BenchTarget.atMost(3).verdict(Spread([bytesPerEvent]))))

// MARK: The CLI reading big traces

let obstracePath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
  "obstrace"
).path

/// Runs of each CLI row (report, timeline, dump): each row's rate is the median of its runs, with their range.
let cliRuns = 5

/// Runs `obstrace report` on `path` under GNU time, `cliRuns` times: each run's wall time and CPU time (user +
/// system, every thread), and the largest peak resident memory of the runs.
func runReport(_ path: String) -> (seconds: [Double], cpuSeconds: [Double], maxResidentKiB: Int) {
  var result = (seconds: [Double](), cpuSeconds: [Double](), maxResidentKiB: 0)
  for _ in 0..<cliRuns {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%U %S %M", obstracePath, "report", "--format", "json", path]
    let errors = Pipe()
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = errors
    let start = obstrace_bench_now()
    try! process.run()
    let output = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = Double(obstrace_bench_now() - start) / 1e9
    let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    let fields = line.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespaces) }
    guard process.terminationStatus == 0, fields.count == 3, let user = Double(fields[0]),
      let system = Double(fields[1]), let resident = Int(fields[2])
    else {
      fatalError("obstrace report \(path) failed: '\(String(decoding: output, as: UTF8.self))'")
    }
    result.seconds.append(seconds)
    result.cpuSeconds.append(user + system)
    result.maxResidentKiB = max(result.maxResidentKiB, resident)
  }
  return result
}

/// A report row: events per second by the wall time of each run (median and range; the verdict on the range), the
/// median CPU time of the runs (all threads: more than the wall time when decoding overlapped the replay) and the
/// largest peak memory.
func reportRow(_ name: String, path: String, events: UInt64) {
  let (seconds, cpuSeconds, resident) = runReport(path)
  let rates = Spread(seconds.map { Double(events) / $0 / 1e6 })
  rows.append(
    Row(
      name: "obstrace report, \(name) (M events/s; median wall and CPU s; peak memory)",
      measured: fixed(rates.median) + " M/s; \(fixed(Spread(seconds).median, 2)) s wall, "
        + "\(fixed(Spread(cpuSeconds).median, 2)) s CPU; \(resident / 1024) MiB", spread: range(rates, 1, " M/s"),
      target: "≥ 20 M/s, flat memory", verdict: BenchTarget.atLeast(20).verdict(rates)))
}

reportRow(
  "the loop's trace, \(loopDefault.events / 1_000_000)M events", path: loopTracePath, events: loopDefault.events)

// 100 k objects, 10 k scopes: the replay's state is per object and per scope; memory must not grow with the events
// (1, 2 and 4 rounds: 0.55, 0.9 and 1.6 M events; the peak memory of the rows should stay level). 16 rounds (5.8 M
// events): the same trace with the fixed part of a report (100 k objects' and 10 k scopes' definitions, the
// per-scope report) spread over four times the events of the 4-round row, for the rate of the events themselves.
for rounds in [1, 2, 4, 16] {
  let path = directory + "/many-\(rounds).trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  manyObjectsWorkload(objects: 100_000, scopes: 10_000, rounds: rounds)
  let events = Recorder.stop()!.events
  reportRow(
    "100k objects, 10k scopes, \(fixed(Double(events) / 1e6))M events", path: path, events: events)
  if rounds == 2 {
    linesRow("obstrace timeline into a pipe, 100k objects, 10k scopes, 2 rounds", ["timeline", path])
    linesRow("obstrace dump into a pipe, 100k objects, 10k scopes, 2 rounds", ["dump", path])
  }
  try? FileManager.default.removeItem(atPath: path)
}

/// Runs `obstrace arguments` with its output into a pipe (`wc -l` reads it) or into a file, `runs` times: lines
/// per second of each run, by the wall time of the whole command, and the lines (every run must print as many).
func linesRates(_ arguments: [String], intoFile: Bool = false, runs: Int = cliRuns) -> (
  linesPerSecond: [Double], lines: Int
) {
  var result = (linesPerSecond: [Double](), lines: 0)
  for _ in 0..<runs {
    let run = linesRateOnce(arguments, intoFile: intoFile)
    guard run.lines > 0, result.lines == 0 || run.lines == result.lines else {
      fatalError(
        "obstrace \(arguments.joined(separator: " ")): \(run.lines) lines, after \(result.lines) in a run before")
    }
    result.lines = run.lines
    result.linesPerSecond.append(run.linesPerSecond)
  }
  return result
}

func linesRateOnce(_ arguments: [String], intoFile: Bool) -> (linesPerSecond: Double, lines: Int) {
  let file = directory + "/lines.txt"
  let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", "\"$0\" \(quoted)" + (intoFile ? " > '\(file)'" : " | wc -l"), obstracePath]
  let output = Pipe()
  process.standardOutput = output
  let start = obstrace_bench_now()
  try! process.run()
  var text = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let seconds = Double(obstrace_bench_now() - start) / 1e9
  if intoFile {
    let count = Process()
    count.executableURL = URL(fileURLWithPath: "/bin/sh")
    count.arguments = ["-c", "wc -l < '\(file)'; rm -f '\(file)'"]
    let counted = Pipe()
    count.standardOutput = counted
    try! count.run()
    text = counted.fileHandleForReading.readDataToEndOfFile()
    count.waitUntilExit()
  }
  let lines = Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  return (Double(lines) / seconds, lines)
}

func linesRow(_ name: String, _ arguments: [String], intoFile: Bool = false, runs: Int = cliRuns) {
  let rates = linesRates(arguments, intoFile: intoFile, runs: runs)
  figure(
    "\(name) (\(rates.lines) lines; M lines/s)", rates.linesPerSecond.map { $0 / 1e6 }, digits: 2, unit: " M/s",
    target: .atLeast(1), targetText: "≥ 1 M/s")
}

let timelineIterations = 1_000_000
let timelinePath = directory + "/timeline.trc"
try! Recorder.start(to: timelinePath, options: RecordingOptions())
blackHole(tracedLoop(timelineIterations))
Recorder.stop()
linesRow("obstrace timeline into a pipe, the loop's trace", ["timeline", timelinePath])
linesRow("obstrace timeline into a file, the loop's trace", ["timeline", timelinePath], intoFile: true)
linesRow("obstrace dump into a pipe, the loop's trace", ["dump", timelinePath])
linesRow("obstrace dump into a file, the loop's trace", ["dump", timelinePath], intoFile: true)
linesRow("obstrace dump --stacks into a pipe, the loop's trace", ["dump", "--stacks", timelinePath])

/// Runs of the multi-thread timeline rows: fewer than `cliRuns`, as the 32-thread one takes 15–30 s a run here.
let multiThreadTimelineRuns = 3

// Traces written by several threads at once (the shape of a program with background queues: tryout10's Stress
// program, N12): `threads` threads, each `+= 1` on a model of its own, default options (stacks on writes), 9.6 M
// events in all. The report and the timeline merge the threads' events in time order (docs/analysis.md, "Order"),
// which a one-thread trace never exercises: its rows above do not say what these cost.
for (threads, writes) in [(4, 800_000), (32, 100_000)] {
  let path = directory + "/threads-\(threads).trc"
  try! Recorder.start(to: path, options: RecordingOptions())
  blackHole(threadsWorkload(threads: threads, writes: writes))
  let summary = Recorder.stop()!
  precondition(summary.droppedEvents == 0, "the \(threads)-thread trace lost events")
  let name = "\(threads) threads × \(writes / 1000)k writes (+= 1), \(fixed(Double(summary.events) / 1e6))M events"
  reportRow(name, path: path, events: summary.events)
  linesRow("obstrace timeline into a pipe, \(name)", ["timeline", path], runs: multiThreadTimelineRuns)
  try? FileManager.default.removeItem(atPath: path)
}

// One call re-tracked faster than its writes fire it (tryout13 G15): ≈ 3,000 instances a round that no run
// continues. The replay keeps at most 2048 of them waiting (ReplayMachine.waitingKeptPerLabel): its memory must not
// grow with the rounds, nor its time per event with the instances left behind (a replay that kept them all ran
// ≈ 40 k events/s on such a trace).
do {
  let path = directory + "/retrack.trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  retrackWorkload(rounds: 100)
  let summary = Recorder.stop()!
  precondition(summary.droppedEvents == 0, "the re-track trace lost events")
  reportRow(
    "one call re-tracked 4096 times, then written 256 times, 100 rounds, \(fixed(Double(summary.events) / 1e6))M events",
    path: path,
    events: summary.events)
  try? FileManager.default.removeItem(atPath: path)
}

// MARK: The table

print("")
print("| case | baseline ns/op | measured (median) | ratio (median) | range (min–max) | target | met |")
print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
for row in rows {
  print(
    "| \(row.name) | \(row.baseline) | \(row.measured) | \(row.ratio) | \(row.spread) | \(row.target) | "
      + "\(row.verdict?.rawValue ?? "") |")
}
print("")
print(
  "Each figure is the median of its repetitions, the range their lowest and highest: timed cases \(repetitions), each "
    + "the fastest of \(bestOf) timings; the whole-cost loop \(repetitions) runs of each case; sustained "
    + "\(sustainedRepetitions) runs; CLI rows \(cliRuns) runs (the multi-thread timelines "
    + "\(multiThreadTimelineRuns)). A ratio's range is that of the repetitions' ratios, each between a case and its "
    + "baseline run side by side. met: yes when the whole range meets the target, **no** when none of it does, on the "
    + "line otherwise (this machine cannot tell).")
