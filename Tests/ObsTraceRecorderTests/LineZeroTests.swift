import Foundation
import ObsTraceFormat
import ObsTraceSymbols
import ObsTraceTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The line of a return address inside a line-0 row, on line tables written out row by row: a library assembled
/// from `.loc` directives (clang's assembler keeps line-0 rows), loaded, and looked up with the symbolizer of this
/// process (docs/symbols.md, Line numbers).
@Suite("Line-0 rows")
struct LineZeroTests {
  /// Assembles `source` into `lib<name>.so` and loads it; the address of each of `labels`.
  static func load(_ name: String, _ source: String, labels: [String]) throws -> [String: UInt64] {
    let directory = RecordingSupport.temporaryPath(name)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let assembly = directory + "/\(name).s"
    let library = directory + "/lib\(name).so"
    try source.write(toFile: assembly, atomically: true, encoding: .utf8)
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    compiler.arguments = ["clang", "-g", "-shared", "-fPIC", "-o", library, assembly]
    try compiler.run()
    compiler.waitUntilExit()
    try #require(compiler.terminationStatus == 0)
    let handle = try #require(dlopen(library, RTLD_NOW))
    var addresses: [String: UInt64] = [:]
    for label in labels {
      let symbol = try #require(dlsym(handle, label), "\(label)")
      addresses[label] = UInt64(UInt(bitPattern: symbol))
    }
    return addresses
  }

  @Test(
    "a call in a compiler-generated line-0 row that ends at its return address takes the next row's line, marked approximate; other line-0 calls are certain"
  )
  func lineZeroCalls() throws {
    #if arch(x86_64)
      let name = "obstrace_line_zero_\(getpid())"
      // clang's assembler writes the line table of `.loc` directives but no compile unit: one is written out below
      // (DWARF 5: the line table at offset 0, the code's range), as a compiler's would be.
      // Three calls, each made from a line-0 row and returning to the label after it:
      // - `after_jump`: the row is `<compiler-generated>` and ends at the return address, where line 46 begins; the
      //   code before it (line 41) jumps away. An optimized build lays out a call through a protocol witness so
      //   after a loop (a fresh-clone try-out's T8: `h.x += 5` at main.swift:46 was placed at the loop's 41).
      // - `in_cleanup`: the row is `<compiler-generated>` and runs on past the return address (a statement's
      //   cleanup, where a key path's writeback runs the setter): the line before, 59, certain.
      // - `after_setup`: the row is in the statement's own file (set-up of the next statement's call): the line
      //   after, 72, certain.
      let source = """
          .text
          .file 1 "/src/App/main.swift"
          .file 2 "<compiler-generated>"
          .globl \(name)_callee
          .type \(name)_callee,@function
        \(name)_callee:
          .loc 1 10 0
          ret
          .size \(name)_callee, .-\(name)_callee
          .globl \(name)_main
          .type \(name)_main,@function
        \(name)_main:
          .loc 1 41 0
          push %rbp
          mov %rsp, %rbp
          jmp 1f
          .loc 2 0 0
          call \(name)_callee
          .globl \(name)_after_jump
        \(name)_after_jump:
          .loc 1 46 0
          nop
        1:
          .loc 1 59 0
          nop
          .loc 2 0 0
          call \(name)_callee
          .globl \(name)_in_cleanup
        \(name)_in_cleanup:
          nop
          .loc 1 60 0
          nop
          .loc 1 0 0
          call \(name)_callee
          .globl \(name)_after_setup
        \(name)_after_setup:
          .loc 1 72 0
          pop %rbp
          ret
          .size \(name)_main, .-\(name)_main
        \(name)_end:
          .section .debug_abbrev,"",@progbits
          .uleb128 1
          .uleb128 0x11
          .byte 0
          .uleb128 0x10
          .uleb128 0x17
          .uleb128 0x11
          .uleb128 0x01
          .uleb128 0x12
          .uleb128 0x06
          .byte 0, 0
          .byte 0
          .section .debug_info,"",@progbits
          .long 2f - 1f
        1:
          .short 5
          .byte 1
          .byte 8
          .long 0
          .uleb128 1
          .long 0
          .quad \(name)_callee
          .long \(name)_end - \(name)_callee
        2:
          .section .note.GNU-stack,"",@progbits

        """
      let labels = ["after_jump", "in_cleanup", "after_setup"].map { "\(name)_\($0)" }
      let addresses = try Self.load(name, source, labels: labels)
      let symbolizer = try #require(Symbolizer.forCurrentProcess())
      let returns = Set(addresses.values)
      let frames = symbolizer.resolve(Array(returns), returnAddresses: returns)
      func place(_ label: String) -> String {
        guard let address = addresses["\(name)_\(label)"], let frame = frames[address] else { return "unresolved" }
        let file = frame.file.split(separator: "/").last ?? ""
        return "\(file):\(frame.line)\(frame.lineIsApproximate ? " approximate" : "")"
      }
      #expect(place("after_jump") == "main.swift:46 approximate")
      #expect(place("in_cleanup") == "main.swift:59")
      #expect(place("after_setup") == "main.swift:72")
      #expect(frames[addresses["\(name)_after_jump"]!]?.function == "\(name)_main")
    #endif
  }
}

extension LineZeroTests {
  /// A debug build's `_modify` call has no line: LLVM starts no new row for it after the compiler-generated line-0
  /// row of the statement before's cleanup, so it shares that row (`print(…)` then `model.count += 1` was placed on
  /// the print's line). What the call enters tells: a coroutine accessor's start begins the next statement's access,
  /// its continuation ends the statement before's.
  @Test(
    "a call in a line-0 row is placed by what it calls: a _modify's start at the next line, its continuation at the line before, others as the rows say"
  )
  func callsPlacedByTheirCallee() throws {
    #if arch(x86_64)
      let name = "obstrace_callee_role_\(getpid())"
      let modify = "$s4Demo5ModelC5countSivM"
      // - `after_release`: a release in the print's cleanup row (line 41 before it): the line before, 41.
      // - `after_modify`: the next statement's `_modify` call in that same row: the next line, 42 (the rows alone
      //   say 41).
      // - `after_resume`: the `_modify`'s continuation in a source file's line-0 row after line 42: the line
      //   before, 42 (the rows alone say 43, as for a set-up).
      let source = """
          .text
          .file 1 "/src/App/main.swift"
          .file 2 "<compiler-generated>"
          .globl \(name)_plain
          .type \(name)_plain,@function
        \(name)_plain:
          .loc 1 10 0
          nop
          .globl \(name)_in_plain
        \(name)_in_plain:
          ret
          .size \(name)_plain, .-\(name)_plain
          .globl "\(modify)"
          .type "\(modify)",@function
        "\(modify)":
        .Lmodify:
          .loc 1 11 0
          nop
          .globl \(name)_in_modify
        \(name)_in_modify:
          ret
          .size "\(modify)", .-"\(modify)"
          .globl "\(modify).resume.0"
          .type "\(modify).resume.0",@function
        "\(modify).resume.0":
          .loc 1 12 0
          nop
          .globl \(name)_in_resume
        \(name)_in_resume:
          ret
          .size "\(modify).resume.0", .-"\(modify).resume.0"
          .globl \(name)_main
          .type \(name)_main,@function
        \(name)_main:
          .loc 1 41 0
          push %rbp
          mov %rsp, %rbp
          nop
          .loc 2 0 0
          call \(name)_plain
          .globl \(name)_after_release
        \(name)_after_release:
          call \(name)_plain
          .globl \(name)_after_modify
        \(name)_after_modify:
          nop
          .loc 1 42 0
          nop
          .loc 1 0 0
          call \(name)_plain
          .globl \(name)_after_resume
        \(name)_after_resume:
          nop
          .loc 1 43 0
          pop %rbp
          ret
          .size \(name)_main, .-\(name)_main
          .globl \(name)_noop
          .type \(name)_noop,@function
        \(name)_noop:
          .loc 1 50 0
          push %rbp
          mov %rsp, %rbp
          nop
          .loc 2 0 0
          call \(name)_plain
          call .Lmodify
          .globl \(name)_after_noop_modify
        \(name)_after_noop_modify:
          xor %esi, %esi
          call *%rax
          .globl \(name)_after_noop_resume
        \(name)_after_noop_resume:
          nop
          .loc 1 52 0
          pop %rbp
          ret
          .size \(name)_noop, .-\(name)_noop
          .globl \(name)_unwrap
          .type \(name)_unwrap,@function
        \(name)_unwrap:
          .loc 1 60 1
          push %rbp
          mov %rsp, %rbp
          .loc 1 60 7
          nop
          .loc 1 0 7
          call .Lmodify
          .globl \(name)_after_unwrap_modify
        \(name)_after_unwrap_modify:
          xor %esi, %esi
          call *%rax
          .globl \(name)_after_unwrap_resume
        \(name)_after_unwrap_resume:
          nop
          .loc 1 61 1
          pop %rbp
          ret
          .size \(name)_unwrap, .-\(name)_unwrap
          .globl \(name)_resumed
          .type \(name)_resumed,@function
        \(name)_resumed:
          .loc 1 70 0
          push %rbp
          mov %rsp, %rbp
          .loc 1 70 21 prologue_end
          nop
          .loc 1 0 0
          call .Lmodify
          .globl \(name)_after_resumed_modify
        \(name)_after_resumed_modify:
          xor %esi, %esi
          call *%rax
          nop
          .loc 1 73 1
          pop %rbp
          ret
          .size \(name)_resumed, .-\(name)_resumed
          .globl \(name)_last
          .type \(name)_last,@function
        \(name)_last:
          .loc 1 80 1
          push %rbp
          mov %rsp, %rbp
          .loc 1 81 5 prologue_end
          nop
          .loc 1 0 0
          call \(name)_plain
          call .Lmodify
          .globl \(name)_after_last_modify
        \(name)_after_last_modify:
          nop
          .loc 1 83 1
          xor %esi, %esi
          call *%rax
          .loc 1 83 1 epilogue_begin
          pop %rbp
          ret
          .size \(name)_last, .-\(name)_last
        \(name)_end:
          .section .debug_abbrev,"",@progbits
          .uleb128 1
          .uleb128 0x11
          .byte 0
          .uleb128 0x10
          .uleb128 0x17
          .uleb128 0x11
          .uleb128 0x01
          .uleb128 0x12
          .uleb128 0x06
          .byte 0, 0
          .byte 0
          .section .debug_info,"",@progbits
          .long 2f - 1f
        1:
          .short 5
          .byte 1
          .byte 8
          .long 0
          .uleb128 1
          .long 0
          .quad \(name)_plain
          .long \(name)_end - \(name)_plain
        2:
          .section .note.GNU-stack,"",@progbits

        """
      let labels = [
        "after_release", "after_modify", "after_resume", "after_noop_modify", "after_noop_resume",
        "after_unwrap_modify", "after_unwrap_resume", "after_resumed_modify", "after_last_modify", "in_plain",
        "in_modify", "in_resume",
      ].map { "\(name)_\($0)" }
      let addresses = try Self.load(name, source, labels: labels)
      func address(_ label: String) -> UInt64 { addresses["\(name)_\(label)"] ?? 0 }
      let symbolizer = try #require(Symbolizer.forCurrentProcess())
      let returns: Set<UInt64> = [
        address("after_release"), address("after_modify"), address("after_resume"), address("after_noop_modify"),
        address("after_noop_resume"), address("after_unwrap_modify"), address("after_unwrap_resume"),
        address("after_resumed_modify"), address("after_last_modify"),
      ]
      // The functions the calls enter, as a stack gives them: a return address inside each (looked up a byte before).
      let callees: [UInt64: Set<UInt64>] = [
        address("after_release"): [address("in_plain")], address("after_modify"): [address("in_modify")],
        address("after_resume"): [address("in_resume")], address("after_noop_modify"): [address("in_modify")],
        address("after_noop_resume"): [address("in_resume")], address("after_unwrap_modify"): [address("in_modify")],
        address("after_unwrap_resume"): [address("in_resume")], address("after_resumed_modify"): [address("in_modify")],
        address("after_last_modify"): [address("in_modify")],
      ]
      #expect(symbolizer.functionName(at: address("in_modify") - 1) == "Demo.Model.count.modify : Swift.Int")
      func places(_ frames: [UInt64: SymbolizedFrame]) -> [String] {
        [
          "after_release", "after_modify", "after_resume", "after_noop_modify", "after_noop_resume",
          "after_unwrap_modify", "after_unwrap_resume", "after_resumed_modify", "after_last_modify",
        ].map { label in
          guard let frame = frames[address(label)] else { return "unresolved" }
          let file = frame.file.split(separator: "/").last ?? ""
          return "\(file):\(frame.line)\(frame.lineIsApproximate ? " approximate" : "")"
        }
      }
      let placed = symbolizer.resolve(Array(returns), returnAddresses: returns, callees: callees)
      // An access whose start and continuation are both in one line-0 row (an optimized build's `+= 0`, G3): no row
      // names its line, so neither call is certain; the rows' line, marked approximate (before, the next row's
      // line and the row before's, as certain). The start is called directly (`.Lmodify`), as in an executable; a
      // call through a shared library's PLT names no callee, and is not taken for one.
      // Such an access in a source file's line-0 row after its statement's own code (`parent!` at 60, column 7, then
      // `.children.append(child)` inlined with no row, a try-out's H9): the row before, 60, approximate (before, the
      // next statement's line, 61). After a function's entry (a resumed async function's `prologue_end` row names its
      // declaration's line, 70), the next row's, 73, approximate. An access begun in the line-0 row before the
      // function's closing brace (83, where the epilogue begins: an actor method's last statement, a try-out's J4):
      // the brace's line, approximate, without the source (before, 83 as certain).
      #expect(
        places(placed) == [
          "main.swift:41", "main.swift:42", "main.swift:42", "main.swift:50 approximate", "main.swift:50 approximate",
          "main.swift:60 approximate", "main.swift:60 approximate", "main.swift:73 approximate",
          "main.swift:83 approximate",
        ])
      // Without the callees, the rows alone: the `_modify` call one line early, its continuation one line late.
      let byRows = symbolizer.resolve(Array(returns), returnAddresses: returns)
      #expect(
        places(byRows) == [
          "main.swift:41", "main.swift:41", "main.swift:43", "main.swift:50", "main.swift:50", "main.swift:61",
          "main.swift:61", "main.swift:73", "main.swift:83",
        ])
    #endif
  }

  @Test(
    "the role of a call by the function it enters",
    arguments: [
      ("Demo.Model.count.modify : Swift.Int", CallRole?.some(.beginsAccess)),
      ("Demo.Model.count.modify : Swift.Int with unmangled suffix \".resume.0\"", .some(.endsAccess)),
      (
        "protocol witness for Demo.Priced.price.modify : Swift.Int in conformance Demo.Item : Demo.Priced in Demo",
        .some(.beginsAccess)
      ),
      ("Demo.Model.items.read : [Swift.Int]", .some(.beginsAccess)),
      ("Demo.Model.count.setter : Swift.Int", nil), ("swift_release", nil),
      ("Demo.Model.count.getter : Swift.Int", nil),
      ("Demo.Model.count.modify : Swift.Int with unmangled suffix \".cold.1\"", nil),
    ])
  func callRole(function: String, role: CallRole?) {
    #expect(CallRole(callee: function) == role)
  }
}
