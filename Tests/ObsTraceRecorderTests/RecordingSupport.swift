import Foundation
import ObsTraceFormat
import ObsTraceRecorder
import ObsTraceTestSupport

/// A trace recorded by a test and read back.
struct RecordedTrace {
  var path: String
  var summary: RecordingSummary
  var reader: TraceReader
  var events: [TraceEvent]

  var definitions: TraceDefinitions { reader.definitions }

  func events(_ kind: EventKind) -> [TraceEvent] { events.filter { $0.kind == kind } }

  func propertyName(_ event: TraceEvent) -> String { definitions.propertyName(event.key) }

  /// `kind Type.property` for every access, willSet and didSet, in order: what a test compares.
  var propertyEvents: [String] {
    events.filter { [.access, .willSet, .didSet].contains($0.kind) }.map { "\($0.kind) \(propertyName($0))" }
  }
}

enum RecordingSupport {
  static func temporaryPath(_ name: String) -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("obstrace-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
  }

  /// Records `body` into a fresh trace, stops, and reads every event back.
  ///
  /// Async, so that waiting for the lock suspends instead of blocking a thread of the cooperative pool: on two
  /// cores the pool has two threads, and two tests blocked waiting for it kept a test that held the shared side
  /// from ever resuming to release it (the whole run hung).
  static func record(
    isolation: isolated (any Actor)? = #isolation,
    options: RecordingOptions = RecordingOptions(), _ body: () throws -> Void
  ) async throws -> RecordedTrace {
    try await RecordingTestLock.exclusive { try recordAlone(options: options, body) }
  }

  /// `record` for a caller that already holds `RecordingTestLock.exclusive`.
  static func recordHoldingLock(
    options: RecordingOptions = RecordingOptions(), _ body: () throws -> Void
  ) throws -> RecordedTrace {
    try recordAlone(options: options, body)
  }

  private static func recordAlone(options: RecordingOptions, _ body: () throws -> Void) throws -> RecordedTrace {
    let path = temporaryPath("test.trc")
    try Recorder.start(to: path, options: options)
    do {
      try body()
    } catch {
      Recorder.stop()
      throw error
    }
    let summary = Recorder.stop()!
    let reader = try TraceReader(path: path)
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    return RecordedTrace(path: path, summary: summary, reader: reader, events: events)
  }

  /// Runs `count` real threads that start together (after all exist) and are joined before returning.
  static func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let gate = DispatchSemaphore(value: 0)
    for index in 0..<count {
      ready.enter()
      done.enter()
      let thread = Thread {
        ready.leave()
        gate.wait()
        body(index)
        done.leave()
      }
      thread.start()
    }
    ready.wait()
    for _ in 0..<count { gate.signal() }
    done.wait()
    // Let exiting threads run their TLS destructors (the hand-over of their rings).
    Thread.sleep(forTimeInterval: 0.02)
  }
}
