// This file does not import ObsTrace: `withObservationTracking` here is Observation's own.
import Foundation
import Observation
import Testing

@testable import ObsTraceRecorder
@testable import ObsTraceSymbols

/// What the recorder relies on to see tracking it does not own (docs/analysis.md, "Untraced tracking").
@Suite("Observation's runtime")
struct ObservationRuntimeTests {
  typealias Getter = @convention(c) () -> UnsafeRawPointer?

  @Test("its tracking getter is found: nil outside tracking, one value per tracking, another when nested")
  func trackingGetter() throws {
    let runtime = try ObservationLibrary.locate().get()
    #expect(runtime.path.hasSuffix("libswiftObservation.so"))
    #expect(runtime.code.contains { $0.contains(runtime.trackingGetter) })
    let get = unsafeBitCast(UnsafeRawPointer(bitPattern: runtime.trackingGetter)!, to: Getter.self)
    #expect(get() == nil)
    var outer: [UnsafeRawPointer?] = []
    var inner: UnsafeRawPointer?
    withObservationTracking {
      outer.append(get())
      withObservationTracking {
        inner = get()
      } onChange: {
      }
      outer.append(get())
    } onChange: {
    }
    #expect(outer[0] != nil)
    #expect(outer[0] == outer[1])
    #expect(inner != nil && inner != outer[0])
    #expect(get() == nil)
    // Another thread, while this one tracks: nothing.
    nonisolated(unsafe) var elsewhere: UnsafeRawPointer? = UnsafeRawPointer(bitPattern: 1)
    withObservationTracking {
      // A semaphore, not polling isFinished: ThreadSanitizer sees the write ordered before the read.
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        elsewhere = get()
        done.signal()
      }
      thread.start()
      done.wait()
    } onChange: {
    }
    #expect(elsewhere == nil)
  }

  @Test("its tracking setter is found beside the getter, and sets what the getter returns")
  func trackingSetter() throws {
    typealias Setter = @convention(c) (UnsafeRawPointer?) -> Void
    let runtime = try ObservationLibrary.locate().get()
    let address = try #require(runtime.trackingSetter)
    #expect(runtime.code.contains { $0.contains(address) })
    let get = unsafeBitCast(UnsafeRawPointer(bitPattern: runtime.trackingGetter)!, to: Getter.self)
    let set = unsafeBitCast(UnsafeRawPointer(bitPattern: address)!, to: Setter.self)
    var list: UInt = 0
    withUnsafeMutablePointer(to: &list) { list in
      #expect(get() == nil)
      set(list)
      #expect(get() == UnsafeRawPointer(list))
      set(nil)
      #expect(get() == nil)
    }
    // ObsTrace keeps an access list as one word, nil being 0.
    #expect(AccessListWord.isOneWord)
  }

  @Test("another mapping of the library's file below the loaded one (libdw reading it) is not taken for its code")
  func fileMappedAgain() throws {
    let loaded = try ObservationLibrary.locate().get()
    let descriptor = open(loaded.path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let size = Int(lseek(descriptor, 0, SEEK_END))
    // Ask for pages below the library's mappings, where libdw's mmap of the file may land.
    let code = try #require(loaded.code.map(\.lowerBound).min())
    let hint = UnsafeMutableRawPointer(bitPattern: (code - UInt(size) - (16 << 20)) & ~UInt(0xfff))
    let copy = mmap(hint, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
    try #require(copy != MAP_FAILED)
    defer { munmap(copy, size) }
    let again = try ObservationLibrary.locate().get()
    #expect(again.trackingGetter == loaded.trackingGetter)
    #expect(again.code.contains { $0.contains(again.trackingGetter) })
    // The getter is called only once located inside the library's loaded code.
    let get = unsafeBitCast(UnsafeRawPointer(bitPattern: again.trackingGetter)!, to: Getter.self)
    #expect(get() == nil)
    var inside: UnsafeRawPointer?
    withObservationTracking {
      inside = get()
    } onChange: {
    }
    #expect(inside != nil)
  }

  @Test("a symbol that is not there is said, with the library it looked in")
  func missingSymbol() {
    guard case .failure(let error) = ObservationLibrary.locate(symbol: "_swift_observation_no_such_symbol") else {
      Issue.record("found a symbol that does not exist")
      return
    }
    #expect(error.message.contains("_swift_observation_no_such_symbol"))
    #expect(error.message.contains("libswiftObservation.so"))
  }
}

extension ObservationRuntimeTests {
  /// How `StaticMembers` reads a static executable's members from its symbol table, on a table of the shape gold
  /// writes (a file symbol, then that member's own local functions, in the order the members' code is laid out;
  /// the parts moved before all code first): each toolchain library's members in a row are one range, the parts
  /// moved before all code are their member's, and no member of the user's or of a C library that cannot be told
  /// is named.
  @Test("a static executable's members give the code of each toolchain library linked in, and nothing of the user's")
  func staticMembers() {
    var members = StaticMembers()
    func member(_ file: String, _ functions: [(String, Range<UInt>)]) {
      file.withCString { members.begin($0) }
      for (name, code) in functions { name.withCString { members.addLocalFunction(code, named: $0) } }
    }
    member("crtstuff.c", [])
    // The user's object, whose locals include a specialization of the standard library's (`$sSa…Tg5`).
    member("App.o", [("$s3App5counter33_F0SiVvp", 0x1000..<0x1100), ("$sSa6appendyyxnFSi_Tg5", 0x1100..<0x1180)])
    member("Swift.o", [("$ss5printF", 0x2000..<0x2100), ("$ss6_Deque", 0x2f00..<0x3000), ("a.cold.1", 0x100..<0x110)])
    member("Heap.cpp", [("_ZN5swiftL4heapEv", 0x3100..<0x3200)])
    member("Errors.cpp", [])
    member("_Concurrency.o", [("$sScT5valuexvg", 0x4000..<0x4100)])
    member("Actor.cpp", [("_ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE", 0x4200..<0x4300)])
    member("data.c", [])
    member("runtime.c", [("_Block_copy_internal", 0x5000..<0x5010)])
    member("queue.c", [("_dispatch_lane_push", 0x6000..<0x6100), ("_dispatch_lane_push.cold.1", 0x200..<0x210)])
    member("block.cpp", [("_ZN12_GLOBAL__N_1L5blockEv", 0x6200..<0x6210)])
    member("Other.cpp", [("_ZL5otherv", 0x7000..<0x7010)])
    #expect(
      members.libraryCode() == [
        LibraryCode(code: 0x100..<0x110, archive: "libswiftCore.a"),
        LibraryCode(code: 0x200..<0x210, archive: "libdispatch.a"),
        LibraryCode(code: 0x2000..<0x3200, archive: "libswiftCore.a"),
        LibraryCode(code: 0x4000..<0x4300, archive: "libswift_Concurrency.a"),
        LibraryCode(code: 0x6000..<0x6100, archive: "libdispatch.a"),
      ])
  }
}
