import CObsTraceRing
import Foundation
import ObsTrace
import Observation
import Synchronization
import Testing

@testable import ObsTraceRecorder

/// A model of its own, touched by `firstUseNamesNothingOnItsThread` alone: its type and key paths are met for the
/// first time there.
@Observable
final class NamingProbeModel {
  var level = 0
  var caption = ""
}

extension RecorderTests {
  @Test("a thread's first use of a type and its key paths names none of them on that thread, and the trace names them")
  func firstUseNamesNothingOnItsThread() async throws {
    Interner.namingLog.withLock { $0 = Interner.NamingLog() }
    Interner.watchingNames.store(true, ordering: .relaxed)
    defer { Interner.watchingNames.store(false, ordering: .relaxed) }
    let probeThread = Atomic<UInt>(0)
    let trace = try await RecordingSupport.record {
      RecordingSupport.runThreads(1) { _ in
        probeThread.store(UInt(pthread_self()), ordering: .relaxed)
        // A tracking scope's first run and first writes through the setter (a write through `_modify` still names
        // its key path on the thread when the flusher has not yet: its stored field needs the getter's address).
        let model = NamingProbeModel()
        _ = withObservationTracking {
          model.level + model.caption.count
        } onChange: {
        }
        model.level = 1
        model.caption = "x"
      }
      // The stop follows at once: what the thread met just before it is named by the flusher's last drain.
    }
    let log = Interner.namingLog.withLock { $0 }
    let thread = probeThread.load(ordering: .relaxed)
    let probeNames = log.names.filter { $0.name.contains("NamingProbeModel") }
    // The type and its two key paths were interned on the thread and named, each once, on another thread.
    #expect(log.interned >= 3)
    #expect(probeNames.count == 3)
    #expect(thread != 0)
    #expect(probeNames.allSatisfy { $0.thread != thread }, "named on the thread that met them: \(probeNames)")
    #expect(
      trace.propertyEvents == [
        "access NamingProbeModel.level", "access NamingProbeModel.caption", "willSet NamingProbeModel.level",
        "didSet NamingProbeModel.level", "willSet NamingProbeModel.caption", "didSet NamingProbeModel.caption",
      ])
    let types = Set(trace.events(.access).map { trace.definitions.typeName($0.aux) })
    #expect(types == ["NamingProbeModel"])
    // Their stored fields (trivially copyable `level`; `caption`, a String, needs no lookup) were found by the
    // flusher as it defined them, not on the thread, which wrote them only through their setters: a later first
    // `_modify` of `level` finds it in the table.
    let level = try #require(trace.events(.access).first).key
    #expect(obstrace_property_field(level) != 0 && obstrace_property_field(level) != StoredField.notFound)
    #expect(log.fieldLookups.contains { $0.property == level })
    #expect(log.fieldLookups.allSatisfy { $0.thread != thread })
  }
}
