/// Everything a reader has learned so far about the ids that events carry, and the names resolved for them.
public struct TraceDefinitions: Sendable {
  /// Type ids → the type as the recorder reflected it (`Module.Type`). Set through `defineType`, which keeps its
  /// display name too.
  public var types: [UInt32: String] = [:]
  /// Type ids → `typeName`'s name, worked out once as the type is defined (`defineType`): names are asked for per
  /// object and per edge, and `removingModules` walks the name.
  private var typeDisplayNames: [UInt32: (reflected: String, display: String)] = [:]
  public var properties: [UInt32: PropertyDefinition] = [:]
  public var labels: [UInt32: String] = [:]
  /// Object serial → type id. Serials are dense (numbered per process) and the decoder looks one up for nearly every
  /// event: an array, not a hash table.
  public var objects = DenseTable<UInt32>()
  public var stacks: [UInt32: [UInt64]] = [:]
  /// Scopes as defined by the chunks read, the most recent `retainedScopes` of them: the recorder defines one scope
  /// per run, so keeping all would grow with the trace's length; the replay takes scopes from their events.
  public private(set) var scopes = ScopeTable(retaining: retainedScopes)
  public static let retainedScopes = 1 << 16
  public var symbols = SymbolTable() {
    didSet {
      typeNamesInSeveralModules = Self.typeNamesInSeveralModules(symbols)
      if !typeNamesInSeveralModules.isEmpty { hasSharedNames = true }
      if hasPrivateTypes || hasSharedNames { nameSharedTypes() }
    }
  }
  /// Whether a type defined is private or local (`(unknown context at $…)` in its reflected name): only then can two
  /// types print the same name and need their files (`nameSharedTypes`).
  private var hasPrivateTypes = false
  /// Private types whose display name another type has too, whose discriminator no property's symbol gave yet.
  private var unnamedPrivateTypes: Set<UInt32> = []
  /// A type id of each display name without modules (`Model`), the first defined: a second type of one of these
  /// names (`ModA.Model` and `ModB.Model`) sets `hasSharedNames`.
  private var typesByPlainName: [String: UInt32] = [:]
  /// Whether two types of the trace print the same name without their modules (`nameSharedTypes`).
  private var hasSharedNames = false
  /// The names of types (`Model`, `ListView.Model`, `Box` for `Box<Int>`) whose properties the symbol table says
  /// two modules declare: known when the trace is opened (the table is written last and read first), so a type
  /// defined before the other module's is qualified from the first line that names it (`timeline` prints as it
  /// reads).
  private var typeNamesInSeveralModules: Set<String> = []
  /// The types whose display name `nameSharedTypes` qualified with their module (`ModA.Model`), each with the name
  /// it has without it (`Model`).
  private var moduleQualifiedTypes: [UInt32: String] = [:]

  public init() {}

  /// Defines a type as a chunk states it (its reflected name), with its display name.
  public mutating func defineType(_ id: UInt32, _ reflected: String) {
    // Every chunk that uses a type restates it: the same name changes nothing.
    if types[id] == reflected { return }
    types[id] = reflected
    let plain = Self.removingModules(reflected)
    typeDisplayNames[id] = (reflected, plain)
    if let other = typesByPlainName[plain], other != id {
      hasSharedNames = true
    } else {
      typesByPlainName[plain] = id
    }
    if reflected.contains(Self.unknownContext) { hasPrivateTypes = true }
    if hasPrivateTypes || hasSharedNames { nameSharedTypes() }
  }

  static let unknownContext = "(unknown context at $"

  /// Defines a property as a chunk states it.
  public mutating func defineProperty(_ id: UInt32, _ property: PropertyDefinition) {
    properties[id] = property
    // A property of a private type that needs its file in its name and has none yet: its symbol may say it now.
    if unnamedPrivateTypes.contains(property.rootType) { nameSharedTypes() }
  }

  /// Gives each private type whose display name another type of the trace also has the name of its file:
  /// `Model (PrivA.swift)` and `Model (PrivB.swift)` for two `@Observable private final class Model` of two files,
  /// which would otherwise print as two `Model`s (and their properties as `(Model in _8AAE…).count`, the symbol's
  /// spelling). The file is known for certain, not guessed: a private declaration's discriminator in its properties'
  /// symbols (`(Model in _8AAE…)`) is the MD5 of its module's name and its file's base name
  /// (`PrivateNames.file(of:module:among:)`), checked against the files the trace's frames name. When none matches
  /// (a trace without stacks), the discriminator's first 8 digits stand for the file: `Model (file 8AAE29D3)`.
  /// A private type no other type shares a name with is printed by its name alone (`Model`). Then types whose
  /// names are still the same are qualified with their modules (`qualifyWithModules`). Called as types and symbols
  /// arrive; the names are those of the whole trace once both are read.
  private mutating func nameSharedTypes() {
    defer { qualifyWithModules() }
    unnamedPrivateTypes = []
    var byName: [String: [UInt32]] = [:]
    for (id, names) in typeDisplayNames {
      let plain = Self.removingModules(names.reflected)
      if typeDisplayNames[id]?.display != plain { typeDisplayNames[id]?.display = plain }
      byName[plain, default: []].append(id)
    }
    let shared = byName.values.filter { ids in
      ids.count > 1 && ids.contains { types[$0]?.contains(Self.unknownContext) == true }
    }
    guard !shared.isEmpty else { return }
    // Each private type's discriminator and module, from its properties' symbols.
    var discriminators: [UInt32: (discriminator: Substring, module: String)] = [:]
    for (id, name) in symbols.propertyNames {
      guard let root = properties[id]?.rootType, discriminators[root] == nil,
        let discriminator = PrivateNames.discriminator(in: name.type)
      else { continue }
      discriminators[root] = (discriminator, name.module)
    }
    var files: Set<String>?
    for ids in shared {
      for id in ids where types[id]?.contains(Self.unknownContext) == true {
        guard let (discriminator, module) = discriminators[id], let plain = typeDisplayNames[id]?.display else {
          unnamedPrivateTypes.insert(id)
          continue
        }
        if files == nil {
          var known = Set<String>()
          for frame in symbols.frames.values {
            known.insert(frame.file)
            for inlined in frame.inlined { known.insert(inlined.file) }
          }
          files = known
        }
        let file =
          PrivateNames.file(of: discriminator, module: module, among: files ?? [])
          ?? "file \(discriminator.prefix(8))"
        typeDisplayNames[id]?.display = "\(plain) (\(file))"
      }
    }
  }

  /// Qualifies with its module the display name of each type another type of the trace prints the same name as:
  /// `ModA.Model` and `ModB.Model` for two `@Observable public final class Model` of modules `ModA` and `ModB`,
  /// which would otherwise print as two `Model`s (their properties as two `Model.count`, and a graph drew them as
  /// one). The module is the first component of the recorded name (`String(reflecting:)`), known for certain. Where
  /// the module does not tell them apart (`Box<ModA.Item>` and `Box<ModB.Item>`, both `Shelf.Box<Item>`), the
  /// recorded name is printed whole (`Shelf.Box<ModA.Item>`). A name no other type has is printed as it was.
  private mutating func qualifyWithModules() {
    moduleQualifiedTypes = [:]
    guard hasSharedNames || hasPrivateTypes else { return }
    var byName: [String: [UInt32]] = [:]
    for (id, names) in typeDisplayNames { byName[names.display, default: []].append(id) }
    for (name, ids) in byName
    where ids.count > 1 || typeNamesInSeveralModules.contains(Self.withoutGenericArguments(name)) {
      var qualified: [UInt32: String] = [:]
      for id in ids {
        guard let reflected = typeDisplayNames[id]?.reflected, let dot = reflected.firstIndex(of: "."),
          dot > reflected.startIndex
        else { continue }
        qualified[id] = "\(reflected[..<dot]).\(name)"
      }
      let counts = Dictionary(qualified.values.map { ($0, 1) }, uniquingKeysWith: +)
      for (id, withModule) in qualified {
        guard let reflected = typeDisplayNames[id]?.reflected else { continue }
        if counts[withModule] == 1 {
          typeDisplayNames[id]?.display = withModule
        } else if reflected.contains(Self.unknownContext) {
          // A private type's recorded name holds an address of that run, never printed; one whose module does not
          // tell it apart is told apart by its file (`nameSharedTypes`), once its properties' symbols say it.
          continue
        } else {
          typeDisplayNames[id]?.display = reflected
        }
        moduleQualifiedTypes[id] = name
      }
    }
  }

  /// The names of types whose properties `symbols` says two modules declare (private types, named by their
  /// files, left out).
  static func typeNamesInSeveralModules(_ symbols: SymbolTable) -> Set<String> {
    var modules: [String: String] = [:]
    var shared: Set<String> = []
    for name in symbols.propertyNames.values where !PrivateNames.hasDiscriminator(name.type) && !name.module.isEmpty {
      if let module = modules[name.type] {
        if module != name.module { shared.insert(name.type) }
      } else {
        modules[name.type] = name.module
      }
    }
    return shared
  }

  /// The module that declares type `id` (the first component of its recorded name), when its display name is
  /// qualified with it because another type of the trace has the same name (`ModA` for `ModA.Model`); nil for a
  /// type whose name is unique.
  public func qualifyingModule(ofType id: UInt32) -> String? {
    guard moduleQualifiedTypes[id] != nil, let reflected = types[id], let dot = reflected.firstIndex(of: ".") else {
      return nil
    }
    return String(reflected[..<dot])
  }

  /// The module that declares property `id`'s type when the property's name is qualified with it
  /// (`qualifyingModule(ofType:)`): `ModA` for `ModA.Model.count`; nil for a property whose name is unique.
  public func qualifyingModule(ofProperty id: UInt32) -> String? {
    guard let root = properties[id]?.rootType, let module = qualifyingModule(ofType: root),
      propertyName(id).hasPrefix(module + ".")
    else { return nil }
    return module
  }

  /// Property `id`'s name without the module its type's name is qualified with (`Model.count` for
  /// `ModA.Model.count`), or nil when it has none: the name the user may write for it, which now names several.
  public func unqualifiedPropertyName(_ id: UInt32) -> String? {
    guard let module = qualifyingModule(ofProperty: id) else { return nil }
    return String(propertyName(id).dropFirst(module.count + 1))
  }

  /// Defines a scope as a chunk states it, forgetting the oldest one past `retainedScopes`.
  public mutating func defineScope(_ id: UInt32, _ scope: ScopeDefinition) {
    scopes.define(id, scope)
  }

  /// A type's display name: its recorded name without modules, qualified as its properties' names are: `Model`,
  /// `ListView.Model` (a nested type), `Box<Int>`, `Box<Shelf.Item>`. From the type's definition, which the recorder
  /// writes with the type's full name (`String(reflecting:)`, every trace version); the symbols chunk's display name
  /// (`String(describing:)`: `Model` for both `ListView.Model` and `DetailView.Model`, `Box<Item>`) only when the
  /// definition is not in the trace (a damaged trace).
  public func typeName(_ id: UInt32) -> String {
    if let reflected = types[id] {
      if let kept = typeDisplayNames[id], kept.reflected == reflected { return kept.display }
      return Self.removingModules(reflected)
    }
    if let name = symbols.typeNames[id] { return name }
    return "<type #\(id)>"
  }

  /// The name earlier builds of obstrace printed for type `id`: the symbols chunk's display name, which leaves out a
  /// nested type's outer types (`Model` for `ListView.Model`, `Box<Item>` for `Box<Shelf.Item>`), or the same as
  /// `typeName` when the trace has none. For what a baseline made by such a build calls a property.
  public func earlierTypeName(_ id: UInt32) -> String {
    symbols.typeNames[id] ?? typeName(id)
  }

  /// The display name of an object's type.
  public func typeName(ofObject serial: UInt32) -> String {
    guard let type = objects[serial] else { return "<unknown type>" }
    return typeName(type)
  }

  /// A property's display name, `Type.property`. Without symbols: `Type.<Int #3>`, stable within a trace. A generic
  /// type's property is named with its specialization, `Box<Int>.value`: the key path getter's symbol names the
  /// unspecialized type (`Box.value` for `Box<Int>` and `Box<String>` alike), the recorded root type does not.
  public func propertyName(_ id: UInt32) -> String {
    propertyName(id, typeName: { typeName($0) })
  }

  /// The name earlier builds of obstrace printed for property `id`, its type named by `earlierTypeName`
  /// (`Box<Item>.value` for `Box<Shelf.Item>.value`, `Outer.Inner.n` for `Outer<Int>.Inner.n`); `propertyName`'s for
  /// most properties.
  public func earlierPropertyName(_ id: UInt32) -> String {
    // A private type's or member's: its symbol's spelling, `(Model in _8AAE…).count` (builds before session 16).
    if let name = symbols.propertyNames[id],
      PrivateNames.hasDiscriminator(name.type) || PrivateNames.hasDiscriminator(name.property)
    {
      return name.qualified
    }
    return propertyName(id, typeName: { earlierTypeName($0) })
  }

  private func propertyName(_ id: UInt32, typeName: (UInt32) -> String) -> String {
    if let name = symbols.propertyNames[id] {
      // A private type's or member's symbol holds its file's discriminator, `(Model in _11E4…).(secret in _8AAE…)`:
      // printed as the type's display name (`Model`, or `Model (PrivB.swift)` when another type is a `Model`) and
      // the member's own (`secret`).
      guard PrivateNames.hasDiscriminator(name.type) || PrivateNames.hasDiscriminator(name.property) else {
        // A type whose name is qualified with its module (`ModA.Model`): its property too (`ModA.Model.count`),
        // when the symbol names that type (not a superclass that declares the property).
        if let root = properties[id]?.rootType, let plain = moduleQualifiedTypes[root],
          Self.withoutGenericArguments(plain) == name.type
        {
          let qualified = typeName(root)
          // `earlierPropertyName` passes the earlier builds' names, which are never qualified.
          if qualified != plain { return "\(qualified).\(name.property)" }
        }
        if let property = properties[id],
          let rootTypeName = specializedTypeName(property.rootType, of: name.type, typeName: typeName)
        {
          return "\(rootTypeName).\(name.property)"
        }
        return name.qualified
      }
      let member = PrivateNames.withoutDiscriminators(name.property)
      if PrivateNames.hasDiscriminator(name.type), let root = properties[id]?.rootType, types[root] != nil {
        return "\(typeName(root)).\(member)"
      }
      return "\(PrivateNames.withoutDiscriminators(name.type)).\(member)"
    }
    guard let property = properties[id] else { return "<property #\(id)>" }
    let valueType = Self.valueType(ofKeyPathDescription: property.keyPathDescription)
    return "\(typeName(property.rootType)).<\(valueType.isEmpty ? "property" : valueType) #\(id)>"
  }

  /// A property's name without its type: `value` for `Box<Int>.value`, `<Int #3>` for `Model.<Int #3>`.
  public func shortPropertyName(_ id: UInt32) -> String {
    if let name = symbols.propertyNames[id] { return PrivateNames.withoutDiscriminators(name.property) }
    let qualified = propertyName(id)
    // After the type's own name, which may hold dots of its own (`ModA.Model`, qualified with its module).
    if let root = properties[id]?.rootType, qualified.hasPrefix(typeName(root) + ".") {
      return String(qualified.dropFirst(typeName(root).count + 1))
    }
    // After the type's name, which may hold dots inside its generic arguments (`Box<Demo.Item>`).
    var depth = 0
    for index in qualified.indices {
      switch qualified[index] {
      case "<": depth += 1
      case ">": depth -= 1
      case "." where depth == 0: return String(qualified[qualified.index(after: index)...])
      default: break
      }
    }
    return qualified
  }

  /// The module that declares property `id`, when symbols name it.
  public func propertyModule(_ id: UInt32) -> String? {
    symbols.propertyNames[id]?.module
  }

  /// The display name of type `id` when it is a specialization of `unspecialized` (`Box<Int>` of `Box`,
  /// `Outer<Int>.Inner` of `Outer.Inner`); nil when it has no generic arguments or is another type.
  func specializedTypeName(_ id: UInt32, of unspecialized: String) -> String? {
    specializedTypeName(id, of: unspecialized, typeName: { typeName($0) })
  }

  /// `Box<Int>` → `Box`, `Outer<Int>.Inner` → `Outer.Inner`: a type's name without its generic arguments.
  static func withoutGenericArguments(_ name: String) -> String {
    var depth = 0
    var withoutArguments = ""
    for character in name {
      if character == "<" {
        depth += 1
      } else if character == ">" {
        depth -= 1
      } else if depth == 0 {
        withoutArguments.append(character)
      }
    }
    return withoutArguments
  }

  private func specializedTypeName(_ id: UInt32, of unspecialized: String, typeName: (UInt32) -> String) -> String? {
    guard types[id] != nil || symbols.typeNames[id] != nil else { return nil }
    let display = typeName(id)
    guard display.contains("<") else { return nil }
    var depth = 0
    var withoutArguments = ""
    for character in display {
      if character == "<" {
        depth += 1
      } else if character == ">" {
        depth -= 1
      } else if depth == 0 {
        withoutArguments.append(character)
      }
    }
    return withoutArguments == unspecialized ? display : nil
  }

  /// A label's text: a name, or a call site resolved by the symbol table; a name as `printable` says it.
  public func labelName(_ id: UInt32) -> String {
    symbols.labelNames[id] ?? labels[id].map(Self.printable) ?? "<label #\(id)>"
  }

  /// A scope's name as every command prints it, on one line and never as nothing: control characters escaped as
  /// `escapingControls` does, and a name that is empty or only blanks in quotes (`""`, `"   "`). Any other name is
  /// itself. `withObservationTracking(named:)` takes any string (the traced program is not refused anything); a name
  /// given to `check --max` or `timeline --scope` is the printed one.
  public static func printable(_ name: String) -> String {
    var blank = true
    for byte in name.utf8 where byte != 0x20 && !(0x09...0x0D).contains(byte) {
      blank = false
      break
    }
    let text = escapingControls(name)
    return blank ? "\"" + text + "\"" : text
  }

  /// `text` with what would act on a terminal or a line-based reader rather than be shown escaped: C0 and C1 control
  /// characters and DEL (a newline as `\n`, a carriage return `\r`, a tab `\t`, others as `\u{1B}`), and the
  /// characters that reorder text as it is shown (bidirectional embeddings, overrides and isolates: `\u{202E}`).
  /// The reader applies it to every string a trace holds but scope labels (kept as given, for lookups, and printed
  /// through `printable`): a type, property, function or file name with a newline would otherwise print a line of
  /// its own (a forged `::error` line in a CI log), an ESC would reach the terminal. Names a program can have have
  /// none of these: they are unchanged.
  public static func escapingControls(_ text: String) -> String {
    var plain = true
    for byte in text.utf8 where byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2 {
      plain = false
      break
    }
    guard !plain else { return text }
    var escaped = ""
    var changed = false
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x0A: escaped += "\\n"
      case 0x0D: escaped += "\\r"
      case 0x09: escaped += "\\t"
      case 0..<0x20, 0x7F..<0xA0, 0x202A...0x202E, 0x2066...0x2069:
        escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      default:
        escaped.unicodeScalars.append(scalar)
        continue
      }
      changed = true
    }
    return changed ? escaped : text
  }

  /// The resolved frames of a stack, outermost last; empty when the stack is unknown. An address where functions
  /// were inlined gives one frame per logical function (innermost first), as a debugger's backtrace does.
  public func frames(ofStack id: UInt32) -> [SymbolizedFrame] {
    guard let addresses = stacks[id] else { return [] }
    return addresses.flatMap { symbols.frames[$0]?.logicalFrames ?? [SymbolizedFrame(address: $0, function: "")] }
  }

  /// The first frame of a stack that is the user's code: outside ObsTrace, Observation, the runtime and the
  /// accessors the @Observable macro generates. Nil when no frame qualifies or symbols are missing.
  public func site(ofStack id: UInt32) -> SymbolizedFrame? {
    frames(ofStack: id).first { frame in
      !frame.function.isEmpty && !SiteFilter.isMachinery(frame)
    }
  }

  /// Where an object was created, from the stack recorded with its `objectCreated`: the first user frame that is
  /// not an initializer (the class's own `init`, which the macro's registrar initializer runs in) nor code the
  /// @Observable macro expanded; nil when none qualifies.
  public func creationSite(ofStack id: UInt32) -> SymbolizedFrame? {
    frames(ofStack: id).first { frame in
      guard !frame.function.isEmpty, !SiteFilter.isMachinery(frame), !frame.file.contains("@__swiftmacro_") else {
        return false
      }
      let function = SiteFilter.withoutQualifiers(Substring(frame.function))
      return !function.contains(".init(") && !function.contains(".__allocating_init(")
    }
  }

  /// How the write that `willSet` opens was made. Certain from the event's flags: `_modify` (the registrar's
  /// `willSet` called directly) against the registrar's `withMutation`. Between the macro's setter and an explicit
  /// `withMutation(keyPath:)`, which both call the registrar's `withMutation`, the stack decides: the frame that
  /// called the model's `withMutation` helper is the property's setter, or it is not. Without a stack (backtraces
  /// off) or symbols, `setOrWithMutation`; a version-1 trace did not record it (`unknown`).
  public func writeKind(of willSet: TraceEvent) -> WriteKind {
    if willSet.flags & EventFlags.willSetDirect != 0 { return .modify }
    guard willSet.flags & EventFlags.willSetInWithMutation != 0 else { return .unknown }
    let frames = frames(ofStack: willSet.stack)
    // The innermost run of `withMutation` frames (the registrar's, then the model's helper), then the next frame
    // that is not compiler glue: the caller of the helper.
    guard let first = frames.firstIndex(where: { Self.isWithMutation($0.function) }) else { return .setOrWithMutation }
    var index = first
    while index < frames.count && Self.isWithMutation(frames[index].function) { index += 1 }
    while index < frames.count && SiteFilter.isThunk(frames[index].function) { index += 1 }
    guard index < frames.count, !frames[index].function.isEmpty else { return .setOrWithMutation }
    return SiteFilter.isSetter(frames[index].function) ? .set : .withMutation
  }

  static func isWithMutation(_ function: String) -> Bool {
    SiteFilter.withoutQualifiers(Substring(function)).contains(".withMutation<")
  }

  /// `Module.Outer.Inner<Module.X>` → `Outer.Inner<X>`: drops the leading module of each qualified name.
  static func removingModules(_ reflected: String) -> String {
    // A private or local type's context is `(unknown context at $55d0c0d8fa50)`, an address of that run: left out.
    var reflected = Substring(reflected)
    while let open = reflected.firstRange(of: unknownContext),
      let close = reflected[open.upperBound...].firstRange(of: ").")
    {
      reflected = reflected[..<open.lowerBound] + reflected[close.upperBound...]
    }
    var result = ""
    var component = ""
    var firstOfName = true
    func flush(_ terminator: Character?) {
      result += component
      if let terminator { result.append(terminator) }
      component = ""
    }
    for character in reflected {
      if character == "." {
        if firstOfName && !component.isEmpty && component.first!.isLetter {
          component = ""  // the module
        } else {
          component.append(character)
        }
        firstOfName = false
      } else if character == "<" || character == "," || character == " " || character == ">" || character == "("
        || character == ")" || character == "[" || character == "]" || character == ":"
      {
        flush(character)
        firstOfName = true
      } else {
        component.append(character)
      }
    }
    flush(nil)
    return result
  }

  /// `\Model.<computed 0x… (Int)>` → `Int`.
  static func valueType(ofKeyPathDescription description: String) -> String {
    guard let open = description.lastIndex(of: "("), let close = description.lastIndex(of: ")"), open < close else {
      return ""
    }
    return String(description[description.index(after: open)..<close])
  }
}

/// Which frames are machinery rather than the user's code, for choosing an event's site: ObsTrace itself,
/// Observation, the Swift runtime and libraries, and the accessors the @Observable macro generates.
public enum SiteFilter {
  /// Modules whose frames are never the user's: ObsTrace's own, Observation, the standard library and runtime, and
  /// the toolchain's other libraries, Foundation's among them (a shared library's frames are machinery by its
  /// name too, `runtimeModules`; a program that links them statically has only the modules' names to tell them by).
  static let machineryModules: Set<String> = [
    "ObsTrace", "ObsTraceRecorder", "ObsTraceFormat", "ObsTraceSymbols", "Observation", "Swift", "_Concurrency",
    "Dispatch", "Foundation", "Synchronization", "FoundationEssentials", "FoundationInternationalization",
    "_FoundationCollections", "FoundationNetworking", "FoundationXML", "_StringProcessing", "_RegexParser",
  ]
  /// Compiler-generated glue between frames.
  static let thunkPrefixes = [
    "partial apply forwarder", "reabstraction thunk", "thunk for", "merged ", "outlined ", "dispatch thunk",
  ]
  /// C and runtime entry points.
  static let runtimePrefixes = [
    "obstrace_capture", "obstrace_emit", "swift_", "_swift", "__", "_dispatch", "start_thread", "clone",
  ]
  /// Helpers the @Observable macro generates, and the key path accessors. Not `$defer` itself: the macro's
  /// `defer { didSet }` is named in its accessor (`$defer #1 () in M.count.modify : Int`), a user's `defer` in the
  /// user's function.
  static let accessorMarkers = [
    ".access<", ".withMutation<", "shouldNotifyObservers", "key path getter", "key path setter",
  ]
  /// Accessor kinds: the macro's accessors of a tracked property, but also the user's own computed properties and
  /// subscripts (and closures in them: `closure #1 in Demo.View.body.getter`). Machinery only where the frame's code
  /// is not in a user's source file (`isUserSource`): the macro's accessors are in its `@__swiftmacro_…` buffer.
  static let accessorKinds = [".getter :", ".setter :", ".modify :"]
  /// Files of ObsTrace's own C code, which an optimized build inlines into the user's functions (their line-table
  /// rows then name the user's function with ObsTrace's header).
  static let ownSourceMarkers = ["/CObsTraceRing/", "CObsTraceRing.h"]
  /// Libraries whose frames are never the user's, by the start of the module name a frame has: a shared library's
  /// file (`libswift_Concurrency.so`), or, in a program that links the standard library statically, the archive
  /// the recorder found the frame's code is of (`libswift_Concurrency.a in App`, `StaticMembers`).
  static let runtimeModules = ["libswift", "libc.so", "libc-", "ld-linux", "libFoundation", "libdispatch"]

  /// `Module/File.swift:line`, the shape of `#fileID:#line`, for a scope labelled by its call site.
  public static func callSiteLabel(_ frame: SymbolizedFrame) -> String {
    let file = frame.file.split(separator: "/").last.map(String.init) ?? frame.file
    // Top-level code's name (`main`, `async_MainTY1_`) has no module: DWARF's, when the symbolizer found it.
    let named = moduleName(ofFunction: frame.function)
    let module = named.isEmpty ? frame.declaringModule : named
    return (module.isEmpty ? "" : module + "/") + "\(file):\(frame.line)"
  }

  /// The name of a label scopes got from the stack they began with (`<call site of stack #N>`), from that stack's
  /// frames, innermost first: its first frame of the user's code (`callSiteLabel`). When the stack holds
  /// Observation's own frames (tracking ObsTrace does not own, recorded from inside the tracked closure), the first
  /// user frame after them, the caller of Observation's tracking function; with none there (an `Observations`
  /// sequence runs its closure from Observation's async code, whose caller is not on the stack), the first user
  /// frame before them, the tracked closure, said as such: `Module/File.swift:4 (Observations closure)`, or
  /// `(tracked closure)` when Observation's frames are not an `Observations` sequence's. Nil when no frame is the
  /// user's (no symbols).
  public static func callerLabelName(_ frames: [SymbolizedFrame]) -> String? {
    let isUser = { (frame: SymbolizedFrame) in !isMachinery(frame) && !frame.file.isEmpty }
    guard let start = frames.firstIndex(where: isObservation) else {
      return frames.first(where: isUser).map(callSiteLabel)
    }
    let end = frames[start...].firstIndex { !isObservation($0) } ?? frames.endIndex
    if let caller = frames[end...].first(where: isUser) { return callSiteLabel(caller) }
    guard let closure = frames[..<start].first(where: isUser) else { return nil }
    let sequence = frames[start..<end].contains { $0.function.contains("Observations") }
    return callSiteLabel(closure) + (sequence ? " (Observations closure)" : " (tracked closure)")
  }

  /// A frame of Observation's own library (`libswiftObservation.so`, or `libswiftObservation.a in App` when the
  /// program links it statically).
  static func isObservation(_ frame: SymbolizedFrame) -> Bool {
    frame.module.hasPrefix("libswiftObservation")
  }

  /// Whether a function's name is an executable's top-level code: `main` (swiftc), `Module_main` (SwiftPM's renamed
  /// entry), `async_Main` and its pieces `async_MainTY1_`, `async_MainTQ0_`, … (the code around each await). None of
  /// these demangles: a Swift function of the user's is `Module.name(…)`.
  public static func isTopLevelCode(_ function: String) -> Bool {
    if function == "main" || function == "async_Main" { return true }
    if function.hasPrefix("async_MainTY") || function.hasPrefix("async_MainTQ"), function.hasSuffix("_") {
      let number = function.dropFirst("async_MainTY".count).dropLast()
      return !number.isEmpty && number.allSatisfy { $0.isASCII && $0.isNumber }
    }
    return function.hasSuffix("_main") && function.count > 5
      && function.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
  }

  /// The module of a demangled Swift function: `closure #1 in Demo.View.body.getter` → `Demo`.
  public static func moduleName(ofFunction function: String) -> String {
    var name = withoutQualifiers(Substring(function))
    var inClosure = false
    while let range = name.firstRange(of: " in "), name.hasPrefix("closure") || name.hasPrefix("implicit closure") {
      name = withoutQualifiers(name[range.upperBound...])
      inClosure = true
    }
    guard let dot = name.firstIndex(of: "."), name[..<dot].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
    else {
      let identifier = !name.isEmpty && name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
      // An executable's top-level code is `<module>_main`.
      if identifier, name.hasSuffix("_main") { return String(name.dropLast(5)) }
      // A closure in top-level code is `closure #2 … in <module>`: its context is the module itself.
      if identifier, inClosure { return String(name) }
      return ""
    }
    return String(name[..<dot])
  }

  /// Drops what the optimizer and runtime put before a function's name: `static`, `generic specialization
  /// <…> of`, `generic not re-abstracted specialization <…> of`, `inlined generic function <…> of`, `function
  /// signature specialization <…> of`, `merged`.
  public static func withoutQualifiers(_ name: Substring) -> Substring {
    var name = name
    while true {
      if let qualifier = ["static ", "merged ", "partial apply for "].first(where: { name.hasPrefix($0) }) {
        name = name.dropFirst(qualifier.count)
      } else if name.hasPrefix("("), let partial = name.firstRange(of: " partial function for ") {
        // An async function's pieces: `(3) suspend resume partial function for Demo.run() async`.
        name = name[partial.upperBound...]
      } else if name.hasPrefix("specialized ") || Self.isSpecializationPrefix(name) {
        // Skip the balanced <…> and the " of " after it.
        var depth = 0
        var index = name.startIndex
        while index < name.endIndex {
          if name[index] == "<" { depth += 1 }
          if name[index] == ">" {
            depth -= 1
            if depth == 0 { break }
          }
          index = name.index(after: index)
        }
        guard index < name.endIndex, let of = name[index...].firstRange(of: " of ") else { return name }
        name = name[of.upperBound...]
      } else {
        return name
      }
    }
  }

  /// Whether a name begins with the demangler's words for a specialized or inlined copy, up to its `<`:
  /// `generic specialization <`, `generic not re-abstracted specialization <`, `function signature
  /// specialization <`, `inlined generic function <` and the like (lowercase words, never a qualified name).
  static func isSpecializationPrefix(_ name: Substring) -> Bool {
    guard let open = name.firstIndex(of: "<"), open > name.startIndex else { return false }
    let words = name[..<open]
    return words.hasSuffix(" ") && (words.hasSuffix("specialization ") || words.hasSuffix("function "))
      && words.allSatisfy { ("a"..."z").contains($0) || $0 == " " || $0 == "-" }
  }

  /// Compiler-generated glue between two frames (thunks, partial applications, merged functions).
  public static func isThunk(_ function: String) -> Bool {
    let function = withoutQualifiers(Substring(function))
    return thunkPrefixes.contains { function.hasPrefix($0) }
  }

  /// A property's setter: `Demo.Model.count.setter : Swift.Int`.
  public static func isSetter(_ function: String) -> Bool {
    let function = withoutQualifiers(Substring(function))
    return function.contains(".setter :") || function.hasSuffix(".setter")
  }

  public static func isMachinery(_ frame: SymbolizedFrame) -> Bool {
    if runtimeModules.contains(where: { frame.module.hasPrefix($0) }) { return true }
    let function = String(withoutQualifiers(Substring(frame.function)))
    if function.isEmpty { return true }
    if thunkPrefixes.contains(where: { function.hasPrefix($0) }) { return true }
    let module = moduleName(ofFunction: function)
    if module.isEmpty {
      if runtimePrefixes.contains(where: { function.hasPrefix($0) }) { return true }
    } else if machineryModules.contains(module) {
      return true
    }
    if ownSourceMarkers.contains(where: { frame.file.contains($0) }) { return true }
    if accessorMarkers.contains(where: { function.contains($0) }) { return true }
    // A protocol witness of an accessor is glue: its line is the conformance's, the accessor it calls (inlined or
    // not) is a frame of its own.
    return accessorKinds.contains { function.contains($0) }
      && (!isUserSource(frame.file) || function.hasPrefix("protocol witness for "))
  }

  /// A peer macro's expansion buffer (`@__swiftmacro_App5ModelC5count18ObservationTrackedfMp_.swift`): where
  /// `@Observable` moves a property's observers, their bodies under `#sourceLocation` of the user's file.
  public static func isPeerMacroBuffer(_ file: String) -> Bool {
    let name = file.split(separator: "/").last ?? Substring(file)
    return name.hasPrefix("@__swiftmacro_") && name.hasSuffix("fMp_.swift")
  }

  /// A file of the user's source: known, not a macro's expansion buffer (`@__swiftmacro_…`) and not code the
  /// compiler made (`<compiler-generated>`).
  static func isUserSource(_ file: String) -> Bool {
    !file.isEmpty && !file.contains("@__swiftmacro_") && !file.hasPrefix("<")
  }
}

/// How a write was made (the `willSet` that opened it): `=` through the macro's setter, `_modify` (`+=`, `append`,
/// a subscript), or an explicit `withMutation(keyPath:)`.
public enum WriteKind: String, Sendable, CaseIterable, CustomStringConvertible {
  /// The property's setter: `model.count = 1`.
  case set = "set"
  /// The `_modify` accessor: `model.count += 1`, `model.items.append(x)`, `model.items[0].done = true`.
  case modify = "_modify"
  /// An explicit `withMutation(keyPath:)` call.
  case withMutation = "withMutation"
  /// The setter or an explicit `withMutation`: the event has no stack (backtraces off) or no symbols.
  case setOrWithMutation = "set or withMutation"
  /// Not recorded (a version-1 trace).
  case unknown = "unknown"

  public var description: String { rawValue }
}

/// Scope definitions by id, the most recent `limit` of them (first defined, first forgotten). Every chunk restates
/// the scopes its events use, so the decoder looks one up per restatement, and both it and the reader put each new
/// one in: scope ids are handed out in increasing order, so an array over a window of recent ids, not a hash table
/// (hashing took ≈ 100 instructions a lookup, ≈ 30 an event on a trace of 100 k objects and 10 k scopes a round).
/// The window slides forward: when it would pass twice the limit (plus `slack`), its older half is cut off and the
/// scopes still kept there move to a dictionary, as do ids before the window or far past its end (a forged id costs
/// one dictionary entry, never an array of its size).
public struct ScopeTable: Sendable {
  /// Slots the window may reach past its end for a new id.
  static var slack: Int { 4096 }

  private var slots: [ScopeDefinition?] = []
  /// The id of the first slot.
  private var base = 0
  private var outside: [UInt32: ScopeDefinition] = [:]
  /// Ids in the order first defined, from `orderStart`: the oldest is forgotten first.
  private var order: [UInt32] = []
  private var orderStart = 0
  private let limit: Int

  init(retaining limit: Int) {
    self.limit = limit
  }

  /// Scopes kept.
  public var count: Int { order.count - orderStart }

  /// The ids kept, oldest first.
  public var ids: ArraySlice<UInt32> { order[orderStart...] }

  /// Slots of the window (for tests: memory follows the limit, not the ids a trace named).
  var windowSlots: Int { slots.count }

  public subscript(id: UInt32) -> ScopeDefinition? {
    @inline(__always) get {
      let index = Int(id) &- base
      if index >= 0 && index < slots.count { return slots[index] }
      return outside.isEmpty ? nil : outside[id]
    }
  }

  /// Puts `scope` in as `id`'s definition; a new id may forget the oldest.
  mutating func define(_ id: UInt32, _ scope: ScopeDefinition) {
    var index = Int(id) &- base
    if index >= 0 && index < slots.count, slots[index] != nil {
      slots[index] = scope
      return
    }
    if !outside.isEmpty, outside[id] != nil {
      outside[id] = scope
      return
    }
    if slots.isEmpty {
      base = Int(id)
      index = 0
    }
    if index >= slots.count && index < slots.count + Self.slack {
      if index >= 2 * limit + Self.slack {
        // Cut off the older half (or what keeps the new id within twice the limit): each scope moves out at most once.
        let cut = Swift.min(slots.count, Swift.max(slots.count / 2, index + 1 - limit))
        for slot in 0..<cut {
          if let kept = slots[slot] { outside[UInt32(base + slot)] = kept }
        }
        slots.removeFirst(cut)
        base += cut
        index -= cut
      }
      while slots.count <= index { slots.append(nil) }
    }
    if index >= 0 && index < slots.count {
      slots[index] = scope
    } else {
      outside[id] = scope
    }
    order.append(id)
    if count > limit { forgetOldest() }
  }

  private mutating func forgetOldest() {
    let oldest = order[orderStart]
    orderStart += 1
    if orderStart >= limit {
      order.removeFirst(orderStart)
      orderStart = 0
    }
    let index = Int(oldest) &- base
    if index >= 0 && index < slots.count {
      slots[index] = nil
    } else {
      outside[oldest] = nil
    }
  }
}
