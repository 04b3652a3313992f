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
}
