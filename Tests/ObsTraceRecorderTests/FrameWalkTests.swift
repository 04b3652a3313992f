import CObsTraceRing
import Testing

/// The frame-pointer walk on fabricated chains: it follows a good chain and ends cleanly at any bad link.
@Suite("Frame-pointer walk")
struct FrameWalkTests {
  /// A fake stack of 64 words; frame records (caller's frame pointer, return address) are laid in it by index.
  final class FakeStack {
    let words = UnsafeMutableBufferPointer<UInt>.allocate(capacity: 64)
    init() { words.initialize(repeating: 0) }
    deinit { words.deallocate() }

    var low: UInt { UInt(bitPattern: words.baseAddress) }
    var high: UInt { low + UInt(words.count * MemoryLayout<UInt>.stride) }
    func address(_ index: Int) -> UInt { low + UInt(index * MemoryLayout<UInt>.stride) }

    /// Frame record at `index`: points to the record at `caller` (an index, or a raw address), returns to `returnAddress`.
    func frame(at index: Int, callerAddress: UInt, returnAddress: UInt) {
      words[index] = callerAddress
      words[index + 1] = returnAddress
    }

    func walk(from index: Int, capacity: Int = 16, low: UInt? = nil) -> [UInt] {
      var frames = [UInt](repeating: 0, count: capacity)
      let count = frames.withUnsafeMutableBufferPointer { buffer in
        obstrace_walk_frames(
          UnsafeRawPointer(bitPattern: address(index)), low ?? self.low, high, buffer.baseAddress, Int32(capacity), 0)
      }
      return Array(frames.prefix(Int(count)))
    }
  }

  @Test("a good chain is followed to its end (a null return address)")
  func goodChain() {
    let stack = FakeStack()
    stack.frame(at: 0, callerAddress: stack.address(8), returnAddress: 0x1000)
    stack.frame(at: 8, callerAddress: stack.address(16), returnAddress: 0x2000)
    stack.frame(at: 16, callerAddress: 0, returnAddress: 0)
    #expect(stack.walk(from: 0) == [0x1000, 0x2000])
  }

  @Test(
    "a bad link ends the walk without reading past it",
    arguments: [
      ("points below itself", -8), ("points at itself", 0), ("is misaligned", 3), ("leaves the stack", 1 << 30),
    ])
  func badLink(_ what: String, _ offset: Int) {
    let stack = FakeStack()
    stack.frame(at: 0, callerAddress: stack.address(8), returnAddress: 0x1000)
    let target = UInt(bitPattern: Int(bitPattern: stack.address(8)) + offset)
    stack.frame(at: 8, callerAddress: target, returnAddress: 0x2000)
    stack.frame(at: 16, callerAddress: 0, returnAddress: 0x3000)
    #expect(stack.walk(from: 0) == [0x1000, 0x2000], "the caller pointer \(what)")
  }

  @Test("a start outside the stack bounds walks nothing, and the capacity is respected")
  func bounds() {
    let stack = FakeStack()
    for index in stride(from: 0, to: 56, by: 4) {
      stack.frame(at: index, callerAddress: stack.address(index + 4), returnAddress: UInt(0x1000 + index))
    }
    #expect(stack.walk(from: 0, low: stack.address(2)).isEmpty)
    #expect(stack.walk(from: 0, capacity: 3).count == 3)
  }

  /// The walk every write's stack takes (`obstrace_capture_stack_here`) is the reference walk with one frame skipped,
  /// and its hash is `obstrace_hash_frames` of those frames: on seeded random chains of good and bad links (below,
  /// at, misaligned, out of the stack, far above), null return addresses, starts outside the bounds or misaligned,
  /// and capacities from 0 to past the chain's end.
  @Test("the write's walk keeps the frames and hash of the reference walk with one frame skipped")
  func skippingOneIsTheReferenceWalk() {
    var generator = SplitMix(seed: 0x5eed_0013)
    for round in 0..<4000 {
      let stack = FakeStack()
      for index in stride(from: 0, to: 62, by: 2) {
        let step: Int
        switch generator.next() % 16 {
        case 0: step = -8
        case 1: step = 0
        case 2: step = 3
        case 3: step = 1 << 30
        case 4: step = 2 * 8 + 4
        default: step = Int(generator.next() % 3 + 1) * 16
        }
        let caller = UInt(bitPattern: Int(bitPattern: stack.address(index)) + step)
        let returnAddress = generator.next() % 12 == 0 ? 0 : UInt(0x1000 + round * 64 + index)
        stack.frame(at: index, callerAddress: caller, returnAddress: returnAddress)
      }
      let start = Int(generator.next() % 40)
      let misaligned: UInt = generator.next() % 10 == 0 ? 4 : 0
      let low = generator.next() % 10 == 0 ? stack.address(start + 2) : stack.low
      let capacity = Int(generator.next() % 20)
      var reference = [UInt](repeating: 0, count: max(capacity, 1))
      let referenceCount = reference.withUnsafeMutableBufferPointer { buffer in
        Int(
          obstrace_walk_frames(
            UnsafeRawPointer(bitPattern: stack.address(start) + misaligned), low, stack.high, buffer.baseAddress, Int32(capacity), 1))
      }
      var frames = [UInt](repeating: 0, count: max(capacity, 1))
      var hash: UInt64 = 0
      let count = frames.withUnsafeMutableBufferPointer { buffer in
        Int(
          obstrace_walk_frames_skipping_one(
            UnsafeRawPointer(bitPattern: stack.address(start) + misaligned), low, stack.high, buffer.baseAddress, Int32(capacity),
            &hash))
      }
      #expect(Array(frames.prefix(count)) == Array(reference.prefix(referenceCount)), "round \(round)")
      let expectedHash = reference.withUnsafeBufferPointer { obstrace_hash_frames($0.baseAddress, Int32(referenceCount)) }
      #expect(hash == expectedHash, "round \(round)")
    }
  }

  /// SplitMix64: seeded, so a failing round can be replayed.
  struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return UInt(z ^ (z >> 31))
    }
  }
}
