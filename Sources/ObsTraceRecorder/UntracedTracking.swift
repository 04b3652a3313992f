import CObsTraceRing
import ObsTraceFormat
import ObsTraceSymbols

/// Tracking ObsTrace does not own: `withObservationTracking` called from a file that does not import ObsTrace (a
/// view module, a library that tracks on its own). ObsTrace still sees the reads, through its registrar; it tells
/// they are inside such tracking by asking Observation's runtime for the tracking in progress on the thread
/// (`_swift_observation_tls_get`), and records each such tracking as a scope of kind `untraced`, labelled by its
/// call site. See docs/analysis.md, "Untraced tracking".
enum UntracedTracking {
  /// Observation's runtime, looked for once per process.
  static let runtime: Result<ObservationLibrary, LocateError> = ObservationLibrary.locate()

  /// Whether Observation's getter was found (recordings then see untraced tracking).
  static var isAvailable: Bool {
    if case .success = runtime { return true }
    return false
  }

  private static let reportedMissing = LockedValue(false)

  /// Turns detection on for a recording that starts; false (said once on stderr) when Observation's getter was
  /// not found, and the recording then goes on without it.
  static func enable() -> Bool {
    switch runtime {
    case .success(let runtime):
      obstrace_set_tracking_getter(UnsafeRawPointer(bitPattern: runtime.trackingGetter))
      // ObsTrace sets the tracking itself only when it knows the access list's representation.
      let setter = AccessListWord.isOneWord ? runtime.trackingSetter : nil
      obstrace_set_tracking_setter(setter.flatMap { UnsafeRawPointer(bitPattern: $0) })
      return true
    case .failure(let error):
      obstrace_set_tracking_getter(nil)
      obstrace_set_tracking_setter(nil)
      let first = reportedMissing.withLock { reported in
        defer { reported = true }
        return !reported
      }
      if first {
        Recorder.reportProblem(
          "obstrace: cannot see tracking ObsTrace does not own (\(error.message)); reads inside it are recorded "
            + "as outside any scope")
      }
      return false
    }
  }

  /// Begins an untraced scope for the tracking in progress on this thread (a read, or one of ObsTrace's scopes,
  /// met it first): labelled by the caller of Observation's tracking function, from one stack capture.
  static func beginScope() {
    guard let tracking = obstrace_current_tracking() else { return }
    let (stack, namingStack) = callSiteStack()
    let scope = obstrace_next_scope_serial()
    let parent = obstrace_innermost_enclosing_scope()
    let label = Interner.shared.callerLabelID(stack: stack, namingStack: namingStack)
    // ObsTrace cannot see what re-tracks an untraced scope: one instance per call site.
    let instance = ScopeInstances.resolve(.perLabel, label: label)
    let tag = RecordingTaps.currentTag
    if tag != 0 { RecordingTaps.tagScope(scope, tag) }
    obstrace_emit(
      EventKind.scopeBegin.rawValue, ScopeKind.untraced.rawValue, instance, label, scope, parent,
      obstrace_stack_level() >= 1 ? stack : 0)
    obstrace_push_foreign(tracking, scope)
  }

  /// The scope a scope of ObsTrace's beginning now is nested in: the untraced scope in progress (begun now if it
  /// read nothing yet), or ObsTrace's innermost scope, and Observation's tracking pointer now (for
  /// `obstrace_push_scope`). Foreign scopes that have ended are closed first.
  static func enclosingScope() -> (scope: UInt32, tracking: UnsafeRawPointer?) {
    let tracking = obstrace_current_tracking()
    guard tracking != nil || obstrace_has_foreign_scopes(), let ring = obstrace_current_ring() else {
      return (obstrace_innermost_scope(), tracking)
    }
    if obstrace_foreign_scope_at(ring, tracking, false) == OBSTRACE_NEW_FOREIGN_SCOPE { beginScope() }
    return (obstrace_innermost_enclosing_scope(), tracking)
  }

  /// The calling thread's stack from the caller of Observation's tracking function on (`stack`, which the scope
  /// carries and its label is keyed by: one label per call site): the frames of ObsTrace, the model's accessors
  /// and the tracked closure are dropped, up to and including Observation's own frames. When Observation's frames
  /// are on the stack, `naming` is the whole stack, which names the label at stop: its caller's frame when there
  /// is one of the user's, else the tracked closure's (an `Observations` loop runs its closure from Observation's
  /// own async code, with no frame of the user's after it). Otherwise `naming` is `stack`.
  static func callSiteStack() -> (stack: UInt32, naming: UInt32) {
    withUnsafeTemporaryAllocation(of: UInt.self, capacity: Int(OBSTRACE_MAX_STACK_DEPTH)) { buffer in
      let count = Int(obstrace_capture_stack(buffer.baseAddress!, OBSTRACE_MAX_STACK_DEPTH, 1))
      guard count > 0 else { return (0, 0) }
      var first = 0
      var naming: UInt32?
      if case .success(let runtime) = runtime {
        let inObservation = { (address: UInt) in runtime.code.contains { $0.contains(address) } }
        if let start = buffer[0..<count].firstIndex(where: inObservation) {
          first = buffer[start..<count].firstIndex(where: { !inObservation($0) }) ?? count
          let whole = UnsafeBufferPointer(rebasing: buffer[0..<count])
          naming = Interner.shared.stackID(whole, hash: obstrace_hash_frames(whole.baseAddress!, Int32(count)))
        }
      }
      guard first < count else { return (0, naming ?? 0) }
      let frames = UnsafeBufferPointer(rebasing: buffer[first..<count])
      let stack = Interner.shared.stackID(frames, hash: obstrace_hash_frames(frames.baseAddress!, Int32(frames.count)))
      return (stack, naming ?? stack)
    }
  }
}

/// Where Observation's runtime is in this process: its tracking getter and setter, and its code.
struct ObservationLibrary: Sendable {
  /// The address of `_swift_observation_tls_get` in this process.
  var trackingGetter: UInt
  /// The address of `_swift_observation_tls_set`, nil when not found: ObsTrace's own top-level tracking then runs
  /// through Observation's `withObservationTracking` (see `TracedTracking.track`).
  var trackingSetter: UInt?
  /// Observation's code: frames inside it are Observation's own (the library's executable segments, or the run of
  /// Observation's functions in an executable that links it statically).
  var code: [Range<UInt>]
  var path: String
  /// Observation is linked into the executable (`--static-swift-stdlib`), not a library of its own.
  var isStatic = false
  /// In such an executable, the code of the toolchain's other libraries linked in with Observation (the Swift
  /// runtime, Concurrency, Dispatch, …: `StaticMembers`), in this process's addresses.
  var libraries: [LibraryCode] = []

  /// The module name given to frames of a library's code linked into the executable, which the symbolizer names
  /// by the executable: `libswiftObservation.a in App`, `libswift_Concurrency.a in App`, so that readers tell them
  /// the library's as they tell a shared library's (`SiteFilter.isObservation`, `SiteFilter.isMachinery`).
  func staticModuleName(_ archive: String) -> String {
    archive + " in " + (path.split(separator: "/").last.map(String.init) ?? path)
  }

  /// Names the frames of a static executable that are a library's code (Observation's, the runtime's) by their
  /// library; a shared library's frames are named by it already.
  func nameStaticFrames(_ frames: inout [UInt64: SymbolizedFrame]) {
    guard isStatic, !code.isEmpty || !libraries.isEmpty else { return }
    let observation = staticModuleName("libswiftObservation.a")
    let names = libraries.map { staticModuleName($0.archive) }
    for (address, frame) in frames {
      let address = UInt(address)
      let name: String
      if code.contains(where: { $0.contains(address) }) {
        name = observation
      } else if let index = libraries.firstIndex(where: { $0.code.contains(address) }) {
        name = names[index]
      } else {
        continue
      }
      var renamed = frame
      renamed.module = name
      renamed.inlined = renamed.inlined.map {
        var inner = $0; inner.module = name; return inner
      }
      frames[UInt64(address)] = renamed
    }
  }

  /// Finds the loaded libswiftObservation.so and the getter in its symbol table, or, when no such library is loaded
  /// (a program built with `--static-swift-stdlib` links Observation into itself), the getter in the executable's
  /// own symbol table; or says why it cannot (`symbol`: another name is for tests of the failure).
  static func locate(symbol: String = ObservationRuntime.trackingGetterSymbol) -> Result<Self, LocateError> {
    var path = [CChar](repeating: 0, count: 4096)
    var bias: UInt = 0
    var ranges = [UInt](repeating: 0, count: 16)
    var count = obstrace_find_loaded_object(ObservationRuntime.libraryName, &path, path.count, &bias, &ranges, 8)
    let isStatic = count < 0
    if isStatic { count = obstrace_find_loaded_object("", &path, path.count, &bias, &ranges, 8) }
    guard count >= 0 else {
      return .failure(LocateError(message: "\(ObservationRuntime.libraryName) is not loaded in this process"))
    }
    let file = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let setterSymbol = ObservationRuntime.trackingSetterSymbol
    // A static executable's table is read once, for the symbols and for whose code is where.
    let image =
      isStatic ? ObservationRuntime.staticImage(in: file, symbols: [symbol, setterSymbol], getter: symbol) : nil
    let values = image?.symbols ?? ObservationRuntime.localSymbols([symbol, setterSymbol], in: file)
    guard let value = values[symbol] else {
      guard isStatic else {
        return .failure(LocateError(message: "\(symbol) is not in \(file)'s symbol table"))
      }
      return .failure(
        LocateError(
          message: "\(ObservationRuntime.libraryName) is not loaded in this process, and the executable, which then "
            + "links Observation itself (a static standard library), has no \(symbol) in its symbol table (\(file): "
            + "stripped?)"))
    }
    let segments = (0..<Int(count)).map { ranges[2 * $0]..<ranges[2 * $0 + 1] }
    let getter = bias &+ value
    // Never call an address outside the object's loaded code.
    guard segments.contains(where: { $0.contains(getter) }) else {
      return .failure(LocateError(message: "\(symbol) in \(file) is not inside the object's loaded code"))
    }
    // Frames inside Observation's code are Observation's own: the library's whole code, or, linked into the
    // executable, the run of Observation's functions around the getter.
    let relocated = { (range: Range<UInt>) in (bias &+ range.lowerBound)..<(bias &+ range.upperBound) }
    let code = image.map { $0.observation.map(relocated) } ?? segments
    let libraries = (image?.libraries ?? []).map { LibraryCode(code: relocated($0.code), archive: $0.archive) }
    // The setter likewise, or none (ObsTrace's tracking then goes through Observation's function).
    let setter = values[setterSymbol].map { bias &+ $0 }.flatMap { address in
      segments.contains { $0.contains(address) } ? address : nil
    }
    return .success(
      ObservationLibrary(
        trackingGetter: getter, trackingSetter: setter, code: code, path: file, isStatic: isStatic,
        libraries: libraries))
  }
}

/// Why Observation's runtime could not be located.
struct LocateError: Error, Sendable {
  var message: String
}
