// A second file of the models' module (Tests/Fixtures/OverriddenGetter/Models.swift): its code is made on another
// thread of an optimized build, as in a package's model target.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

public func stretch(_ rect: Rect, by amount: Double) {
  rect.width += amount
  rect.height = rect.width
}
