import ObsTraceSymbols
import Testing

/// The x86-64 decoder that tells what code between two line-table rows calls (docs/symbols.md, Line numbers): each
/// instruction's length and whether it calls through a register or memory, on encodings an optimized or debug Swift
/// build emits; what it does not know, it says (nil), never a length guessed.
@Suite("Instruction scan")
struct InstructionScanTests {
  @Test(
    "lengths and kinds of instructions",
    arguments: [
      ([0x48, 0x89, 0x85, 0x50, 0xff, 0xff, 0xff], 7, false),  // mov %rax,-0xb0(%rbp)
      ([0xff, 0xd0], 2, true),  // call *%rax
      ([0xff, 0x55, 0xc8], 3, true),  // call *-0x38(%rbp)
      ([0x41, 0xff, 0xd4], 3, true),  // call *%r12
      ([0xff, 0x25, 0x10, 0x00, 0x00, 0x00], 6, true),  // jmp *0x10(%rip)
      ([0xff, 0xc0], 2, false),  // inc %eax
      ([0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8], 10, false),  // movabs $…,%rax
      ([0xb8, 1, 2, 3, 4], 5, false),  // mov $…,%eax
      ([0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00], 6, false),  // nopw 0x0(%rax,%rax,1)
      ([0xf6, 0xc1, 0x01], 3, false),  // test $0x1,%cl
      ([0xf7, 0xd8], 2, false),  // neg %eax
      ([0x48, 0x8b, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00], 8, false),  // mov 0x10,%rax (SIB, no base)
      ([0x0f, 0x85, 0, 0, 0, 0], 6, false),  // jne rel32
      ([0x31, 0xf6], 2, false),  // xor %esi,%esi
      ([0x66, 0x41, 0xc7, 0x04, 0x24, 0x01, 0x00], 7, false),  // movw $1,(%r12)
    ] as [([UInt8], Int, Bool)])
  func instruction(bytes: [UInt8], length: Int, indirect: Bool) {
    let decoded = InstructionScan.instruction(bytes)
    #expect(decoded?.length == length)
    #expect(decoded?.isIndirectCallOrJump == indirect)
  }

  @Test("a direct call's callee, unknown encodings and code cut short")
  func callsAndUnknowns() {
    #expect(InstructionScan.instruction([0xe8, 0x10, 0x00, 0x00, 0x00])?.callDisplacement == 16)
    #expect(InstructionScan.instruction([0xe8, 0xf0, 0xff, 0xff, 0xff])?.callDisplacement == -16)
    #expect(InstructionScan.instruction([0xc5, 0xf8, 0x77]) == nil)  // vzeroupper (VEX)
    #expect(InstructionScan.instruction([0xe8, 0x00, 0x00]) == nil)
    // Instructions that fill the bytes exactly, or nil.
    let code: [UInt8] = [0x4c, 0x89, 0xff, 0x31, 0xf6, 0xff, 0xd0]  // mov %r15,%rdi; xor %esi,%esi; call *%rax
    #expect(InstructionScan.instructions(code)?.map(\.offset) == [0, 3, 5])
    #expect(InstructionScan.instructions(Array(code.dropLast())) == nil)
  }
}
