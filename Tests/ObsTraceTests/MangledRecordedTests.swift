import ObsTrace
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// Models whose accessor macro buffers the mangler names by substitution (the macro's words `Observation` and
/// `Tracked` in the type's or the property's name) or in punycode (a non-ASCII name): tryout17's Q5.
@Observable
final class TrackedObservationModel: @unchecked Sendable {
  var isTracked = false
  var count = 0
}

@Observable
final class Compteur: @unchecked Sendable {
  var écart = 0
}

@Suite("Write comparison of mangled names in tests")
struct MangledRecordedTests {
  @Test("recordObservation finds the no-op writes of properties whose buffers' names are substituted or in punycode")
  func substitutedAndPunycode() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let model = TrackedObservationModel()
        let compteur = Compteur()
        model.count += 0
        model.count += 1
        model.isTracked.toggle()
        compteur.écart += 0
      }
    }
    // Before: each lookup failed the test, its writes "not compared (stored field not found)".
    #expect(recorded.noopWrites(of: "TrackedObservationModel.count") == 1)
    #expect(recorded.noopWrites(of: "TrackedObservationModel.isTracked") == 0)
    #expect(recorded.noopWrites(of: "Compteur.écart") == 1)
  }
}
