import ObsTrace
import ObsTraceFixtureModels
import XCTest

/// The in-test API from XCTest: `swift test --parallel` runs these in several processes at once.
final class RecordedObservationXCTests: XCTestCase {
  func testCountsFromXCTest() throws {
    let recorded = try recordObservation {
      let counter = Counter()
      let view = RenderHarness("Counter.view") { counter.count }
      view.render()
      counter.count = 1
      counter.count = 2
      view.flush()
      counter.count += 0
    }
    XCTAssertEqual(recorded.writes(of: "Counter.count"), 3)
    XCTAssertEqual(recorded.invalidations(of: "Counter.count"), 2)
    XCTAssertEqual(recorded.noopWrites(of: "Counter.count"), 1)
    XCTAssertEqual(recorded.wastedInvalidations(of: "Counter.count"), 1)
    XCTAssertEqual(recorded.runs(of: "Counter.view"), 2)
  }

  func testHarnessFromXCTest() {
    let counter = Counter()
    let view = RenderHarness("Counter.view") { counter.count }
    view.render()
    counter.count = 5
    XCTAssertTrue(view.isDirty)
    XCTAssertTrue(view.flush())
    XCTAssertEqual(view.runs, 2)
  }
}
