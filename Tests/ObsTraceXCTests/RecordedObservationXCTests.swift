import ObsTrace
import ObsTraceFixtureModels
import ObsTraceTesting
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

/// Failures of `recordObservation`'s assertions reach XCTest from an XCTest test: the failure is captured here
/// (and not recorded, so that the test itself passes) and checked.
final class RecordedObservationFailureXCTests: XCTestCase {
  private var failures: [(description: String, file: String, line: Int)] = []
  private var capturing = false

  override func recordFailure(
    withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
  ) {
    if capturing {
      failures.append((description, filePath, lineNumber))
    } else {
      super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }
  }

  func testAnUnknownNameFailsTheXCTestAtTheCallersLine() throws {
    let recorded = try recordObservation {
      let counter = Counter()
      counter.count = 1
    }
    capturing = true
    let line = #line + 1
    let count = recorded.writes(of: "Counter.cuont")
    capturing = false
    XCTAssertEqual(count, 0)
    XCTAssertEqual(failures.count, 1)
    XCTAssertTrue(failures.first?.description.contains("no property is named 'Counter.cuont'") == true, "\(failures)")
    XCTAssertEqual(failures.first?.line, line)
    XCTAssertTrue(failures.first?.file.hasSuffix("RecordedObservationXCTests.swift") == true, "\(failures)")
  }
}
