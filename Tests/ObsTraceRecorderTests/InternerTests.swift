import Foundation
import ObsTrace
import Testing

@testable import ObsTraceRecorder

extension RecorderTests {
  @Test("a key path read on many threads is retained once per key path object, not once per thread")
  func keyPathRetainedOncePerObject() async throws {
    let model = SetterOnlyModel()
    let threads = 20
    _ = try await RecordingSupport.record {
      // Each new thread's cache misses the key path once: each miss used to retain it again.
      RecordingSupport.runThreads(threads) { _ in _ = model.value }
    }
    let keyPath: AnyKeyPath = \SetterOnlyModel.value
    let retained = Interner.shared.tables.withLock { tables in
      tables.retainedKeyPaths.values.filter { $0 == keyPath }.count
    }
    // One per key path object equal to \.value (the macro's getter, setter and _modify sites at most).
    #expect(retained >= 1)
    #expect(retained <= 3)
  }
}
