import Foundation

/// A random number generator that gives the same numbers for the same seed (SplitMix64), for tests that draw
/// random cases: a failure names its seed, and the run is repeated with `OBSTRACE_TEST_SEED=<seed>`.
public struct SeededGenerator: RandomNumberGenerator {
  /// The seed this generator started from: put it in every failure message.
  public let seed: UInt64
  private var state: UInt64

  /// The seed from `OBSTRACE_TEST_SEED` (decimal or 0x-prefixed hex) when it is set, else a fixed one, so that a
  /// run draws the same cases as every other run unless asked for others.
  public init() {
    let text = ProcessInfo.processInfo.environment["OBSTRACE_TEST_SEED"] ?? ""
    let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    self.init(seed: parsed ?? 0x0b57_7ace_5eed_2026)
  }

  public init(seed: UInt64) {
    self.seed = seed
    state = seed
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }
}
