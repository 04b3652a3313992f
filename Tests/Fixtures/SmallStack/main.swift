// A worker thread made with a small stack (32 KiB, enough for this program untraced) is the first to touch a model:
// it tracks one property and writes two. Built by Tests/ObsTraceCommandsTests/DescriptorTests.swift with -DOBSTRACE
// (traced) and without (Observation alone), -Onone and -O; both print the same. With the argument `exit`, the
// worker ends the program itself (`exit(0)`), so the recording's stop at exit runs on its small stack; with
// `start PATH`, the worker starts and stops a recording to PATH itself (Recorder.start and Recorder.stop).
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

struct Tag: Equatable {
  var name: String
  var n: Int
}

@Observable final class Shared: @unchecked Sendable {
  var hits = 0
  var tag = Tag(name: "a", n: 0)
}

final class Fires: @unchecked Sendable { var count = 0 }

let done = DispatchSemaphore(value: 0)
let fires = Fires()
/// With `start PATH`, the traced build starts (or stops) a recording here; a function of its own, so that the worker's
/// own frame is the same size traced and untraced (with 32 KiB, the margin is small in a debug build).
@inline(never) func startOrStopIfAsked(start: Bool) {
  #if OBSTRACE
    guard CommandLine.arguments.dropFirst().first == "start" else { return }
    if !start {
      _ = Recorder.stop()
      return
    }
    do { try Recorder.start(to: CommandLine.arguments[2]) } catch { print("not recording: \(error)") }
  #endif
}

let worker = Thread {
  startOrStopIfAsked(start: true)
  let shared = Shared()
  withObservationTracking { _ = shared.hits } onChange: { fires.count += 1 }
  for n in 1...10 {
    shared.hits += 1
    shared.tag = Tag(name: "b", n: n)
  }
  print("hits \(shared.hits), tag \(shared.tag.n), fired \(fires.count)")
  if CommandLine.arguments.dropFirst().first == "exit" { exit(0) }
  startOrStopIfAsked(start: false)
  done.signal()
}
worker.stackSize = 32 << 10
worker.start()
done.wait()
print("done")
