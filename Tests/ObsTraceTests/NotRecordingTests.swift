import ObsTrace
import Observation
import ObsTraceTestSupport
import ObsTraceTesting
import Testing

/// The same model as `UntracedBasket`, traced (this file imports ObsTrace).
@Observable
final class TracedBasket: Basket, @unchecked Sendable {
  var count = 0
  var items: [Int] = []
  var name = ""
}

/// A traced build that is not recording takes the registrar's shortest path (the recording flag, then Observation's
/// registrar): it must do all Observation does and nothing more.
@Suite("Not recording")
struct NotRecordingTests {
  @Test("not recording (and recording with a test block's defaults), a traced model fires, skips and keeps its buffers as its untraced twin does")
  func sideBySide() async throws {
    try await RecordingTestLock.exclusive {
      try #require(!Recorder.isRecording)
      let traced = basketScript(TracedBasket()) { apply, onChange in
        withObservationTracking(apply, onChange: onChange)
      }
      let untraced = basketScript(UntracedBasket(), track: trackWithObservation)
      #expect(!Recorder.isRecording)
      #expect(traced == untraced)
      // And recording in a test block with its defaults (`recordObservation { … }`, comparing `.trivial`): the same,
      // every write recorded; append still in place (`.equatable`, asked for, would copy the old value first).
      var recording: [String] = []
      let recorded = try recordObservation {
        recording = basketScript(TracedBasket()) { apply, onChange in
          withObservationTracking(apply, onChange: onChange)
        }
      }
      #expect(recording == untraced)
      #expect(recorded.writes(of: "TracedBasket.items") == 4)
      // The script itself is right: each tracked write fires once, the equal value does not, append is in place.
      #expect(
        untraced == [
          "count += 1: fired [\"count\"] count 1 items [] name ",
          "append: fired [\"items\"] count 1 items [7] name ",
          "append in place: true",
          "items[0] += 1: fired [\"items\"] count 1 items [8] name ",
          "name set: fired [\"name\"] count 1 items [8] name milk",
          "name set equal: fired [] count 1 items [8] name milk",
          "untracked writes: fired [] count 5 items [] name milk",
        ])
    }
  }
}
