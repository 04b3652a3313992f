import CObsTraceRing
import Foundation
import ObsTraceFormat
import ObsTraceRecorder
import ObsTraceSymbols
import ObsTraceTestSupport
import Observation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The model a C callback writes: a `@convention(c)` function captures nothing.
nonisolated(unsafe) private var modelOfTheCallback: LocalModel?

/// Frames in a shared library loaded with `dlopen` after the process's symbol tables were opened (a plug-in).
@Suite("Symbols of libraries loaded later")
struct LoadedLaterTests {
  /// Builds `lib<name>.so` with one C function, `<name>_call(f)`, that calls `f` (frame pointers kept, not
  /// inlined, so that it is a frame of the stack), and loads it.
  static func loadLibrary(_ name: String) throws -> @convention(c) (@convention(c) () -> Void) -> Void {
    let directory = RecordingSupport.temporaryPath(name)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let source = directory + "/\(name).c"
    let library = directory + "/lib\(name).so"
    try """
    __attribute__((noinline)) void \(name)_call(void (*f)(void)) {
      f();
      __asm__ volatile("" ::: "memory");
    }
    """.write(toFile: source, atomically: true, encoding: .utf8)
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    compiler.arguments = ["cc", "-shared", "-fPIC", "-O0", "-g", "-fno-omit-frame-pointer", "-o", library, source]
    try compiler.run()
    compiler.waitUntilExit()
    try #require(compiler.terminationStatus == 0)
    let handle = try #require(dlopen(library, RTLD_NOW))
    let symbol = try #require(dlsym(handle, "\(name)_call"))
    return unsafeBitCast(symbol, to: (@convention(c) (@convention(c) () -> Void) -> Void).self)
  }

  /// Async, waiting for the recording lock without blocking a thread of the cooperative pool (two threads on a
  /// two-core machine): blocked there, it kept the in-test recordings that hold the lock's shared side from
  /// resuming to release it.
  @Test("a write called from a library loaded after the symbol tables were opened is named from its library")
  func frameOfALibraryLoadedLater() async throws {
    let name = "obstrace_loaded_later_\(getpid())"
    let trace = try await RecordingTestLock.exclusive {
      // Any recording that compares writes opens the process's tables at its start: this one, before the load.
      _ = try RecordingSupport.recordHoldingLock { LocalModel().value = 1 }
      let call = try Self.loadLibrary(name)
      return try RecordingSupport.recordHoldingLock {
        modelOfTheCallback = LocalModel()
        call { modelOfTheCallback!.value = 2 }
        modelOfTheCallback = nil
      }
    }
    let write = try #require(trace.events(.willSet).first)
    let frames = trace.definitions.frames(ofStack: write.stack)
    let inLibrary = frames.filter { $0.module == "lib\(name).so" }
    #expect(inLibrary.map(\.function) == ["\(name)_call"], "\(frames.map { "\($0.function) [\($0.module)]" })")
    #expect(inLibrary.first?.file.hasSuffix("\(name).c") == true)
  }

  /// How a frame is kept from another library's name: the object the dynamic linker holds an address in and the
  /// session's module that covers it start at one address; for a library loaded after the session was made, the
  /// session has no module (or, with another layout, another library's), and a session made again has its own.
  @Test("the loaded object holding an address and the session's module covering it start at one address")
  func loadedObjectAndModuleAgree() throws {
    let session = try #require(Symbolizer.forCurrentProcess())
    let own: @convention(c) (UInt) -> UInt = obstrace_loaded_object_start
    let inBinary = UInt64(UInt(bitPattern: unsafeBitCast(own, to: UnsafeRawPointer.self)))
    let inLibc = UInt64(UInt(bitPattern: dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc")))
    #expect(inLibc != 0)
    for address in [inBinary, inLibc] {
      let start = UInt64(obstrace_loaded_object_start(UInt(address)))
      #expect(start != 0)
      #expect(session.moduleStart(at: address) == start)
    }
    let call = try Self.loadLibrary("obstrace_agree_\(getpid())")
    let inLoaded = UInt64(UInt(bitPattern: unsafeBitCast(call, to: UnsafeRawPointer.self)))
    let start = UInt64(obstrace_loaded_object_start(UInt(inLoaded)))
    #expect(start != 0)
    #expect(session.moduleStart(at: inLoaded) != start)
    #expect(try #require(Symbolizer.forCurrentProcess()).moduleStart(at: inLoaded) == start)
  }
}
