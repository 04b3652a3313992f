import CDw

/// A key path getter that only calls its property's getter through the root class's table (x86-64), as an optimized
/// build makes it for a property a subclass may override: no symbol of its own (DWARF's `keypath_get.N`), and the
/// code
///
///     push %rbp; mov %rsp,%rbp; push %r13; (push %rbx; mov %rax,%rbx | push %rax)
///     mov (%rdi),%r13          the root object, the getter's `self`
///     mov 0x0(%r13),%rax       its class
///     call *OFFSET(%rax)       the getter in the class's table
///     … stores of the result through %rbx or %rax, pops, ret: no other call or jump
///
/// (a fresh-clone try-out's H16: `Rect.width`, which `LoudSquare` overrides, was `Rect.<Double #11>` in release).
/// The table's entry is the root class's own getter, so reading it from the class's metadata in the running process
/// names the property (the recorder's `TableGetterNaming`).
public enum TableGetter {
  /// The offset in the class's metadata of the table entry the code at the start of `code` calls, when the code is
  /// exactly such a getter; nil otherwise (any other instruction, or code this decoder does not know).
  public static func tableOffset(_ code: [UInt8]) -> Int? {
    let prologue: [UInt8] = [0x55, 0x48, 0x89, 0xe5, 0x41, 0x55]
    guard code.starts(with: prologue) else { return nil }
    var index = prologue.count
    for saving: [UInt8] in [[0x53, 0x48, 0x89, 0xc3], [0x50]] where code[index...].starts(with: saving) {
      index += saving.count
      break
    }
    let loads: [UInt8] = [0x4c, 0x8b, 0x2f, 0x49, 0x8b, 0x45, 0x00]
    guard code[index...].starts(with: loads) else { return nil }
    index += loads.count
    var offset: Int
    if code[index...].starts(with: [0xff, 0x90]), index + 6 <= code.count {
      var value: Int32 = 0
      for shift in 0..<4 { value |= Int32(code[index + 2 + shift]) << (8 * shift) }
      offset = Int(value)
      index += 6
    } else if code[index...].starts(with: [0xff, 0x50]), index + 3 <= code.count {
      offset = Int(Int8(bitPattern: code[index + 2]))
      index += 3
    } else {
      return nil
    }
    // The rest: moves of the result, pops and `ret`; no call, no jump.
    while index < code.count {
      guard let instruction = InstructionScan.instruction(code[index...]) else { return nil }
      if instruction.isIndirectCallOrJump || instruction.callDisplacement != nil { return nil }
      var opcode = index
      while opcode < index + instruction.length,
        [0x66, 0xf2, 0xf3].contains(code[opcode]) || code[opcode] & 0xf0 == 0x40
      {
        opcode += 1
      }
      guard opcode < index + instruction.length else { return nil }
      let first = code[opcode]
      if first == 0xc3 { return offset > 0 && offset % 8 == 0 ? offset : nil }
      // A call (e8, the ff forms above), a jump (e9, eb, 7x, 0f 8x, e0-e3) or anything that leaves: not this getter.
      if [0xe8, 0xe9, 0xeb, 0xc2, 0xca, 0xcb, 0xcc, 0xcd, 0xcf, 0xe0, 0xe1, 0xe2, 0xe3].contains(first)
        || (0x70...0x7f).contains(first)
        || (first == 0x0f && opcode + 1 < code.count
          && ((0x80...0x8f).contains(code[opcode + 1]) || code[opcode + 1] == 0x05))
      {
        return nil
      }
      index += instruction.length
    }
    return nil
  }
}

extension Symbolizer {
  /// The table offset a key path getter at `address` calls its getter at (`TableGetter.tableOffset`), read from the
  /// binary's file; nil when the code there is not such a getter.
  public func tableGetterOffset(at address: UInt64) -> Int? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)),
      let code = Self.code(module, Dwarf_Addr(address), count: 64)
    else { return nil }
    return TableGetter.tableOffset(code)
  }

  /// The demangled name of the symbol that begins exactly at `address` (no thunk followed, no nearest symbol before
  /// it), or nil.
  public func functionStarting(at address: UInt64) -> String? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)),
      let raw = Self.symbolStarting(module, Dwarf_Addr(address))
    else { return nil }
    return Demangler.demangle(raw)
  }
}
