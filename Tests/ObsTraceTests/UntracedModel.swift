// This file does NOT import ObsTrace: its `@Observable` keeps Observation's own registrar, as a model declared in a
// package the user does not own does. ObsTrace sees none of its reads and writes (UnrecordedWriteTests).
import Observation

/// A model ObsTrace does not trace.
@Observable
final class UntracedModel {
  var count = 0
}
