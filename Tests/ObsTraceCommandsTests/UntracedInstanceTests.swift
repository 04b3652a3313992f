import Foundation
import Testing

@testable import ObsTraceFormat

/// An untraced scope (tracking in a file that does not import ObsTrace) is one instance per call site: the recorder
/// labels it by its whole stack, so one call site reached along two paths has two labels, which the stop names
/// alike. A fresh-clone try-out's G1: a banner view rendered first from `main`, then from a flush loop, was four
/// instances, each fired instance waited for ever, and every later write of what it read was counted as coalesced.
@Suite("Untraced scopes, one instance per call site")
struct UntracedInstanceTests {
  /// Run A (label 1, recorded instance 11) reads `Model.count`; a write fires it (predicted); run B, the same call
  /// site reached along another path (label 2, recorded instance 19), reads it again; a second write fires B.
  static func trace() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Model" }, property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1),
      label: { "<call site of stack #\($0)>" })
    var trace = try SyntheticTrace("untraced-instances", definitions: definitions, seesUntracedTracking: true)
    var chunk = trace.chunk()
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    for (label, instance) in [(UInt32(1), UInt32(11)), (2, 19)] {
      let scope = instance
      trace.next(&chunk, .scopeBegin, flags: ScopeKind.untraced.rawValue, object: instance, key: label, scope: scope)
      // Read twice: one run that read a property counts once in the HTML page's "in N of M runs".
      for _ in 0..<2 {
        trace.next(&chunk, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: scope, aux: 1, depth: 1)
      }
      trace.next(&chunk, .scopeEnd, scope: scope)
      trace.next(&chunk, .willSet, flags: EventFlags.willSetInWithMutation, object: 1, key: 1, aux: 1)
      trace.next(&chunk, .didSet, flags: EventFlags.changed, object: 1, key: 1, aux: 1)
    }
    try trace.write(chunk)
    var symbols = SymbolTable()
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Model", property: "count")]
    symbols.labelNames = [1: "App/Banner.swift:13", 2: "App/Banner.swift:13"]
    try trace.write(symbols)
    return try trace.finish()
  }

  @Test("two labels named alike are one instance: the second write is not coalesced into the first run's instance")
  func oneInstancePerCallSite() throws {
    let path = try Self.trace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let scopes = try #require(object["scopes"] as? [[String: Any]])
    let banner = try #require(scopes.first { $0["label"] as? String == "App/Banner.swift:13" }, "\(scopes)")
    #expect(banner["instances"] as? Int == 1, "\(banner)")
    #expect(banner["runs"] as? Int == 2, "\(banner)")
    #expect(banner["invalidations"] as? Int == 2, "\(banner)")
    #expect(banner["coalescedWrites"] as? Int == 0, "\(banner)")
    let properties = try #require(object["properties"] as? [[String: Any]])
    #expect(properties.first?["coalescedWrites"] as? Int == 0, "\(properties)")
    // The text report says no coalesced write either.
    let report = Run.command(["report", path]).standardOutput
    #expect(!report.contains("coalesced 1"), "\(report)")
  }

  @Test("the HTML page's who read what takes labels named alike as one scope: its runs in order, reads counted once a run")
  func oneScopeInTheHTMLPage() throws {
    let path = try Self.trace()
    let page = path + ".html"
    defer {
      try? FileManager.default.removeItem(atPath: path)
      try? FileManager.default.removeItem(atPath: page)
    }
    let html = Run.command(["report", path, "--format", "html", "-o", page])
    #expect(html.status == 0, "\(html.standardError)")
    let text = try String(contentsOfFile: page, encoding: .utf8)
    let start = try #require(text.range(of: "<section id=\"who-read-what\">"), "\(text)")
    let section = text[start.upperBound...]
    let whoReadWhat = String(section[..<(section.range(of: "</section>")?.lowerBound ?? section.endIndex)])
    // One scope, not one per label.
    #expect(whoReadWhat.components(separatedBy: "<details").count == 2, "\(whoReadWhat)")
    #expect(whoReadWhat.contains("<code>App/Banner.swift:13</code>"), "\(whoReadWhat)")
    #expect(whoReadWhat.contains("in 2 of 2 runs"), "\(whoReadWhat)")
    #expect(
      whoReadWhat.contains("</code>: 2 <span class=\"predicted\">(all predicted, not recorded)</span></li>"),
      "both writes invalidated it (predicted: it is untraced): \(whoReadWhat)")
    // Its runs in the order they ran: label 1's run (#11), then label 2's (#19).
    let first = try #require(whoReadWhat.range(of: "<td>#11"), "\(whoReadWhat)")
    let second = try #require(whoReadWhat.range(of: "<td>#19"), "\(whoReadWhat)")
    #expect(first.lowerBound < second.lowerBound)
  }
}
