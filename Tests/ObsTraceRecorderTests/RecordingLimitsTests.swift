import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFormat
import Observation
import Testing

@testable import ObsTraceRecorder

/// A generic model, to make type names (and key path descriptions) of any length.
@Observable
final class Nested<Value> {
  var count = 0
}

struct Layer<Wrapped> {}

/// Reads and writes `Nested<Layer<Layer<…Int…>>>` with `depth` layers (each level a new generic type at run time).
func touchNested<T>(depth: Int, _: T.Type) {
  if depth == 0 {
    let model = Nested<T>()
    model.count += 1
    _ = model.count
  } else {
    touchNested(depth: depth - 1, Layer<T>.self)
  }
}

/// Writes `model.value` at the bottom of `depth` nested calls.
@inline(never)
func writeDeep(_ model: LocalModel, depth: Int) -> Int {
  if depth == 0 {
    model.value += 1
    return 0
  }
  return writeDeep(model, depth: depth - 1) + 1
}

// In the serialized recording suite: a test that records blocks a thread while it waits for the process's one
// recording, and two suites doing so at once could take every thread of the cooperative pool (2 on this machine)
// from the in-test recordings they wait for.
extension RecorderTests {
  @Test("an absurd label (5 MB) is cut to the documented maximum; the trace stays small")
  func hugeLabel() async throws {
    let name = String(repeating: "é", count: 5 << 19)  // 5 MiB of UTF-8
    let model = LocalModel()
    let trace = try await RecordingSupport.record {
      withTrackingScope(named: name) { _ = model.value }
    }
    let labels = trace.definitions.labels.values.filter { $0.hasPrefix("éé") }
    #expect(labels.count == 1)
    let label = try #require(labels.first)
    #expect(label.utf8.count <= TraceFormat.maximumRecordedNameLength)
    #expect(label.hasSuffix("…"))
    #expect(name.hasPrefix(label.dropLast()))
    let size = try FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int ?? .max
    #expect(size < 256 << 10)
  }

  @Test("a generated type name (a generic 300 levels deep) is cut, in the type and the key path's description")
  func generatedTypeName() async throws {
    let trace = try await RecordingSupport.record { touchNested(depth: 300, Int.self) }
    let nested = trace.definitions.types.values.filter { $0.contains("Nested<") }
    #expect(!nested.isEmpty)
    #expect(nested.allSatisfy { $0.utf8.count <= TraceFormat.maximumRecordedNameLength && $0.hasSuffix("…") })
    let descriptions = trace.definitions.properties.values.map(\.keyPathDescription)
    #expect(descriptions.allSatisfy { $0.utf8.count <= TraceFormat.maximumRecordedNameLength })
    #expect(trace.events(.didSet).count == 1)
  }

  @Test("a write at the bottom of a 20 000-deep recursion records a stack of at most 64 frames")
  func deepRecursion() async throws {
    final class DeepWrite: @unchecked Sendable {
      let model = LocalModel()
      var depth = 0
    }
    let job = DeepWrite()
    let trace = try await RecordingSupport.record {
      // A thread with a large stack: 20 000 frames of writeDeep.
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        job.depth = writeDeep(job.model, depth: 20_000)
        done.signal()
      }
      thread.stackSize = 64 << 20
      thread.start()
      done.wait()
    }
    #expect(job.depth == 20_000)
    let write = try #require(trace.events(.willSet).first)
    let frames = try #require(trace.definitions.stacks[write.stack])
    #expect(frames.count <= 64)
    #expect(trace.definitions.stacks.values.allSatisfy { $0.count <= 64 })
  }

  @Test(
    "the flusher closes a chunk as soon as it passes 60 KiB, even when one drain reads a whole ring: its deflate stream fits zlib's window buffer"
  )
  func chunkSizeBounded() async throws {
    let model = LocalModel()
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: .all)) {
      // Faster than the flusher wakes (50 ms): the ring fills, and a drain reads up to 64K events at once.
      for index in 1...400_000 { model.value = index }
    }
    var largest = 0
    trace.reader.forEachWholeChunk { type, payload in
      if type == .events { largest = max(largest, payload.count) }
    }
    #expect(largest > 50 << 10)
    // zlib's window buffer (2 × 32 KiB) less its lookahead (262 bytes): a stream that passes it makes zlib slide the
    // window and rehash (`Flusher.chunkTarget`).
    #expect(largest <= (64 << 10) - 262)
    #expect(trace.events(.didSet).count == 400_000)
  }

  @Test("a thread that cannot get a ring goes on; its events are counted in the footer, not lost in silence")
  func ringless() async throws {
    // A model per thread: the threads do not race on one.
    nonisolated(unsafe) let models = [LocalModel(), LocalModel()]
    let trace = try await RecordingSupport.record {
      // Inside the recording (so under the tests' recording lock): from here on no ring can be made or taken from
      // the pool, so threads that have never recorded get none.
      obstrace_fail_ring_allocations(true)
      defer { obstrace_fail_ring_allocations(false) }
      RecordingSupport.runThreads(2) { thread in
        for index in 1...100 { models[thread].value = index }
      }
    }
    #expect(models.map(\.value) == [100, 100])
    #expect(trace.events(.willSet).isEmpty)
    // Two threads of 100 writes; a setter's write offers two events: its willSet and its didSet.
    #expect(trace.reader.footer?.ringless == 400)
  }

  @Test("the flusher does not chase a slower thread's head: past what a wake found, it reads only whole batches")
  func noChase() async throws {
    let model = LocalModel()
    let capacity = 1 << 12
    let writes = 40_000
    let trace = try await RecordingSupport.record(options: RecordingOptions(ringCapacity: capacity, backtraces: .off)) {
      // A write a microsecond: far slower than the flusher, which would otherwise catch up at every wake and then
      // read the ring a record or two at a time until the end.
      for index in 1...writes {
        model.value = index
        let until = DispatchTime.now().uptimeNanoseconds + 1_000
        while DispatchTime.now().uptimeNanoseconds < until {}
      }
    }
    #expect(trace.events(.didSet).count == writes)
    let drains = trace.summary.drains
    // Per pass, a batch short of a quarter ring only at the end of what the wake found and at the ring's wrap.
    #expect(drains.passes > 0)
    #expect(drains.smallBatches <= 3 * drains.passes + 2 * writes / capacity + 2)
    #expect(drains.batches <= 3 * drains.passes + 2 * 2 * writes / (capacity / 4) + 2)
  }
}

@Suite("Tick mapping")
struct TickMappingTests {
  @Test("a tick maps between the samples around it; later samples never change how an earlier tick maps")
  func piecewise() {
    var mapping = TickMapping(ticks: 1_000, monotonicNanoseconds: 5_000_000)
    mapping.add(ticks: 3_000, monotonicNanoseconds: 6_000_000)  // 500 ns a tick
    #expect(mapping.nanoseconds(2_000) == 500_000)
    #expect(mapping.nanoseconds(3_000) == 1_000_000)
    let before = (0..<40).map { mapping.nanoseconds(1_000 + UInt64($0) * 50) }
    // The machine slows down: a much lower ratio from now on.
    mapping.add(ticks: 103_000, monotonicNanoseconds: 7_000_000)
    mapping.add(ticks: 203_000, monotonicNanoseconds: 9_000_000)
    #expect((0..<40).map { mapping.nanoseconds(1_000 + UInt64($0) * 50) } == before)
    #expect(mapping.nanoseconds(53_000) == 1_500_000)
    #expect(mapping.nanoseconds(153_000) == 3_000_000)
  }

  @Test("no tick maps past the latest sample, nor before the start; the mapping never goes back")
  func boundedAndMonotonic() {
    var mapping = TickMapping(ticks: 10_000, monotonicNanoseconds: 1_000)
    var ticks: UInt64 = 10_000
    var time: UInt64 = 1_000
    for step in 1...200 {
      ticks += UInt64(100 + (step * 7919) % 900)
      time += UInt64(20_000 + (step * 104_729) % 80_000)
      mapping.add(ticks: ticks, monotonicNanoseconds: time)
    }
    #expect(mapping.nanoseconds(5) == 0)
    #expect(mapping.nanoseconds(ticks + 1_000_000) == mapping.latestNanoseconds)
    #expect(mapping.latestNanoseconds == time - 1_000)
    var previous: UInt64 = 0
    for tick in stride(from: UInt64(9_000), to: ticks + 5_000, by: 37) {
      let mapped = mapping.nanoseconds(tick)
      #expect(mapped >= previous)
      #expect(mapped <= mapping.latestNanoseconds)
      previous = mapped
    }
  }

  /// One time per tick whichever drain converts it, in tick order across threads, never past the latest sample at its
  /// drain, close to when it happened.
  @Test("threads drained at different moments of a run sampled unevenly get one time per tick, within the run")
  func threadsDrainedAtDifferentMoments() {
    // The truth: 3 ticks a nanosecond. A sample reads the ticks around clock_gettime, so under load a preemption
    // inside it puts its ticks up to 1 ms (3 M ticks) off the moment its time was read.
    let start: UInt64 = 5_000_000_000
    func ticks(at nanoseconds: UInt64) -> UInt64 { 1_000_000 + 3 * nanoseconds }
    var mapping = TickMapping(ticks: ticks(at: 0), monotonicNanoseconds: start)
    var latestSample: UInt64 = 0
    func sample(at nanoseconds: UInt64, error: Int64) {
      mapping.add(ticks: UInt64(Int64(ticks(at: nanoseconds)) + error), monotonicNanoseconds: start + nanoseconds)
      latestSample = nanoseconds
    }
    // The first drain 2 ms in, its sample's ticks 0.6 ms short (a ratio taken from it alone is 43% steep), then a
    // drain every 50 ms for a second, each sample off by its own error.
    let drains: [UInt64] = [2_000_000] + (1...20).map { UInt64($0) * 50_000_000 }
    let errors: [Int64] = [
      -1_800_000, 2_400_000, -900_000, 0, 1_500_000, -2_700_000, 600_000, -300_000, 2_900_000, -1_200_000, 0,
      1_800_000, -2_100_000, 300_000, -600_000, 2_100_000, -1_500_000, 900_000, -2_400_000, 1_200_000, -3_000_000,
    ]
    // Thread 0 records every 250 µs and is drained at every drain; thread 1 records in between and is drained only
    // at drains 4, 11 and the last (its ring waited: the flusher was late to it).
    let lateDrains: Set<Int> = [4, 11, drains.count - 1]
    var next: [UInt64] = [0, 125_000]
    var converted: [(ticks: UInt64, time: UInt64, truth: UInt64, bound: UInt64)] = []
    for (index, drain) in drains.enumerated() {
      sample(at: drain, error: errors[index])
      for thread in 0..<2 where thread == 0 || lateDrains.contains(index) {
        var batch: [UInt64] = []
        while next[thread] < drain {
          batch.append(next[thread])
          next[thread] += 250_000
        }
        // As the flusher does: a record stored after the drain's sample (it raced it) makes it sample again first.
        if let last = batch.last, ticks(at: last) > mapping.latestTicks { sample(at: drain + 20_000, error: 0) }
        for truth in batch {
          converted.append((ticks(at: truth), mapping.nanoseconds(ticks(at: truth)), truth, latestSample))
        }
      }
    }
    #expect(converted.count == 2 * 4_000)
    // Converted again with every sample taken: the same time (a later sample never moves an earlier event).
    let moved = converted.filter { mapping.nanoseconds($0.ticks) != $0.time }
    #expect(moved.isEmpty, "\(moved.count) events moved, first at \(moved.first.map { "\($0.truth) ns" } ?? "")")
    // In tick order across both threads, times never go back.
    let byTicks = converted.sorted { $0.ticks < $1.ticks }
    let inversions = zip(byTicks, byTicks.dropFirst()).filter { $0.time > $1.time }
    #expect(inversions.isEmpty, "\(inversions.count) inversions across threads")
    // No event dated after the latest sample its drain had taken, hence none after the run's end.
    #expect(converted.allSatisfy { $0.time <= $0.bound && $0.time <= latestSample })
    // Within the largest sample error (1 ms) of when it happened.
    let far = converted.filter { max($0.time, $0.truth) - min($0.time, $0.truth) > 1_000_000 }
    #expect(far.isEmpty, "\(far.count) events more than 1 ms off")
  }

  @Test("a sample that does not move both clocks forward is ignored")
  func ignoredSamples() {
    var mapping = TickMapping(ticks: 1_000, monotonicNanoseconds: 1_000_000)
    mapping.add(ticks: 2_000, monotonicNanoseconds: 2_000_000)
    mapping.add(ticks: 1_500, monotonicNanoseconds: 3_000_000)  // ticks went back
    mapping.add(ticks: 3_000, monotonicNanoseconds: 1_500_000)  // time went back
    mapping.add(ticks: 3_000, monotonicNanoseconds: 2_000_001)  // closer than the spacing
    #expect(mapping.ticks == [1_000, 2_000])
  }
}
