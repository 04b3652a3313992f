import ObsTrace
import ObsTraceFixtureModels
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// A type named as one of ObsTraceFixtureModels: each is named with its module, `ObsTraceTests.Profile.name`.
@Observable
final class Profile: @unchecked Sendable {
  var name = ""
}

@Suite("Names two properties share")
struct AmbiguousNameTests {
  @Test(
    "types of one name in two modules are named with their modules; a lookup by the name without them fails the test with both"
  )
  func twoModules() async throws {
    let recorded = try await RecordingTestLock.shared {
      try recordObservation {
        let own = Profile()
        own.name = "a"
        let fixture = ObsTraceFixtureModels.Profile()
        fixture.name = "b"
        fixture.name = "c"
      }
    }
    withKnownIssue {
      _ = recorded.writes(of: "Profile.name")
    } matching: { issue in
      issue.comments.contains {
        $0.rawValue.contains(
          "recordObservation: 'Profile.name' is named ObsTraceFixtureModels.Profile.name, ObsTraceTests.Profile.name: "
            + "types of one name in two modules are named with their module; look each up by that name")
      }
    }
    #expect(recorded.writes(of: "ObsTraceTests.Profile.name") == 1)
    #expect(recorded.writes(of: "ObsTraceFixtureModels.Profile.name") == 2)
    #expect(
      recorded.report.properties.filter { $0.name.hasSuffix("Profile.name") }.map(\.name).sorted() == [
        "ObsTraceFixtureModels.Profile.name", "ObsTraceTests.Profile.name",
      ])
  }
}
