import Foundation
import ObsTraceFormat
import ObsTraceSymbols
import Testing

/// A symbolizer that cannot be made returns nil and leaves nothing behind: its libdw session is ended once.
/// Before, each failure after the session began ended it twice (once in the initializer, once more in the deinit
/// that a failing class initializer runs once every stored property is set): heap corruption, seen as a traced
/// program's crash (SIGSEGV in dwfl_end on the flusher thread) when the program closed its descriptors while the
/// recording opened its symbol tables, so that libdw could not read the process's memory map.
@Suite("Symbolizers that cannot be made")
struct SymbolizerFailureTests {
  @Test("a process that does not exist, many times: nil each time, and the process goes on")
  func processThatDoesNotExist() {
    // pid_max is at most 2^22 on Linux: a larger pid is never a process.
    for _ in 0..<200 { #expect(Symbolizer.forProcess(Int32(1 << 23)) == nil) }
    // The allocator is still whole: a session for this process opens and names a function of this binary.
    #expect(Symbolizer.forCurrentProcess() != nil)
  }

  @Test("modules none of which can be read, many times: nil each time, and the process goes on")
  func modulesThatCannotBeRead() throws {
    // A file that exists (so it is reported) but is not an ELF object: libdw reports no module.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-not-elf-\(getpid())").path
    try Data("not an ELF file\n".utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    for _ in 0..<200 { #expect(Symbolizer(modules: [LoadedModule(path: path, base: 0x10000)]) == nil) }
    #expect(Symbolizer.forCurrentProcess() != nil)
  }
}
