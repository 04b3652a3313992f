// A program whose models (Counters.swift) have one layout: an optimized build compiled as `swift build -c release`
// does (`-wmo -num-threads 2`) merges their key path getters (LLVM's function merging: `…TKTm`), and each
// property's key path getter is a thunk with no symbol that calls the merged function, which is named after one of
// them (`Counter.count`): `Meter.reading` and `Gauge.level` are named by their own class's field at the offset it
// reads. The base class and subclass here have String properties. Built by
// Tests/ObsTraceCommandsTests/MergedGetterTests.swift with -DOBSTRACE (traced) and without, -Onone and -O; all print
// the same.
#if KILLED
  import Glibc
#endif
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable class Person {
  var firstName = ""
  var lastName = ""
}

@Observable final class Employee: Person {
  var title = ""
}

func readPeople(_ person: Person, _ employee: Employee) -> String {
  "\(person.firstName) \(person.lastName) \(employee.firstName) \(employee.title)"
}

func name(_ person: Person, _ employee: Employee) {
  person.firstName = "Ada"
  person.lastName = "Lovelace"
  employee.firstName = "Grace"
  employee.title = "Admiral"
}

nonisolated(unsafe) let counter = Counter()
nonisolated(unsafe) let meter = Meter()
nonisolated(unsafe) let gauge = Gauge()
nonisolated(unsafe) let person = Person()
nonisolated(unsafe) let employee = Employee()
nonisolated(unsafe) var fired = 0

func watch() {
  withObservationTracking {
    print("read", readCounters(counter, meter, gauge), readPeople(person, employee))
  } onChange: {
    fired += 1
  }
}

watch()
leaveCounters(counter, meter, gauge)
watch()
stepCounters(counter, meter, gauge)
watch()
name(person, employee)
watch()
counter.note = "done"
print("fired \(fired)")
#if KILLED
  // Killed before its recording stops, as a crash would: the trace has no symbol table (`obstrace symbolize`).
  sleep(2)
  kill(getpid(), SIGKILL)
#endif
