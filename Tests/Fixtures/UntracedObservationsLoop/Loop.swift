// This file does NOT import ObsTrace: the `Observations` below is Observation's own, and ObsTrace sees each of its
// values as an untraced run.
import Foundation
import Observation

/// The values of `Observations { model.value }` until one of 3 or more, signalling `got` as each comes. The read
/// takes `lock`, which each write holds: Observation resumes the loop inside the writer's willSet, and a read
/// before the write stores its value would see the old one and wait for a change already made (README, What it
/// costs), a race of Observation's that this program is not about.
@inline(never) func watch(_ model: Model, _ lock: NSLock, _ got: DispatchSemaphore) async -> [Int] {
  var values: [Int] = []
  for await value in Observations({ lock.withLock { model.value } }) {  // site: observations
    values.append(value)
    got.signal()
    if value >= 3 { break }
  }
  return values
}
