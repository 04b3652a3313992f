import Observation

// What recording must never change, each behaviour as a mode: `obstrace-fidelity <mode>`. Built twice from this
// one file: `obstrace-fidelity` with ObsTrace (the OBSTRACE define) and `obstrace-fidelity-untraced` without it;
// recording on, both must print the same (Tests/ObsTraceCommandsTests/FidelityTests.swift).
//   unique     a copy-on-write container keeps its storage when `isKnownUniquelyReferenced` says it is unique
//   append     20,000 appends to an [Int] property move its buffer only when it grows (no copy per append)
//   equality   a member whose `==` counts its calls: writes through _modify call it never
//   access     a class with its own `access(keyPath:)`: `field += 1` calls it once
//   hierarchy  an `@Observable` class over an `@Observable` class: one object, written at both levels
//   noop       `model.count += 0`, a write that changes nothing (the report finds it, with its site)
//   levels     classes with @Observable at 1, 2 and 3 levels: some instances read or written, some created and
//              freed untouched, one of each kept alive to the end (the report counts objects, not registrars)
//   pileup     12 objects of a class with @Observable at 2 levels, created at one site a turn apart (a tracking
//              run between) and never freed, never touched (their registrars pile up there)
//   together   the same 12 objects created together, in one turn (a screen's rows): alive at the end, no pile-up
//   fewlevels  6 objects of a class with @Observable at 3 levels kept, never touched: 18 registrars at one site,
//              too few objects for a pile-up
//   tracking   reads outside any tracking between reads inside it (nested too): every tracking fires once
//   latestart  tracking installed, then (traced build, OBSTRACE_LATE_OUTPUT set) `Recorder.start` from code, then
//              a write that fires it and one that fires a tracking installed after the start
//   exit       an onChange that calls exit(3): the process ends inside the write that fired it (exit status 3)
//   nested     an outer tracking that reads nothing itself around an inner one that reads: Observation merges the
//              inner's reads into the outer's, so a write of what only the inner read fires both
#if OBSTRACE
  import ObsTrace
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// A count a change handler can bump (change handlers are `@Sendable`).
final class Count: @unchecked Sendable {
  var value = 0
}

// MARK: unique

final class Storage {
  var value = 0
}

/// A value with copy-on-write storage, as a user writes one: `mutate` replaces the storage unless it is unique.
struct Container: Equatable {
  var storage = Storage()

  /// True when the storage had to be replaced (someone else held a reference to it).
  mutating func mutate() -> Bool {
    if isKnownUniquelyReferenced(&storage) {
      storage.value += 1
      return false
    }
    storage = Storage()
    return true
  }

  static func == (a: Container, b: Container) -> Bool { a.storage === b.storage }
}

@Observable
final class Holder {
  var container = Container()
}

func unique() {
  let holder = Holder()
  var replaced = 0
  for _ in 0..<3 where holder.container.mutate() { replaced += 1 }
  print("unique: storage replaced \(replaced) times in 3 mutations, value \(holder.container.storage.value)")
}

// MARK: append

@Observable
final class Log {
  var items: [Int] = []
}

func append() {
  let log = Log()
  var moves = 0
  var base: UnsafeRawPointer?
  for index in 0..<20_000 {
    log.items.append(index)
    let now = log.items.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    if now != base { moves += 1 }
    base = now
  }
  // The buffer moves when it grows (a few dozen times), never once per append.
  print(
    "append: 20000 appends, \(log.items.count) items, the buffer moved \(moves < 100 ? "fewer than 100" : "\(moves)") times"
  )
}

// MARK: equality

nonisolated(unsafe) var equalityCalls = 0

struct Counted: Equatable {
  var n = 0

  static func == (a: Counted, b: Counted) -> Bool {
    equalityCalls += 1
    return a.n == b.n
  }
}

@Observable
final class Valued {
  var value = Counted()
}

func equality() {
  let model = Valued()
  for _ in 0..<10 { model.value.n += 1 }
  print("equality: 10 writes of value.n, == called \(equalityCalls) times, n is \(model.value.n)")
}

// MARK: access

@Observable
final class Tested {
  var field = 0
  @ObservationIgnored var accessCalls = 0

  /// The class's own `access(keyPath:)`, as Observation's own tests declare one: the macro then uses it.
  nonisolated func access<Member>(keyPath: KeyPath<Tested, Member>) {
    accessCalls += 1
    _$observationRegistrar.access(self, keyPath: keyPath)
  }
}

func access() {
  let test = Tested()
  test.field += 1
  print("access: field += 1 called access(keyPath:) \(test.accessCalls) time\(test.accessCalls == 1 ? "" : "s")")
}

// MARK: tracking

@Observable
final class Gauge {
  var level = 0
  var spare = 0
}

/// Reads outside any tracking (which a recording need not forward to the real registrar) between reads inside
/// tracking (which it must): each tracking still sees its reads and fires once.
func tracking() {
  let gauge = Gauge()
  var sum = 0
  for _ in 0..<3 { sum += gauge.level }  // outside tracking: the first read interns and binds, the next are inlined
  let fired = Count()
  for _ in 0..<3 {
    withObservationTracking {
      sum += gauge.level
    } onChange: {
      fired.value += 1
    }
    sum += gauge.spare  // outside tracking again
    gauge.spare += 1  // not read by the tracking: no fire
    gauge.level += 1  // fires
    sum += gauge.level
  }
  let (outer, inner) = (Count(), Count())
  withObservationTracking {
    sum += gauge.spare
    withObservationTracking {
      sum += gauge.level
    } onChange: {
      inner.value += 1
    }
  } onChange: {
    outer.value += 1
  }
  gauge.level = 10  // read by the inner tracking, whose reads the outer one sees too
  gauge.spare = 10
  print("tracking: \(fired.value) fires in 3 rounds, outer \(outer.value), inner \(inner.value), sum \(sum)")
}

// MARK: hierarchy

@Observable
class Animal {
  var name = "Rex"
  var legs = 4
}

@Observable
final class Dog: Animal {
  var breed = "collie"
}

func hierarchy() {
  let fired = Count()
  do {
    let dog = Dog()
    let animal = Animal()
    withObservationTracking {
      _ = dog.name
      _ = dog.breed
    } onChange: {
      fired.value += 1
    }
    dog.legs += 0
    dog.name = "Lassie"
    dog.breed = "rough collie"
    animal.name = "Tom"
    print(
      "hierarchy: \(dog.name) the \(dog.breed), \(dog.legs) legs; \(animal.name); tracking fired \(fired.value) time")
  }
}

// MARK: noop

@Observable
final class Tally {
  var count = 0
}

func noop() {
  let tally = Tally()
  let fired = Count()
  withObservationTracking {
    _ = tally.count
  } onChange: {
    fired.value += 1
  }
  tally.count += 0  // changes nothing, still notifies
  print("noop: count += 0, count is \(tally.count), tracking fired \(fired.value) time")
}

// MARK: levels

@Observable
class Entity {
  var id = 0
}

@Observable
class Person: Entity {
  var name = ""
}

@Observable
final class MiddleNamePerson: Person {
  var middleName = ""
}

/// Objects kept alive to the end of the program.
nonisolated(unsafe) var kept: [AnyObject] = []

/// Creates `count` objects with `make` and lets them go, untouched.
@inline(never)
func untouched(_ count: Int, _ make: () -> AnyObject) -> Int {
  var made: [AnyObject] = []
  for _ in 0..<count { made.append(make()) }
  return made.count
}

func levels() {
  let fired = Count()
  do {
    // Touched: each through one level's properties.
    let tally = Tally()
    tally.count = 1
    let dog = Dog()
    dog.name = "Lassie"  // declared by Animal: the Dog level's registrar records nothing
    let person = MiddleNamePerson()
    withObservationTracking {
      _ = person.middleName
      _ = person.id
    } onChange: {
      fired.value += 1
    }
    person.name = "Ann"
    person.id = 7
    let plain = Person()
    plain.name = "Bob"
    // Untouched: created and freed with no event.
    var made = untouched(2) { Tally() }
    made += untouched(2) { Dog() }
    made += untouched(1) { Animal() }
    made += untouched(3) { MiddleNamePerson() }
    made += untouched(1) { Person() }
    // Kept to the end: one touched, one not.
    let leaked = Dog()
    leaked.breed = "beagle"
    kept.append(leaked)
    kept.append(MiddleNamePerson())
    print(
      "levels: \(tally.count), \(dog.name), \(person.name) #\(person.id), \(plain.name), \(leaked.breed); "
        + "\(made) untouched, \(kept.count) kept; tracking fired \(fired.value) time")
  }
}

// MARK: pileup

/// A turn of the program, as a render is: a tracking run (here it reads nothing).
func turn() {
  withObservationTracking {} onChange: {}
}

func pileup() {
  for _ in 0..<12 {
    turn()
    kept.append(Dog())
  }
  print("pileup: \(kept.count) dogs kept")
}

func together() {
  for _ in 0..<12 { kept.append(Dog()) }
  print("together: \(kept.count) dogs kept")
}

func fewLevels() {
  for _ in 0..<6 { kept.append(MiddleNamePerson()) }
  print("fewlevels: \(kept.count) people kept")
}

// MARK: latestart

func lateStart() {
  let gauge = Gauge()
  let (before, after) = (Count(), Count())
  withObservationTracking {
    _ = gauge.level
  } onChange: {
    before.value += 1
  }
  #if OBSTRACE
    if let path = getenv("OBSTRACE_LATE_OUTPUT") { try? Recorder.start(to: String(cString: path)) }
  #endif
  gauge.level = 1  // fires the tracking installed before the start
  withObservationTracking {
    _ = gauge.spare
  } onChange: {
    after.value += 1
  }
  gauge.spare = 1  // fires the one installed after it
  #if OBSTRACE
    Recorder.stop()
  #endif
  print("latestart: fired \(before.value) before, \(after.value) after")
}

// MARK: nested

/// Two nested trackings, re-tracked after each fire, the outer reading nothing itself: Observation merges the
/// inner's access list into the outer's as the inner returns, so the outer depends on `level` and fires when it is
/// written (twice changed, once by a `+= 0` that changes nothing), while `spare`, which neither read, fires nothing.
func nested() {
  let gauge = Gauge()
  let (outer, inner) = (Count(), Count())
  var sum = 0
  for step in 0..<3 {
    withObservationTracking {
      withObservationTracking {
        sum += gauge.level
      } onChange: {
        inner.value += 1
      }
    } onChange: {
      outer.value += 1
    }
    gauge.spare += 1  // read by neither: fires nothing
    if step == 1 { gauge.level += 0 } else { gauge.level += 1 }
  }
  print("nested: outer fired \(outer.value), inner fired \(inner.value), sum \(sum)")
}

// MARK: exit

/// An onChange that ends the process: the write that fired it never reaches its didSet.
func exitInsideWrite() {
  let gauge = Gauge()
  withObservationTracking {
    _ = gauge.level
  } onChange: {
    print("exit: onChange ends the process inside the write")
    exit(3)
  }
  gauge.level = 1
  print("exit: not reached")
}

let modes: [String: () -> Void] = [
  "unique": unique, "append": append, "equality": equality, "access": access, "hierarchy": hierarchy, "noop": noop,
  "levels": levels, "pileup": pileup, "together": together, "fewlevels": fewLevels, "tracking": tracking,
  "latestart": lateStart, "exit": exitInsideWrite, "nested": nested,
]
let mode = CommandLine.arguments.dropFirst().first ?? ""
guard let run = modes[mode] else {
  print("usage: obstrace-fidelity \(modes.keys.sorted().joined(separator: "|"))")
  exit(2)
}
run()
