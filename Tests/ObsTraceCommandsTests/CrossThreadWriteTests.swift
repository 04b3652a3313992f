import Foundation
import Testing

@testable import ObsTraceFormat

/// `cross-thread-write` says each object's numbers at that object's site: a fresh-clone try-out's G13, where three
/// objects' `Counter.count` made one finding, "3 objects' Counter.count written from 120 threads", at the line of an
/// object written from 2 (the 120 threads' writes were at another line, not named). And writes that all came from
/// the main actor's threads (an async main's first thread, then the main queue's) get no data-race hint.
@Suite("cross-thread-write says each object's threads at its own site")
struct CrossThreadWriteTests {
  /// `Counter.count` of three objects, first written on T1: #1 then on T2 and #2 then on T3, at
  /// `/src/App/main.swift:28` (stack 1); #3 then on T4 to T8, at line 37 (stack 2).
  static func objectsTrace() throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Counter" }, property: SyntheticDefinitions.computedProperty(root: "Counter", rootType: 1),
      stack: { [UInt64(0x100 * $0), 0x9000] })
    var trace = try SyntheticTrace("cross-thread-objects", definitions: definitions, stackLevel: 1)
    var first = trace.chunk(thread: 1, osThreadID: 42)
    for object in UInt32(1)...3 {
      trace.next(&first, .objectCreated, object: object, aux: 1)
      write(&trace, &first, object: object, stack: 3)
    }
    try trace.write(first, threadEnded: false)
    for (thread, object) in [(UInt32(2), UInt32(1)), (3, 2), (4, 3), (5, 3), (6, 3), (7, 3), (8, 3)] {
      var chunk = trace.chunk(thread: thread, osThreadID: Int32(40 + thread * 2), firstTime: trace.lastTime)
      write(&trace, &chunk, object: object, stack: object == 3 ? 2 : 1)
      try trace.write(chunk)
    }
    var symbols = SymbolTable()
    symbols.typeNames = [1: "Counter"]
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Counter", property: "count")]
    for (stack, line, function) in [
      (UInt64(1), UInt32(28), "App.Inventory.bump() -> ()"), (2, 37, "App.LockedCounter.bump() -> ()"),
      (3, 12, "App.setUp() -> ()"),
    ] {
      symbols.frames[0x100 * stack] = SymbolizedFrame(
        address: 0x100 * stack, function: function, file: "/src/App/main.swift", line: line, module: "fixture")
    }
    symbols.frames[0x9000] = SymbolizedFrame(
      address: 0x9000, function: "__libc_start_call_main", file: "", line: 0, module: "libc.so.6")
    try trace.write(symbols)
    return try trace.finish()
  }

  /// A whole write (willSet with its stack, didSet) of `object`'s `count`.
  static func write(_ trace: inout SyntheticTrace, _ chunk: inout ChunkEncoder, object: UInt32, stack: UInt32) {
    let time = max(trace.lastTime, chunk.firstTime) + 1000
    trace.append(
      &chunk, .willSet, at: time, flags: EventFlags.willSetDirect, object: object, key: 1, aux: 1, stack: stack)
    trace.append(&chunk, .didSet, at: time + 100, flags: EventFlags.changed, object: object, key: 1, aux: 1)
  }

  static func findings(_ path: String) throws -> [[String: Any]] {
    let json = Run.command(["report", path, "--format", "json"])
    #expect(json.status == 0, "\(json.standardError)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    let findings = try #require(object["findings"] as? [[String: Any]])
    return findings.filter { $0["kind"] as? String == "cross-thread-write" }
  }

  @Test("objects written from 2, 2 and 6 threads at two lines: one finding a line, each with its objects' numbers")
  func eachObjectAtItsSite() throws {
    let path = try Self.objectsTrace()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let findings = try Self.findings(path)
    let described = findings.map {
      "\($0["count"] as? Int ?? 0) | \($0["message"] as? String ?? "") | \($0["site"] as? String ?? "")"
    }
    #expect(
      described == [
        "2 | 2 objects' Counter.count written from 2 threads each | App/main.swift:28 (Inventory.bump())",
        "1 | 1 object's Counter.count written from 6 threads | App/main.swift:37 (LockedCounter.bump())",
      ], "\(findings)")
    #expect(
      findings.map { $0["evidence"] as? String ?? "" } == [
        "willSet events of each object's property recorded on 2 distinct threads each (T1, T2, T3 in all), none inside "
          + "another thread's write of it; the site is each object's first write from a thread other than its first "
          + "writer",
        "willSet events of the object's property recorded on 6 distinct threads (T1, T4, T5, T6, T7, T8), none inside "
          + "another thread's write of it; the site is its first write from a thread other than its first writer",
      ], "\(findings)")
    let report = Run.command(["report", path]).standardOutput
    #expect(
      report.contains(
        "info [cross-thread-write] 1 object's Counter.count written from 6 threads\n      at App/main.swift:37 (LockedCounter.bump())"
      ),
      "\(report)")
    #expect(
      report.contains(
        "info [cross-thread-write] 2 objects' Counter.count written from 2 threads each\n      at App/main.swift:28 (Inventory.bump())"
      ),
      "\(report)")
    let html = Paths.temporary("cross-thread.html")
    let page = Run.command(["report", path, "--format", "html", "-o", html])
    #expect(page.status == 0, "\(page.standardError)")
    let text = try String(contentsOfFile: html, encoding: .utf8)
    #expect(text.contains("1 object&#39;s Counter.count written from 6 threads"))
    #expect(text.contains("2 objects&#39; Counter.count written from 2 threads each"))
    #expect(
      text.contains("App/main.swift:37 (LockedCounter.bump())") && text.contains("App/main.swift:28 (Inventory.bump())")
    )
  }

  /// Store#1's `count` written on T1 (OS thread id = the process id: the process's first thread, which an async main
  /// leaves at its first await) and then on T2, which runs an `Observations` value on the main actor; with `worker`,
  /// on T3 too.
  static func mainActorTrace(worker: Bool) throws -> String {
    let definitions = SyntheticDefinitions(
      typeName: { _ in "App.Store" }, property: SyntheticDefinitions.computedProperty(root: "Store", rootType: 1),
      label: { _ in "App/main.swift:20" }, scope: { _ in ScopeDefinition(kind: .observations, label: 1, parent: 0) },
      stack: { [UInt64(0x100 * $0), 0x9000] })
    var trace = try SyntheticTrace("cross-thread-main", definitions: definitions, stackLevel: 1)
    var first = trace.chunk(thread: 1, osThreadID: 42)
    trace.next(&first, .objectCreated, object: 1, aux: 1)
    write(&trace, &first, object: 1, stack: 1)
    try trace.write(first, threadEnded: true)
    var main = trace.chunk(thread: 2, osThreadID: 43, firstTime: trace.lastTime)
    trace.next(&main, .scopeBegin, flags: ScopeKind.observations.rawValue, object: 7, key: 1, scope: 5)
    trace.next(&main, .observationsRun, flags: EventFlags.onMainActor, key: 7, scope: 5, aux: 9)
    trace.next(&main, .access, flags: EventFlags.accessInScope, object: 1, key: 1, scope: 5, aux: 1, depth: 1)
    trace.next(&main, .scopeEnd, scope: 5)
    write(&trace, &main, object: 1, stack: 2)
    try trace.write(main, threadEnded: true)
    if worker {
      var other = trace.chunk(thread: 3, osThreadID: 44, firstTime: trace.lastTime)
      write(&trace, &other, object: 1, stack: 2)
      try trace.write(other, threadEnded: true)
    }
    var symbols = SymbolTable()
    symbols.typeNames = [1: "Store"]
    symbols.propertyNames = [1: PropertyName(module: "App", type: "Store", property: "count")]
    for stack in UInt64(1)...2 {
      symbols.frames[0x100 * stack] = SymbolizedFrame(
        address: 0x100 * stack, function: "App.main() async -> ()", file: "/src/App/main.swift",
        line: UInt32(30 + stack), module: "fixture")
    }
    symbols.frames[0x9000] = SymbolizedFrame(
      address: 0x9000, function: "__libc_start_call_main", file: "", line: 0, module: "libc.so.6")
    try trace.write(symbols)
    return try trace.finish()
  }

  @Test("written only on the main actor's threads: no data-race hint; with another thread too, the hint as before")
  func mainActorThreads() throws {
    let path = try Self.mainActorTrace(worker: false)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let onMain = try Self.findings(path)
    #expect(onMain.count == 1, "\(onMain)")
    let hint = onMain.first?["hint"] as? String ?? ""
    #expect(!hint.contains("ThreadSanitizer"), "\(hint)")
    #expect(hint.contains("every thread that wrote it is one the main actor ran on"), "\(hint)")
    #expect((onMain.first?["evidence"] as? String ?? "").contains("each is one of the main actor's threads (T1, T2)"))
    let other = try Self.mainActorTrace(worker: true)
    defer { try? FileManager.default.removeItem(atPath: other) }
    let withWorker = try Self.findings(other)
    #expect(withWorker.count == 1, "\(withWorker)")
    #expect((withWorker.first?["hint"] as? String ?? "").contains("ThreadSanitizer can tell"), "\(withWorker)")
    let evidence = withWorker.first?["evidence"] as? String ?? ""
    #expect(evidence.contains("(T1, T2, T3)") && !evidence.contains("main actor"), "\(evidence)")
  }
}
