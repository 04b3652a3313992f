import Observation

// The models of Tests/Fixtures/HandWritten (see main.swift). Each class has a property the @Observable macro writes
// (its value in `_cents`, `_reading`) and one whose accessors are written by hand, as Observation's own tests write
// them, keeping the value in another field; next to it an unrelated @ObservationIgnored field of the name the macro
// would give its storage (`_percent`, `_degrees`: a cache). Only the macro's field is known to hold the value.
#if OBSTRACE
  import ObsTrace
#endif

@Observable class Ledger {
  var cents = 0
  @ObservationIgnored var basisPoints = 0
  /// A cache, not `percent`'s storage: only its name has the macro's shape.
  @ObservationIgnored var _percent = 0

  var percent: Int {
    get {
      access(keyPath: \.percent)
      return basisPoints / 100
    }
    _modify {
      access(keyPath: \.percent)
      _$observationRegistrar.willSet(self, keyPath: \.percent)
      var value = basisPoints / 100
      yield &value
      basisPoints = value * 100
      _$observationRegistrar.didSet(self, keyPath: \.percent)
    }
  }
}

@Observable final class Thermometer {
  var reading = 0
  @ObservationIgnored var tenths = 0
  /// Not `degrees`' storage either.
  @ObservationIgnored var _degrees = 0

  var degrees: Int {
    get {
      access(keyPath: \.degrees)
      return tenths / 10
    }
    set {
      _$observationRegistrar.willSet(self, keyPath: \.degrees)
      tenths = newValue * 10
      _$observationRegistrar.didSet(self, keyPath: \.degrees)
    }
  }
}
