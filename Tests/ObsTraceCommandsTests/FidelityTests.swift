import Foundation
import ObsTraceAnalysis
import Testing

/// What recording must never change, side by side: each mode of `Examples/obstrace-fidelity` prints the same
/// built with ObsTrace and recording as built without it. With `OBSTRACE_COMPARE=equatable` (what recording did
/// by default before) the first four print differently: the test can tell.
@Suite("Fidelity")
struct FidelityTests {
  static let modes = ["unique", "append", "equality", "access", "hierarchy", "noop"]

  @Test("recording changes nothing the program prints", arguments: modes)
  func sideBySide(mode: String) throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", [mode])
    let trace = Paths.temporary("fidelity.trc")
    let traced = try Run.program("obstrace-fidelity", [mode], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(untraced.status == 0)
    #expect(traced.status == 0)
    #expect(!untraced.standardOutput.isEmpty)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.standardError.isEmpty)
    #expect(FileManager.default.fileExists(atPath: trace))
  }

  @Test(
    "the untraced program prints what the issue's table says it should",
    arguments: [
      ("unique", "unique: storage replaced 0 times in 3 mutations, value 3\n"),
      ("append", "append: 20000 appends, 20000 items, the buffer moved fewer than 100 times\n"),
      ("equality", "equality: 10 writes of value.n, == called 0 times, n is 10\n"),
      ("access", "access: field += 1 called access(keyPath:) 1 time\n"),
    ])
  func expectations(mode: String, output: String) throws {
    #expect(try Run.program("obstrace-fidelity-untraced", [mode]).standardOutput == output)
  }

  @Test(
    "comparing Equatable members (OBSTRACE_COMPARE=equatable, opt-in) changes what these programs see, as documented",
    arguments: ["unique", "append", "equality", "access"])
  func equatableComparisonPerturbs(mode: String) throws {
    let untraced = try Run.program("obstrace-fidelity-untraced", [mode])
    let traced = try Run.program(
      "obstrace-fidelity", [mode],
      environment: ["OBSTRACE_OUTPUT": Paths.temporary("f.trc"), "OBSTRACE_COMPARE": "equatable"])
    #expect(traced.status == 0)
    #expect(traced.standardOutput != untraced.standardOutput)
  }

  @Test("count += 0 is a no-op write, found by default with its site")
  func noopFound() throws {
    let trace = Paths.temporary("noop.trc")
    _ = try Run.program("obstrace-fidelity", ["noop"], environment: ["OBSTRACE_OUTPUT": trace])
    let report = try TraceAnalysis.analyze(path: trace)
    let tally = try #require(report.properties.first { $0.name == "Tally.count" })
    #expect(tally.statistics.noopWrites == 1)
    #expect(tally.statistics.comparedWrites == 1)
    #expect(tally.statistics.uncomparedWrites == 0)
    let finding = try #require(report.findings.first { $0.kind == .noopWrite })
    #expect(finding.site?.hasPrefix("main.swift:") == true)
  }

  @Test("writes of an array are counted as not compared, and the report says how to compare them")
  func uncomparedCounted() throws {
    let trace = Paths.temporary("append.trc")
    _ = try Run.program("obstrace-fidelity", ["append"], environment: ["OBSTRACE_OUTPUT": trace])
    let result = Run.command(["report", trace])
    #expect(
      result.standardOutput.contains(
        "writes through _modify: 0 compared, 20000 not compared (arrays, strings, …): OBSTRACE_COMPARE=equatable to compare them"
      ))
    let json = Run.command(["report", trace, "--format", "json"]).standardOutput
    #expect(json.contains("\"modifyWrites\":{\"compared\":0,\"notCompared\":20000}"))
  }

  @Test("an object whose class is @Observable at two levels is one object of its dynamic type, created and freed once")
  func hierarchyIsOneObject() throws {
    let trace = Paths.temporary("hierarchy.trc")
    _ = try Run.program("obstrace-fidelity", ["hierarchy"], environment: ["OBSTRACE_OUTPUT": trace])
    let report = try TraceAnalysis.analyze(path: trace)
    let objects = report.objects.map { "\($0.type) \($0.statistics.created) \($0.statistics.freed)" }
    #expect(objects == ["Animal 1 1", "Dog 1 1"])
    // Properties are named by the class that declares them, whichever object's class.
    #expect(Set(report.properties.map(\.name)) == ["Animal.name", "Animal.legs", "Dog.breed"])
    #expect(report.properties.first { $0.name == "Animal.name" }?.statistics.writes == 2)
    #expect(report.properties.first { $0.name == "Animal.legs" }?.statistics.noopWrites == 1)
    #expect(!report.findings.contains { $0.kind == .leakedObject })
    let timeline = Run.command(["timeline", trace]).standardOutput
    // One serial for the dog, whichever level's property: the first registrar created is the dog's.
    #expect(timeline.contains("write Dog#1.legs by _modify UNCHANGED"))
    #expect(timeline.contains("write Dog#1.name by set written"))
    #expect(timeline.contains("write Dog#1.breed by set written"))
    #expect(timeline.contains("write Animal#3.name by set written"))
  }
}
