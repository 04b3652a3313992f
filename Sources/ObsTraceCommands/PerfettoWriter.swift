/// Perfetto's native trace format, encoded by hand (protobuf wire format; field numbers from Perfetto's
/// `protos/perfetto/trace/`: trace.proto, trace_packet.proto, track_event/*.proto). A `Trace` is a sequence of
/// `TracePacket`s (field 1); each is written as soon as its event comes, so memory stays flat.
///
/// One packet sequence: the first packet clears the incremental state; event names, categories and argument
/// names are interned (sent once in `interned_data`, then referred to by id) in packets that say they need that
/// state. A process track, and a thread track per recording thread, are described (`TrackDescriptor`) before
/// their first event. Timestamps are nanoseconds since the recording started.
struct PerfettoWriter: ExportWriter {
  let output: OutputFile
  let processID: Int32
  let processName: String
  private var started = false
  private var eventNames: [String: UInt64] = [:]
  private var categories: [String: UInt64] = [:]
  private var argumentNames: [String: UInt64] = [:]

  static let processTrack: UInt64 = 1
  static let sequence: UInt64 = 1

  // TracePacket
  enum Packet {
    static let timestamp = 8
    static let trustedPacketSequenceID = 10
    static let trackEvent = 11
    static let internedData = 12
    static let sequenceFlags = 13
    static let trackDescriptor = 60
    /// SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE
    static let incrementalStateCleared: UInt64 = 1
    static let needsIncrementalState: UInt64 = 2
  }

  // TrackEvent
  enum Event {
    static let categoryIIDs = 3
    static let debugAnnotations = 4
    static let type = 9
    static let nameIID = 10
    static let trackUUID = 11
    static let flowIDs = 47
    static let terminatingFlowIDs = 48
    static let sliceBegin: UInt64 = 1
    static let sliceEnd: UInt64 = 2
    static let instant: UInt64 = 3
  }

  init(output: OutputFile, processID: Int32, processName: String) {
    self.output = output
    self.processID = processID
    self.processName = processName
  }

  static func trackUUID(_ thread: UInt32) -> UInt64 { 0x1_0000_0000 | UInt64(thread) }

  mutating func declare(_ thread: ExportThread) throws(CommandError) {
    try startIfNeeded()
    var track = ProtobufMessage()
    track.varint(1, Self.trackUUID(thread.thread))  // uuid
    track.varint(5, Self.processTrack)  // parent_uuid
    var descriptor = ProtobufMessage()
    descriptor.varint(1, UInt64(UInt32(bitPattern: processID)))  // pid
    descriptor.varint(2, UInt64(UInt32(bitPattern: thread.osThreadID != 0 ? thread.osThreadID : Int32(thread.thread))))
    descriptor.string(5, thread.name)  // thread_name
    track.message(4, descriptor)  // thread
    var packet = ProtobufMessage()
    packet.varint(Packet.trustedPacketSequenceID, Self.sequence)
    packet.message(Packet.trackDescriptor, track)
    try emit(packet)
  }

  mutating func write(_ event: ExportEvent) throws(CommandError) {
    try startIfNeeded()
    var interned = ProtobufMessage()
    var trackEvent = ProtobufMessage()
    switch event.phase {
    case .begin: trackEvent.varint(Event.type, Event.sliceBegin)
    case .end: trackEvent.varint(Event.type, Event.sliceEnd)
    case .instant: trackEvent.varint(Event.type, Event.instant)
    }
    trackEvent.varint(Event.trackUUID, Self.trackUUID(event.thread))
    if event.phase != .end {
      trackEvent.varint(Event.nameIID, Self.intern(event.name, in: &eventNames, field: 2, into: &interned))
      trackEvent.varint(Event.categoryIIDs, Self.intern(event.category, in: &categories, field: 1, into: &interned))
    }
    for argument in event.arguments {
      var annotation = ProtobufMessage()
      annotation.varint(1, Self.intern(argument.name, in: &argumentNames, field: 3, into: &interned))  // name_iid
      switch argument.value {
      case .string(let text): annotation.string(6, text)  // string_value
      case .number(let number): annotation.varint(3, number)  // uint_value
      case .flag(let flag): annotation.varint(2, flag ? 1 : 0)  // bool_value
      }
      trackEvent.message(Event.debugAnnotations, annotation)
    }
    for flow in event.flowsOut { trackEvent.fixed64(Event.flowIDs, flow) }
    for flow in event.flowsIn { trackEvent.fixed64(Event.terminatingFlowIDs, flow) }
    var packet = ProtobufMessage()
    packet.varint(Packet.timestamp, event.time)
    packet.varint(Packet.trustedPacketSequenceID, Self.sequence)
    packet.varint(Packet.sequenceFlags, Packet.needsIncrementalState)
    if !interned.bytes.isEmpty { packet.message(Packet.internedData, interned) }
    packet.message(Packet.trackEvent, trackEvent)
    try emit(packet)
  }

  /// What the trace lost: an instant on the process track, named by it.
  mutating func noteLoss(_ text: String, at time: UInt64) throws(CommandError) {
    try startIfNeeded()
    var interned = ProtobufMessage()
    var trackEvent = ProtobufMessage()
    trackEvent.varint(Event.type, Event.instant)
    trackEvent.varint(Event.trackUUID, Self.processTrack)
    trackEvent.varint(Event.nameIID, Self.intern(text, in: &eventNames, field: 2, into: &interned))
    trackEvent.varint(Event.categoryIIDs, Self.intern("obstrace", in: &categories, field: 1, into: &interned))
    var packet = ProtobufMessage()
    packet.varint(Packet.timestamp, time)
    packet.varint(Packet.trustedPacketSequenceID, Self.sequence)
    packet.varint(Packet.sequenceFlags, Packet.needsIncrementalState)
    if !interned.bytes.isEmpty { packet.message(Packet.internedData, interned) }
    packet.message(Packet.trackEvent, trackEvent)
    try emit(packet)
  }

  mutating func finish() throws(CommandError) {
    try startIfNeeded()
    try output.flush()
  }

  /// The first packet: it clears the sequence's incremental state, and describes the process track.
  private mutating func startIfNeeded() throws(CommandError) {
    guard !started else { return }
    started = true
    var packet = ProtobufMessage()
    packet.varint(Packet.trustedPacketSequenceID, Self.sequence)
    packet.varint(Packet.sequenceFlags, Packet.incrementalStateCleared)
    var track = ProtobufMessage()
    track.varint(1, Self.processTrack)  // uuid
    var process = ProtobufMessage()
    process.varint(1, UInt64(UInt32(bitPattern: processID)))  // pid
    process.string(6, processName)  // process_name
    track.message(3, process)  // process
    packet.message(Packet.trackDescriptor, track)
    try emit(packet)
  }

  /// The id of `name` in `table`; a name seen for the first time is added to this packet's `interned_data`
  /// (`field`: event_categories 1, event_names 2, debug_annotation_names 3; each entry is {iid = 1, name = 2}).
  private static func intern(
    _ name: String, in table: inout [String: UInt64], field: Int, into interned: inout ProtobufMessage
  ) -> UInt64 {
    if let id = table[name] { return id }
    let id = UInt64(table.count + 1)
    table[name] = id
    var entry = ProtobufMessage()
    entry.varint(1, id)
    entry.string(2, name)
    interned.message(field, entry)
    return id
  }

  private func emit(_ packet: ProtobufMessage) throws(CommandError) {
    var framed = ProtobufMessage()
    framed.message(1, packet)  // Trace.packet
    try output.write(framed.bytes)
  }
}

/// A protobuf message being encoded: fields appended in the wire format.
struct ProtobufMessage {
  var bytes: [UInt8] = []

  mutating func varint(_ field: Int, _ value: UInt64) {
    appendVarint(UInt64(field) << 3)  // wire type 0
    appendVarint(value)
  }

  mutating func fixed64(_ field: Int, _ value: UInt64) {
    appendVarint(UInt64(field) << 3 | 1)
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
  }

  mutating func string(_ field: Int, _ text: String) {
    appendVarint(UInt64(field) << 3 | 2)
    let utf8 = Array(text.utf8)
    appendVarint(UInt64(utf8.count))
    bytes.append(contentsOf: utf8)
  }

  mutating func message(_ field: Int, _ message: ProtobufMessage) {
    appendVarint(UInt64(field) << 3 | 2)
    appendVarint(UInt64(message.bytes.count))
    bytes.append(contentsOf: message.bytes)
  }

  private mutating func appendVarint(_ value: UInt64) {
    var value = value
    while value >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
      value >>= 7
    }
    bytes.append(UInt8(value))
  }
}
