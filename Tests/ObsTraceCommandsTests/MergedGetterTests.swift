import Foundation
import ObsTraceFormat
import Testing

/// Classes whose first stored properties have one layout: an optimized build made as `swift build -c release` makes
/// it merges their key path getters (LLVM's function merging, `…TKTm`) into one function named after ONE of the
/// properties, and each property's key path getter becomes a thunk with no symbol that calls it (a fresh-clone
/// try-out's F7: 14 of 24 properties named `TestModel.<Int #20>`, their `_modify` writes not compared). Each is named
/// by what its thunk passes and its class's field offsets, never by the merged function's name: the fixture
/// Tests/Fixtures/Merged.
@Suite("Merged getters")
struct MergedGetterTests {
  @Test(
    "properties whose key path getters were merged are named truly and their writes compared, in debug and release",
    arguments: ["-Onone", "-O"])
  func namedAndCompared(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/Merged"
    let sources = [folder + "/main.swift", folder + "/Counters.swift"]
    let (run, _, trace) = try FixtureBuild.sideBySide(
      sources, module: "Merged", optimization: optimization, trace: "merged\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(
      run.standardOutput
        == "read 0  0 0    \nread 0  0 0    \nread 1  2 3    \nread 1  2 3 Ada Lovelace Grace Admiral\nfired 4\n")
    if optimization == "-O" {
      // The case this is about: the optimized build did merge key path getters.
      let binary = try FixtureBuild.compile(
        sources, module: "Merged", optimization: optimization, flags: ["-DOBSTRACE"])
      let symbols = try Run.program("/usr/bin/env", ["nm", binary]).standardOutput
      #expect(symbols.contains("TKTm\n"), "no merged key path getter in \(binary)")
    }
    let marks = try FixtureBuild.siteMarks(folder + "/Counters.swift")
    let report = Run.command(["report", trace]).standardOutput
    for property in [
      "Counter.count", "Counter.note", "Meter.reading", "Gauge.level", "Person.firstName", "Person.lastName",
      "Employee.title",
    ] {
      #expect(report.contains("  \(property) "), "\(property) is not named:\n\(report)")
    }
    #expect(!report.contains(" #") && !report.contains("not named by the symbol table"), "\(report)")
    // Each of the three Ints its own property (not all the merged function's `Counter.count`): 2 writes, 1 no-op.
    for property in ["Counter.count", "Meter.reading", "Gauge.level"] {
      let row = report.split(separator: "\n").first { $0.hasPrefix("  \(property) ") }.map(String.init) ?? ""
      let columns = row.split(separator: " ").dropFirst()
      #expect(columns.count == 7 && columns.dropFirst(2).prefix(2) == ["2", "1"], "\(property): \(row)")
    }
    // Six `+=` of Ints, each compared: the three `+= 0` are the no-op writes of their own properties, at their own
    // lines (before, the debug build placed the second and third on the line before: `Symbolizer.line`'s callee).
    #expect(report.contains("writes through _modify: 6 compared\n"), "\(report)")
    for (name, property) in [("counter", "Counter.count"), ("meter", "Meter.reading"), ("gauge", "Gauge.level")] {
      let line = marks["\(name) unchanged"] ?? 0
      let finding = report.components(separatedBy: "[noop-write] 1 write to \(property) left the value unchanged")
      #expect(finding.count == 2, "no finding for \(property):\n\(report)")
      if finding.count == 2 {
        let place = finding[1].split(separator: "\n").dropFirst().first ?? ""
        #expect(place.hasPrefix("      at Merged/Counters.swift:\(line) ("), "\(property) at line \(line):\n\(report)")
      }
    }
    let timeline = Run.command(["timeline", trace]).standardOutput
    for property in ["Counter#1.count", "Meter#2.reading", "Gauge#3.level"] {
      #expect(timeline.contains("\(property) by _modify UNCHANGED"), "\(property):\n\(timeline)")
      #expect(timeline.contains("\(property) by _modify changed"), "\(property):\n\(timeline)")
    }
  }

  @Test(
    "symbolize of a killed release recording says that a merged getter's properties stay unnamed because the getter is merged, not that the binary may be another"
  )
  func symbolizeSaysMerged() throws {
    let folder = Paths.root + "/Tests/Fixtures/Merged"
    let program = try FixtureBuild.compile(
      [folder + "/main.swift", folder + "/Counters.swift"], module: "Merged", optimization: "-O",
      flags: ["-DOBSTRACE", "-DKILLED"])
    let trace = Paths.temporary("merged-killed.trc")
    let run = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 128 + 9, "\(run.standardError)")
    let symbolized = Paths.temporary("merged-symbolized.trc")
    let result = Run.command(["symbolize", trace, "-o", symbolized])
    // Meter.reading's and Gauge.level's thunks pass their class's registrar only: the merged getter, named after
    // Counter.count, reads one offset for all three, which only the running classes' field offsets tell.
    #expect(result.status == 1, "\(result.standardError)")
    #expect(result.errorLines.count == 2, "\(result.standardError)")
    let line = result.errorLines.last ?? ""
    #expect(line.hasPrefix("obstrace symbolize: 2 properties stay unnamed (Meter.<Int #"), "\(line)")
    #expect(line.contains(">, Gauge.<Int #"), "\(line)")
    #expect(
      line.contains(
        "): their binaries are the ones that ran, but their key path getters are thunks of one getter that LLVM's "
          + "function merging made for classes of one layout (merged key path getter for Counter.count); which property "
          + "it reads for each class is in the classes' field layout, which a recording that stops cleanly reads from "
          + "the running program and symbolize does not; "),
      "\(line)")
    #expect(line.hasSuffix("-Xswiftc -Xfrontend -Xswiftc -disable-llvm-merge-functions-pass"), "\(line)")
    // Before: '2 properties stay unnamed: their addresses … resolve to no key-path getter …; they may not be the
    // ones that ran'.
    #expect(!result.standardError.contains("may not be the ones that ran"), "\(result.standardError)")
    // The others are named from the binary: Counter.count (the merged getter's own), Person's by their fields.
    let report = Run.command(["report", symbolized]).standardOutput
    for property in ["Counter.count", "Person.firstName", "Employee.title"] {
      #expect(report.contains("  \(property) "), "\(property) is not named:\n\(report)")
    }
  }

  /// A generic class's property read through a key path whose getter, in an optimized build, has no symbol and only
  /// calls the property's getter: it was `Box<Int>.<Int #1>` and its `+= 0` not compared (merge15's note on generic
  /// classes; the getter is not a merged one in this build).
  @Test(
    "a generic class's property whose key path getter only calls its getter is named and its writes compared, in debug and release",
    arguments: ["-Onone", "-O"])
  func genericGetterCall(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/GenericGetter"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift", folder + "/Models.swift"], module: "GenericGetter", optimization: optimization,
      trace: "generic-getter\(optimization).trc")
    #expect(run.standardOutput == "1 2 0\nfired\n")
    let report = Run.command(["report", trace]).standardOutput
    for property in ["Box<Int>.value", "Pair<Int>.first", "Counter.count"] {
      #expect(report.contains("  \(property) "), "\(property) is not named:\n\(report)")
    }
    #expect(!report.contains("<Int #") && !report.contains("not named by the symbol table"), "\(report)")
    #expect(report.contains("writes through _modify: 3 compared\n"), "\(report)")
  }

  /// A property a subclass overrides: in an optimized build its key path getter has no symbol (DWARF's
  /// `keypath_get`) and calls the getter through the class's table. It was `Rect.<Double #…>` in release and
  /// `Rect.width` in debug, so a `check --max 'Rect.width:…'` or a baseline made from a debug run did not match a
  /// release trace (a fresh-clone try-out's H16). The models are a module of their own, built on two threads as
  /// `swift build -c release` builds one.
  @Test(
    "a property a subclass overrides is named in debug and release, its key path getter calling through the class's table",
    arguments: ["-Onone", "-O"])
  func tableGetter(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/OverriddenGetter"
    var programs: [String] = []
    for flags in [["-DOBSTRACE"], []] {
      let models = try FixtureBuild.library(
        [folder + "/Models.swift", folder + "/Stretch.swift"], module: "OverriddenModels", optimization: optimization,
        flags: flags + (optimization == "-Onone" ? [] : ["-num-threads", "2"]))
      programs.append(
        try FixtureBuild.compile(
          [folder + "/main.swift"], module: "OverriddenGetter", optimization: optimization, flags: flags,
          libraries: [models]))
    }
    let trace = Paths.temporary("overridden-getter\(optimization).trc")
    let run = try Run.program(programs[0], [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0, "\(run.standardError)")
    let alone = try Run.program(programs[1], [])
    #expect(run.standardOutput == alone.standardOutput, "traced and untraced print differently")
    #expect(run.standardOutput == "area 1.0\nfired\n16.0 1.0 [\"willSet 1.0 -> 3.0\", \"willSet 3.0 -> 4.0\"]\n")
    let report = Run.command(["report", trace]).standardOutput
    for property in ["Rect.width", "Rect.height", "Shape.sides"] {
      #expect(report.contains("  \(property) "), "\(property) is not named:\n\(report)")
    }
    #expect(!report.contains("<Double #") && !report.contains("not named by the symbol table"), "\(report)")
    let check = Run.command(["check", trace, "--max", "Rect.width:writes<=10"])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
  }
}
