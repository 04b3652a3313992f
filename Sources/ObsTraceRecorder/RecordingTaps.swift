import CObsTraceRing
import ObsTraceFormat
import ObsTraceSymbols
import Synchronization

/// In-test recordings: each gets a tag; objects created and scopes begun while the tag is bound (a task local)
/// carry it, and the flusher copies every event of a tagged object or scope to that recording's buffer. Tests
/// that run in parallel therefore see only their own events. An object made before the block and read by one of
/// its scopes is the block's too from that read on (its writes can invalidate the block's scopes): its later
/// reads and writes outside any other recording's scopes are copied as well.
public enum RecordingTaps {
  /// The tag of the in-test recording around the current code, or 0.
  @TaskLocal public static var currentTag: UInt32 = 0
  /// How objects created in the in-test recording around the current code compare writes through `_modify`
  /// (nil: as the recording's options say).
  @TaskLocal public static var currentComparison: WriteComparison? = nil

  struct Tap {
    var events: [TraceEvent] = []
    /// All rings' drop counters when the tap opened.
    var droppedBefore: UInt64
    /// The clock (`obstrace_clock`) when the tap opened: work outside it is noted from then on.
    var openedAt: UInt64 = 0
    /// What the process did while the tap was open that no in-test recording counts.
    var outside = OutsideWork()
  }

  /// What the process did while an in-test recording was open that no in-test recording counts: reads and writes of
  /// objects none owns (made outside every block, and read by none of their scopes), and runs of scopes begun
  /// outside every block. Work a block starts on a `Thread`, a Dispatch queue or with `Task.detached` inherits no
  /// task-local tag and lands here (as does another test's, running at the same time): a lookup that would answer 0
  /// for a property or scope listed here says so instead (`RecordedObservation`).
  public struct OutsideWork: Sendable, Equatable {
    /// Writes (willSets) by property id.
    public var writes: [UInt32: Int] = [:]
    /// Reads (accesses) by property id.
    public var reads: [UInt32: Int] = [:]
    /// Scope runs (scope begins) by label id.
    public var runs: [UInt32: Int] = [:]

    public init() {}

    /// Notes `record` (an event routed to no in-test recording).
    mutating func note(_ record: obstrace_record, _ kind: EventKind) {
      switch kind {
      case .willSet: writes[record.key, default: 0] += 1
      case .access: reads[record.key, default: 0] += 1
      case .scopeBegin: runs[record.key, default: 0] += 1
      default: break
      }
    }
  }

  struct Routing {
    var taps: [UInt32: Tap] = [:]
    var objectTags: [UInt32: UInt32] = [:]
    var scopeTags: [UInt32: UInt32] = [:]
    /// Objects made outside any in-test recording and read by a scope of one (or several): their tags.
    var adoptedObjects: [UInt32: [UInt32]] = [:]
  }

  static let routing = LockedValue(Routing())
  static let activeTaps = Atomic<Int>(0)

  /// `currentTag`, without reading the task-local when no in-test recording is open (a scope's begin asks on every
  /// run). A tag is bound only while its tap is open: `open` counts the tap before the caller binds the tag, and
  /// `close` uncounts it after the bound code returned.
  static var currentTagIfAny: UInt32 {
    activeTaps.load(ordering: .acquiring) > 0 ? currentTag : 0
  }
  static let nextTag = Atomic<UInt32>(1)

  /// Opens a tap; the caller binds the returned tag around the code to record.
  static func open(droppedBefore: UInt64) -> UInt32 {
    let tag = nextTag.add(1, ordering: .relaxed).oldValue
    let openedAt = obstrace_clock()
    routing.withLock { $0.taps[tag] = Tap(droppedBefore: droppedBefore, openedAt: openedAt) }
    activeTaps.add(1, ordering: .releasing)
    return tag
  }

  /// Closes a tap and returns its events (in the order the flusher met them), the drop count it opened with, and
  /// the work it did not count.
  static func close(_ tag: UInt32) -> (events: [TraceEvent], droppedBefore: UInt64, outside: OutsideWork) {
    activeTaps.subtract(1, ordering: .releasing)
    return routing.withLock { routing in
      let tap = routing.taps.removeValue(forKey: tag)
      routing.objectTags = routing.objectTags.filter { $0.value != tag }
      routing.scopeTags = routing.scopeTags.filter { $0.value != tag }
      for (object, tags) in routing.adoptedObjects where tags.contains(tag) {
        let others = tags.filter { $0 != tag }
        routing.adoptedObjects[object] = others.isEmpty ? nil : others
      }
      return (tap?.events ?? [], tap?.droppedBefore ?? 0, tap?.outside ?? OutsideWork())
    }
  }

  /// Tells the taps that object `serial` belongs to the in-test recording `tag` (called where it is created).
  static func tagObject(_ serial: UInt32, _ tag: UInt32) {
    routing.withLock { $0.objectTags[serial] = tag }
  }

  /// Tells the taps that `scope` belongs to the in-test recording `tag` (called where the scope begins, before
  /// the flusher can meet it).
  static func tagScope(_ scope: UInt32, _ tag: UInt32) {
    routing.withLock { $0.scopeTags[scope] = tag }
  }

  /// Called by the flusher for each drained record, while any tap is open.
  static func route(_ record: obstrace_record, time: UInt64, thread: UInt32) {
    routing.withLock { routing in
      guard let kind = EventKind(rawValue: record.kind) else { return }
      var tag: UInt32 = 0
      switch kind {
      case .objectCreated:
        tag = record.aux
        if tag != 0 { routing.objectTags[record.object] = tag }
      case .scopeBegin:
        // Its object is the instance, not an object: the scope was tagged where it began.
        tag = routing.scopeTags[record.scope] ?? 0
      case .access, .willSet, .didSet, .objectFreed, .objectBound:
        tag = routing.objectTags[record.object] ?? 0
        if tag == 0 && record.object != 0 {
          // An object made outside every in-test recording: the recordings whose scopes read it, and the one whose
          // scope this event is in. A read in a recording's scope makes the object that recording's from now on.
          let scopeTag = routing.scopeTags[record.scope] ?? 0
          var tags = routing.adoptedObjects[record.object] ?? []
          if scopeTag != 0 && !tags.contains(scopeTag) {
            if kind == .access { routing.adoptedObjects[record.object, default: []].append(scopeTag) }
            tags.append(scopeTag)
          }
          // Never into another recording's scope: that recording's replay alone knows it.
          for adopter in tags where scopeTag == 0 || scopeTag == adopter {
            Self.append(record, kind, time: time, thread: thread, to: adopter, &routing)
          }
          if tags.isEmpty { Self.noteOutside(record, kind, &routing) }
          return
        }
      default:
        tag = routing.objectTags[record.object] ?? routing.scopeTags[record.scope] ?? 0
      }
      if tag == 0 { Self.noteOutside(record, kind, &routing) }
      Self.append(record, kind, time: time, thread: thread, to: tag, &routing)
    }
  }

  /// Notes an event no in-test recording counts in each open one's `outside`, when it happened after that one
  /// opened (a ring drained late can hold events from before).
  private static func noteOutside(_ record: obstrace_record, _ kind: EventKind, _ routing: inout Routing) {
    guard kind == .willSet || kind == .access || kind == .scopeBegin else { return }
    for (tag, tap) in routing.taps where record.time >= tap.openedAt {
      routing.taps[tag]!.outside.note(record, kind)
    }
  }

  private static func append(
    _ record: obstrace_record, _ kind: EventKind, time: UInt64, thread: UInt32, to tag: UInt32,
    _ routing: inout Routing
  ) {
    guard tag != 0, routing.taps[tag] != nil else { return }
    var event = TraceEvent(
      kind: kind, flags: record.flags, thread: thread, time: time, depth: record.depth, object: record.object,
      key: record.key, scope: record.scope, aux: record.aux, stack: record.stack)
    if kind == .objectCreated { event.aux = 0 }
    routing.taps[tag]!.events.append(event)
  }
}

/// Resolves addresses once per process and keeps the answers: the recorder's stop and in-test recordings
/// share it. libdw's session is not thread-safe, hence the lock.
enum SymbolCache {
  struct State {
    var symbolizer: Symbolizer?
    var attempted = false
    /// Opened by `prepare` (the flusher), not by the first lookup of a program's thread.
    var openedAhead = false
    var frames: [UInt64: SymbolizedFrame] = [:]
    var unresolved: Set<UInt64> = []

    /// The session maps the process as it was when it was opened (at the first recording's start): when an
    /// address lies in a library loaded since (`dlopen`, a plug-in), it is opened again from the process's map as
    /// it is now, once per lookup that meets one, so that such frames are named from their library rather than
    /// left as bare addresses. Addresses no loaded object holds (freed code, JIT) open nothing.
    ///
    /// A module of the session can also cover such an address without holding it: the session's map gave another
    /// library a range the new one now sits in (seen under ThreadSanitizer, whose loader places libraries
    /// differently), and its name would be that library's. So an address is checked against the object the
    /// dynamic linker says holds it, by where each starts.
    /// Returns whether it opened the session again (only then can a frame still be placed wrongly).
    @discardableResult
    mutating func coverLoadedLibraries(_ addresses: some Collection<UInt64>) -> Bool {
      guard let symbolizer, addresses.contains(where: { Self.misnamed($0, by: symbolizer) }) else { return false }
      if let reopened = Symbolizer.forCurrentProcess() { self.symbolizer = reopened }
      return true
    }

    /// Whether `address` is in code the dynamic linker has loaded that `symbolizer` does not place in that
    /// object's module: no module covers it, or the one that does starts elsewhere.
    static func misnamed(_ address: UInt64, by symbolizer: Symbolizer) -> Bool {
      let loaded = obstrace_loaded_object_start(UInt(address))
      guard loaded != 0 else { return false }
      return symbolizer.moduleStart(at: address) != UInt64(loaded)
    }
  }

  static let state = LockedValue(State())

  /// Opens the process's symbol tables ahead of need, and reads the symbol table of the module that holds
  /// ObsTrace (the program's, when it is linked statically, as SwiftPM does): called by the flusher when a
  /// recording starts, so that the first write of a property through `_modify`, which names its key path's getter
  /// (`StoredField`), finds them open instead of opening them on the program's thread (tens of milliseconds in a
  /// large binary). The recording's stop uses the same tables to symbolize, so this adds no work overall.
  static func prepare() {
    state.withLock { state in
      guard !state.attempted else { return }
      state.attempted = true
      state.symbolizer = Symbolizer.forCurrentProcess()
      state.openedAhead = state.symbolizer != nil
      _ = state.symbolizer?.functionName(at: UInt64(UInt(bitPattern: #dsohandle)))
    }
  }

  /// The demangled name of the function a key path's getter pointer runs (symbol tables only, through a jump
  /// thunk as `resolve` names it: `Symbolizer.calledFunctionName`), or nil: for finding a property's stored field
  /// while recording, once per key path.
  static func getterName(at address: UInt64) -> String? {
    withSession(covering: address) { $0.calledFunctionName(at: address) }
  }

  /// `body` with the process's symbol session (opened at the first need), once it covers `address` (a library
  /// loaded since reopens it); nil when there is none or it would place `address` in another object's module.
  private static func withSession<T>(covering address: UInt64, _ body: (Symbolizer) -> T?) -> T? {
    state.withLock { state in
      if !state.attempted {
        state.attempted = true
        state.symbolizer = Symbolizer.forCurrentProcess()
      }
      state.coverLoadedLibraries([address])
      guard let symbolizer = state.symbolizer, !State.misnamed(address, by: symbolizer) else { return nil }
      return body(symbolizer)
    }
  }

  /// Who wrote the getter of the property whose key path getter is at `address` (`Symbolizer.getterOrigin`), or nil
  /// when the line table does not say: for comparing a property's stored field only when it is the macro's, once
  /// per key path.
  static func getterOrigin(keyPathGetter address: UInt64, name: PropertyName) -> GetterOrigin? {
    withSession(covering: address) { $0.getterOrigin(keyPathGetter: address, name: name) }
  }

  /// The merged key path getter whose thunk is at `address` (`MergedKeyPathGetter`), or nil: for naming a property
  /// whose getter is such a thunk by the runtime's field offsets (`MergedGetterNaming`).
  static func mergedGetter(at address: UInt64) -> MergedKeyPathGetter? {
    withSession(covering: address) { $0.mergedKeyPathGetter(at: address) }
  }

  /// The table offset a key path getter at `address` calls its getter at (`TableGetter`), and the demangled name of
  /// a symbol that begins exactly at an address: for naming a property whose key path getter dispatches through its
  /// class's table (`TableGetterNaming`).
  static func tableGetterOffset(at address: UInt64) -> Int? {
    withSession(covering: address) { $0.tableGetterOffset(at: address) }
  }

  /// The type a class's metadata at `address` is, by its symbol (`Symbolizer.typeOfMetadata`), or nil: for telling
  /// which file's private type a key path's root is (`StoredField.symbolNames`).
  static func typeOfMetadata(at address: UInt64) -> String? {
    withSession(covering: address) { $0.typeOfMetadata(at: address) }
  }

  static func functionStarting(at address: UInt64) -> String? {
    withSession(covering: address) { $0.functionStarting(at: address) }
  }

  /// The source place (file, line, column) of the innermost frame at the call whose return address is
  /// `returnAddress`, or nil (no debug information, or an address the session would place in the wrong module):
  /// for telling two call instructions of one call in the source apart from two calls (`ScopeInstances`).
  static func innermostPlace(ofReturnAddress returnAddress: UInt64) -> SourcePlace? {
    withSession(covering: returnAddress) { $0.innermostPlace(at: returnAddress, isReturnAddress: true) }
  }

  /// Frames for `addresses`, resolved once each for the process; `calls` are the return addresses among them, each
  /// with the addresses one frame inward of it (`SymbolTableBuilder.build`).
  static func resolve(_ addresses: Set<UInt64>, _ calls: [UInt64: Set<UInt64>]) -> [UInt64: SymbolizedFrame] {
    state.withLock { state in
      let missing = addresses.filter { state.frames[$0] == nil && !state.unresolved.contains($0) }
      if !missing.isEmpty {
        // Tried again when an earlier open failed: the flusher's early open fails when the program closes the
        // descriptor libdw reads the process's map through (a daemon closing every descriptor at its start), and
        // without this the trace's stop would name nothing.
        if !state.attempted || state.symbolizer == nil {
          state.attempted = true
          state.symbolizer = Symbolizer.forCurrentProcess()
        }
        let reopened = state.coverLoadedLibraries(missing)
        var found =
          state.symbolizer?.resolve(Array(missing), returnAddresses: Set(calls.keys), callees: calls) ?? [:]
        // A frame the session still places in another object's module is left unnamed, never named wrongly.
        if reopened, let symbolizer = state.symbolizer {
          found = found.filter { !State.misnamed($0.key, by: symbolizer) }
        }
        if case .success(let runtime) = UntracedTracking.runtime { runtime.nameStaticFrames(&found) }
        state.frames.merge(found) { _, new in new }
        state.unresolved.formUnion(missing.filter { found[$0] == nil })
      }
      var result: [UInt64: SymbolizedFrame] = [:]
      for address in addresses { if let frame = state.frames[address] { result[address] = frame } }
      return result
    }
  }
}
