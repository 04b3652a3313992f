import Foundation
import Testing

@testable import ObsTraceFormat

/// `check --format github|junit` name at most 5 sites of a count that failed, one annotation or line each, and say
/// the others rather than leave them out: a fresh-clone try-out's G11 (a growth that came from `Store.add` was shown
/// only at other lines).
@Suite("check's CI formats say every site of a count")
struct CheckSitesTests {
  /// `Model.count` written once from each of 7 places, `/src/App/main.swift` lines 10 to 16 (stacks 1 to 7), or
  /// `writes[i]` times from line 10 + i.
  static func trace(writes: [Int] = Array(repeating: 1, count: 7)) throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Model" }, property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1),
      stack: { [UInt64(0x100 * $0), 0x9000] })
    var trace = try SyntheticTrace("check-sites", definitions: definitions, stackLevel: 1)
    var chunk = trace.chunk()
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    var time = trace.lastTime
    for (index, count) in writes.enumerated() {
      for _ in 0..<count {
        time += 1000
        trace.append(
          &chunk, .willSet, at: time, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1,
          stack: UInt32(index + 1))
        trace.append(&chunk, .didSet, at: time + 100, flags: EventFlags.changed, object: 1, key: 1, aux: 1)
      }
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.typeNames = [1: "Model"]
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Model", property: "count")]
    for stack in UInt64(1)...7 {
      symbols.frames[0x100 * stack] = SymbolizedFrame(
        address: 0x100 * stack, function: "App.run() -> ()", file: "/src/App/main.swift", line: UInt32(9 + stack),
        module: "fixture")
    }
    symbols.frames[0x9000] = SymbolizedFrame(
      address: 0x9000, function: "__libc_start_call_main", file: "", line: 0, module: "libc.so.6")
    try trace.write(symbols)
    return try trace.finish()
  }

  @Test("github: 5 errors on their lines, then one naming the other 2 sites and their writes")
  func github() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let check = Run.command(["check", path, "--max", "Model.count:writes<=0", "--format", "github"])
    #expect(check.status == 1, "\(check.standardError)")
    let errors = check.standardOutput.split(separator: "\n").filter { $0.hasPrefix("::error") }
    let onLines = errors.filter { $0.contains("line=") }
    #expect(onLines.count == 5, "\(check.standardOutput)")
    let lines = onLines.compactMap { error in
      error.firstRange(of: "line=").map { String(error[$0.upperBound...].prefix(2)) }
    }
    #expect(lines == ["10", "11", "12", "13", "14"], "\(check.standardOutput)")
    let rest = errors.filter { !$0.contains("line=") }
    #expect(rest.count == 1, "\(check.standardOutput)")
    #expect(
      rest.first?.contains(
        "and 2 more sites: App/main.swift:15 (run()) (1 write), App/main.swift:16 (run()) (1 write)")
        == true, "\(check.standardOutput)")
  }

  @Test(
    "github with a baseline that keeps its places: errors only on the places whose writes grew, each with the baseline's share; a baseline without places points at every place, as before (a fresh-clone try-out's N4)"
  )
  func onlyThePlacesThatGrew() throws {
    let before = try Self.trace(writes: [4, 1, 1])
    let after = try Self.trace(writes: [4, 3, 1])
    defer { for path in [before, after] { try? FileManager.default.removeItem(atPath: path) } }
    let baseline = Paths.temporary("sites-baseline.json")
    #expect(Run.command(["baseline", before, "-o", baseline]).status == 0)
    let json = try String(contentsOfFile: baseline, encoding: .utf8)
    #expect(
      json.contains(
        #"      "Model.count": {"App/main.swift:10": {"writes": 4}, "App/main.swift:11": {"writes": 1}, "#
          + #""App/main.swift:12": {"writes": 1}}"#), "\(json)")
    let check = Run.command(["check", after, "--baseline", baseline, "--format", "github"])
    #expect(check.status == 1, "\(check.standardError)")
    let errors = check.standardOutput.split(separator: "\n").filter { $0.hasPrefix("::error") }
    #expect(errors.count == 1, "\(check.standardOutput)")
    #expect(errors.first?.contains("line=11,") == true, "\(check.standardOutput)")
    #expect(errors.first?.contains("(here: 3 writes (1 in the baseline))") == true, "\(check.standardOutput)")
    // The same baseline without its places (as an earlier obstrace wrote it): every place of the writes.
    let bare = Paths.temporary("bare-baseline.json")
    let withoutSites = json.components(separatedBy: ",\n  \"sites\"").first! + "\n}\n"
    try withoutSites.write(toFile: bare, atomically: true, encoding: .utf8)
    let old = Run.command(["check", after, "--baseline", bare, "--format", "github"])
    let oldErrors = old.standardOutput.split(separator: "\n").filter { $0.hasPrefix("::error") }
    #expect(oldErrors.count == 3, "\(old.standardOutput)")
  }

  @Test("junit: the failure lists 5 sites and says the other 2")
  func junit() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let output = Paths.temporary("check-sites.xml")
    let check = Run.command(["check", path, "--max", "Model.count:writes<=0", "--format", "junit", "-o", output])
    #expect(check.status == 1, "\(check.standardError)")
    let xml = try String(contentsOfFile: output, encoding: .utf8)
    #expect(xml.components(separatedBy: "  at App/main.swift:").count - 1 == 5, "\(xml)")
    #expect(
      xml.contains("  and 2 more sites: App/main.swift:15 (run()) (1 write), App/main.swift:16 (run()) (1 write)"),
      "\(xml)")
  }
}
