import Testing

@testable import ObsTraceFormat

/// Private declarations' names (`PrivateNames`) and how a trace's definitions print private types: `Model` alone, or
/// `Model (PrivA.swift)` when another type prints as `Model` too.
@Suite("Private names")
struct PrivateNamesTests {
  @Test("MD5 gives RFC 1321's digests, and Swift's discriminator of a file")
  func digests() {
    #expect(MD5.hexDigest([]) == "D41D8CD98F00B204E9800998ECF8427E")
    #expect(MD5.hexDigest(Array("abc".utf8)) == "900150983CD24FB0D6963F7D28E17F72")
    #expect(
      MD5.hexDigest(Array(String(repeating: "1234567890", count: 8).utf8)) == "57EDF4A22BE3C955AC49DA2E2107B67A")
    // The try-out's program (module Odd): `(Model in _8AAE29D379AF71E102DEC2B2F8DD34F5)` in PrivA.swift.
    #expect(PrivateNames.discriminator(ofFile: "PrivA.swift", module: "Odd") == "8AAE29D379AF71E102DEC2B2F8DD34F5")
    #expect(PrivateNames.discriminator(ofFile: "PrivB.swift", module: "Odd") == "11E42571F2B124391B2600941C19C54C")
  }

  @Test("a private declaration's name loses its discriminator, and names its file")
  func spelling() {
    let a = "8AAE29D379AF71E102DEC2B2F8DD34F5"
    #expect(PrivateNames.withoutDiscriminators("(Model in _\(a)).count") == "Model.count")
    #expect(PrivateNames.withoutDiscriminators("Counter.(secret in _\(a))") == "Counter.secret")
    #expect(PrivateNames.withoutDiscriminators("(Outer in _\(a)).(Inner in _\(a))") == "Outer.Inner")
    #expect(PrivateNames.withoutDiscriminators("Box<(Item in _\(a))>") == "Box<Item>")
    #expect(PrivateNames.withoutDiscriminators("Model.count") == "Model.count")
    #expect(PrivateNames.withoutDiscriminators("(odd in _XYZ)") == "(odd in _XYZ)")
    #expect(PrivateNames.discriminator(in: "(Model in _\(a))") == Substring(a))
    #expect(
      PrivateNames.file(of: a, module: "Odd", among: ["Odd/main.swift", "/src/Odd/PrivA.swift"]) == "PrivA.swift")
    #expect(PrivateNames.file(of: a, module: "Odd", among: ["Odd/PrivB.swift"]) == nil)
  }

  /// Two private `Model`s (PrivA.swift, PrivB.swift of module Odd) and an internal `Counter` with a private member, as
  /// a trace defines them; `frames` the files its stacks name.
  static func definitions(bothModels: Bool, files: [String]) -> TraceDefinitions {
    let a = PrivateNames.discriminator(ofFile: "PrivA.swift", module: "Odd")
    let b = PrivateNames.discriminator(ofFile: "PrivB.swift", module: "Odd")
    var definitions = TraceDefinitions()
    var symbols = SymbolTable()
    for (index, file) in files.enumerated() {
      let address = UInt64(0x1000 + index)
      symbols.frames[address] = SymbolizedFrame(address: address, function: "f", file: file, line: 3, module: "Odd")
    }
    definitions.symbols = symbols
    definitions.defineType(1, "Odd.(unknown context at $5581a0).Model")
    definitions.defineType(3, "Odd.Counter")
    definitions.defineProperty(1, PropertyDefinition(rootType: 1, keyPathDescription: "", getterAddress: 1))
    definitions.defineProperty(3, PropertyDefinition(rootType: 3, keyPathDescription: "", getterAddress: 3))
    definitions.symbols.propertyNames[1] = PropertyName(module: "Odd", type: "(Model in _\(a))", property: "count")
    definitions.symbols.propertyNames[3] = PropertyName(
      module: "Odd", type: "Counter", property: "(secret in _\(a))")
    if bothModels {
      definitions.defineType(2, "Odd.(unknown context at $5581b0).Model")
      definitions.defineProperty(2, PropertyDefinition(rootType: 2, keyPathDescription: "", getterAddress: 2))
      definitions.symbols.propertyNames[2] = PropertyName(module: "Odd", type: "(Model in _\(b))", property: "count")
    }
    return definitions
  }

  @Test("a private type is named alone, or with its file when another type has its name; members without more")
  func privateTypeNames() {
    let one = Self.definitions(bothModels: false, files: ["Odd/PrivA.swift"])
    #expect(one.typeName(1) == "Model")
    #expect(one.propertyName(1) == "Model.count")
    #expect(one.propertyName(3) == "Counter.secret")
    #expect(one.shortPropertyName(3) == "secret")
    let a = PrivateNames.discriminator(ofFile: "PrivA.swift", module: "Odd")
    #expect(one.earlierPropertyName(1) == "(Model in _\(a)).count")
    let two = Self.definitions(bothModels: true, files: ["Odd/main.swift", "Odd/PrivA.swift", "/src/Odd/PrivB.swift"])
    #expect(two.typeName(1) == "Model (PrivA.swift)")
    #expect(two.typeName(2) == "Model (PrivB.swift)")
    #expect(two.propertyName(2) == "Model (PrivB.swift).count")
    #expect(two.shortPropertyName(2) == "count")
    #expect(two.typeName(3) == "Counter")
    // No frame names PrivB.swift (a trace without stacks): its discriminator stands for its file.
    let unknown = Self.definitions(bothModels: true, files: ["Odd/PrivA.swift"])
    #expect(unknown.propertyName(1) == "Model (PrivA.swift).count")
    let b = PrivateNames.discriminator(ofFile: "PrivB.swift", module: "Odd")
    #expect(unknown.propertyName(2) == "Model (file \(b.prefix(8))).count")
  }

  @Test("a private type defined before its property's symbol still gets its file, whatever the order of chunks")
  func order() {
    let a = PrivateNames.discriminator(ofFile: "PrivA.swift", module: "Odd")
    let b = PrivateNames.discriminator(ofFile: "PrivB.swift", module: "Odd")
    var definitions = TraceDefinitions()
    // The symbols chunk first (as `obstrace symbolize` writes it), then the types, then the properties.
    var symbols = SymbolTable()
    symbols.frames[1] = SymbolizedFrame(address: 1, function: "f", file: "Odd/PrivA.swift", line: 3, module: "Odd")
    symbols.frames[2] = SymbolizedFrame(address: 2, function: "g", file: "Odd/PrivB.swift", line: 3, module: "Odd")
    symbols.propertyNames[1] = PropertyName(module: "Odd", type: "(Model in _\(a))", property: "count")
    symbols.propertyNames[2] = PropertyName(module: "Odd", type: "(Model in _\(b))", property: "count")
    definitions.symbols = symbols
    definitions.defineType(1, "Odd.(unknown context at $5581a0).Model")
    definitions.defineType(2, "Odd.(unknown context at $5581b0).Model")
    #expect(definitions.typeName(1) == "Model")
    definitions.defineProperty(1, PropertyDefinition(rootType: 1, keyPathDescription: "", getterAddress: 1))
    definitions.defineProperty(2, PropertyDefinition(rootType: 2, keyPathDescription: "", getterAddress: 2))
    #expect(definitions.typeName(1) == "Model (PrivA.swift)")
    #expect(definitions.typeName(2) == "Model (PrivB.swift)")
  }
}
