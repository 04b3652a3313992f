// The models of Tests/Fixtures/BaseClass (see main.swift): a non-final @Observable base class and its subclass,
// in a file of their own, as a fresh-clone try-out's Graph had them.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable class Animal {
  var name: String
  var age = 0
  init(name: String) { self.name = name }
  var summary: String { "\(name) (\(age))" }
}

@Observable final class Dog: Animal {
  var breed: String
  init(name: String, breed: String) {
    self.breed = breed
    super.init(name: name)
  }
}
