// This file does NOT import ObsTrace: the `Observations` below is Observation's own, and ObsTrace sees each of its
// values as an untraced run.
import Foundation
import Observation

/// The values of `Observations { model.value }` until one of `last` or more, each added to `seen` and signalled on
/// `got` as it comes (with `last` `Int.max` the loop never ends: the program ends while it waits). The read takes
/// `lock`, which each write holds: Observation resumes the loop inside the writer's willSet, and a read before the
/// write stores its value would see the old one and wait for a change already made (README, What it costs), a race
/// of Observation's that this program is not about.
@inline(never) func watch(_ model: Model, _ lock: NSLock, _ got: DispatchSemaphore, _ seen: Seen, until last: Int)
  async
{
  for await value in Observations({ lock.withLock { model.value } }) {  // site: observations
    seen.append(value)
    got.signal()
    if value >= last { break }
  }
}
