import CObsTraceRing
import ObsTrace
import ObsTraceTestSupport
import Testing

@testable import ObsTraceRecorder

extension RecorderTests {
  /// The calling thread's return addresses, innermost first.
  static func returnAddresses() -> [UInt] {
    var frames = [UInt](repeating: 0, count: Int(OBSTRACE_MAX_STACK_DEPTH))
    let count = frames.withUnsafeMutableBufferPointer {
      Int(obstrace_capture_stack($0.baseAddress!, OBSTRACE_MAX_STACK_DEPTH, 0))
    }
    return Array(frames.prefix(count))
  }

  @Test(
    "a scope begun outside any tracking is tracked by ObsTrace itself (no frame of Observation's under its closure); a nested one by Observation's function, which merges its reads into the outer scope's"
  )
  func ownTrackingOutsideTracking() async throws {
    let observation = try ObservationLibrary.locate().get()
    let inObservation = { (frames: [UInt]) in
      frames.contains { frame in observation.code.contains { $0.contains(frame) } }
    }
    let model = LocalModel()
    let fired = Locked([String]())
    var outerFrames: [UInt] = []
    var innerFrames: [UInt] = []
    var outerTracking: UnsafeRawPointer?
    var innerTracking: UnsafeRawPointer?
    let trace = try await RecordingSupport.record {
      withObservationTracking {
        outerFrames = Self.returnAddresses()
        outerTracking = obstrace_current_tracking()
        _ = model.value
        withObservationTracking {
          innerFrames = Self.returnAddresses()
          innerTracking = obstrace_current_tracking()
          _ = model.other
        } onChange: {
          fired.withLock { $0.append("inner") }
        }
      } onChange: {
        fired.withLock { $0.append("outer") }
      }
      #expect(obstrace_current_tracking() == nil)
      model.other = 1  // read by the inner scope only: both fire, as the inner list was merged into the outer one
      model.value = 1  // both fired once already: nothing
    }
    #expect(!outerFrames.isEmpty && !innerFrames.isEmpty)
    #expect(!inObservation(outerFrames))
    #expect(inObservation(innerFrames))
    #expect(outerTracking != nil && innerTracking != nil && outerTracking != innerTracking)
    #expect(fired.withLock { $0.sorted() } == ["inner", "outer"])
    let kinds = trace.events.filter { $0.kind != .objectCreated }.map(\.kind)
    #expect(
      kinds == [
        .scopeBegin, .access, .scopeBegin, .access, .scopeEnd, .trackingInstalled, .scopeEnd, .trackingInstalled,
        .willSet, .trackingFired, .trackingCancelled, .trackingFired, .trackingCancelled, .didSet, .willSet, .didSet,
      ])
    let begins = trace.events(.scopeBegin)
    #expect(begins.count == 2 && begins[1].aux == begins[0].scope)
    let accesses = trace.events(.access)
    #expect(accesses.map(\.scope) == begins.map(\.scope))
    // Each a new instance, whose serial is taken with its scope's: none equals a scope or another instance.
    let serials = begins.map(\.scope) + begins.map(\.object)
    #expect(Set(serials).count == 4 && !serials.contains(0))
  }
}

extension RecorderTests {
  @Test(
    "a call-site scope's stack is walked from its call site: its first frame is the call's line, and the label is that line"
  )
  func scopeStackFromCallSite() async throws {
    let model = LocalModel()
    var callLine = 0
    let trace = try await RecordingSupport.record(options: RecordingOptions(backtraces: .writes)) {
      callLine = #line + 1
      _ = withObservationTracking {
        model.value
      } onChange: {
      }
    }
    let begin = try #require(trace.events(.scopeBegin).first)
    #expect(begin.stack != 0)
    let first = try #require(trace.definitions.frames(ofStack: begin.stack).first)
    #expect(first.file.hasSuffix("OwnTrackingTests.swift"))
    #expect(first.line == UInt32(callLine))
    #expect(trace.definitions.site(ofStack: begin.stack)?.line == UInt32(callLine))
    #expect(trace.definitions.labelName(begin.key) == "ObsTraceRecorderTests/OwnTrackingTests.swift:\(callLine)")
  }
}
