import Foundation
import Testing

/// tryout17's Q5: whether a property's getter is the `@Observable` macro's was told by its accessor macro's buffer
/// in the line table, found by spelling the buffer's mangled name word for word (`7MangledC8darkMode18Observation…`).
/// The compiler's spelling differs for a class named like its module (`7MangledAAC8darkMode…`: a substitution), a
/// type or property with the macro's words in its name (`12TrackedValueC5value011ObservationB0fMa_`), a name with
/// a word repeated (`07StepAndbcbcB0C…`) and a non-ASCII one (punycode, `0013ncd_skaCeHaFdC007caf_dma…`): every write
/// of such a property through `_modify` was "not compared (stored field not found)", its no-ops never found. The
/// buffer is now found by what its demangled name says. The fixture Tests/Fixtures/Mangled.
@Suite("Mangled names")
struct MangledNameTests {
  @Test(
    "writes through _modify of models whose buffers' names the mangler substitutes or spells in punycode are compared, and their no-ops found",
    arguments: ["-Onone", "-O"])
  func substitutedNames(optimization: String) throws {
    let folder = Paths.root + "/Tests/Fixtures/Mangled"
    let (run, _, trace) = try FixtureBuild.sideBySide(
      [folder + "/main.swift"], module: "Mangled", optimization: optimization, trace: "mangled\(optimization).trc")
    // What it prints, recording and with Observation alone (sideBySide expects the two the same).
    #expect(run.standardOutput == "fired 8 true 0 0 0 true\n0 0 0\n")
    let report = Run.command(["report", trace]).standardOutput
    // Ten writes through _modify, all compared: before, only none of them.
    #expect(report.contains("\n  writes through _modify: 10 compared\n"), "\(report)")
    #expect(!report.contains("not compared"), "\(report)")
    let json = Run.command(["report", "--format", "json", trace]).standardOutput
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
    let properties = try #require(object["properties"] as? [[String: Any]])
    var noops: [String: Int] = [:]
    for property in properties {
      guard let name = property["property"] as? String else { continue }
      #expect(property["uncomparedWrites"] as? Int == 0, "\(name): \(property)")
      noops[name] = property["noopWrites"] as? Int
    }
    #expect(
      noops == [
        "Mangled.darkMode": 1, "Mangled.level": 1, "TrackedValue.value": 1, "ObservationSettings.level": 1,
        "Flags.isTracked": 1, "Ünïcødé.café": 1, "Prefs.lautstärke": 1,
        "StepAndStepAndStepAndStep.stepAndStep": 1,
      ], "\(json)")
    // The check's limits count them: a no-op is over a limit of none.
    let check = Run.command([
      "check", trace, "--max", "Mangled.darkMode:noopWrites<=0", "--max", "Ünïcødé.café:noopWrites<=0",
      "--max", "TrackedValue.value:noopWrites<=1",
    ])
    #expect(check.status == 1, "\(check.standardOutput)\(check.standardError)")
    #expect(check.standardOutput.contains("limit Mangled.darkMode:noopWrites<=0: EXCEEDED (1)"), "\(check.standardOutput)")
    #expect(check.standardOutput.contains("limit Ünïcødé.café:noopWrites<=0: EXCEEDED (1)"), "\(check.standardOutput)")
    #expect(check.standardOutput.contains("limit TrackedValue.value:noopWrites<=1: ok (1)"), "\(check.standardOutput)")
  }
}
