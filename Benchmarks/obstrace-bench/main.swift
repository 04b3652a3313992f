// obstrace-bench: what tracing costs, as ratios measured in one run (scripts/bench builds it in release).
// Each case is timed several times and the fastest repeat kept; a ratio compares two cases of this run.
import CObsTraceBench
import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFormat

@inline(never)
func blackHole<T>(_ value: T) {
  withExtendedLifetime(value) {}
}

/// The fastest of `repeats` timings of `body(iterations)`, in nanoseconds per iteration. Between repeats the
/// recorder (when on) is flushed, so that a repeat's events fit its thread's ring: what is measured is the hot
/// path, never a wait for the flusher (sustained throughput is measured on its own).
func measure(_ iterations: Int, repeats: Int = 15, _ body: (Int) -> Void) -> Double {
  var best = Double.infinity
  for _ in 0..<repeats {
    Recorder.flush()
    let start = obstrace_bench_now()
    body(iterations)
    let elapsed = obstrace_bench_now() - start
    best = min(best, Double(elapsed) / Double(iterations))
  }
  return best
}

/// The same measured on `threads` threads at once; the slowest thread's ns per iteration.
func measureThreads(_ threads: Int, _ iterations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
  // Both threads run their repeats at once; flushes between repeats are per call, so they line up loosely.
  let results = Locked([Double](repeating: 0, count: threads))
  let group = DispatchGroup()
  let start = DispatchSemaphore(value: 0)
  for index in 0..<threads {
    group.enter()
    Thread {
      start.wait()
      let nanoseconds = measure(iterations, body)
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

struct Row {
  var name: String
  var baseline: Double?
  var measured: String
  var ratio: Double?
  var target: String
  var met: Bool?
}

var rows: [Row] = []
let directory = NSTemporaryDirectory() + "obstrace-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

func fixed(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

func compare(_ name: String, baseline: Double, measured: Double, limit: Double?) {
  let ratio = measured / baseline
  rows.append(
    Row(
      name: name, baseline: baseline, measured: fixed(measured), ratio: ratio,
      target: limit.map { "≤ \(fixed($0, 2))×" } ?? "", met: limit.map { ratio <= $0 }))
}

/// Records with the default ring (64K records); a repeat emits at most `iterations` × 2 events, which fit.
func withRecording<T>(_ backtraces: RecordingOptions.Backtraces = .off, _ body: () throws -> T) rethrows -> T {
  let path = directory + "/case.trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: backtraces))
  defer { Recorder.stop() }
  return try body()
}

// `obstrace-bench --write-trace PATH EVENTS`: only write a trace of that many events (for profiling the CLI).
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--write-trace",
  let events = Int(CommandLine.arguments[3])
{
  try! Recorder.start(to: CommandLine.arguments[2], options: RecordingOptions(backtraces: .off))
  let model = TracedCounter()
  for index in 0..<(events / 2) { model.value = index }
  Recorder.stop()
  exit(0)
}

// `obstrace-bench --profile scope|read|write N`: only run one traced case N times (for perf record).
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--profile", let count = Int(CommandLine.arguments[3])
{
  try! Recorder.start(to: NSTemporaryDirectory() + "obstrace-profile.trc", options: RecordingOptions())
  let model = TracedCounter()
  var sum = 0
  for index in 0..<count {
    switch CommandLine.arguments[2] {
    case "scope": sum &+= tracedScope(model)
    case "read": sum &+= model.value
    default: model.value = index
    }
  }
  blackHole(sum)
  Recorder.stop()
  exit(0)
}

let iterations = 30_000
print(
  "obstrace-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(iterations) operations per repeat, best of 15 repeats"
)

// MARK: Clocks and the event floor

let rdtsc = measure(iterations) { blackHole(obstrace_bench_rdtsc(UInt64($0))) }
let clockGettime = measure(iterations) { blackHole(obstrace_bench_clock_gettime(UInt64($0))) }
let continuous = measure(iterations) { n in
  var last = ContinuousClock.now
  for _ in 0..<n { last = .now }
  blackHole(last)
}
rows.append(
  Row(name: "clock: TSC (the hot path's)", baseline: nil, measured: fixed(rdtsc), ratio: nil, target: "", met: nil))
rows.append(
  Row(
    name: "clock: clock_gettime(MONOTONIC)", baseline: nil, measured: fixed(clockGettime), ratio: nil, target: "",
    met: nil))
rows.append(
  Row(name: "clock: ContinuousClock.now", baseline: nil, measured: fixed(continuous), ratio: nil, target: "", met: nil))

let floor = measure(iterations) { blackHole(obstrace_bench_floor(UInt64($0))) }
let emit = withRecording { measure(iterations) { blackHole(obstrace_bench_emit(UInt64($0))) } }
compare("one event (1 thread) vs floor: clock + 32-byte store", baseline: floor, measured: emit, limit: 1.5)

let floorTwo = measureThreads(2, iterations) { blackHole(obstrace_bench_floor(UInt64($0))) }
let emitTwo = withRecording { measureThreads(2, iterations) { blackHole(obstrace_bench_emit(UInt64($0))) } }
compare("one event (2 threads at once) vs floor, per thread", baseline: floorTwo, measured: emitTwo, limit: 1.5)

let naive = NaiveRecorder()
let naiveOne = measure(iterations) { n in
  for index in 0..<n { naive.record(1, UInt32(truncatingIfNeeded: index), 2) }
  naive.reset()
}
compare("naive recorder (mutex + array), 1 thread, vs ObsTrace's event", baseline: emit, measured: naiveOne, limit: nil)
let naiveTwo = measureThreads(2, iterations) { n in
  for index in 0..<n { naive.record(1, UInt32(truncatingIfNeeded: index), 2) }
}
naive.reset()
compare("naive recorder, 2 threads at once, vs ObsTrace's", baseline: emitTwo, measured: naiveTwo, limit: nil)

// MARK: Observation, with and without ObsTrace

let plain = PlainCounter()
let traced = TracedCounter()
let plainRead = measure(iterations) { n in
  var sum = 0
  for _ in 0..<n { sum &+= plain.value }
  blackHole(sum)
}
let tracedRead = withRecording {
  measure(iterations) { n in
    var sum = 0
    for _ in 0..<n { sum &+= traced.value }
    blackHole(sum)
  }
}
compare("read outside tracking: traced vs untraced", baseline: plainRead, measured: tracedRead, limit: 1.5)

// What seeing untraced tracking costs a read: one call of Observation's `_swift_observation_tls_get` through a
// function pointer (the recorder finds it at start; turned off here for the baseline).
let tracedReadUnchecked = withRecording {
  let getter = obstrace_observation_tracking
  obstrace_set_tracking_getter(nil)
  defer { obstrace_set_tracking_getter(unsafeBitCast(getter, to: UnsafeRawPointer?.self)) }
  return measure(iterations) { n in
    var sum = 0
    for _ in 0..<n { sum &+= traced.value }
    blackHole(sum)
  }
}
compare(
  "read outside tracking: traced, untraced-tracking check vs none", baseline: tracedReadUnchecked,
  measured: tracedRead, limit: nil)

// A read inside tracking ObsTrace does not own (`withObservationTracking` from a file without the import):
// recorded into its untraced scope. Both sides pay Observation's access-list update.
let readsPerScope = 1000
let plainReadInside =
  measure(iterations / readsPerScope) { n in
    for _ in 0..<n { blackHole(readsInsideObservationTracking(readsPerScope) { plain.value }) }
  } / Double(readsPerScope)
let tracedReadInside = withRecording {
  measure(iterations / readsPerScope) { n in
    for _ in 0..<n { blackHole(readsInsideObservationTracking(readsPerScope) { traced.value }) }
  } / Double(readsPerScope)
}
compare(
  "read inside untraced tracking (no import there): traced vs untraced", baseline: plainReadInside,
  measured: tracedReadInside, limit: 1.5)

let plainWrite = measure(iterations) { n in
  for index in 0..<n { plain.value = index }
}
for (level, limit) in [(RecordingOptions.Backtraces.off, 1.3), (.writes, 1.6), (.all, nil)] {
  let tracedWrite = withRecording(level) {
    measure(iterations) { n in
      for index in 0..<n { traced.value = index }
    }
  }
  compare(
    "write: traced (stacks \(level.rawValue)) vs untraced", baseline: plainWrite, measured: tracedWrite, limit: limit)
}

let scopes = iterations / 6
let plainTracking = measure(scopes) { n in
  var sum = 0
  for _ in 0..<n { sum &+= plainScope(plain) }
  blackHole(sum)
}
let tracedTracking = withRecording(.writes) {
  measure(scopes) { n in
    var sum = 0
    for _ in 0..<n { sum &+= tracedScope(traced) }
    blackHole(sum)
  }
}
compare(
  "withObservationTracking scope, one read: traced vs untraced", baseline: plainTracking, measured: tracedTracking,
  limit: 1.1)

// MARK: Sustained to disk, without loss

func sustained(threads: Int, writesPerThread: Int) -> (eventsPerSecond: Double, dropped: UInt64, events: UInt64) {
  let path = directory + "/sustained.trc"
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  let start = obstrace_bench_now()
  let group = DispatchGroup()
  for _ in 0..<threads {
    group.enter()
    Thread {
      let model = TracedCounter()
      for index in 0..<writesPerThread { model.value = index }
      group.leave()
    }.start()
  }
  group.wait()
  let summary = Recorder.stop()!
  let elapsed = Double(obstrace_bench_now() - start) / 1e9
  return (Double(summary.events) / elapsed, summary.droppedEvents, summary.events)
}
let sustainedRun = sustained(threads: 2, writesPerThread: 2_500_000)
rows.append(
  Row(
    name: "sustained to disk, lossless, 2 writer threads (events/s, all on disk)", baseline: nil,
    measured: fixed(sustainedRun.eventsPerSecond / 1e6, 1) + " M/s", ratio: nil, target: "≥ 10 M/s",
    met: sustainedRun.eventsPerSecond >= 10e6 && sustainedRun.dropped == 0))
rows.append(
  Row(
    name: "  dropped in that run", baseline: nil, measured: "\(sustainedRun.dropped) of \(sustainedRun.events)",
    ratio: nil, target: "0", met: sustainedRun.dropped == 0))

let demoPath = directory + "/demo.trc"
try! Recorder.start(to: demoPath, options: RecordingOptions())
demoWorkload(200_000)
let demoSummary = Recorder.stop()!
let bytesPerEvent = Double(demoSummary.bytes) / Double(demoSummary.events)
rows.append(
  Row(
    name: "file bytes per event, the demo's workload (stacks on writes)", baseline: nil,
    measured: fixed(bytesPerEvent, 2),
    ratio: nil, target: "≤ 4", met: bytesPerEvent <= 4))

// MARK: The CLI reading big traces

func writeTrace(events: Int, to path: String) {
  try! Recorder.start(to: path, options: RecordingOptions(backtraces: .off))
  let model = TracedCounter()
  for index in 0..<(events / 2) { model.value = index }
  Recorder.stop()
}

/// Runs `obstrace report` on `path` under GNU time, for its wall time and its own peak resident memory.
func runReport(_ path: String) -> (seconds: Double, maxResidentKiB: Int) {
  let obstrace = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
    "obstrace"
  ).path
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
  process.arguments = ["-f", "%M", obstrace, "report", "--format", "json", path]
  let errors = Pipe()
  process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
  process.standardError = errors
  let start = obstrace_bench_now()
  try! process.run()
  let output = errors.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let seconds = Double(obstrace_bench_now() - start) / 1e9
  let text = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "0"
  return (seconds, Int(text.trimmingCharacters(in: .whitespaces)) ?? 0)
}

for events in [1_000_000, 10_000_000] {
  let path = directory + "/big-\(events).trc"
  writeTrace(events: events, to: path)
  let (seconds, resident) = runReport(path)
  let rate = Double(events) / seconds
  rows.append(
    Row(
      name: "obstrace report, \(events / 1_000_000)M-event trace (events/s; peak memory)", baseline: nil,
      measured: fixed(rate / 1e6, 1) + " M/s; \(resident / 1024) MiB", ratio: nil, target: "≥ 20 M/s, flat memory",
      met: rate >= 20e6))
  try? FileManager.default.removeItem(atPath: path)
}

// MARK: The table

print("")
print("| case | baseline ns/op | measured | ratio | target | met |")
print("| --- | ---: | ---: | ---: | --- | --- |")
for row in rows {
  let baseline = row.baseline.map { fixed($0) } ?? ""
  let ratio = row.ratio.map { fixed($0, 2) + "×" } ?? ""
  let met = row.met.map { $0 ? "yes" : "**no**" } ?? ""
  print("| \(row.name) | \(baseline) | \(row.measured) | \(ratio) | \(row.target) | \(met) |")
}
