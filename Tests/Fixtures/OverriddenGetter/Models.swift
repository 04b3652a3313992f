// The models of Tests/Fixtures/OverriddenGetter (see main.swift), a module of its own built as `swift build -c
// release` builds one (its files' code made on two threads): an `@Observable` class whose property a subclass
// overrides. The key path getter of `\Rect.width` (the one the macro's accessors pass) must call the getter through
// the class's table; an optimized build made it a function with no symbol of its own (DWARF's `keypath_get`) that
// only does that (a fresh-clone try-out's H16: named `Rect.<Double #…>` in release, `Rect.width` in debug).
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable
open class Shape {
  public var name: String = "shape"
  public var sides: Int = 0
  public init() {}
  open var area: Double { 0 }
}

@Observable
open class Rect: Shape {
  public var width: Double = 1
  public var height: Double = 1
  public override init() {
    super.init()
    sides = 4
  }
  open override var area: Double { width * height }
}

public final class LoudSquare: Rect {
  public nonisolated(unsafe) static var events: [String] = []
  public override var width: Double {
    willSet { LoudSquare.events.append("willSet \(width) -> \(newValue)") }
    didSet { if height != width { height = width } }
  }
  public override init() { super.init() }
}
