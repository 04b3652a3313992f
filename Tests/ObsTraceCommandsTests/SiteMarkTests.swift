import Foundation
import Testing

@testable import ObsTraceFormat

/// What a site says when it is not certain: a write of `Demo.Model.count` whose stack's frames are all ObsTrace's,
/// the runtime's or the macro's (stack 1: the site could not be placed), one whose line the binary gives only near
/// (stack 2: an approximate line), and one at a certain line (stack 3). Each write leaves the value as it was (a
/// no-op write, a finding with its site).
enum MarkedTrace {
  static func write() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "Demo.Model" }, property: SyntheticDefinitions.computedProperty(root: "Root", rootType: 1),
      stack: { [[], [0x10, 0x90], [0x20, 0x90], [0x30, 0x90]][Int($0)] })
    var trace = try SyntheticTrace("marks", definitions: definitions, stackLevel: 1)
    var chunk = trace.chunk()
    var time: UInt64 = 1000
    for stack in UInt32(1)...3 {
      for (kind, flags) in [(EventKind.willSet, EventFlags.willSetDirect), (.didSet, EventFlags.unchanged)] {
        time += 1000
        trace.append(
          &chunk, kind, at: time, flags: flags | (kind == .didSet ? EventFlags.modify : 0), object: 1, key: 1, aux: 1,
          stack: stack)
      }
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.typeNames = [1: "Model"]
    symbols.propertyNames = [1: PropertyName(module: "Demo", type: "Model", property: "count")]
    let registrar = SymbolizedFrame(
      address: 0x10,
      function: "ObsTraceRecorder.TracingRegistrar.willSet<A, B>(_: A, keyPath: Swift.KeyPath<A, B>) -> ()",
      file: "/src/RegistrarExtent.swift", line: 172, module: "fixture")
    symbols.frames[0x10] = registrar
    var approximate = SymbolizedFrame(
      address: 0x20, function: "Demo.Model.(_count in _1).didset : Swift.Int", file: "Demo/Models.swift", line: 28,
      module: "fixture")
    approximate.lineIsApproximate = true
    symbols.frames[0x20] = approximate
    symbols.frames[0x30] = SymbolizedFrame(
      address: 0x30, function: "Demo.run() -> ()", file: "/src/Demo/main.swift", line: 12, module: "fixture")
    symbols.frames[0x90] = SymbolizedFrame(
      address: 0x90, function: "__libc_start_call_main", file: "", line: 0, module: "libc.so.6")
    try trace.write(symbols)
    return try trace.finish()
  }
}

@Suite("Sites that are not certain")
struct SiteMarkTests {
  @Test(
    "a site whose line is approximate says so, and a write whose stack has no user frame says its site could not be placed"
  )
  func approximateAndNotPlaced() throws {
    let path = try MarkedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let timeline = Run.command(["timeline", path])
    #expect(timeline.status == 0, "\(timeline.standardError)")
    let writes = timeline.standardOutput.split(separator: "\n").filter { $0.contains("write Model#1.count") }
    #expect(writes.count == 3, "\(timeline.standardOutput)")
    #expect(
      writes.first?.hasSuffix("  (no site: no frame of the program's own code in its stack)") == true, "\(writes)")
    #expect(
      writes.dropFirst().first?.hasSuffix("at Demo/Models.swift:28 (Model._count.didset; line approximate)")
        == true,
      "\(writes)")
    #expect(writes.last?.hasSuffix("at Demo/main.swift:12 (run())") == true, "\(writes)")
    // The report's finding lists each site; JSON says which is approximate.
    let report = Run.command(["report", path]).standardOutput
    #expect(report.contains("(no site: no frame of the program's own code in its stack)"), "\(report)")
    #expect(report.contains("Demo/Models.swift:28 (Model._count.didset; line approximate)"), "\(report)")
    let json = Run.command(["report", path, "--format", "json"]).standardOutput
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let findings = try #require(object["findings"] as? [[String: Any]])
    let marks = findings.compactMap { finding -> String? in
      guard let site = finding["site"] as? String else { return nil }
      return "\(site) \(finding["siteApproximate"] as? Bool ?? false)"
    }
    #expect(marks.contains("Demo/Models.swift:28 (Model._count.didset; line approximate) true"), "\(findings)")
    #expect(marks.contains("Demo/main.swift:12 (run()) false"), "\(findings)")
  }
}

extension SiteMarkTests {
  /// `graph --sites` drew the approximate site as a certain one (`Models.swift:28\nModel._count.didset`) and
  /// left the write with no user frame out of the graph, silent.
  @Test(
    "graph --sites marks a site whose line is approximate, and draws the writes it could not place from one note that says so"
  )
  func graphSites() throws {
    let path = try MarkedTrace.write()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let graph = Run.command(["graph", "--sites", path])
    #expect(graph.status == 0, "\(graph.standardError)")
    let lines = graph.standardOutput.split(separator: "\n").map(String.init)
    // Notes in the order of their nodes' names: the unplaced one, then by path ("/src/Demo/main.swift", "Demo/…").
    let notes = lines.filter { $0.contains("shape=note") }.compactMap { line -> String? in
      guard let label = line.range(of: "label=\"") else { return nil }
      return String(line[label.upperBound...].dropLast(3))
    }
    #expect(
      notes == [
        "(no site: no frame of the program's own code in its stack)",
        "Demo/main.swift:12\\nrun()",
        "Demo/Models.swift:28\\nModel._count.didset; line approximate",
      ], "\(graph.standardOutput)")
    // Each site, the unplaced one too, wrote the property once, leaving it unchanged.
    let edges = lines.filter { $0.contains("\"w:") && $0.contains(" -> \"p:Model.count\"") }
    #expect(edges.count == 3, "\(graph.standardOutput)")
    #expect(edges.allSatisfy { $0.contains("label=\"wrote 1 (1 no-op)\"") }, "\(edges)")
    // The graph still renders.
    let dot = Paths.temporary("marked.dot")
    try graph.standardOutput.write(toFile: dot, atomically: true, encoding: .utf8)
    #expect(try Run.program("/usr/bin/dot", ["-Tsvg", dot]).status == 0)
  }
}
