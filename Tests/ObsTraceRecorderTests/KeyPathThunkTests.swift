import Foundation
import ObsTraceFormat
import ObsTraceSymbols
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A key path's getter that is a thunk jumping to the `key path getter for` function, as `swift build -c release`
/// makes for a key path built where the property's accessor was inlined (a try-out's `Progress.<Int #1>`, F6).
@Suite("Key path getter thunks")
struct KeyPathThunkTests {
  #if arch(x86_64)
    @Test("a property whose key path's getter only jumps to its key path getter is named from where it jumps")
    func namedThroughTheThunk() throws {
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-\(UUID().uuidString)").path
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let source = directory + "/thunk.c"
      let library = directory + "/libthunk.so"
      // The getter carries the mangled name of `key path getter for Demo.Model.value : Swift.Int : Demo.Model`.
      // The thunk is what the optimizer emits: an empty frame, then a 32-bit jump back to the getter, under a
      // local label (no ELF symbol, as in the release build); a function with a symbol of its own comes right
      // before it, as any function may. The library hands out the thunk's address through a pointer.
      try #"""
      __asm__(
        ".pushsection .text\n .type \"$s4Demo5ModelC5valueSivpACTK\", @function\n"
        "\"$s4Demo5ModelC5valueSivpACTK\":\n push %rbp\n mov %rsp, %rbp\n pop %rbp\n ret\n"
        " .size \"$s4Demo5ModelC5valueSivpACTK\", 6\n"
        " .globl obstrace_before\n .type obstrace_before, @function\n obstrace_before:\n ret\n .size obstrace_before, 1\n"
        ".Lobstrace_thunk:\n push %rbp\n mov %rsp, %rbp\n pop %rbp\n jmp.d32 \"$s4Demo5ModelC5valueSivpACTK\"\n"
        ".popsection\n .pushsection .data\n .globl obstrace_thunk_address\n obstrace_thunk_address:\n"
        " .quad .Lobstrace_thunk\n .popsection\n");
      """#.write(toFile: source, atomically: true, encoding: .utf8)
      let compiler = Process()
      compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      compiler.arguments = ["cc", "-shared", "-fPIC", "-O1", "-g", "-o", library, source]
      try compiler.run()
      compiler.waitUntilExit()
      try #require(compiler.terminationStatus == 0)
      let handle = try #require(dlopen(library, RTLD_NOW))
      defer { dlclose(handle) }
      let pointer = try #require(dlsym(handle, "obstrace_thunk_address"))
      let address = UInt64(UInt(bitPattern: pointer.load(as: UnsafeRawPointer.self)))
      let loaded = try #require(LoadedModule.current().first { $0.path.hasSuffix("/libthunk.so") })
      // The thunk has no symbol: the symbol tables alone name the function before it, or nothing.
      let symbolizer = try #require(Symbolizer(modules: [LoadedModule(path: library, base: loaded.base)]))
      #expect(symbolizer.functionName(at: address).map { !$0.contains("key path getter") } ?? true)
      let property = PropertyDefinition(
        rootType: 0, keyPathDescription: "\\Model.<computed 0x\(String(address, radix: 16)) (Int)>",
        getterAddress: address)
      let table = SymbolTableBuilder.build(
        SymbolSources(properties: [(1, property)], types: [], stacks: [], callerLabels: [])
      ) { addresses, calls in
        symbolizer.resolve(Array(addresses), returnAddresses: Set(calls.keys))
      }
      #expect(table.propertyNames[1] == PropertyName(module: "Demo", type: "Model", property: "value"))
    }
  #endif
}
