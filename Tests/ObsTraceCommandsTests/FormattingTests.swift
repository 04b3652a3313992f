import ObsTraceAnalysis
import ObsTraceFormat
import ObsTraceTestSupport
import Testing

@testable import ObsTraceCommands

@Suite("Formatting")
struct FormattingTests {
  /// What `milliseconds` printed before it took integer arithmetic: the double, rounded to 3 decimals.
  func throughDouble(_ nanoseconds: UInt64) -> String { Formatting.fixed(Double(nanoseconds) / 1e6, 3) }

  @Test("milliseconds are printed as the double rounded to three decimals always printed them, ties included")
  func millisecondsAsBefore() {
    var cases: [UInt64] = [0, 1, 499, 500, 501, 999, 1000, 1_000_500, 1_234_500, 999_999_500, 1 << 50, (1 << 50) + 500]
    let bases: [UInt64] = [0, 1_000_000, 123_456_789_000, 86_400_000_000_000, (1 << 50) - 10_000]
    for base in bases {
      for remainder in UInt64(0)..<2000 { cases.append(base + remainder) }
    }
    var generator = SeededGenerator()
    for _ in 0..<20_000 { cases.append(UInt64.random(in: 0...(1 << 52), using: &generator)) }
    for nanoseconds in cases {
      #expect(
        Formatting.milliseconds(nanoseconds) == throughDouble(nanoseconds),
        "\(nanoseconds) ns, OBSTRACE_TEST_SEED=\(generator.seed)")
    }
  }
}

@Suite("Completeness")
struct CompletenessTests {
  @Test(
    "events of threads that could not get a ring make a trace incomplete (what check requires), said with their count")
  func ringless() {
    var trace = AnalysisReport.Trace(
      path: "t.trc", events: 10, threads: 1, droppedEvents: 0, truncated: false, damage: [], durationNanoseconds: 1,
      backtraces: "writes", symbolized: true)
    #expect(TraceInput.completeness(trace).complete)
    trace.ringless = 200
    let (text, complete) = TraceInput.completeness(trace)
    #expect(!complete)
    #expect(text.contains("200 events not recorded (threads that could not get a ring"), "\(text)")
  }

  @Test("events of signal handlers that interrupted the recorder make a trace incomplete, said with their count")
  func signalHandlerEvents() {
    var trace = AnalysisReport.Trace(
      path: "t.trc", events: 10, threads: 1, droppedEvents: 0, truncated: false, damage: [], durationNanoseconds: 1,
      backtraces: "writes", symbolized: true)
    trace.signalHandlerEvents = 6
    let (text, complete) = TraceInput.completeness(trace)
    #expect(!complete)
    #expect(
      text == "INCOMPLETE: 6 events from signal handlers not recorded (a handler that interrupted the recorder on its "
        + "thread)", "\(text)")
    #expect(trace.lostEvents)
  }

  @Test("symbolize's two times of a binary modified in the second the recording began differ as printed")
  func timesApart() {
    let began: UInt64 = 1_795_000_000 * 1_000_000_000 + 201_000_000
    let (after, before) = BinaryChanges.utcApart(began + 533_000_000, began)
    #expect(after != before)
    #expect(after.hasSuffix(".734 UTC") && before.hasSuffix(".201 UTC"), "\(after) \(before)")
    let (later, earlier) = BinaryChanges.utcApart(began + 1_500, began)
    #expect(later.hasSuffix(".201001 UTC") && earlier.hasSuffix(".201000 UTC"), "\(later) \(earlier)")
    // A second apart: as before, to the second.
    let (next, first) = BinaryChanges.utcApart(began + 1_000_000_000, began)
    #expect(!next.contains(".") && !first.contains("."))
  }

  @Test(
    "top-level code's function is said as such in a site, whatever its symbol: main, Module_main, async_Main's pieces")
  func topLevelCode() {
    for name in ["main", "obstrace_demo_main", "async_Main", "async_MainTY5_", "async_MainTQ0_", "async_MainTY10_"] {
      #expect(SiteFormatting.shortFunction(name) == "top-level code", "\(name)")
    }
    #expect(SiteFormatting.shortFunction("closure #1 () -> () in obstrace_demo_main") == "closure #1 in top-level code")
    for name in ["Demo.main() -> ()", "async_MainTu", "Demo.Store.reload() -> ()", "_main", "my-main"] {
      #expect(SiteFormatting.shortFunction(name) != "top-level code", "\(name)")
    }
  }

  /// Names as the toolchain's demangler writes them (`swiftc -c -g` of such declarations, `nm | swift demangle`).
  @Test(
    "a site's function has one label per parameter, whatever its types hold; no private discriminator; a defer is said in its function"
  )
  func parameterLabels() {
    let cases = [
      // H17: the comma of `<A, Swift.Int>` began a third label.
      "KeyPaths.bump<A where A: AnyObject>(A, Swift.ReferenceWritableKeyPath<A, Swift.Int>) -> ()":
        "bump<A where A: AnyObject>(_:_:)",
      "a.f(_: [Swift.String : Swift.Int], pair: (Swift.Int, Swift.Int), then: (Swift.Int, Swift.String) -> (), r: Swift.Result<Swift.Int, Swift.Error>) -> Swift.Int":
        "f(_:pair:then:r:)",
      "a.g(inout Swift.Int, Swift.Int...) -> ()": "g(_:_:)",
      "(extension in a):Swift.Array<A where A == Swift.Int>.sum([Swift.Int : [Swift.String]]) -> ()":
        "Array<A where A == Swift.Int>.sum(_:)",
      "Demo.apply(_: (Swift.Int) -> Swift.Int, times: Swift.Int) -> ()": "apply(_:times:)",
      "Demo.render(model: Demo.Model) -> ()": "render(model:)",
      "Demo.Store.reload() -> ()": "Store.reload()",
      "a.S.subscript.getter : (Swift.Int, Swift.Int) -> Swift.Int": "S.subscript.getter",
      // Private declarations: the file's discriminator says nothing to the reader.
      "a.(helper in _EFF83A1F47B777EA672D48C97C71346F)(x: Swift.Int) -> ()": "helper(x:)",
      "a.S.(_foo in _EFF83A1F47B777EA672D48C97C71346F).didset : Swift.Int": "S._foo.didset",
      "closure #1 () -> () in a.(helper in _EFF83A1F47B777EA672D48C97C71346F)(x: Swift.Int) -> ()":
        "closure #1 in helper(x:)",
      // N7: `$defer #1 ()` before.
      "$defer #1 () -> () in Witness.withDefer() -> ()": "defer #1 in withDefer()",
      "$defer #2 () -> () in closure #1 () -> () in Demo.Store.save(to: Swift.String) -> ()":
        "defer #2 in closure #1 in Store.save(to:)",
      // Effects after the parameters (sites18's note): before, the parameters' types were printed,
      // `run(_: Swift.Int, b: [Swift.String : Swift.Int]) async`.
      "Demo.run(_: Swift.Int, b: [Swift.String : Swift.Int]) async -> ()": "run(_:b:)",
      "Demo.save(to: Swift.String) throws -> ()": "save(to:)",
      "Demo.both((Swift.Int, Swift.Int)) async throws -> Swift.Int": "both(_:)",
      "Demo.typed(Swift.Int) throws(Demo.E) -> Swift.Int": "typed(_:)",
      "Demo.asyncTyped(Swift.Int) async throws(Demo.E) -> ()": "asyncTyped(_:)",
      "Demo.gen<A where A: Swift.Error>(A) throws(A) -> ()": "gen<A where A: Swift.Error>(_:)",
      "Demo.re(() throws -> ()) throws -> ()": "re(_:)",
      "Demo.S.m(() async throws -> Swift.Int) async throws -> Swift.String": "S.m(_:)",
      "(1) suspend resume partial function for Demo.S.m(() async throws -> Swift.Int) async throws -> Swift.String":
        "S.m(_:)",
      "closure #1 () async -> () in Demo.run(_: Swift.Int, b: [Swift.String : Swift.Int]) async -> ()":
        "closure #1 in run(_:b:)",
      "Demo.Counter.withMutation<A, B>(keyPath: Swift.KeyPath<Demo.Counter, A>, _: () throws -> B) throws -> B":
        "Counter.withMutation<A, B>(keyPath:_:)",
      "Demo.main() async -> ()": "main()",
    ]
    for (name, short) in cases {
      #expect(SiteFormatting.shortFunction(name) == short, "\(name)")
    }
  }

  /// A frame the binary gives no line (code inlined from another module whose definition was not found) says so,
  /// not `<compiler-generated>:0` under the function's module (a fresh-clone try-out's J4).
  @Test("a site with no line says 'line unknown'; a site with a line is placed")
  func lineUnknown() {
    var frame = SymbolizedFrame(
      address: 1, function: "Screens.retitle(Catalog.Model, Swift.String) -> ()", file: "<compiler-generated>", line: 0)
    #expect(SiteFormatting.describe(frame) == "retitle(_:_:) (line unknown)")
    frame.file = "/src/Screens/ViewModels.swift"
    frame.line = 56
    #expect(SiteFormatting.describe(frame) == "Screens/ViewModels.swift:56 (retitle(_:_:))")
  }
}
