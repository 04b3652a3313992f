import Foundation
import Testing

@testable import ObsTraceFormat

/// A write whose didSet is not in the trace is unfinished only when nothing was lost: with events dropped, the didSet
/// may be one of them. A fresh-clone try-out's G8 (4 threads writing with OBSTRACE_DROP=1 and small rings: "20 writes
/// were unfinished when the recording stopped (Meter.value, Meter.value, …)", the timeline marking them mid-trace
/// without its loss mark).
@Suite("Writes without a didSet in a trace that lost events")
struct UnfinishedLossTests {
  /// Two writes of `Model.count` whose didSets are not in the trace, then one whole write; `dropped` events said
  /// dropped before the chunk.
  static func trace(dropped: UInt64) throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Model" }, property: SyntheticDefinitions.computedProperty(root: "Model", rootType: 1))
    var trace = try SyntheticTrace("unfinished-loss", definitions: definitions, dropWhenFull: dropped > 0)
    var chunk = trace.chunk()
    trace.next(&chunk, .objectCreated, object: 1, aux: 1)
    trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1)
    trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1)
    trace.next(&chunk, .willSet, flags: EventFlags.willSetDirect, object: 1, key: 1, aux: 1)
    trace.next(&chunk, .didSet, flags: EventFlags.changed, object: 1, key: 1, aux: 1)
    try trace.write(chunk, dropped: dropped)
    var symbols = SymbolTable()
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Model", property: "count")]
    try trace.write(symbols)
    return try trace.finish()
  }

  @Test("with events dropped: said as writes without a didSet that the loss may explain, each property once")
  func dropped() throws {
    let path = try Self.trace(dropped: 40)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path]).standardOutput
    #expect(
      report.contains(
        "2 writes have no didSet in the trace (Model.count ×2): the trace lost events, which may hold them (else the "
          + "recording stopped inside them)"), "\(report)")
    #expect(!report.contains("unfinished when the recording stopped"), "\(report)")
    let timeline = Run.command(["timeline", path]).standardOutput
    let unfinished = timeline.split(separator: "\n").filter { $0.contains("UNFINISHED") }
    #expect(unfinished.count == 2, "\(timeline)")
    #expect(
      unfinished.allSatisfy { $0.hasSuffix("[the trace lost events: this may come from the loss]") }, "\(timeline)")
  }

  @Test("with nothing lost: unfinished when the recording stopped, each property once with its count")
  func nothingLost() throws {
    let path = try Self.trace(dropped: 0)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = Run.command(["report", path]).standardOutput
    #expect(report.contains("2 writes were unfinished when the recording stopped (Model.count ×2)"), "\(report)")
    let timeline = Run.command(["timeline", path]).standardOutput
    #expect(!timeline.contains("[the trace lost events"), "\(timeline)")
  }
}
