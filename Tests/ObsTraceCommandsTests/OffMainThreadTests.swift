import Foundation
import Testing

@testable import ObsTraceFormat

/// The main actor's threads in a program with an async main: its code before the first `await` runs on the
/// process's first thread (T1 here, whose OS thread id is the process id), which `dispatchMain` then ends; what
/// follows runs on the thread the main queue is handed to (T2), where an `Observations` loop runs on the main actor.
/// A fresh-clone try-out's G2: a program that used its models only on the main actor got an off-main-thread
/// finding for each, naming no thread.
@Suite("off-main-thread in a program with an async main")
struct OffMainThreadTests {
  /// T1 reads `Store#1.count` and ends; T2 runs an `Observations` value on the main actor that reads it; with
  /// `worker`, T3 (another thread) reads it too.
  static func trace(worker: Bool) throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Store" }, property: SyntheticDefinitions.computedProperty(root: "Store", rootType: 1),
      label: { _ in "App/main.swift:20" },
      scope: { _ in ScopeDefinition(kind: .observations, label: 1, parent: 0) })
    var trace = try SyntheticTrace("async-main", definitions: definitions)
    var first = trace.chunk(thread: 1, osThreadID: 42)
    trace.next(&first, .objectCreated, object: 1, aux: 1)
    trace.next(&first, .access, object: 1, key: 1, aux: 1)
    try trace.write(first, threadEnded: true)
    var main = trace.chunk(thread: 2, osThreadID: 43, firstTime: trace.lastTime)
    trace.next(&main, .scopeBegin, flags: ScopeKind.observations.rawValue, object: 7, key: 1, scope: 5)
    trace.next(&main, .observationsRun, flags: EventFlags.onMainActor, key: 7, scope: 5, aux: 9)
    trace.next(&main, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: 5, aux: 1, depth: 1)
    trace.next(&main, .scopeEnd, scope: 5)
    try trace.write(main, threadEnded: true)
    if worker {
      var other = trace.chunk(thread: 3, osThreadID: 44, firstTime: trace.lastTime)
      trace.next(&other, .access, object: 1, key: 1, aux: 1)
      try trace.write(other, threadEnded: true)
    }
    var symbols = SymbolTable()
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Store", property: "count")]
    try trace.write(symbols)
    return try trace.finish()
  }

  static func offMainFindings(_ path: String) throws -> [[String: Any]] {
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let findings = try #require(object["findings"] as? [[String: Any]])
    return findings.filter { $0["kind"] as? String == "off-main-thread" }
  }

  @Test("used on the first thread before the first await and on the main actor's thread after: no finding")
  func mainActorOnly() throws {
    let path = try Self.trace(worker: false)
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(try Self.offMainFindings(path).isEmpty)
  }

  @Test("used on another thread as well: one finding, its evidence naming the threads of each side")
  func anotherThread() throws {
    let path = try Self.trace(worker: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let offMain = try Self.offMainFindings(path)
    #expect(offMain.count == 1, "\(offMain)")
    #expect(offMain.first?["count"] as? Int == 1, "\(offMain)")
    let report = Run.command(["report", path]).standardOutput
    #expect(
      report.contains("Store objects were used on the main actor's 2 threads and on 1 other thread"), "\(report)")
    #expect(report.contains("recorded on the main actor's 2 threads (T1, T2) and on T3"), "\(report)")
  }
}
