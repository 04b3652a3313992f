import CObsTraceRing

/// Converts the hot path's clock ticks (the TSC on x86-64: 16–25 ns a read here, against 29–43 ns for
/// clock_gettime) to nanoseconds since the recording started: one mapping per recording, piecewise linear between
/// (ticks, CLOCK_MONOTONIC) pairs that the flusher samples before every drain.
///
/// A tick between two samples is interpolated between them; a tick past the latest sample (an event that raced
/// the drain) is held at that sample. So every time lies between the start and a moment the flusher has seen (no
/// trace spans more than its process lived, whatever the load), and a new sample only appends a segment: how an
/// earlier tick maps never changes, whichever drain converts it. (It replaces a ratio calibrated over 2 ms at
/// start and refined mid-run, under which threads drained at different moments got different mappings: under
/// load, a 1.04 s run spanned 1.41 s.)
struct TickMapping {
  /// Sampled ticks, increasing; `nanoseconds[i]` is CLOCK_MONOTONIC at `ticks[i]`, since the first sample.
  private(set) var ticks: [UInt64] = []
  private(set) var nanoseconds: [UInt64] = []
  /// Samples closer than this to the previous one are skipped (in-test flushes drain in a tight loop).
  static let minimumSpacingNanoseconds: UInt64 = 1_000

  /// Starts the mapping at the current moment.
  init() {
    var ticks: UInt64 = 0
    var nanoseconds: UInt64 = 0
    obstrace_clock_sample(&ticks, &nanoseconds)
    self.init(ticks: ticks, monotonicNanoseconds: nanoseconds)
  }

  /// Starts the mapping at a given sample (tests).
  init(ticks: UInt64, monotonicNanoseconds: UInt64) {
    self.ticks = [ticks]
    self.nanoseconds = [0]
    base = monotonicNanoseconds
  }

  private let base: UInt64

  /// The time of the latest sample: no tick maps later.
  var latestNanoseconds: UInt64 { nanoseconds[nanoseconds.count - 1] }

  /// The ticks of the latest sample: a drain that reads a record past them samples again first, so that events
  /// that raced the drain's sample are interpolated too, not all held at one time.
  var latestTicks: UInt64 { ticks[ticks.count - 1] }

  /// Takes a sample of both clocks now.
  mutating func sample() {
    var ticks: UInt64 = 0
    var nanoseconds: UInt64 = 0
    obstrace_clock_sample(&ticks, &nanoseconds)
    add(ticks: ticks, monotonicNanoseconds: nanoseconds)
  }

  /// Appends a sample; ignored unless both clocks moved forward (by at least the minimum spacing).
  mutating func add(ticks sampleTicks: UInt64, monotonicNanoseconds: UInt64) {
    guard monotonicNanoseconds >= base else { return }
    let time = monotonicNanoseconds - base
    guard sampleTicks > ticks[ticks.count - 1], time >= latestNanoseconds + Self.minimumSpacingNanoseconds else {
      return
    }
    ticks.append(sampleTicks)
    nanoseconds.append(time)
    let last = ticks.count - 1
    slopes.append(Double(nanoseconds[last] - nanoseconds[last - 1]) / Double(ticks[last] - ticks[last - 1]))
  }

  /// Nanoseconds per tick of each segment (`slopes[i]` between samples i and i + 1), divided once when the segment
  /// is added: converting a tick multiplies, and gives the same answer whichever drain converts it.
  private var slopes: [Double] = []

  /// The last segment, for the flusher's C loop (`obstrace_encode_common`), which converts a tick in its segment or
  /// past the latest sample as `nanoseconds(_:)` does: the segment's first tick and time, its end, and the slope (with
  /// one sample, an empty segment at the latest sample). Given the samples (`withSamples`), the loop moves to the
  /// segment of any later or earlier tick itself.
  func setLastSegment(of state: inout obstrace_encode_state) {
    let last = ticks.count - 1
    let end = max(last, 0)
    state.latest_ticks = ticks[last]
    state.latest_nanoseconds = nanoseconds[last]
    state.segment_end_ticks = ticks[end]
    state.segment_end_nanoseconds = nanoseconds[end]
    if end == 0 {
      state.segment = 0
      state.segment_ticks = ticks[0]
      state.segment_nanoseconds = 0
      state.slope = 0
    } else {
      state.segment = UInt64(end - 1)
      state.segment_ticks = ticks[end - 1]
      state.segment_nanoseconds = nanoseconds[end - 1]
      state.slope = slopes[end - 1]
    }
  }

  /// Runs `body` with `state` pointing at the mapping's samples, so that the C loop moves between segments itself: a
  /// drain's records span many of the flusher's samples (a ring holds up to 64 K of them, sampled again at every
  /// batch of 4096), and left to `nanoseconds(_:)`, a tick of another segment cost ≈ 400 instructions (a search, the
  /// event through `ChunkEncoder.append`, the loop's call again) for ≈ 2.5 % of the bench loop's events. The pointers
  /// are cleared before it returns.
  func withSamples<Result>(
    in state: inout obstrace_encode_state, _ body: (inout obstrace_encode_state) -> Result
  ) -> Result {
    ticks.withUnsafeBufferPointer { ticks in
      nanoseconds.withUnsafeBufferPointer { nanoseconds in
        slopes.withUnsafeBufferPointer { slopes in
          state.samples = UInt64(ticks.count)
          state.sample_ticks = ticks.baseAddress
          state.sample_nanoseconds = nanoseconds.baseAddress
          state.sample_slopes = slopes.baseAddress
          defer {
            state.samples = 0
            state.sample_ticks = nil
            state.sample_nanoseconds = nil
            state.sample_slopes = nil
          }
          return body(&state)
        }
      }
    }
  }

  /// The index `low` of the segment with ticks[low] <= tick < ticks[low + 1], for ticks[0] <= tick < the latest.
  private func segment(containing tick: UInt64) -> Int {
    let last = ticks.count - 1
    // Most ticks a drain converts fall in the last segment.
    var low = last - 1
    if tick < ticks[low] {
      // Binary search: the segment [low, low + 1] with ticks[low] <= tick < ticks[low + 1].
      var lower = 0
      var upper = last - 1
      while lower < upper {
        let middle = (lower + upper + 1) / 2
        if ticks[middle] <= tick { lower = middle } else { upper = middle - 1 }
      }
      low = lower
    }
    return low
  }

  /// Nanoseconds since the start for a tick: interpolated between the samples around it, 0 before the first,
  /// the latest sample's time after it.
  ///
  /// The flusher's C loop converts ticks itself (`withSamples`), so this is called only for the events
  /// `ChunkEncoder.append` encodes.
  func nanoseconds(_ tick: UInt64) -> UInt64 {
    let last = ticks.count - 1
    if tick >= ticks[last] { return nanoseconds[last] }
    if tick <= ticks[0] { return 0 }
    let low = segment(containing: tick)
    let offset = UInt64(Double(tick - ticks[low]) * slopes[low])
    return min(nanoseconds[low] + offset, nanoseconds[low + 1])
  }
}
