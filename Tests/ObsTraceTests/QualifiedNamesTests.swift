import ObsTrace
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// A hand-written observable, as Observation's own tests declare them: the registrar spelled with and without
/// the module's name, in a file that imports ObsTrace.
final class HandWritten: Observation.Observable, @unchecked Sendable {
  let registrar: Observation.ObservationRegistrar = ObservationRegistrar()
  private var storedValue = 0

  var value: Int {
    get {
      registrar.access(self, keyPath: \.value)
      return storedValue
    }
    set {
      registrar.withMutation(of: self, keyPath: \.value) { storedValue = newValue }
    }
  }
}

@Suite("Qualified names")
struct QualifiedNamesTests {
  @Test("Observation.ObservationRegistrar and ObservationRegistrar are one type: the tracing registrar, recorded")
  func registrarSpellings() async throws {
    #expect(Observation.ObservationRegistrar.self == TracingRegistrar.self)
    #expect(ObservationRegistrar.self == TracingRegistrar.self)
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let model = HandWritten()
        let view = RenderHarness("HandWritten.body") { model.value }
        view.render()
        model.value = 1
        view.flush()
      }
    }
    #expect(recorded.runs(of: "HandWritten.body") == 2)
    #expect(recorded.invalidations(ofScope: "HandWritten.body") == 1)
  }
}
