import Foundation
import FoundationXML
import Testing

/// The CI formats, on the sample traces: GitHub annotations of findings and of a failed check, and JUnit XML.
@Suite("CI formats: GitHub annotations and JUnit")
struct CIFormatTests {
  let noopModify = Paths.root + "/traces/noop-modify.trc"
  let worse = Paths.root + "/traces/noop-modify-worse.trc"
  let baseline = Paths.root + "/traces/noop-modify.baseline.json"

  func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

  /// The value of `name=` in an annotation's properties.
  func property(_ name: String, of line: String) -> String? {
    guard let start = line.firstRange(of: "::")?.upperBound,
      let end = line[start...].firstRange(of: "::")?.lowerBound
    else { return nil }
    let properties = line[start..<end].drop { $0 != " " }.dropFirst()
    for part in properties.split(separator: ",") where part.hasPrefix(name + "=") {
      return String(part.dropFirst(name.count + 1))
    }
    return nil
  }

  @Test("report --format github: a warning on the site's line for each warning finding, none for information")
  func reportAnnotations() throws {
    let result = Run.command(["report", noopModify, "--format", "github"])
    #expect(result.status == 0)
    let annotations = lines(result.standardOutput)
    #expect(annotations.allSatisfy { $0.hasPrefix("::warning ") })
    let noop = try #require(annotations.first { $0.contains("title=obstrace noop-write") })
    #expect(property("file", of: noop)?.hasSuffix("Examples/obstrace-scenarios/main.swift") == true)
    #expect(property("line", of: noop) == "\(ScenarioSource.noopWrite)")
    #expect(noop.contains("::1 write to TodoStore.items left the value unchanged"))
    // Each says its evidence, as the text report does, on a line too (tryout17's Q1: only those without one did).
    #expect(noop.contains(". Evidence: didSet events marked unchanged: the recorder compared the value"), "\(noop)")
    // A finding without a site still shows, on the run rather than a line, and says why it has none, with its
    // evidence (a named scope, TodoList.body, has no call site to stand on).
    let redundant = try #require(annotations.first { $0.contains("title=obstrace redundant-run") })
    #expect(property("file", of: redundant) == nil)
    #expect(
      redundant.contains(
        ". No file or line: the trace names no place in the code for this finding. Evidence: each of these runs "
          + "continued a recorded instance"), "\(redundant)")
    #expect(!result.standardOutput.contains("untracked-read"))
  }

  @Test("report --format github writes files relative to --source-root, and escapes ':' in titles")
  func relativePaths() throws {
    let elsewhere = Paths.temporary("source-root-elsewhere")
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let absolute = try #require(
      // A root no recorded path is under keeps them absolute, wherever the traces were recorded.
      lines(Run.command(["report", noopModify, "--format", "github", "--source-root", elsewhere]).standardOutput)
        .compactMap {
          property("file", of: $0)
        }.first)
    let root = String(absolute[..<absolute.firstRange(of: "/Examples/")!.lowerBound])
    let result = Run.command(["report", noopModify, "--format", "github", "--source-root", root])
    let noop = try #require(lines(result.standardOutput).first { $0.contains("noop-write") })
    #expect(property("file", of: noop) == "Examples/obstrace-scenarios/main.swift")
    let check = Run.command(["check", worse, "--baseline", baseline, "--format", "github"])
    #expect(check.standardOutput.contains("title=obstrace check%3A property TodoStore.items grew::"))
    // A root that does not exist here (a typo, or the recording machine's folder, as `root` is) is said, not taken
    // without a word (tryout15's K5); one that is a file is refused.
    let note =
      "obstrace report: note: --source-root '\(root)' does not exist here; files under it are written relative to it "
      + "all the same, others whole\n"
    #expect(result.standardError == (FileManager.default.fileExists(atPath: root) ? "" : note))
    let typo = Run.command(["report", noopModify, "--format", "github", "--source-root", "/nonexistent"])
    #expect(typo.status == 0)
    #expect(typo.standardError.hasPrefix("obstrace report: note: --source-root '/nonexistent' does not exist here"))
    #expect(Run.command(["report", noopModify, "--format", "github", "--source-root", elsewhere]).standardError == "")
    let file = Run.command(["check", worse, "--baseline", baseline, "--format", "github", "--source-root", baseline])
    #expect(file.status == 2)
    #expect(file.standardError == "obstrace check: --source-root '\(baseline)' is not a folder\n")
  }

  @Test("check --format github on a failing check: an error at each write site of what grew, then FAILED, exit 1")
  func checkAnnotationsFail() throws {
    let result = Run.command([
      "check", worse, "--baseline", baseline, "--format", "github", "--max", "TodoList.body:runs<=2",
    ])
    #expect(result.status == 1)
    let output = lines(result.standardOutput)
    #expect(output.last == "FAILED")
    let errors = output.filter { $0.hasPrefix("::error ") }
    let items = errors.filter { $0.contains("::property TodoStore.items: ") }
    // The baseline keeps each site's share: only the no-op write's grew (1 → 3 writes there); the write that changed
    // the list made 1 write and 1 invalidation in both, so no error is put on its line (a fresh-clone try-out's N4:
    // before, every site of what grew had one).
    #expect(Set(items.compactMap { property("line", of: $0) }) == ["\(ScenarioSource.noopWrite)"], "\(items)")
    func at(_ line: Int, _ lines: [String]) throws -> String {
      try #require(lines.first { property("line", of: $0) == "\(line)" }, "\(lines)")
    }
    // Each site names only the counts its writes made, with the baseline's share there.
    let noop = try at(ScenarioSource.noopWrite, items)
    #expect(
      noop.hasSuffix(
        "writes grew 2 → 4, noopWrites grew 1 → 3, invalidations grew 2 → 4, wastedInvalidations grew 1 → 3 "
          + "(here: 3 writes (1 in the baseline), 3 no-op writes (1 in the baseline), 3 invalidations (1 in the "
          + "baseline), 3 wasted invalidations (1 in the baseline))"), "\(noop)")
    let body = errors.filter { $0.contains("::scope TodoList.body: ") }
    #expect(body.count == 1 && body.allSatisfy { $0.contains("runs grew 3 → 5") }, "\(body)")
    // Its redundant runs and wasted invalidations on the no-op writes that woke it for nothing, not on the change.
    #expect(
      try at(ScenarioSource.noopWrite, body).hasSuffix(
        "(here: 3 invalidations of it (1 in the baseline), 3 wasted invalidations of it (1 in the baseline))"))
    #expect(errors.contains { $0.contains("::limit TodoList.body:runs<=2 exceeded: 5") })
    #expect(!result.standardOutput.contains("maximumFanOut"))  // it did not grow
  }

  @Test("check --format github on a passing check: no annotation, PASSED, exit 0")
  func checkAnnotationsPass() {
    let result = Run.command(["check", noopModify, "--baseline", baseline, "--format", "github"])
    #expect(result.status == 0)
    #expect(result.standardOutput == "PASSED\n")
  }

  func junit(_ arguments: [String]) throws -> (status: Int32, document: XMLDocument) {
    let path = Paths.temporary("junit.xml")
    let result = Run.command(["check"] + arguments + ["--format", "junit", "-o", path])
    #expect(result.standardOutput.isEmpty)
    let document = try XMLDocument(contentsOf: URL(fileURLWithPath: path))
    return (result.status, document)
  }

  @Test("check --format junit: one test case per checked count, a failure for each that grew")
  func junitFails() throws {
    let (status, document) = try junit([worse, "--baseline", baseline, "--max", "TodoList.body:runs<=2"])
    #expect(status == 1)
    let cases = try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
    // 5 metrics of the one property, 4 of the one scope, 1 limit.
    #expect(cases.count == 10)
    let failed = cases.filter { !($0.elements(forName: "failure").isEmpty) }.compactMap {
      $0.attribute(forName: "name")?.stringValue
    }
    #expect(
      Set(failed) == [
        "TodoStore.items writes", "TodoStore.items noopWrites", "TodoStore.items invalidations",
        "TodoStore.items wastedInvalidations", "TodoList.body runs", "TodoList.body invalidations",
        "TodoList.body wastedInvalidations", "TodoList.body redundantRuns", "TodoList.body:runs<=2",
      ])
    let suite = try #require(try document.nodes(forXPath: "//testsuite").first as? XMLElement)
    #expect(suite.attribute(forName: "tests")?.stringValue == "10")
    #expect(suite.attribute(forName: "failures")?.stringValue == "9")
    let wasted = try #require(
      cases.first { $0.attribute(forName: "name")?.stringValue == "TodoStore.items wastedInvalidations" })
    let failure = try #require(wasted.elements(forName: "failure").first)
    #expect(failure.attribute(forName: "message")?.stringValue == "grew: 1 → 3")
    #expect(
      failure.stringValue?.hasSuffix(
        "at obstrace_scenarios/main.swift:\(ScenarioSource.noopWrite) (noopModify()) (3 wasted invalidations)")
        == true, "\(failure.stringValue ?? "")")
    // The writes' count is on every write's site.
    let writes = try #require(cases.first { $0.attribute(forName: "name")?.stringValue == "TodoStore.items writes" })
    let all = try #require(writes.elements(forName: "failure").first?.stringValue)
    #expect(
      all.contains("at obstrace_scenarios/main.swift:\(ScenarioSource.noopWrite) (noopModify()) (3 writes)"), "\(all)")
    #expect(
      all.contains("at obstrace_scenarios/main.swift:\(ScenarioSource.changingWrite) (noopModify()) (1 write)"),
      "\(all)")
  }

  @Test(
    "check --format github and junit: a limit on a property's invalidations is pinned on the writes that invalidated, not on writes that invalidated nothing"
  )
  func limitSitesAreTheCause() throws {
    // The demo's trace: Model.property written at 73, 79, 84 and 94; the write at 79 invalidated nothing.
    let guide = Paths.root + "/traces/guide.trc"
    let github = Run.command(["check", guide, "--max", "Model.property:invalidations<=2", "--format", "github"])
    #expect(github.status == 1)
    let errors = lines(github.standardOutput).filter { $0.hasPrefix("::error ") }
    #expect(errors.compactMap { property("line", of: $0) } == ["73", "84", "94"], "\(errors)")
    #expect(errors.allSatisfy { $0.hasSuffix("exceeded: 3 (here: 1 invalidation)") }, "\(errors)")
    // Its writes are pinned on all four.
    let writes = Run.command(["check", guide, "--max", "Model.property:writes<=3", "--format", "github"])
    #expect(
      Set(lines(writes.standardOutput).compactMap { property("line", of: $0) }) == ["73", "79", "84", "94"])
    // otherProperty: written at 76 (invalidated NextView.body) and 88 (nothing).
    let (status, document) = try junit([guide, "--max", "Model.otherProperty:invalidations<=0"])
    #expect(status == 1)
    let failure = try #require(try document.nodes(forXPath: "//failure").first?.stringValue)
    #expect(failure.contains("at obstrace_demo/main.swift:76 (top-level code) (1 invalidation)"), "\(failure)")
    #expect(!failure.contains("main.swift:88"), "\(failure)")
  }

  @Test("check --format junit on a passing check: the same cases, no failure, exit 0")
  func junitPasses() throws {
    let (status, document) = try junit([noopModify, "--baseline", baseline])
    #expect(status == 0)
    #expect(try document.nodes(forXPath: "//testcase").count == 9)
    #expect(try document.nodes(forXPath: "//failure").isEmpty)
  }

  @Test(
    "a format that does not exist is one line naming the flag, exit 2",
    arguments: [["report", "--format", "xml"], ["check", "--baseline", "B", "--format", "html"]])
  func badFormat(arguments: [String]) {
    let result = Run.command(Array(arguments.prefix(1)) + [noopModify] + arguments.dropFirst())
    #expect(result.status == 2)
    #expect(result.errorLines.count == 1)
    #expect(result.standardError.contains("--format"))
  }

  @Test(
    "report --format github: an untraced-tracking warning is on the file and line its label names (tryout13 G5), from the stack the trace recorded"
  )
  func untracedTrackingOnItsLine() throws {
    let folder = Paths.root + "/Tests/Fixtures/UntracedObservations"
    let program = try FixtureBuild.compile(
      [folder + "/main.swift", folder + "/Loop.swift"], module: "UntracedObservations", optimization: "-Onone")
    let trace = Paths.temporary("untraced-github.trc")
    let run = try Run.program(program, [], environment: ["OBSTRACE_OUTPUT": trace])
    #expect(run.status == 0, "\(run.standardError)")
    let line = try #require(try FixtureBuild.siteMarks(folder + "/Loop.swift")["observations"])
    let github = Run.command(["report", trace, "--format", "github", "--source-root", Paths.root])
    let warning = try #require(
      lines(github.standardOutput).first { $0.contains("title=obstrace untraced-tracking") }, "\(github.standardOutput)")
    #expect(property("file", of: warning) == "Tests/Fixtures/UntracedObservations/Loop.swift", "\(warning)")
    #expect(property("line", of: warning) == "\(line)", "\(warning)")
    // A relative root is the folder it names from the current one (tryout16's P6: taken as written, it matched no
    // recorded path, and every file stayed absolute).
    let current = FileManager.default.currentDirectoryPath
    let relative = String(repeating: "../", count: current.split(separator: "/").count) + Paths.root.dropFirst()
    for root in [relative, relative + "/Tests/..", relative + "/"] {
      let output = Run.command(["report", trace, "--format", "github", "--source-root", root]).standardOutput
      let relativeWarning = lines(output).first { $0.contains("title=obstrace untraced-tracking") }
      #expect(relativeWarning.flatMap { property("file", of: $0) } == "Tests/Fixtures/UntracedObservations/Loop.swift")
    }
  }
}
