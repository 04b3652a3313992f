/// Reads x86-64 machine code one instruction at a time: the length of each, and whether it is a call or a jump
/// through a register or memory, or a direct call and where to. Enough to tell what a run of code between two
/// line-table rows calls (`Symbolizer.line`); anything it does not know (VEX and EVEX encodings, the x87 escape's
/// register forms aside, an opcode invalid in 64-bit mode) ends the scan with no answer, never a guess.
public enum InstructionScan {
  /// One decoded instruction.
  public struct Instruction: Equatable, Sendable {
    /// Its length in bytes.
    public var length: Int
    /// `call` or `jmp` through a register or memory (`ff /2`, `ff /3`, `ff /4`, `ff /5`): a call whose callee the code
    /// does not name, as a coroutine's continuation is called (`call *%rax`).
    public var isIndirectCallOrJump: Bool
    /// A direct `call rel32`: the callee's offset from the instruction's end.
    public var callDisplacement: Int32?
  }

  /// The instruction at the start of `code`, or nil when it is cut short or not one this decoder knows.
  public static func instruction(_ code: some Collection<UInt8>) -> Instruction? {
    let bytes = Array(code.prefix(15))
    var index = 0
    var operandSize16 = false
    var addressSize32 = false
    // Legacy prefixes, any number and order (an instruction is at most 15 bytes).
    while index < bytes.count,
      [0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65].contains(bytes[index])
    {
      if bytes[index] == 0x66 { operandSize16 = true }
      if bytes[index] == 0x67 { addressSize32 = true }
      index += 1
    }
    var wide = false
    if index < bytes.count, bytes[index] & 0xf0 == 0x40 {
      wide = bytes[index] & 0x08 != 0
      index += 1
    }
    guard index < bytes.count else { return nil }
    let opcode = bytes[index]
    index += 1
    // The size of a "z" immediate: 16 bits with the operand-size prefix, else 32.
    let immediateZ = operandSize16 ? 2 : 4
    var hasModRM = false
    var immediate = 0
    var indirect = false
    var call: Int32?
    switch opcode {
    case 0x0f:
      guard index < bytes.count else { return nil }
      let second = bytes[index]
      index += 1
      switch second {
      case 0x38:
        guard index < bytes.count else { return nil }
        index += 1
        hasModRM = true
      case 0x3a:
        guard index < bytes.count else { return nil }
        index += 1
        hasModRM = true
        immediate = 1
      case 0x80...0x8f: immediate = 4
      case 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9,
        0xaa, 0xc8...0xcf:
        break
      case 0x70...0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6:
        hasModRM = true
        immediate = 1
      case 0x04, 0x0a, 0x0c, 0x0e, 0x0f, 0x24...0x27, 0x36, 0x39, 0x3b...0x3f, 0x7a, 0x7b, 0xa6, 0xa7, 0xff:
        return nil
      default: hasModRM = true
      }
    case 0x00...0x3f:
      switch opcode & 0x07 {
      case 0, 1, 2, 3: hasModRM = true
      case 4: immediate = 1
      case 5: immediate = immediateZ
      default: return nil  // Segment pushes and pops, BCD adjustments: invalid in 64-bit mode.
      }
    case 0x50...0x5f, 0x90...0x99, 0x9b...0x9f, 0xa4...0xa7, 0xaa...0xaf, 0xc3, 0xc9, 0xcb, 0xcc, 0xcf, 0xec...0xef,
      0xf4, 0xf5, 0xf8...0xfd, 0x6c...0x6f:
      break
    case 0x63, 0x84...0x8f, 0xd0...0xd3, 0xd8...0xdf, 0xfe: hasModRM = true
    case 0x68: immediate = immediateZ
    case 0x69, 0x81, 0xc7:
      hasModRM = true
      immediate = immediateZ
    case 0x6a, 0x70...0x7f, 0xa8, 0xb0...0xb7, 0xcd, 0xe0...0xe7, 0xeb: immediate = 1
    case 0x6b, 0x80, 0x83, 0xc0, 0xc1, 0xc6:
      hasModRM = true
      immediate = 1
    case 0xa0...0xa3: immediate = addressSize32 ? 4 : 8
    case 0xa9: immediate = immediateZ
    case 0xb8...0xbf: immediate = wide ? 8 : immediateZ
    case 0xc2, 0xca: immediate = 2
    case 0xc8: immediate = 3
    case 0xe8:
      immediate = 4
      guard index + 4 <= bytes.count else { return nil }
      var displacement: Int32 = 0
      for shift in 0..<4 { displacement |= Int32(bytes[index + shift]) << (8 * shift) }
      call = displacement
    case 0xe9: immediate = 4
    case 0xf6, 0xf7:
      hasModRM = true
      guard index < bytes.count else { return nil }
      // Only `test` (/0, /1) has an immediate.
      if (bytes[index] >> 3) & 0x07 <= 1 { immediate = opcode == 0xf6 ? 1 : immediateZ }
    case 0xff:
      hasModRM = true
      guard index < bytes.count else { return nil }
      indirect = (2...5).contains((bytes[index] >> 3) & 0x07)
    default:
      return nil  // 0x06/0x07-style invalid opcodes, 0x62 (EVEX), 0xc4/0xc5 (VEX), 0x9a, 0xd4-0xd6, 0xea, 0xf1 …
    }
    if hasModRM {
      guard index < bytes.count else { return nil }
      let modRM = bytes[index]
      index += 1
      let mod = modRM >> 6
      let rm = modRM & 0x07
      if mod != 3 {
        if rm == 4 {
          guard index < bytes.count else { return nil }
          let base = bytes[index] & 0x07
          index += 1
          if mod == 0, base == 5 { index += 4 }
        } else if mod == 0, rm == 5 {
          index += 4  // RIP-relative.
        }
        if mod == 1 { index += 1 }
        if mod == 2 { index += 4 }
      }
    }
    index += immediate
    guard index <= bytes.count else { return nil }
    return Instruction(length: index, isIndirectCallOrJump: indirect, callDisplacement: call)
  }

  /// The instructions that fill `code` exactly, each with its offset in it; nil when one is not known or the last
  /// one runs past the end (then `code` does not start or end on instruction boundaries, or holds data).
  public static func instructions(_ code: [UInt8]) -> [(offset: Int, instruction: Instruction)]? {
    var result: [(offset: Int, instruction: Instruction)] = []
    var offset = 0
    while offset < code.count {
      guard let instruction = instruction(code[offset...]) else { return nil }
      result.append((offset, instruction))
      offset += instruction.length
    }
    return offset == code.count ? result : nil
  }
}
