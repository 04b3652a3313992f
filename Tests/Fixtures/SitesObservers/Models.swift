#if OBSTRACE
  import ObsTrace
#endif
import Observation

protocol HasX: AnyObject {
  var x: Int { get set }
}

@Observable
final class M: HasX, @unchecked Sendable {
  var x = 0
  var y = 0
  var arr: [Int] = [0]
  var dict: [String: Int] = [:]
}

// The macro moves a property's observers into its peer buffer (`…ObservationTrackedfMp_.swift`), their bodies
// under `#sourceLocation` of this file, re-formatted one statement a line.
@Observable
final class Holder: @unchecked Sendable {
  var count = 0 {
    didSet { changes += 1 }  // site: didSet one statement
  }
  var changes = 0
  var level = 0 {
    didSet { if level > 10 { level = 10 } }  // site: didSet re-formatted
  }
  // Two lines of the user's, four of the buffer's: the clamp's write is on the buffer's third.
  var target = 20 {
    didSet {
      let limit = 30
      if target > limit { target = limit }  // site: didSet clamps
    }
  }
}

// A subclass that overrides a tracked property with an observer: the compiler makes the override's setter and
// `_modify`, which call the macro's; the user wrote no statement there, so a write is sited at its caller.
@Observable
class Panel: @unchecked Sendable {
  var width = 1
}

final class LoudPanel: Panel, @unchecked Sendable {
  var changes = 0
  override var width: Int {
    didSet { changes += 1 }
  }
}
