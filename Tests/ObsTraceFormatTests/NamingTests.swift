import Testing

@testable import ObsTraceFormat

@Suite("Names")
struct NamingTests {
  @Test(
    "reflected type names lose their modules",
    arguments: [
      ("Demo.Model", "Model"),
      ("Demo.Outer.Inner", "Outer.Inner"),
      ("Fixtures.Box<Swift.Int>", "Box<Int>"),
      ("Fixtures.Pair<Swift.String, Demo.Model>", "Pair<String, Model>"),
      ("Model", "Model"),
    ])
  func removingModules(reflected: String, display: String) {
    #expect(TraceDefinitions.removingModules(reflected) == display)
  }

  @Test(
    "a call site is labelled Module/File.swift:line, as #fileID:#line would say it",
    arguments: [
      ("Demo.updateValue<A>(of: A) -> ()", "Demo/main.swift:49"),
      ("closure #1 () -> () in Demo.Store.reload() -> ()", "Demo/main.swift:49"),
      ("(3) suspend resume partial function for Demo.guide() async -> ()", "Demo/main.swift:49"),
      ("obstrace_demo_main", "obstrace_demo/main.swift:49"),
      // Closures in top-level code (a Thread's block, a Task's body): their context is the module.
      ("closure #8 in app", "app/main.swift:49"),
      ("closure #1 @Sendable () async -> () in app", "app/main.swift:49"),
      ("(1) suspend resume partial function for closure #1 @Sendable () async -> () in app", "app/main.swift:49"),
      ("implicit closure #2 () -> Swift.Int in closure #1 () -> () in app", "app/main.swift:49"),
    ])
  func callSiteLabel(function: String, label: String) {
    let frame = SymbolizedFrame(address: 1, function: function, file: "/src/Demo/main.swift", line: 49)
    #expect(SiteFilter.callSiteLabel(frame) == label)
  }

  @Test("without symbols a property keeps a stable, honest fallback name")
  func fallbackName() {
    var definitions = TraceDefinitions()
    definitions.types[1] = "Demo.Model"
    definitions.properties[3] = PropertyDefinition(
      rootType: 1, keyPathDescription: "\\Model.<computed 0x0000560843719a50 (Int)>", getterAddress: 0x5608_4371_9a50)
    #expect(definitions.propertyName(3) == "Model.<Int #3>")
    definitions.symbols.propertyNames[3] = PropertyName(module: "Demo", type: "Model", property: "count")
    #expect(definitions.propertyName(3) == "Model.count")
  }

  @Test("a generic's property is named with its specialization; its short name is the property's own")
  func specializedName() {
    var definitions = TraceDefinitions()
    definitions.types = [
      1: "Demo.Box<Swift.Int>", 2: "Demo.Outer<Demo.Item>.Inner", 3: "Demo.Model", 4: "Demo.Pair<A>",
    ]
    for id: UInt32 in 1...4 {
      definitions.properties[id] = PropertyDefinition(rootType: id, keyPathDescription: "", getterAddress: UInt64(id))
    }
    definitions.symbols.propertyNames = [
      1: PropertyName(module: "Demo", type: "Box", property: "value"),
      2: PropertyName(module: "Demo", type: "Outer.Inner", property: "count"),
      3: PropertyName(module: "Demo", type: "Model", property: "count"),
      // A root type that is not a specialization of the symbol's type keeps the symbol's name.
      4: PropertyName(module: "Demo", type: "Other", property: "count"),
    ]
    #expect(
      (1...4).map { definitions.propertyName($0) } == [
        "Box<Int>.value", "Outer<Item>.Inner.count", "Model.count", "Other.count",
      ])
    #expect((1...4).map { definitions.shortPropertyName($0) } == ["value", "count", "count", "count"])
    // Without symbols: what follows the type, whose generic arguments may hold dots.
    definitions.types[5] = "Demo.Box<Demo.Item.Kind>"
    definitions.properties[5] = PropertyDefinition(
      rootType: 5, keyPathDescription: "\\Box.<computed 0x1 (Int)>", getterAddress: 0)
    #expect(definitions.propertyName(5) == "Box<Item.Kind>.<Int #5>")
    #expect(definitions.shortPropertyName(5) == "<Int #5>")
  }

  @Test("types of one name in two modules are named with their modules; a unique name is not")
  func sameNameInTwoModules() {
    var definitions = TraceDefinitions()
    definitions.defineType(1, "ModA.Model")
    definitions.defineType(3, "ModA.Solo")
    #expect(definitions.typeName(1) == "Model")
    definitions.defineType(2, "ModB.Model")
    #expect((1...3).map { definitions.typeName($0) } == ["ModA.Model", "ModB.Model", "Solo"])
    #expect((1...3).map { definitions.qualifyingModule(ofType: $0) } == ["ModA", "ModB", nil])
    for id: UInt32 in 1...3 {
      definitions.defineProperty(
        id, PropertyDefinition(rootType: id, keyPathDescription: "\\Model.<computed 0x1 (Int)>", getterAddress: 0))
    }
    // Without symbols: the type as qualified, and what follows it.
    #expect(definitions.propertyName(1) == "ModA.Model.<Int #1>")
    #expect(definitions.shortPropertyName(1) == "<Int #1>")
    definitions.symbols.propertyNames = [
      1: PropertyName(module: "ModA", type: "Model", property: "count"),
      2: PropertyName(module: "ModB", type: "Model", property: "count"),
      3: PropertyName(module: "ModA", type: "Solo", property: "value"),
    ]
    #expect((1...3).map { definitions.propertyName($0) } == ["ModA.Model.count", "ModB.Model.count", "Solo.value"])
    #expect((1...3).map { definitions.shortPropertyName($0) } == ["count", "count", "value"])
    #expect((1...3).map { definitions.unqualifiedPropertyName($0) } == ["Model.count", "Model.count", nil])
    #expect((1...3).map { definitions.qualifyingModule(ofProperty: $0) } == ["ModA", "ModB", nil])
  }

  @Test("the symbol table qualifies a type of a name two modules declare before the other type is defined")
  func sameNameFromSymbols() {
    var definitions = TraceDefinitions()
    definitions.symbols.propertyNames = [
      1: PropertyName(module: "ModA", type: "Model", property: "count"),
      2: PropertyName(module: "ModB", type: "Model", property: "count"),
      3: PropertyName(module: "ModA", type: "Solo", property: "value"),
    ]
    definitions.defineType(1, "ModA.Model")
    definitions.defineType(3, "ModA.Solo")
    #expect(definitions.typeName(1) == "ModA.Model")
    #expect(definitions.typeName(3) == "Solo")
  }

  @Test("types the module does not tell apart are named by their whole recorded names")
  func sameNameInOneModule() {
    var definitions = TraceDefinitions()
    definitions.defineType(1, "Shelf.Box<ModA.Item>")
    definitions.defineType(2, "Shelf.Box<ModB.Item>")
    definitions.defineType(3, "Shelf.Box<Swift.Int>")
    #expect(
      (1...3).map { definitions.typeName($0) } == ["Shelf.Box<ModA.Item>", "Shelf.Box<ModB.Item>", "Box<Int>"])
  }

  @Test("the site of a stack is its first frame of user code")
  func site() {
    var definitions = TraceDefinitions()
    definitions.stacks[1] = [1, 2, 3, 4]
    definitions.symbols.frames[1] = SymbolizedFrame(
      address: 1, function: "static ObsTraceRecorder.StackCapture.current() -> Swift.UInt32")
    definitions.symbols.frames[2] = SymbolizedFrame(address: 2, function: "Demo.Model.items.modify : [Swift.Int]")
    definitions.symbols.frames[3] = SymbolizedFrame(
      address: 3, function: "Demo.Store.reload() -> ()", file: "/src/Store.swift", line: 12, module: "demo")
    #expect(definitions.site(ofStack: 1)?.line == 12)
    #expect(definitions.site(ofStack: 99) == nil)
    // Top-level code of an executable is `<module>_main`: the user's code, not the runtime's.
    definitions.stacks[2] = [1, 4]
    definitions.symbols.frames[4] = SymbolizedFrame(
      address: 4, function: "obstrace_demo_main", file: "/src/main.swift", line: 64)
    #expect(definitions.site(ofStack: 2)?.line == 64)
  }

  @Test(
    "frames are machinery or the user's code",
    arguments: [
      ("static ObsTraceRecorder.StackCapture.current(minimumDepth: Swift.Int32) -> Swift.UInt32", false),
      ("closure #1 () -> () in ObsTraceRecorder.TracedTracking.withObservationTracking<A>(_:)", false),
      ("Demo.Model.items.modify : [Swift.Int]", false),
      ("key path getter for Demo.Model.count : Swift.Int : Demo.Model", false),
      ("partial apply forwarder for closure #3 () -> () in Demo.run() -> ()", false),
      ("Observation.ObservationRegistrar.willSet<A, B>(_: A, keyPath: Swift.KeyPath<A, B>) -> ()", false),
      ("swift_job_run", false),
      // The toolchain's libraries, by their modules: in a static executable no library name says whose they are.
      (
        "FoundationEssentials.JSONDecoder.decode<A where A: Swift.Decodable>(_: A.Type, from: Foundation.Data) throws -> A",
        false
      ),
      ("closure #1 () -> () in _StringProcessing.Regex.firstMatch(in: Swift.String) throws -> ()", false),
      (
        "function signature specialization <Arg[2] = Dead> of static ObsTraceRecorder.TrackingScopes.begin(_:_:)", false
      ),
      (
        "generic specialization <Demo.Model, Swift.Int> of ObsTraceRecorder.TracingRegistrar.willSet<A, B>(_:keyPath:)",
        false
      ),
      ("generic specialization <Swift.Int> of Demo.render<A>(_: A) -> ()", true),
      ("closure #3 () -> () in ObsTraceRecorderTests.RecorderTests.backtraceLevels() throws -> ()", true),
      ("Demo.Store.reload() -> ()", true),
      ("obstrace_demo_main", true),
      ("(3) suspend resume partial function for Demo.guide() async -> ()", true),
      ("(1) await resume partial function for ObsTraceRecorder.Observations.Iterator.next(isolation:)", false),
    ])
  func machinery(function: String, isUserCode: Bool) {
    #expect(SiteFilter.isMachinery(SymbolizedFrame(address: 1, function: function)) == !isUserCode)
  }

  @Test(
    "an accessor is machinery in the macro's buffer or without a file, the user's in a source file; ObsTrace's own C header is never the user's",
    arguments: [
      ("App.Temp.fahrenheit.setter : Swift.Double", "/p/Sources/App/main.swift", true),
      ("App.Temp.subscript.setter : (Swift.Double) -> Swift.Double", "/p/Sources/App/main.swift", true),
      ("closure #1 () -> Swift.String in App.Screen.label.getter : Swift.String", "/p/Sources/App/main.swift", true),
      (
        "App.Temp.celsius.setter : Swift.Double", "/tmp/@__swiftmacro_3App4TempC7celsius18ObservationTrackedfMa_.swift",
        false
      ),
      ("App.Temp.celsius.modify : Swift.Double", "", false),
      ("App.Temp.celsius.getter : Swift.Double", "<compiler-generated>", false),
      ("key path getter for App.Temp.celsius : App.Temp", "/p/Sources/App/main.swift", false),
      (
        "protocol witness for App.Priced.price.modify : Swift.Int in conformance App.Item : App.Priced in App",
        "/p/Sources/App/main.swift", false
      ),
      ("App_main", "/p/Sources/App/main.swift", true),
      ("App_main", "/p/obstrace/Sources/CObsTraceRing/include/CObsTraceRing.h", false),
    ])
  func machineryByFile(function: String, file: String, isUserCode: Bool) {
    let frame = SymbolizedFrame(address: 1, function: function, file: file, line: 3, module: "app")
    #expect(SiteFilter.isMachinery(frame) == !isUserCode)
  }

  @Test(
    "the runtime's C++ frame is machinery by its library's name: a shared library's, or the archive a static executable's code is of; named by the executable alone it is not told",
    arguments: [
      ("libswift_Concurrency.so", true), ("libswift_Concurrency.a in App", true), ("libdispatch.a in App", true),
      ("App", false),
    ])
  func machineryByLibrary(module: String, isMachinery: Bool) {
    let frame = SymbolizedFrame(
      address: 1, function: "_ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE", module: module)
    #expect(SiteFilter.isMachinery(frame) == isMachinery)
  }
}

@Suite("Labels named from a stack")
struct CallerLabelNameTests {
  static let recorder = SymbolizedFrame(
    address: 1, function: "ObsTraceRecorder.RegistrarExtent.recordAccess()", file: "/p/RegistrarExtent.swift", line: 3,
    module: "app")
  static let getter = SymbolizedFrame(
    address: 2, function: "App.Model.value.getter : Swift.Int", file: "/p/@__swiftmacro_x.swift", line: 7,
    module: "app")
  static let closure = SymbolizedFrame(
    address: 3, function: "closure #1 @Sendable () -> Swift.Int in App.watch(App.Model) async -> ()",
    file: "/p/Sources/App/Loop.swift", line: 6, module: "app")
  static func observation(_ function: String) -> SymbolizedFrame {
    SymbolizedFrame(address: 4, function: function, module: "libswiftObservation.so")
  }
  static let sequence = observation("Observation.Observations.Iterator.trackEmission(isolation:state:emit:)")
  static let tracking = observation("Observation.withObservationTracking<A>(_:onChange:) -> A")
  static let caller = SymbolizedFrame(
    address: 5, function: "App.ListView.render() -> Swift.Int", file: "/p/Sources/App/ListView.swift", line: 22,
    module: "app")
  static let runtime = SymbolizedFrame(address: 6, function: "swift_job_run", module: "libswift_Concurrency.so")

  @Test(
    "the caller of Observation's tracking when it is on the stack; else the tracked closure, said as such; else nothing",
    arguments: [
      ([recorder, getter, closure, tracking, caller, runtime], "App/ListView.swift:22"),
      ([recorder, getter, closure, sequence, tracking, runtime], "App/Loop.swift:6 (Observations closure)"),
      ([recorder, getter, closure, tracking, runtime], "App/Loop.swift:6 (tracked closure)"),
      // A stack without Observation's frames (ObsTrace's own scopes, older traces): its first user frame.
      ([recorder, caller, runtime], "App/ListView.swift:22"),
      ([recorder, getter, sequence, runtime], nil),
    ] as [([SymbolizedFrame], String?)])
  func named(frames: [SymbolizedFrame], name: String?) {
    #expect(SiteFilter.callerLabelName(frames) == name)
  }
}
