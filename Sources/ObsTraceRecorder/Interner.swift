import CObsTraceRing
import Glibc
import ObsTraceFormat
import ObsTraceSymbols
import Synchronization

/// The process-wide tables that turn key paths, types, labels and call stacks into small integer ids.
///
/// Threads ask through their per-thread pointer caches first (in the C ring), so the lock here is taken once per
/// thread per new key path, type or stack. An id is in these tables before any event can carry it, which is
/// why the flusher can always find a definition. Key paths are retained, so their addresses (the cache keys)
/// are never reused for another key path.
///
/// Interning only gives the id: the program's thread keeps the key path or the type's metadata (what naming needs)
/// and goes on. Naming (the runtime's printing of a key path or a type) is done at the first need of the name,
/// which is the flusher's, writing the definition before the first chunk that uses it (`typeName`, `property`), or
/// the stop's and an in-test recording's (`nameAll`): not on the thread that met the key path or type first, whose
/// first frame, first test or first render would otherwise pay it (F16). The one name a program's thread still
/// works out is a property's key path description, at its first compared write through `_modify`, when the flusher
/// has not named it yet: its stored field is found from its getter's address, which only the description gives,
/// and the write needs it before it proceeds (`storedField`).
final class Interner: Sendable {
  static let shared = Interner()

  /// How many distinct key path objects are retained to serve as cache keys (`Tables.retainedKeyPaths`).
  static let maximumRetainedKeyPaths = 1 << 16

  struct PropertyEntry {
    /// The root type's id, and (once named) the key path's description and its getter's address.
    var definition: PropertyDefinition
    /// Whether `definition` holds the key path's description yet (the sentinel 0 counts as named).
    var named = true
    /// The key path, kept to be named (the tables hold it anyway, as a dictionary key).
    var keyPath: AnyKeyPath? = nil
    /// Whether the member type is Equatable: looked up at the first need (`memberIsEquatable`, only under
    /// `WriteComparison.equatable`), nil until then.
    var memberIsEquatable: Bool? = false
    /// The key path's root and member types, to find its stored field at its first write (`storedField`).
    var root: Any.Type = Void.self
    var member: Any.Type = Void.self
  }

  struct TypeEntry {
    /// The type, kept to be named (nil for the sentinel 0).
    var type: Any.Type?
    /// Its names, once named (`String(reflecting:)`, `String(describing:)`, each cut).
    var names: (reflected: String, display: String)?
  }

  struct Tables {
    var keyPathIDs: [AnyKeyPath: UInt32] = [:]
    var properties: [PropertyEntry] = [
      PropertyEntry(definition: PropertyDefinition(rootType: 0, keyPathDescription: "", getterAddress: 0))
    ]
    /// Key path objects whose addresses are per-thread cache keys, each retained once so that its address is never
    /// reused by another key path while a cache may hold it. At most `maximumRetainedKeyPaths`: a program that makes
    /// new key path objects at run time (`\Model.a.appending(path: …)` per call) would otherwise grow this without
    /// bound; past the limit a key path's id is found through `keyPathIDs` (by value) on every use, uncached.
    var retainedKeyPaths: [ObjectIdentifier: AnyKeyPath] = [:]

    /// Retains `keyPath` (once) so that its address may be cached; false when the limit is reached.
    mutating func retainForCaching(_ keyPath: AnyKeyPath) -> Bool {
      let identity = ObjectIdentifier(keyPath)
      if retainedKeyPaths[identity] != nil { return true }
      guard retainedKeyPaths.count < Interner.maximumRetainedKeyPaths else { return false }
      retainedKeyPaths[identity] = keyPath
      return true
    }
    var typeIDs: [ObjectIdentifier: UInt32] = [:]
    var types: [TypeEntry] = [TypeEntry(type: nil, names: ("", ""))]
    var labelIDs: [String: UInt32] = [:]
    var labels: [String] = [""]
    var stackIDs: [[UInt64]: UInt32] = [:]
    var stacks: [[UInt64]] = [[]]
    /// Labels that are call sites: label id → the stack to find the site in, and back.
    var callerLabels: [UInt32: UInt32] = [:]
    var callerLabelIDs: [UInt32: UInt32] = [:]
    /// Labels of call sites, by the address the traced function returns to.
    var callSiteLabelIDs: [UInt: UInt32] = [:]
    /// And back: the return address of each call-site label.
    var callSiteAddresses: [UInt32: UInt] = [:]
  }

  let tables = LockedValue(Tables())

  // MARK: Interning (slow paths)

  /// The id of `keyPath`: from the thread's cache when it has it, without touching `shared` (whose lazy
  /// initialization is checked by a call, `swift_once`, at every use), else interned by the shared instance.
  @inline(__always)
  static func keyPathID(_ keyPath: AnyKeyPath, root: Any.Type, member: Any.Type) -> UInt32 {
    let pointer = UnsafeRawPointer(Unmanaged.passUnretained(keyPath).toOpaque())
    let cached = obstrace_cached_id(pointer)
    if cached != 0 { return cached }
    return shared.internKeyPath(keyPath, pointer, root: root, member: member)
  }

  /// Interns a key path without naming it: a dictionary lookup by value (another object equal to a known one, or
  /// another thread's), else a new id whose entry keeps the key path and its types for naming later.
  @inline(never)
  private func internKeyPath(_ keyPath: AnyKeyPath, _ pointer: UnsafeRawPointer, root: Any.Type, member: Any.Type)
    -> UInt32
  {
    let rootID = typeID(root)
    let (id, cacheable): (UInt32, Bool) = tables.withLock { tables in
      if let id = tables.keyPathIDs[keyPath] {
        // This object's address becomes a cache key (another thread's, or another object equal to a known one).
        return (id, tables.retainForCaching(keyPath))
      }
      let id = UInt32(tables.properties.count)
      tables.properties.append(
        PropertyEntry(
          definition: PropertyDefinition(rootType: rootID, keyPathDescription: "", getterAddress: 0), named: false,
          keyPath: keyPath, memberIsEquatable: nil, root: root, member: member))
      tables.keyPathIDs[keyPath] = id
      Self.countInterning()
      return (id, tables.retainForCaching(keyPath))
    }
    if cacheable { obstrace_cache_id(pointer, id) }
    return id
  }

  // MARK: Naming (at the first need of a name)

  /// The definition of property `id`, named now if it was not yet (the runtime's printing of its key path; outside
  /// the lock, on a roomy stack), or nil for an id never interned.
  private func namedProperty(_ id: UInt32) -> PropertyEntry? {
    guard let entry = tables.withLock({ Int(id) < $0.properties.count ? $0.properties[Int(id)] : nil }) else {
      return nil
    }
    guard !entry.named, let keyPath = entry.keyPath else { return entry }
    let description = RoomyStack.run { String(describing: keyPath) }
    Self.noteNaming(description)
    let definition = PropertyDefinition(
      rootType: entry.definition.rootType, keyPathDescription: TraceFormat.cutName(description),
      getterAddress: Self.getterAddress(inKeyPathDescription: description))
    return tables.withLock { tables in
      // Another thread may have named it meanwhile: the same text.
      if !tables.properties[Int(id)].named {
        tables.properties[Int(id)].definition = definition
        tables.properties[Int(id)].named = true
      }
      return tables.properties[Int(id)]
    }
  }

  /// The names of type `id`, named now if it was not yet (the runtime's printing of a type, outside the lock, on a
  /// roomy stack); empty names for an id never interned.
  private func namedType(_ id: UInt32) -> (reflected: String, display: String) {
    guard let entry = tables.withLock({ Int(id) < $0.types.count ? $0.types[Int(id)] : nil }) else { return ("", "") }
    if let names = entry.names { return names }
    guard let type = entry.type else { return ("", "") }
    // A generated type's name can be any length: cut, as every name the recorder writes.
    let names = RoomyStack.run {
      (reflected: TraceFormat.cutName(String(reflecting: type)), display: TraceFormat.cutName(String(describing: type)))
    }
    Self.noteNaming(names.reflected)
    return tables.withLock { tables in
      if tables.types[Int(id)].names == nil { tables.types[Int(id)].names = names }
      return tables.types[Int(id)].names!
    }
  }

  /// Names every property and type interned and not named yet: before the tables are read whole (the symbols at
  /// stop, an in-test recording's definitions).
  func nameAll() {
    let (properties, types) = tables.withLock { tables in
      (
        tables.properties.indices.filter { !tables.properties[$0].named }.map { UInt32($0) },
        tables.types.indices.filter { tables.types[$0].names == nil }.map { UInt32($0) }
      )
    }
    for id in types { _ = namedType(id) }
    for id in properties { _ = namedProperty(id) }
  }

  /// Whether property `id`'s member type is Equatable (a conformance lookup, once per property): for
  /// `WriteComparison.equatable`, which asks at each `_modify` (the C table answers without a lock); the recorder
  /// asks nothing else.
  func memberIsEquatable(_ id: UInt32) -> Bool {
    switch obstrace_property_equatable_state(id) {
    case 1: return false
    case 2: return true
    default: break
    }
    let known: (Bool?, Any.Type)? = tables.withLock { tables in
      guard Int(id) < tables.properties.count else { return nil }
      return (tables.properties[Int(id)].memberIsEquatable, tables.properties[Int(id)].member)
    }
    guard let (equatable, member) = known else { return false }
    if let equatable { return equatable }
    let found = RoomyStack.run { member is any Equatable.Type }
    tables.withLock { $0.properties[Int(id)].memberIsEquatable = found }
    obstrace_set_property_equatable(id, found ? 2 : 1)
    return found
  }

  // MARK: What tests see of the interning and naming

  /// The names worked out and the stored fields looked for while `watchingNames` is set, with the thread
  /// (`pthread_self`) that did each, and how many key paths and types were interned: what `NamingThreadTests` and
  /// `UntouchedPathTests` check (no name of a program's thread's first use is worked out on that thread).
  struct NamingLog {
    var names: [(name: String, thread: UInt)] = []
    var interned = 0
    /// Stored fields looked for (`storedField`), by property id, with the thread that looked.
    var fieldLookups: [(property: UInt32, thread: UInt)] = []
    /// Who wrote each property's getter, looked up (`Symbolizer.getterOrigin`, by `storedField` on the flusher or
    /// `settleOrigin`), by property id, with the thread that looked: never a program's thread.
    var originLookups: [(property: UInt32, thread: UInt)] = []
  }
  static let watchingNames = Atomic<Bool>(false)
  static let namingLog = LockedValue(NamingLog())

  private static func noteNaming(_ name: String) {
    guard watchingNames.load(ordering: .relaxed) else { return }
    let thread = UInt(pthread_self())
    namingLog.withLock { $0.names.append((name, thread)) }
  }

  private static func noteFieldLookup(_ id: UInt32) {
    guard watchingNames.load(ordering: .relaxed) else { return }
    let thread = UInt(pthread_self())
    namingLog.withLock { $0.fieldLookups.append((id, thread)) }
  }

  private static func noteOriginLookup(_ id: UInt32) {
    guard watchingNames.load(ordering: .relaxed) else { return }
    let thread = UInt(pthread_self())
    namingLog.withLock { $0.originLookups.append((id, thread)) }
  }

  private static func countInterning() {
    guard watchingNames.load(ordering: .relaxed) else { return }
    namingLog.withLock { $0.interned += 1 }
  }

  /// The stored field of property `id`, packed as `obstrace_property_fields` holds it (`StoredField.notFound`
  /// when it cannot be found beyond doubt, `StoredField.handWritten` when its getter is not the macro's,
  /// `StoredField.notBitwise` when its member cannot be compared bit for
  /// bit). Found once: by the flusher when it first defines the property (`FlusherDefinitions.property`), or at the
  /// property's first compared write when that comes first, on the writer's thread (the write needs it before it
  /// proceeds). Naming the key path's getter reads the process's symbol tables (libdw, opened ahead by the flusher:
  /// `SymbolCache.prepare`). On the writer's thread (`onWriter`) who wrote the getter is not asked (the line table
  /// and DWARF: milliseconds): the field is stored with
  /// `StoredField.originPending`, unless the flusher stored its answer first, and the flusher settles it
  /// (`settleOrigin`).
  @inline(never)
  func storedField(_ id: UInt32, onWriter: Bool) -> UInt32 {
    let known = obstrace_property_field(id)
    if known != 0 { return known }
    // The getter's address is in the key path's description: named here when the flusher has not named it yet.
    guard let entry = namedProperty(id) else { return StoredField.notFound }
    Self.noteFieldLookup(id)
    if !onWriter { Self.noteOriginLookup(id) }
    let packed = RoomyStack.run {
      StoredField.locate(
        root: entry.root, member: entry.member, getterAddress: entry.definition.getterAddress, origin: !onWriter)
    }
    guard onWriter else {
      obstrace_set_property_field(id, packed)
      return packed
    }
    // The flusher's answer, when it found one meanwhile, is the whole one: kept.
    return obstrace_set_property_field_if_unset(id, packed)
  }

  /// Settles who wrote property `id`'s getter when a program's thread found its stored field and left that open
  /// (`StoredField.originPending`): on the flusher, which calls it before it encodes a didSet the writer marked
  /// (`Flusher.settleMarkedDidSets`) or as it defines the property. Returns the field as the C table then holds it:
  /// packed without the mark (the macro's getter: compared), `handWritten` or `notFound` (not compared from now
  /// on, as if found so at first).
  func settleOrigin(_ id: UInt32) -> UInt32 {
    let known = obstrace_property_field(id)
    guard StoredField.isOriginPending(known) else { return known }
    guard let entry = namedProperty(id) else {
      obstrace_set_property_field(id, StoredField.notFound)
      return StoredField.notFound
    }
    Self.noteOriginLookup(id)
    let packed = RoomyStack.run {
      StoredField.locate(root: entry.root, member: entry.member, getterAddress: entry.definition.getterAddress)
    }
    obstrace_set_property_field(id, packed)
    return packed
  }

  /// The id of a type (by its metadata), interned without naming it (`namedType` names it at the first need).
  func typeID(_ type: Any.Type) -> UInt32 {
    let pointer = unsafeBitCast(type, to: UnsafeRawPointer.self)
    let cached = obstrace_cached_id(pointer)
    if cached != 0 { return cached }
    let id = tables.withLock { tables in
      if let id = tables.typeIDs[ObjectIdentifier(type)] { return id }
      let id = UInt32(tables.types.count)
      tables.types.append(TypeEntry(type: type, names: nil))
      tables.typeIDs[ObjectIdentifier(type)] = id
      Self.countInterning()
      return id
    }
    obstrace_cache_id(pointer, id)
    return id
  }

  func labelID(_ label: String) -> UInt32 {
    let label = TraceFormat.cutName(label)
    return tables.withLock { tables in
      if let id = tables.labelIDs[label] { return id }
      let id = UInt32(tables.labels.count)
      tables.labels.append(label)
      tables.labelIDs[label] = id
      return id
    }
  }

  /// The label of the scopes begun from the call site that returns to `returnAddress`: one label per call site,
  /// however the program got there. The stack captured the first time is kept to name it at stop (its first frame
  /// of user code is the call site). Without a return address: the label of the stack.
  func callSiteLabelID(returnAddress: UInt) -> UInt32 {
    guard returnAddress != 0, let key = UnsafeRawPointer(bitPattern: returnAddress) else {
      return callerLabelID(stack: StackCapture.current(minimumDepth: 12))
    }
    // The per-thread pointer cache: code addresses are never the key paths' or types' addresses it also holds.
    let cached = obstrace_cached_id(key)
    if cached != 0 { return cached }
    let known = tables.withLock { $0.callSiteLabelIDs[returnAddress] }
    let id = known ?? callSiteLabelIDLocked(returnAddress, stack: stackStarting(at: returnAddress))
    obstrace_cache_id(key, id)
    return id
  }

  /// The calling thread's stack with `returnAddress` as its first frame: the stack a call-site label is named from at
  /// stop (its first frame of user code). The call site itself comes first because the label may be interned far
  /// from it: an `Observations` sequence interns its label at its first recorded run, on the thread and stack that
  /// iterate it, where the initializer's call site is not (two sequences iterated by one loop were both named from
  /// the loop's stack, and left unnamed). A call site in ObsTrace's own code (machinery) is passed over as before.
  /// The stack ends before Observation's own frames (a call from a change handler).
  private func stackStarting(at returnAddress: UInt) -> UInt32 {
    let capacity = Int(OBSTRACE_MAX_STACK_DEPTH)
    return withUnsafeTemporaryAllocation(of: UInt.self, capacity: capacity + 1) { buffer in
      buffer[0] = returnAddress
      let depth = min(max(Int32(obstrace_stack_depth()), 12), OBSTRACE_MAX_STACK_DEPTH)
      var count = Int(obstrace_capture_stack(buffer.baseAddress! + 1, depth, 1)) + 1
      // Cut before Observation's own frames: a call made from a change handler (which Observation runs from the
      // willSet of a write) is named by its call site, not, as tracking ObsTrace does not own is, by the frames
      // around Observation's (`SiteFilter.callerLabelName`: the write's caller, or "(tracked closure)").
      if case .success(let runtime) = UntracedTracking.runtime,
        let observation = buffer[1..<count].firstIndex(where: { address in
          runtime.code.contains { $0.contains(address) }
        })
      {
        count = observation
      }
      let frames = UnsafeBufferPointer(rebasing: buffer[0..<count])
      return stackID(frames, hash: obstrace_hash_frames(frames.baseAddress, Int32(frames.count)))
    }
  }

  private func callSiteLabelIDLocked(_ returnAddress: UInt, stack: UInt32) -> UInt32 {
    tables.withLock { tables in
      if let id = tables.callSiteLabelIDs[returnAddress] { return id }
      let id = UInt32(tables.labels.count)
      tables.labels.append(stack == 0 ? "<unknown call site>" : "<call site of stack #\(stack)>")
      tables.callSiteLabelIDs[returnAddress] = id
      tables.callSiteAddresses[id] = returnAddress
      tables.callerLabels[id] = stack
      return id
    }
  }

  /// The label of a scope begun from `stack`: named after its call site when symbols are resolved at stop, from
  /// `namingStack` when given (the stack first seen with `stack` names the label; see
  /// `SiteFilter.callerLabelName`).
  func callerLabelID(stack: UInt32, namingStack: UInt32? = nil) -> UInt32 {
    // The per-thread pointer cache, keyed by a value no real pointer has (the top bit set).
    let key = UnsafeRawPointer(bitPattern: UInt(1) << 63 | UInt(stack))!
    let cached = obstrace_cached_id(key)
    if cached != 0 { return cached }
    let id = callerLabelIDLocked(stack: stack, namingStack: namingStack ?? stack)
    obstrace_cache_id(key, id)
    return id
  }

  private func callerLabelIDLocked(stack: UInt32, namingStack: UInt32) -> UInt32 {
    tables.withLock { tables in
      if let id = tables.callerLabelIDs[stack] { return id }
      let id = UInt32(tables.labels.count)
      tables.labels.append(namingStack == 0 ? "<unknown call site>" : "<call site of stack #\(namingStack)>")
      tables.callerLabelIDs[stack] = id
      tables.callerLabels[id] = namingStack
      return id
    }
  }

  /// The id of a call stack; the per-thread cache is keyed by the frames' hash.
  func stackID(_ frames: UnsafeBufferPointer<UInt>, hash: UInt64) -> UInt32 {
    let cached = obstrace_cached_stack(hash)
    if cached != 0 { return cached }
    let key = frames.map { UInt64($0) }
    let id: UInt32 = tables.withLock { tables in
      if let id = tables.stackIDs[key] { return id }
      let id = UInt32(tables.stacks.count)
      tables.stacks.append(key)
      tables.stackIDs[key] = id
      return id
    }
    obstrace_cache_stack(hash, id)
    return id
  }

  /// `\Model.<computed 0x000055d0c0d8fa50 (Int)>` → 0x55d0c0d8fa50: the key path's getter, to symbolize.
  static func getterAddress(inKeyPathDescription description: String) -> UInt64 {
    guard let range = description.firstRange(of: "0x") else { return 0 }
    let digits = description[range.upperBound...].prefix { $0.isHexDigit }
    return UInt64(digits, radix: 16) ?? 0
  }

  // MARK: What the flusher's definitions read

  /// The reflected name of type `id`, named now if it was not yet: the flusher asks before it writes the type's
  /// definition, ahead of the first event that uses it.
  func typeName(_ id: UInt32) -> String {
    namedType(id).reflected
  }

  /// The definition of property `id`, named now if it was not yet (as `typeName`).
  func property(_ id: UInt32) -> PropertyDefinition? {
    namedProperty(id)?.definition
  }

  func label(_ id: UInt32) -> String {
    tables.withLock { Int(id) < $0.labels.count ? $0.labels[Int(id)] : "" }
  }

  /// The address a call-site label's call returns to, or nil (a name, a label of a stack).
  func callSiteAddress(ofLabel id: UInt32) -> UInt? {
    tables.withLock { $0.callSiteAddresses[id] }
  }

  /// The stack a call-site label is named from at stop, or 0 (a name).
  func labelStack(_ id: UInt32) -> UInt32 {
    tables.withLock { $0.callerLabels[id] ?? 0 }
  }

  func stack(_ id: UInt32) -> [UInt64] {
    tables.withLock { Int(id) < $0.stacks.count ? $0.stacks[Int(id)] : [] }
  }

  /// A copy of what symbolization needs at stop, every property and type named first.
  func snapshotForSymbols() -> SymbolSources {
    nameAll()
    return tables.withLock { tables in
      SymbolSources(
        // Named by `nameAll`, but for one interned since (by a thread still running: no event of it is written).
        properties: tables.properties.enumerated().dropFirst().filter(\.element.named).map {
          (UInt32($0.offset), $0.element.definition)
        },
        types: tables.types.enumerated().dropFirst().compactMap { index, entry in
          entry.names.map { (UInt32(index), $0.display) }
        },
        stacks: Array(tables.stacks.dropFirst()),
        callerLabels: tables.callerLabels.map { (label: $0.key, stack: tables.stacks[Int($0.value)]) })
    }
  }

  /// Everything a replay needs to name the ids in `events`: the tables, and symbols resolved in-process.
  func definitions(for events: [TraceEvent]) -> TraceDefinitions {
    var definitions = TraceDefinitions()
    var usedStacks = Set<UInt32>()
    for event in events {
      if event.object != 0, event.aux != 0, [.access, .willSet, .didSet, .objectFreed].contains(event.kind) {
        definitions.objects[event.object] = event.aux
      }
      if event.kind == .scopeBegin, let kind = ScopeKind(rawValue: event.flags) {
        definitions.defineScope(event.scope, ScopeDefinition(kind: kind, label: event.key, parent: event.aux))
      }
      if event.stack != 0 { usedStacks.insert(event.stack) }
    }
    var sources = snapshotForSymbols()
    tables.withLock { tables in
      // Named by `nameAll` (one interned since by another thread is no id of these events).
      for (index, entry) in tables.types.enumerated().dropFirst() {
        if let names = entry.names { definitions.defineType(UInt32(index), names.reflected) }
      }
      for (index, entry) in tables.properties.enumerated().dropFirst() where entry.named {
        definitions.properties[UInt32(index)] = entry.definition
      }
      for (index, label) in tables.labels.enumerated().dropFirst() { definitions.labels[UInt32(index)] = label }
      for id in usedStacks where Int(id) < tables.stacks.count { definitions.stacks[id] = tables.stacks[Int(id)] }
    }
    // Only the stacks these events use need their frames resolved.
    sources.stacks = usedStacks.compactMap { definitions.stacks[$0] }
    definitions.symbols = symbolTable(sources)
    return definitions
  }

  /// The symbol table of `sources`, resolved in-process: what the symbol tables name (`SymbolTableBuilder`), and
  /// the properties whose key path getter is a merged getter's thunk that only the runtime's field offsets name
  /// (`MergedGetterNaming`), or a getter with no symbol that calls the property's getter through the root class's
  /// table, which only the class's metadata names (`TableGetterNaming`).
  func symbolTable(_ sources: SymbolSources) -> SymbolTable {
    var table = SymbolTableBuilder.build(sources, resolve: SymbolCache.resolve)
    let unnamed = sources.properties.filter { table.propertyNames[$0.0] == nil && $0.1.getterAddress != 0 }
    guard !unnamed.isEmpty else { return table }
    let entries = tables.withLock { tables in
      unnamed.compactMap { id, _ in Int(id) < tables.properties.count ? (id, tables.properties[Int(id)]) : nil }
    }
    for (id, entry) in entries {
      if let name = MergedGetterNaming.name(
        getterAddress: entry.definition.getterAddress, root: entry.root, member: entry.member)
        ?? TableGetterNaming.name(getterAddress: entry.definition.getterAddress, root: entry.root, member: entry.member)
      {
        table.propertyNames[id] = name
      }
    }
    return table
  }

}
