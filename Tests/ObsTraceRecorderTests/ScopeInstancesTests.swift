import Foundation
import ObsTrace
import ObsTraceFormat
import ObsTraceTestSupport
import Observation
import Testing

@testable import ObsTraceRecorder

/// A model that threads share (each write ordered by the test's semaphores).
@Observable
final class ThreadModel: @unchecked Sendable {
  var value = 0
}

extension RecorderTests {
  /// Per thread, the instances its `scopeBegin`s of `label` continue, in order.
  static func instancesByThread(_ trace: RecordedTrace, label: String) -> [UInt32: [UInt32]] {
    var instances: [UInt32: [UInt32]] = [:]
    for event in trace.events(.scopeBegin) where trace.definitions.labelName(event.key) == label {
      instances[event.thread, default: []].append(event.object)
    }
    return instances
  }

  // The old rule (the earliest-fired instance of the label, on any thread) let the second thread continue the first
  // thread's instance, waiting there; the first thread then took it back, and the second's re-track was a third.
  @Test("two threads re-tracking one label, turn by turn: each continues its own instance")
  func retrackOnTwoThreads() async throws {
    let first = ThreadModel()
    let second = ThreadModel()
    @Sendable func observe(_ model: ThreadModel) {
      _ = withObservationTracking(named: "Model.observe") {
        model.value
      } onChange: {
      }
    }
    let trace = try await RecordingSupport.record {
      let firstTurn = DispatchSemaphore(value: 0)
      let secondTurn = DispatchSemaphore(value: 0)
      let done = DispatchGroup()
      done.enter()
      Thread.detachNewThread {
        observe(first)
        first.value = 1  // fires this thread's instance, which waits
        secondTurn.signal()
        firstTurn.wait()
        first.value = 2
        observe(first)  // continues it
        secondTurn.signal()
        done.leave()
      }
      done.enter()
      Thread.detachNewThread {
        secondTurn.wait()
        observe(second)  // a new instance: the one waiting last ran on the other thread
        second.value = 1
        firstTurn.signal()
        secondTurn.wait()
        second.value = 2
        observe(second)  // continues this thread's
        done.leave()
      }
      done.wait()
    }
    let byThread = Self.instancesByThread(trace, label: "Model.observe")
    #expect(byThread.count == 2)
    for (thread, instances) in byThread {
      #expect(instances.count == 2, "thread \(thread)")
      #expect(Set(instances).count == 1, "thread \(thread): \(instances)")
    }
    #expect(Set(byThread.values.flatMap { $0 }).count == 2)
  }

  @Test("four threads re-tracking one label on their own objects, racing: one instance each, every time")
  func retrackOnFourThreads() async throws {
    let threads = 4
    let trace = try await RecordingSupport.record {
      RecordingSupport.runThreads(threads) { _ in
        let model = LocalModel()
        for index in 1...2000 {
          model.value = index
          if index % 20 == 0 {
            _ = withObservationTracking(named: "Thread.scope") {
              model.value
            } onChange: {
            }
          }
        }
      }
    }
    let byThread = Self.instancesByThread(trace, label: "Thread.scope")
    #expect(byThread.count == threads)
    for (thread, instances) in byThread {
      #expect(instances.count == 100, "thread \(thread)")
      #expect(Set(instances).count == 1, "thread \(thread)")
    }
    #expect(Set(byThread.values.flatMap { $0 }).count == threads)
  }

  @Test("a re-track from the change handler, on the writer's thread, continues the instance that fired")
  func retrackInHandlerOnAnotherThread() async throws {
    final class Observer: @unchecked Sendable {
      let model = LocalModel()
      func observe() {
        _ = withObservationTracking(named: "Observer.observe") {
          model.value
        } onChange: { [self] in
          observe()
        }
      }
    }
    let observer = Observer()
    let trace = try await RecordingSupport.record {
      observer.observe()
      let done = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        observer.model.value = 1  // fires; the handler re-tracks here, on this thread
        observer.model.value = 2
        done.signal()
      }
      done.wait()
    }
    let instances = Self.instancesByThread(trace, label: "Observer.observe").values.flatMap { $0 }
    #expect(instances.count == 3)
    #expect(Set(instances).count == 1)
  }
}
