// This file does not import ObsTrace: `withObservationTracking` here is Observation's own.
import Foundation
import Observation
import Testing

@testable import ObsTraceRecorder

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
