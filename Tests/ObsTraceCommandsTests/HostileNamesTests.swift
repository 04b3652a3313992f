import Foundation
import Testing

@testable import ObsTraceFormat

/// A trace's names are the trace's to choose: printed in text, a newline in one would make a line of its own (a
/// forged `::error` workflow command in a CI log that prints the report) and an ESC would reach the terminal. Every
/// string the reader takes from a trace has those escaped, as scope labels always had: a fresh-clone try-out's J1.
@Suite("Names from a hostile trace")
struct HostileNamesTests {
  static let evil = "X\n::error file=/etc/passwd,line=1::pwned \u{1B}[31mred\u{1B}[0m \r\t\u{85}\u{202E}"
  static let escaped = #"X\n::error file=/etc/passwd,line=1::pwned \u{1B}[31mred\u{1B}[0m \r\t\u{85}\u{202E}"#

  /// `Evil.Model<evil>` and its property `value<evil>`, created and written twice from a function and file named
  /// with it, the writes unchanged (a no-op-write finding with its site).
  static func trace() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "Evil.Model" + evil },
      property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1),
      stack: { _ in [0x100, 0x9000] })
    var trace = try SyntheticTrace("hostile-names", definitions: definitions, executable: "/bin/x" + evil,
      stackLevel: 1)
    var chunk = trace.chunk()
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    var time = trace.lastTime
    for _ in 0..<2 {
      time += 1000
      trace.append(&chunk, .willSet, at: time, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1, stack: 1)
      trace.append(&chunk, .didSet, at: time + 100, flags: EventFlags.unchanged, object: 1, key: 1, aux: 1)
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.typeNames = [1: "Model" + evil]
    symbols.propertyNames = [1: PropertyName(module: "Evil", type: "Model" + evil, property: "value" + evil)]
    symbols.frames[0x100] = SymbolizedFrame(
      address: 0x100, function: "Evil.run" + evil + "() -> ()", file: "/src/Evil/main" + evil + ".swift", line: 12,
      module: "fixture")
    symbols.frames[0x9000] = SymbolizedFrame(
      address: 0x9000, function: "__libc_start_call_main", file: "", line: 0, module: "libc.so.6")
    try trace.write(symbols)
    return try trace.finish()
  }

  @Test("report, timeline, dump, graph and check print every name on its line, its control characters escaped")
  func escapedEverywhere() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let baseline = Paths.temporary("hostile-names.json")
    let made = Run.command(["baseline", path, "-o", baseline])
    #expect(made.status == 0, "\(made.standardError)")
    let commands: [[String]] = [
      ["report", path], ["report", path, "--format", "json"], ["timeline", path], ["dump", path],
      ["dump", "--stacks", path], ["graph", "--dot", path], ["check", path, "--baseline", baseline],
      ["check", path, "--max", "Model\(Self.escaped).value\(Self.escaped):noopWrites<=0"],
    ]
    for command in commands {
      let result = Run.command(command)
      let output = result.standardOutput + result.standardError
      #expect(!output.isEmpty, "\(command)")
      for forbidden: Unicode.Scalar in ["\u{1B}", "\r", "\u{85}", "\u{202E}"] {
        #expect(!output.unicodeScalars.contains(forbidden), "\(command): \(forbidden.value)")
      }
      #expect(!output.split(separator: "\n").contains { $0.hasPrefix("::") }, "\(command)")
    }
    // The names are there, escaped: the report's property, the site's function and file, the type.
    let report = Run.command(["report", path]).standardOutput
    #expect(report.contains("Model\(Self.escaped).value\(Self.escaped)"), "\(report)")
    let timeline = Run.command(["timeline", path]).standardOutput
    // (The site's file is its module and the path's last component: here from the name's `/etc/passwd`.)
    #expect(timeline.contains(" at Evil/passwd,line=1::pwned "), "\(timeline)")
    #expect(timeline.contains(".swift:12 (run\(Self.escaped)()"), "\(timeline)")
    // A limit names the property as it is printed, and finds it.
    let check = Run.command(["check", path, "--max", "Model\(Self.escaped).value\(Self.escaped):noopWrites<=0"])
    #expect(check.status == 1, "\(check.standardOutput)\(check.standardError)")
  }
}
