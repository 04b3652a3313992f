/// One event read back from a trace. Field meanings depend on `kind`; see `EventKind` and docs/trace-format.md.
public struct TraceEvent: Sendable, Equatable {
  public var kind: EventKind
  public var flags: UInt8
  /// The recording thread (a small serial, not the OS thread id).
  public var thread: UInt32
  /// Nanoseconds since the recording started.
  public var time: UInt64
  /// How many of ObsTrace's tracking scopes were open on the thread.
  public var depth: UInt16
  /// The object's serial, or 0.
  public var object: UInt32
  /// The property id (access, willSet, didSet, fired), label id (scopeBegin), or 0.
  public var key: UInt32
  /// The scope id (scope events; the innermost open scope on access), or 0.
  public var scope: UInt32
  /// The object's type id (object events, accesses, writes), the enclosing scope (scopeBegin), or a count.
  public var aux: UInt32
  /// The interned call stack, or 0.
  public var stack: UInt32

  public init(
    kind: EventKind, flags: UInt8 = 0, thread: UInt32, time: UInt64, depth: UInt16 = 0, object: UInt32 = 0,
    key: UInt32 = 0, scope: UInt32 = 0, aux: UInt32 = 0, stack: UInt32 = 0
  ) {
    self.kind = kind
    self.flags = flags
    self.thread = thread
    self.time = time
    self.depth = depth
    self.object = object
    self.key = key
    self.scope = scope
    self.aux = aux
    self.stack = stack
  }
}

/// A property, as interned by the recorder: a key path of an observable type.
public struct PropertyDefinition: Sendable, Equatable {
  /// The type the key path starts from.
  public var rootType: UInt32
  /// The key path's own description (on Linux `\Model.<computed 0x… (Int)>`).
  public var keyPathDescription: String
  /// The address of the key path's getter in the recording process, or 0; symbolized into a name.
  public var getterAddress: UInt64

  public init(rootType: UInt32, keyPathDescription: String, getterAddress: UInt64) {
    self.rootType = rootType
    self.keyPathDescription = keyPathDescription
    self.getterAddress = getterAddress
  }
}

/// A scope, as the recorder defined it when it began.
public struct ScopeDefinition: Sendable, Equatable {
  public var kind: ScopeKind
  public var label: UInt32
  /// The scope that was innermost on the thread when this one began, or 0.
  public var parent: UInt32

  public init(kind: ScopeKind, label: UInt32, parent: UInt32) {
    self.kind = kind
    self.label = label
    self.parent = parent
  }
}

/// One resolved code address: the function, and where it is when debug information says so.
///
/// An optimized build inlines functions into their callers, so one address can stand for several logical frames:
/// `inlined` holds the functions inlined at the address, innermost first, each with its own file and line; the
/// frame itself is the function the address is physically in, at the line where the outermost inlined call was
/// made. `logicalFrames` lists them all.
public struct SymbolizedFrame: Sendable, Equatable {
  public var address: UInt64
  public var function: String
  public var file: String
  public var line: UInt32
  public var module: String
  /// The frames inlined at this address, innermost first (empty when nothing was inlined or DWARF is missing).
  public var inlined: [SymbolizedFrame]
  /// The Swift module whose code this is, from DWARF (the `DW_TAG_module` its function is declared in), set by the
  /// symbolizer only where the function's name does not say it: an executable's top-level code (`main`,
  /// `async_Main`, `async_MainTY1_`). Stored in a trace (the symbols chunk's 0x97 record), so that a write's site in
  /// top-level code names its module as a label does (`App/main.swift:23`).
  public var declaringModule = ""
  /// The line is not known for certain, only near: the binary's line table does not tell the user's line (a
  /// statement of an `@Observable` property's observer that the macro re-formatted over more lines than the user
  /// wrote, or a call in line-0 code between two statements). docs/symbols.md (Line numbers) says when. Stored in a
  /// trace (the symbols chunk's 0x96 record).
  public var lineIsApproximate = false

  public init(
    address: UInt64, function: String, file: String = "", line: UInt32 = 0, module: String = "",
    inlined: [SymbolizedFrame] = []
  ) {
    self.address = address
    self.function = function
    self.file = file
    self.line = line
    self.module = module
    self.inlined = inlined
  }

  /// The inlined frames, innermost first, then the physical one: what a debugger's backtrace shows for it.
  public var logicalFrames: [SymbolizedFrame] {
    guard !inlined.isEmpty else { return [self] }
    var physical = self
    physical.inlined = []
    return inlined + [physical]
  }
}

/// What the recording process knew when it started.
public struct TraceHeader: Sendable, Equatable {
  public var version: UInt16
  public var startWallClockNanoseconds: UInt64
  public var processID: UInt32
  public var executable: String
  public var dropWhenFull: Bool
  public var ringCapacity: UInt64
  /// 0 off, 1 writes and scope begins, 2 every event.
  public var stackLevel: UInt8
  /// Whether the recorder could see tracking ObsTrace does not own (it found Observation's
  /// `_swift_observation_tls_get`); nil in version-1 files, whose recorder did not look.
  public var seesUntracedTracking: Bool?
  /// Whether the recording was started by code while the program ran (`Recorder.start`), so that tracking begun
  /// before it may exist, unseen; false from `OBSTRACE_OUTPUT` and in files written before the flag existed.
  public var startedWhileRunning: Bool

  public init(
    version: UInt16 = TraceFormat.version, startWallClockNanoseconds: UInt64, processID: UInt32, executable: String,
    dropWhenFull: Bool, ringCapacity: UInt64, stackLevel: UInt8, seesUntracedTracking: Bool? = nil,
    startedWhileRunning: Bool = false
  ) {
    self.version = version
    self.startWallClockNanoseconds = startWallClockNanoseconds
    self.processID = processID
    self.executable = executable
    self.dropWhenFull = dropWhenFull
    self.ringCapacity = ringCapacity
    self.stackLevel = stackLevel
    self.seesUntracedTracking = version >= 2 ? seesUntracedTracking ?? false : nil
    self.startedWhileRunning = version >= 2 && startedWhileRunning
  }
}

/// Per-thread totals of a cleanly stopped recording.
public struct ThreadTotals: Sendable, Equatable {
  public var thread: UInt32
  public var osThreadID: Int32
  public var recorded: UInt64
  public var dropped: UInt64

  public init(thread: UInt32, osThreadID: Int32, recorded: UInt64, dropped: UInt64) {
    self.thread = thread
    self.osThreadID = osThreadID
    self.recorded = recorded
    self.dropped = dropped
  }
}

/// The last chunk of a cleanly stopped recording.
public struct TraceFooter: Sendable, Equatable {
  public var durationNanoseconds: UInt64
  public var chunks: UInt64
  public var threads: [ThreadTotals]
  /// Version 2: the threads (serials) that had recorded and were still running when the recording stopped, other
  /// than the one that stopped it: what they did after the stop is not in the trace (at exit, their last events
  /// may be missing). Empty in version-1 traces and in version-2 traces written before the field was added.
  public var runningAtStop: [UInt32]
  /// Version 2: events stored in a ring too late for the final drain (a thread that saw recording on just before
  /// it was switched off), so not in the trace.
  public var lostAtStop: UInt64
  /// Version 3, added late: events offered on threads that could not get a ring (its memory could not be
  /// allocated), so not in the trace. 0 in footers written before the field was added.
  public var ringless: UInt64
  /// Version 3, added later: how many times the process forked while recording. A child of such a fork does not
  /// record (it has no flusher), so nothing it did is in the trace. 0 in footers written before the field was added.
  public var forks: UInt64
  /// Version 3, added later still: events offered by signal handlers that interrupted the recorder on their own
  /// thread (the recorder is not re-entrant on a thread), counted, not recorded, so not in the trace. 0 in footers
  /// written before the field was added.
  public var signalHandlerEvents: UInt64

  public init(
    durationNanoseconds: UInt64, chunks: UInt64, threads: [ThreadTotals], runningAtStop: [UInt32] = [],
    lostAtStop: UInt64 = 0, ringless: UInt64 = 0, forks: UInt64 = 0, signalHandlerEvents: UInt64 = 0
  ) {
    self.durationNanoseconds = durationNanoseconds
    self.chunks = chunks
    self.threads = threads
    self.runningAtStop = runningAtStop
    self.lostAtStop = lostAtStop
    self.ringless = ringless
    self.forks = forks
    self.signalHandlerEvents = signalHandlerEvents
  }

  /// Saturating sums: the counts come from a file, which may say anything.
  public var recorded: UInt64 { threads.reduce(0) { $0.addingSaturating($1.recorded) } }
  public var dropped: UInt64 { threads.reduce(0) { $0.addingSaturating($1.dropped) } }
}

/// A module mapped into the recording process: its file and its load address (the start of its first mapping).
/// Recorded at start, so that `obstrace symbolize` can resolve addresses after the process is gone.
public struct LoadedModule: Sendable, Equatable {
  public var path: String
  public var base: UInt64

  public init(path: String, base: UInt64) {
    self.path = path
    self.base = base
  }
}
