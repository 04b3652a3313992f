import ObsTrace
import ObsTraceFixtureModels
import ObsTraceTestSupport
import ObsTraceTesting
import Observation
import Testing

/// A type named as one of ObsTraceFixtureModels: `Profile.name` names a property of each.
@Observable
final class Profile: @unchecked Sendable {
  var name = ""
}

@Suite("Names two properties share")
struct AmbiguousNameTests {
  @Test("a lookup of a name two properties have (types of one name in two modules) fails the test with both")
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
          "recordObservation: 'Profile.name' names 2 properties (Profile.name of module ObsTraceFixtureModels, "
            + "Profile.name of module ObsTraceTests): types of one name in two modules")
      }
    }
    #expect(
      recorded.report.properties.filter { $0.name == "Profile.name" }.map(\.statistics.writes).sorted() == [1, 2])
  }
}
