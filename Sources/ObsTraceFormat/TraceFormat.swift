/// Constants of the trace file format, version 3. The format is described in docs/trace-format.md; change both
/// together, and bump `version` for any change an older reader could misread. Version 3 (unreleased; later changes of
/// this session extend it): every chunk is a raw deflate stream, not a zlib stream. Version 2: header flags, the `untraced` scope kind, inlined frames in the symbols chunk, a
/// scope's instance in `scopeBegin`, the reason of `trackingCancelled`,
/// didSet flag 4 (`_modify`), event kind 13 (`objectBound`), the event mask's `sameObjectAndKey` and `sameTime`
/// bits, the footer's threads still running at the stop and events lost at the stop, the events chunk's time column
/// (`ChunkFlags.timesApart`).
public enum TraceFormat {
  /// The first eight bytes of every trace file.
  public static let magic: [UInt8] = Array("OBSTRACE".utf8)
  /// The four bytes that open every chunk, so a reader can find the next chunk after a damaged one.
  public static let chunkMagic: [UInt8] = Array("OTCK".utf8)
  /// The format version this module writes; readers accept versions up to it.
  public static let version: UInt16 = 3
  /// Bytes before a chunk's payload: magic, type, compressed length, uncompressed length, CRC-32.
  public static let chunkHeaderSize = 4 + 1 + 4 + 4 + 4
  /// The largest uncompressed chunk a reader accepts (a writer aims for 64–256 KiB).
  public static let maximumChunkSize = 64 << 20
  /// The largest uncompressed events chunk a reader accepts. The flusher closes a chunk as soon as it passes
  /// 60 KiB, so a chunk it writes is that plus one event and the definitions that event states (each cut by
  /// the recorder's limits below): far under this. A larger events chunk is damage, skipped and reported: a
  /// 65 KB zlib stream can inflate to 64 MiB of four-byte events, 16 M events from one chunk.
  public static let maximumEventsChunkSize = 4 << 20
  /// The longest string a definition may hold (a type name, a key path's description, a label). The recorder
  /// cuts longer ones to `maximumRecordedNameLength`; a reader treats a longer one as damage.
  public static let maximumDefinitionStringLength = 64 << 10
  /// The records a thread's ring may hold (`OBSTRACE_RING_CAPACITY`, `RecordingOptions.ringCapacity`, `obstrace
  /// record --ring-capacity`), rounded up to a power of two: 64 to 2^22 (4,194,304 records, 128 MiB a ring at 32
  /// bytes a record). Each recording thread gets a ring, every page of it touched, and the pool keeps a spare: the
  /// memory grows with the threads. Past 2^22 a ring buys nothing: it already holds ≈ 84 ms of a thread recording
  /// flat out (≈ 20 ns an event), while the flusher wakes as soon as a ring is half full and hands slots back 4096
  /// records at a time. (Until 2026-12-01 up to 2^30 was taken silently: 32 GiB a ring.)
  public static let ringCapacities = 64...(1 << 22)
  /// The longest name the recorder writes (type, key path description, label, symbol): a longer one (a
  /// generated name) is cut to this many UTF-8 bytes, ending in `…`.
  public static let maximumRecordedNameLength = 1024

  /// `name` cut to `maximumRecordedNameLength` UTF-8 bytes on a character boundary, ending in `…`; unchanged
  /// when it fits. What the recorder applies to every name it writes.
  public static func cutName(_ name: String) -> String {
    guard name.utf8.count > maximumRecordedNameLength else { return name }
    var cut = ""
    var bytes = 0
    let room = maximumRecordedNameLength - "…".utf8.count
    for character in name {
      let size = character.utf8.count
      if bytes + size > room { break }
      cut.append(character)
      bytes += size
    }
    return cut + "…"
  }
  /// The most frames a stack definition may hold (the recorder walks at most 64).
  public static let maximumStackFrames = 1024
  /// Memory the definitions of a trace may take, beyond a fixed allowance: this many bytes per byte of file.
  /// Definitions are restated per chunk and compress; what they hold in memory is bounded by what the file
  /// could carry. A chunk whose definitions pass it is damage, skipped and reported.
  public static let definitionBytesPerFileByte: UInt64 = 16
  /// The fixed allowance for definitions' memory, whatever the file's size.
  public static let definitionAllowance: UInt64 = 16 << 20
  /// The thread serial no recorder writes (a process numbers its recording threads from 1, and would need 2^32-1 of
  /// them): the replay's "no thread". An events chunk naming it is damage, skipped and reported, so that a forged
  /// file cannot pass a thread off as none (a write on it would race nothing).
  public static let reservedThread = UInt32.max
}

/// What a chunk holds.
public enum ChunkType: UInt8, Sendable {
  /// One thread's events, with the definitions they use.
  case events = 1
  /// Names and places resolved at stop: properties, types, call-stack frames.
  case symbols = 2
  /// Totals, written last by a clean stop.
  case footer = 3
  /// The modules mapped at start (file and load address), for symbolizing later.
  case modules = 4
}

/// The kinds of recorded events. Raw values are stored in the file and in the C ring.
public enum EventKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  /// A property was read (`ObservationRegistrar.access`).
  case access = 1
  /// A property is about to change (`willSet`, also the first half of `withMutation`).
  case willSet = 2
  /// A property changed (`didSet`); flags say whether the value was unchanged.
  case didSet = 3
  /// An object's registrar was created.
  case objectCreated = 4
  /// An object's registrar was freed (its object deinitialized).
  case objectFreed = 5
  /// A tracking scope began (`key` is its label, `flags` its kind, `aux` the enclosing scope; since version 2,
  /// `object` is the instance the run continues).
  case scopeBegin = 6
  /// A tracking scope's closure returned.
  case scopeEnd = 7
  /// Observers were installed on what the scope read (`aux`: how many accesses it recorded).
  case trackingInstalled = 8
  /// A scope's change handler ran, caused by the write in progress on the thread (`object`, `key`).
  case trackingFired = 9
  /// A scope's observers were removed.
  case trackingCancelled = 10
  /// The scope that just began is a value of an `Observations` sequence (`key`: the sequence, `aux`: the type of
  /// the actor the closure ran on, 0 when nonisolated; flags 1: the main actor).
  case observationsRun = 11
  /// An `Observations` sequence ended (`key`: the sequence, `scope`: its last run; flags: 1 cancelled,
  /// 2 finished, 3 threw).
  case observationsEnd = 12
  /// Version 2: a registrar of an object whose class has `@Observable` at several levels (one registrar per
  /// level) belongs to the object `aux` (the serial of another of its registrars): its events carry that serial,
  /// and it is not an object of its own. Recorded once, at the first event of any of the object's registrars.
  case objectBound = 13

  public var description: String {
    switch self {
    case .access: "access"
    case .willSet: "willSet"
    case .didSet: "didSet"
    case .objectCreated: "objectCreated"
    case .objectFreed: "objectFreed"
    case .scopeBegin: "scopeBegin"
    case .scopeEnd: "scopeEnd"
    case .trackingInstalled: "trackingInstalled"
    case .trackingFired: "trackingFired"
    case .trackingCancelled: "trackingCancelled"
    case .observationsRun: "observationsRun"
    case .observationsEnd: "observationsEnd"
    case .objectBound: "objectBound"
    }
  }
}

/// Flag bits of events, by kind.
public enum EventFlags {
  /// On `access`: a tracking scope of ObsTrace's was open on the thread.
  public static let accessInScope: UInt8 = 1
  /// On `access`: the read happened inside the willSet window of the same property of the same object, on the
  /// same thread, so it saw the value from before the write.
  public static let staleRead: UInt8 = 2
  /// On `willSet` (version 2): the registrar's `withMutation` made it: the macro's setter (`=`) or an explicit
  /// `withMutation(keyPath:)`, told apart by the stack (`TraceDefinitions.writeKind`).
  public static let willSetInWithMutation: UInt8 = 1
  /// On `willSet` (version 2): the registrar's `willSet` was called directly, as the macro's `_modify` does (`+=`,
  /// `append`, a subscript or a property of the value).
  public static let willSetDirect: UInt8 = 2
  /// On `didSet`: the value was compared with the one before the write and found equal.
  public static let unchanged: UInt8 = 1
  /// On `didSet`: the value was compared and found different.
  public static let changed: UInt8 = 2
  /// On `didSet` (version 2): the write went through `_modify` (the registrar's willSet and didSet called
  /// directly), where the macro does not skip unchanged values. With neither `unchanged` nor `changed`, it was
  /// not compared, and bits 3–5 say why (`UncomparedReason`). Version-1 traces never set it.
  public static let modify: UInt8 = 4
  /// On `trackingCancelled` (a reason, not a bit): cancelled because the scope fired (one-shot tracking).
  public static let cancelledByFire: UInt8 = 1
  /// On `trackingCancelled` (version 2): the `Observations` iteration the run belongs to ended (cancelled,
  /// finished or threw) while its tracking waited for a change.
  public static let cancelledBySequenceEnd: UInt8 = 2
  /// On `trackingCancelled` (version 2): every object the run read was freed.
  public static let cancelledByObjectsFreed: UInt8 = 3
  /// On `observationsRun`: the closure ran on the main actor.
  public static let onMainActor: UInt8 = 1
}

/// Why a write through `_modify` was not compared: on its didSet (flag `modify`, neither `unchanged` nor
/// `changed`), bits 3–5 of the flags (`rawValue << 3`). Traces recorded before the reason was (version 3 of
/// session 10 and earlier) have none: `notRecorded`.
public enum UncomparedReason: UInt8, Sendable, CaseIterable {
  /// The trace does not say (recorded before the reason was).
  case notRecorded = 0
  /// Comparison was off (`OBSTRACE_COMPARE=off`, `recordObservation(comparing: .off)`).
  case comparisonOff = 1
  /// Under `trivial`: the member is not trivially copyable (an array, a string, a struct holding references) or is
  /// larger than the 64 bytes compared bit for bit; `equatable` compares it when it is Equatable.
  case notTriviallyCopyable = 2
  /// Under `equatable`: the member is neither Equatable nor trivially copyable in 64 bytes: nothing can compare it.
  case notEquatable = 3
  /// The member could be compared bit for bit, but its stored field was not found beyond doubt: no symbol names
  /// the key path's getter (a stripped binary), the class has no single field `_name` of the member's type, or no
  /// line table shows who wrote the property's getter (a binary without debug information).
  case storedFieldNotFound = 4
  /// The value from before the write was not kept: the recording started during the write.
  case noValueKept = 5
  /// The recorder's table of stored fields was full (`OBSTRACE_MAX_FIELD_PROPERTIES` properties).
  case tooManyProperties = 6
  /// The property's accessors are written by hand (its getter is not the `@Observable` macro's, as the line table
  /// shows): its value may be kept anywhere, so a field `_name` is not known to be its storage (recorded since
  /// session 15; before, such a field was compared and a real change could be called unchanged).
  case handWrittenAccessor = 7

  /// The reason in a few words, for dump and timeline ("not compared (stored field not found)").
  public var name: String {
    switch self {
    case .notRecorded: "reason not recorded"
    case .comparisonOff: "comparison off"
    case .notTriviallyCopyable: "not trivially copyable"
    case .notEquatable: "not Equatable"
    case .storedFieldNotFound: "stored field not found"
    case .noValueKept: "value before not kept"
    case .tooManyProperties: "too many properties"
    case .handWrittenAccessor: "hand-written accessor"
    }
  }

  /// Why, as the report says it ("N not compared (WHY)").
  public var why: String {
    switch self {
    case .notRecorded: "the trace does not say why"
    case .comparisonOff: "comparison off"
    case .notTriviallyCopyable: "not trivially copyable or over 64 bytes: arrays, strings, …"
    case .notEquatable: "neither Equatable nor trivially copyable in 64 bytes: nothing compares them"
    case .storedFieldNotFound:
      "stored field not found: no symbol names the property's key path getter, its class has no one field "
        + "_name of its type, or no line table shows its getter is the @Observable macro's"
    case .noValueKept: "the value from before the write was not kept: the recording started during the write"
    case .tooManyProperties: "over 65536 properties: the recorder's table of stored fields was full"
    case .handWrittenAccessor:
      "hand-written accessor: its getter is not the @Observable macro's, so its value may be kept anywhere, "
        + "not known to be in a field _name"
    }
  }

  /// The name of the reason in JSON (`report --format json`).
  public var key: String {
    switch self {
    case .notRecorded: "notRecorded"
    case .comparisonOff: "comparisonOff"
    case .notTriviallyCopyable: "notTriviallyCopyable"
    case .notEquatable: "notEquatable"
    case .storedFieldNotFound: "storedFieldNotFound"
    case .noValueKept: "noValueKept"
    case .tooManyProperties: "tooManyProperties"
    case .handWrittenAccessor: "handWrittenAccessor"
    }
  }

  /// The reason's bits in a didSet's flags.
  public var flags: UInt8 { rawValue << 3 }

  /// The reason a didSet's flags give (`notRecorded` for none, or for a value this reader does not know).
  public init(flags: UInt8) {
    self = UncomparedReason(rawValue: (flags >> 3) & 0b111) ?? .notRecorded
  }
}

/// Why an `Observations` sequence ended (the flags of `observationsEnd`).
public enum SequenceEnding: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case cancelled = 1
  case finished = 2
  case threw = 3
  /// The iterator was released without ending: the loop over it left early (`break`, `return`, a throw in its
  /// body), or it was dropped. Version 2, this session.
  case abandoned = 4

  public var description: String {
    switch self {
    case .cancelled: "cancelled"
    case .finished: "finished"
    case .threw: "threw"
    case .abandoned: "abandoned"
    }
  }
}

/// Bits of the header's flags byte (version 2; in version 1 the byte is the drop mode, 0 or 1).
public enum HeaderFlags {
  /// The recorder dropped events when a ring was full instead of waiting.
  public static let dropWhenFull: UInt8 = 1
  /// The recorder found Observation's tracking getter and recorded tracking it does not own as `untraced` scopes.
  public static let seesUntracedTracking: UInt8 = 2
  /// The recording was started by code while the program ran (`Recorder.start`), not from `OBSTRACE_OUTPUT` at the
  /// program's first traced object or scope: tracking begun before it may exist, and is not seen.
  public static let startedWhileRunning: UInt8 = 4
}

/// Flag bits of an events chunk's header.
public enum ChunkFlags {
  /// The thread exited: no chunk of it follows.
  public static let threadEnded: UInt8 = 1
  /// Version 2: the events' time deltas are a column after the items, whose length follows the flags (a varint);
  /// without it, each event's delta follows its mask.
  public static let timesApart: UInt8 = 2
}

/// The bits of an event's presence mask: which fields follow the event's kind, flags and mask.
public enum EventMask {
  public static let depth: UInt8 = 1
  public static let object: UInt8 = 2
  public static let key: UInt8 = 4
  public static let scope: UInt8 = 8
  public static let aux: UInt8 = 16
  public static let stack: UInt8 = 32
  /// Version 2: the object and key are those of the chunk's previous event (0 and 0 before its first); bits 1 and
  /// 2 are then clear.
  public static let sameObjectAndKey: UInt8 = 64
  /// Version 2: no time delta follows; the event has the time of the chunk's previous event (its first time for
  /// the first).
  public static let sameTime: UInt8 = 128
}

/// The kinds of scopes, stored in the `flags` of `scopeBegin`.
public enum ScopeKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  /// `withObservationTracking(_:onChange:)`: one-shot, fires on the first willSet.
  case tracking = 1
  /// A scope a user named with `ObsTrace.scope(_:)` around code that runs under tracking.
  case named = 2
  /// One run of an `Observations` sequence's closure.
  case observations = 3
  /// A continuous (willSet/didSet) tracking that fires until cancelled.
  case continuous = 4
  /// Tracking ObsTrace does not own (`withObservationTracking` called where ObsTrace is not imported), seen
  /// through Observation's runtime and labelled by its call site: its reads are recorded, its fires are predicted
  /// by the replay (format version 2).
  case untraced = 5

  public var description: String {
    switch self {
    case .tracking: "tracking"
    case .named: "named"
    case .observations: "observations"
    case .continuous: "continuous"
    case .untraced: "untraced"
    }
  }
}

/// Tags of the definition records that precede, inside a chunk, the first event that uses them.
enum DefinitionTag: UInt8 {
  case type = 0x81
  case property = 0x82
  case label = 0x83
  case object = 0x84
  case stack = 0x85
  case scope = 0x86
}
