import CObsTraceRing
import ObsTraceFormat
import ObsTraceSymbols
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The one consumer of every thread's ring: drains them, encodes each thread's events into chunks, compresses
/// and appends them to the trace file. At stop it drains what is left and writes the symbol table and footer.
///
/// Flush policy (see docs/trace-format.md, "Choices"): the flusher wakes every `wakeInterval` or when a producer
/// finds its ring full; a thread's chunk is written when its encoded events reach `chunkTarget` bytes or are
/// older than `maximumChunkAge`, so an event reaches the file within about a third of a second. What it costs is
/// measured by scripts/bench (README, "What it costs") and in instructions in docs/trace-format.md ("Choices").
final class Flusher: @unchecked Sendable {
  static let wakeIntervalMilliseconds: UInt32 = 50
  /// 60 KiB: a chunk's one deflate stream (its header, items and time column) then fits zlib's 64 KiB window buffer
  /// (less its 262-byte lookahead) with room for the event that passes the target and its definitions, so zlib never
  /// slides its window: a slide rehashes 64 K entries, ≈ 23 instructions an event on the bench's write case, twice in
  /// a chunk of 128 KiB, the size before (docs/trace-format.md, "Choices").
  static let chunkTarget = 60 << 10
  static let maximumChunkAge: UInt64 = 250_000_000
  static let drainBatch = 4096

  /// The file recorded into: the one asked for, or the one beside it when another process's recording held that
  /// (`heldPath`).
  let path: String
  let heldPath: String?
  /// Why it records beside `heldPath`: `.held` (another process records into it now) or `.written` (an earlier
  /// process of the same `obstrace record` wrote it).
  let besideReason: TraceFileError.Code?
  private let options: RecordingOptions
  // Everything below is touched only by the flusher thread, then (after it has exited) by `stop`.
  private let writer: TraceFileWriter
  private let stamps = DefinitionStamps()
  private let definitions = FlusherDefinitions()
  private var clock: TickMapping
  private var pending: [UnsafeMutablePointer<obstrace_ring>: PendingChunk] = [:]
  private var totals: [UInt32: ThreadTotals] = [:]
  /// The last time given to each thread's events: a thread's times never go back, even for events that raced a
  /// drain's clock sample (see `TickMapping`).
  private var lastTimes: [UInt32: UInt64] = [:]
  private var writeError: String?
  private var drains = DrainCounts()
  private let running = Atomic<Bool>(true)
  private var thread = pthread_t()
  /// Flush requests (in-test recordings wait for their events): a drain that began after request n completes it.
  private let flushRequested = Atomic<UInt64>(0)
  private let flushCompleted = Atomic<UInt64>(0)

  struct PendingChunk {
    var encoder: ChunkEncoder
    var startedAt: UInt64
  }

  init(path: String, options: RecordingOptions, startedWhileRunning: Bool, keepingWrittenFile: Bool = false)
    throws(TraceFileError)
  {
    self.options = options
    obstrace_configure(
      UInt64(options.effectiveRingCapacity), options.dropWhenFull, options.backtraces.level,
      UInt32(max(0, min(64, options.backtraceDepth))), options.comparison.mode)
    obstrace_ring_pool_empty()  // rings of another capacity; the flusher prepares this recording's
    clock = TickMapping()
    let header = TraceHeader(
      startWallClockNanoseconds: obstrace_wall_clock_nanoseconds(), processID: UInt32(getpid()),
      executable: Self.executablePath(), dropWhenFull: options.dropWhenFull,
      ringCapacity: UInt64(options.effectiveRingCapacity), stackLevel: UInt8(options.backtraces.level),
      seesUntracedTracking: UntracedTracking.enable(), startedWhileRunning: startedWhileRunning)
    do {
      writer = try TraceFileWriter(path: path, header: header, keepingWrittenFile: keepingWrittenFile)
      self.path = path
      heldPath = nil
      besideReason = nil
    } catch  where error.code == .held || error.code == .written {
      // Another process records into `path` (a test runner's two processes, one OBSTRACE_OUTPUT), or under `obstrace
      // record` an earlier one wrote it: this one records beside it, and `Recorder.start` says so.
      let beside = TraceFileWriter.pathBeside(path, processID: getpid())
      writer = try TraceFileWriter(path: beside, header: header)
      self.path = beside
      heldPath = path
      besideReason = error.code
    }
    try writer.writeChunk(.modules, payload: ChunkPayload.modules(LoadedModule.current()))
    forEachRing { ring in
      // Whatever a previous recording left (events racing its stop) is not this recording's.
      obstrace_ring_discard(ring)
      obstrace_ring_begin_recording(ring)
    }
    obstrace_set_flusher_running(true)
    let context = Unmanaged.passRetained(self).toOpaque()
    // The flusher takes none of the program's signals. Before, a process-directed signal that every thread of the
    // program blocked ran the program's handler on the flusher (a fresh-clone try-out's P2).
    let created = obstrace_create_quiet_thread(
      &thread, nil,
      { context in
        let flusher = Unmanaged<Flusher>.fromOpaque(context!).takeRetainedValue()
        flusher.run()
        return nil
      }, context)
    if created != 0 {
      Unmanaged<Flusher>.fromOpaque(context).release()
      obstrace_set_flusher_running(false)
      throw TraceFileError(.cannotWrite, path: path, "cannot start the flusher thread")
    }
    obstrace_set_enabled(true)
  }

  private func run() {
    // Rings for the threads that will record, prepared here rather than at their first event (see ring.c).
    obstrace_ring_pool_fill()
    // The symbol tables that locate a compared write's stored field, opened here rather than at the first such
    // write (see SymbolCache.prepare).
    if options.comparison != .off { SymbolCache.prepare() }
    while running.load(ordering: .acquiring) {
      obstrace_flusher_wait(Self.wakeIntervalMilliseconds)
      if obstrace_flusher_is_held() { continue }  // a test fills a ring for certain (obstrace_flusher_hold)
      let request = flushRequested.load(ordering: .acquiring)
      clock.sample()
      drain(final: false)
      flushCompleted.store(request, ordering: .releasing)
      obstrace_ring_pool_fill()
    }
    flusherThreadSerial = obstrace_current_thread_serial()
  }

  /// The flusher thread's own ring serial (0: it has none), set as it exits and read after the join: not a
  /// thread of the program still running at the stop.
  private var flusherThreadSerial: UInt32 = 0

  /// The threads still running now that have recorded (have a ring), except `serial`.
  private static func runningThreads(except serial: UInt32) -> [UInt32] {
    var capacity = 64
    while true {
      var serials = [UInt32](repeating: 0, count: capacity)
      let count = obstrace_registry_running(&serials, capacity, serial)
      if count <= capacity { return Array(serials.prefix(count)) }
      capacity = count + 16
    }
  }

  /// Returns once every event recorded before the call has been drained (and routed to in-test recordings).
  func flush() {
    let ticket = flushRequested.add(1, ordering: .acquiringAndReleasing).newValue
    while flushCompleted.load(ordering: .acquiring) < ticket && running.load(ordering: .acquiring) {
      obstrace_flusher_wake()
      usleep(200)
    }
  }

  /// Stops producers, joins the flusher thread, drains everything, writes symbols and footer.
  ///
  /// What a stop cannot hold is said in the footer (docs/trace-format.md, "Footer chunk"): the threads still
  /// running when recording was switched off, listed before the switch (a thread not listed had exited, so every
  /// event it offered was stored while recording was on, and is drained below; a listed one may go on after the
  /// switch, and at exit nothing it does then can reach the file), and the records stored too late for the final
  /// drain, counted.
  /// Stops the recording and writes the trace's end. `stoppingThread` is the serial of the thread that asked to
  /// stop (Recorder.stop may run this on a thread of its own), which is not counted as running at the stop.
  func stop(stoppingThread stopping: UInt32) -> RecordingSummary {
    var stillRunning = Self.runningThreads(except: stopping)
    obstrace_set_enabled(false)
    running.store(false, ordering: .releasing)
    obstrace_flusher_wake()
    pthread_join(thread, nil)
    if flusherThreadSerial != 0 { stillRunning.removeAll { $0 == flusherThreadSerial } }
    clock.sample()
    drain(final: true)
    // Before the flusher is marked stopped: until then an exiting thread leaves its ring to the flusher, so
    // every ring walked here stays allocated.
    var lostAtStop: UInt64 = 0
    forEachRing { lostAtStop = lostAtStop.addingSaturating(obstrace_ring_unread($0)) }
    obstrace_set_flusher_running(false)
    obstrace_ring_pool_empty()  // not recording, the program holds no ring it did not use
    // Orphans left by threads that exited after the final drain are freed by the next drain or at their exit.
    if writeError == nil { writeSymbols() }
    let threads = totals.values.sorted { $0.thread < $1.thread }
    let footer = TraceFooter(
      durationNanoseconds: clock.latestNanoseconds, chunks: writer.chunksWritten + 1, threads: threads,
      runningAtStop: stillRunning.sorted(), lostAtStop: lostAtStop, ringless: obstrace_ringless_events(),
      forks: obstrace_forks_while_recording(), signalHandlerEvents: obstrace_interrupted_events())
    write(.footer, ChunkPayload.footer(footer))
    // What was written may not all be in the file: said once, unless a write error already said the trace
    // stopped short.
    if let error = writer.close(), writeError == nil {
      writeError = error.description
      Recorder.reportProblem("obstrace: \(error.description); what was written may not all be in it")
    }
    if footer.ringless > 0 {
      // Said once, however many threads could not get a ring; the footer keeps the count for the CLI.
      Recorder.reportProblem(
        "obstrace: \(footer.ringless) events were counted, not recorded: the memory for their threads' rings could "
          + "not be allocated (\(path))")
    }
    return RecordingSummary(
      path: path, events: footer.recorded, droppedEvents: footer.dropped, threads: threads.count,
      chunks: writer.chunksWritten, bytes: writer.bytesWritten, writeError: writeError, drains: drains)
  }

  // MARK: Draining

  private func forEachRing(_ body: (UnsafeMutablePointer<obstrace_ring>) -> Void) {
    var capacity = 64
    while true {
      var rings = [UnsafeMutablePointer<obstrace_ring>?](repeating: nil, count: capacity)
      let count = obstrace_registry_snapshot(&rings, capacity)
      if count > capacity {
        capacity = count + 16
        continue
      }
      for ring in rings.prefix(count) { body(ring!) }
      return
    }
  }

  private func drain(final: Bool) {
    let now = clock.nanoseconds(obstrace_clock())
    forEachRing { ring in
      let orphaned = obstrace_ring_is_orphaned(ring)  // read before draining: no event can follow it
      drainRecords(of: ring, final: final)
      let hasNewDrops = obstrace_ring_dropped(ring) != obstrace_ring_flushed_dropped(ring)
      if (hasNewDrops || orphaned) && pending[ring] == nil { pending[ring] = newChunk(for: ring, firstTime: now) }
      if let chunk = pending[ring],
        final || orphaned || hasNewDrops || chunk.encoder.byteCount >= Self.chunkTarget
          || now &- chunk.startedAt >= Self.maximumChunkAge
      {
        finish(ring, threadEnded: orphaned)
      }
      if orphaned { obstrace_registry_release(ring) }
    }
  }

  /// Drains what `ring` held when the drain began (so a flush request, or the periodic wake, sees every event stored
  /// before it), then goes on only while whole batches are waiting, or to the end when `final`. Without that
  /// condition a flusher faster than the thread chases its head: batches of a few records, each with a batch's fixed
  /// work, read from the cache lines the thread is writing (they move between the cores twice a line), with the
  /// flusher awake the whole run. What is left waits for the next wake: at half a ring, or the periodic one.
  private func drainRecords(of ring: UnsafeMutablePointer<obstrace_ring>, final: Bool) {
    var owed = obstrace_ring_available(ring)
    let chase = max(min(Self.drainBatch, obstrace_ring_capacity(ring) / 4), 1)
    if owed > 0 { drains.passes += 1 }
    while true {
      if owed == 0 && !final && obstrace_ring_available(ring) < chase { return }
      var first: UnsafePointer<obstrace_record>?
      // At most a batch at a time: its slots go back to the producer (which may be waiting for room) as soon as
      // they are encoded, not after a whole ring.
      let count = min(obstrace_ring_readable(ring, &first), Self.drainBatch)
      guard count > 0, let first else { return }
      let records = UnsafeBufferPointer(start: first, count: count)
      // didSets a program's thread marked while their getter's origin was not settled: settled here, before they are
      // encoded or routed (the count was raised before the ring released them to this read).
      if obstrace_origin_marks_outstanding() > 0 { Self.settleMarkedDidSets(records) }
      // Records stored after the drain's clock sample: sample again (after reading the head), so that they map
      // between samples like the others.
      if records[count - 1].time > clock.latestTicks { clock.sample() }
      var chunk =
        pending.removeValue(forKey: ring)
        ?? newChunk(
          for: ring, firstTime: max(clock.nanoseconds(records[0].time), lastTimes[obstrace_ring_thread_id(ring)] ?? 0))
      let tapping = RecordingTaps.activeTaps.load(ordering: .acquiring) > 0
      let thread = obstrace_ring_thread_id(ring)
      var state = obstrace_encode_state()
      state.thread_time = lastTimes[thread] ?? 0
      state.last_ticks = UInt64.max
      clock.setLastSegment(of: &state)
      defer { lastTimes[thread] = state.thread_time }
      var index = 0
      while index < count {
        index = Self.encode(
          records, from: index, into: &chunk.encoder, state: &state, clock: clock, definitions: definitions,
          stamps: stamps, tapThread: tapping ? thread : nil)
        if chunk.encoder.byteCount >= Self.chunkTarget {
          // Closed at once, not after the batch (up to a ring of events): a reader refuses events chunks past
          // `TraceFormat.maximumEventsChunkSize`, and this keeps every chunk near the target.
          pending[ring] = chunk
          finish(ring)
          chunk = newChunk(for: ring, firstTime: state.thread_time)
        }
      }
      obstrace_ring_consume(ring, count)
      owed -= min(owed, count)
      drains.batches += 1
      if count < chase { drains.smallBatches += 1 }
      if chunk.encoder.eventCount > 0 || chunk.encoder.byteCount > 0 { pending[ring] = chunk }
    }
  }

  /// Settles the didSets in `records` marked `RegistrarExtent.originPendingFlag` (compared with a field whose
  /// getter's origin the writer left open): looks the origin up here, on the flusher, once per property
  /// (`Interner.settleOrigin`), and rewrites each one's flags in the ring's slot (read by this thread alone until
  /// consumed) as the writer would have made them had it looked: compared, or not compared (hand-written accessor,
  /// stored field not found).
  static func settleMarkedDidSets(_ records: UnsafeBufferPointer<obstrace_record>) {
    guard let base = records.baseAddress else { return }
    let slots = UnsafeMutablePointer(mutating: base)
    for index in records.indices
    where records[index].kind == EventKind.didSet.rawValue
      && records[index].flags & RegistrarExtent.originPendingFlag != 0
    {
      slots[index].flags = RegistrarExtent.settledFlags(records[index].flags, key: records[index].key)
      obstrace_settle_origin_mark()
    }
  }

  /// Encodes `records[start...]` into `chunk` until every one is encoded or the chunk reaches `chunkTarget` bytes;
  /// returns the index after the last one encoded. `state` carries the conversion of ticks to times from call to
  /// call (an untimed event, a didSet or most reads, repeats the ticks of the event before it and is not converted
  /// again; a thread's times never go back). With `tapThread`, each event is also routed to the in-test recordings,
  /// one at a time through `ChunkEncoder.append`; without, most events need no definition and the C loop
  /// (`obstrace_encode_common`) encodes them, up to the first that does. `commonLoop: false` (tests) encodes every
  /// event through `append`, the reference the C loop must match byte for byte.
  static func encode(
    _ records: UnsafeBufferPointer<obstrace_record>, from start: Int, into chunk: inout ChunkEncoder,
    state: inout obstrace_encode_state, clock: TickMapping, definitions: FlusherDefinitions,
    stamps: DefinitionStamps, tapThread: UInt32?, commonLoop: Bool = true
  ) -> Int {
    var index = start
    let common = commonLoop && tapThread == nil
    while index < records.count {
      let next = records[index]
      if common
        && chunk.needsNoDefinition(
          kind: next.kind, object: next.object, key: next.key, scope: next.scope, aux: next.aux, stack: next.stack)
      {
        index += clock.withSamples(in: &state) { state in
          chunk.withCursor { buffer, cursor in
            encodeCommon(records, from: index, into: buffer, cursor: &cursor, state: &state)
          }
        }
        if chunk.byteCount >= chunkTarget || index == records.count { return index }
      }
      let record = records[index]
      index += 1
      definitions.note(record)
      if record.time != state.last_ticks {
        state.last_ticks = record.time
        state.last_ticks_time = clock.nanoseconds(record.time)
      }
      let time = max(state.last_ticks_time, state.thread_time)
      state.thread_time = time
      // The in-test recording tag (objectCreated's aux) stays in the process.
      let tagged = record.kind == EventKind.objectCreated.rawValue
      chunk.append(
        kind: record.kind, flags: record.flags, time: time, depth: record.depth, object: record.object,
        key: record.key, scope: record.scope, aux: tagged ? 0 : record.aux,
        stack: record.stack, definitions: definitions, stamps: stamps)
      if let tapThread { RecordingTaps.route(record, time: time, thread: tapThread) }
      if chunk.byteCount >= chunkTarget { return index }
    }
    return index
  }

  /// `obstrace_encode_common` on `records[start...]`, into a chunk's buffer: how many records it encoded.
  static func encodeCommon(
    _ records: UnsafeBufferPointer<obstrace_record>, from start: Int, into buffer: UnsafeMutableBufferPointer<UInt8>,
    cursor: inout ChunkEncoder.Cursor, state: inout obstrace_encode_state
  ) -> Int {
    state.items = UInt64(cursor.items)
    state.times = UInt64(cursor.times)
    state.events = UInt64(cursor.events)
    state.last_time = cursor.lastTime
    state.stated_object = cursor.statedObject
    state.stated_property = cursor.statedProperty
    state.stated_scope = cursor.statedScope
    state.stated_stack = cursor.statedStack
    state.previous_object = cursor.previousObject
    state.previous_key = cursor.previousKey
    state.recent_objects = cursor.recentObjects
    state.recent_properties = cursor.recentProperties
    state.recent_scopes = cursor.recentScopes
    state.recent_stacks = cursor.recentStacks
    let encoded = obstrace_encode_common(
      &state, records.baseAddress.unsafelyUnwrapped + start, records.count - start,
      buffer.baseAddress.unsafelyUnwrapped,
      UInt64(buffer.count), UInt64(chunkTarget))
    cursor.items = Int(state.items)
    cursor.times = Int(state.times)
    cursor.events = Int(state.events)
    cursor.lastTime = state.last_time
    cursor.statedObject = state.stated_object
    cursor.statedProperty = state.stated_property
    cursor.statedScope = state.stated_scope
    cursor.statedStack = state.stated_stack
    cursor.previousObject = state.previous_object
    cursor.previousKey = state.previous_key
    return encoded
  }

  private func newChunk(for ring: UnsafeMutablePointer<obstrace_ring>, firstTime: UInt64) -> PendingChunk {
    PendingChunk(
      encoder: ChunkEncoder(
        thread: obstrace_ring_thread_id(ring), osThreadID: obstrace_ring_os_thread_id(ring),
        sequence: obstrace_ring_chunk_sequence(ring), firstTime: firstTime, stamps: stamps,
        capacity: Self.chunkTarget + (4 << 10)),
      startedAt: clock.nanoseconds(obstrace_clock()))
  }

  private func finish(_ ring: UnsafeMutablePointer<obstrace_ring>, threadEnded: Bool = false) {
    guard let chunk = pending.removeValue(forKey: ring) else { return }
    let dropped = obstrace_ring_note_chunk(ring)
    let thread = obstrace_ring_thread_id(ring)
    var total =
      totals[thread]
      ?? ThreadTotals(thread: thread, osThreadID: obstrace_ring_os_thread_id(ring), recorded: 0, dropped: 0)
    total.recorded += UInt64(chunk.encoder.eventCount)
    total.dropped += dropped
    totals[thread] = total
    write(
      .events, chunk.encoder.payload(droppedSinceLastChunk: dropped, threadEnded: threadEnded),
      storedTail: chunk.encoder.timeColumnByteCount)
  }

  private func write(_ type: ChunkType, _ payload: [UInt8], storedTail: Int = 0) {
    guard writeError == nil else { return }
    do {
      try writer.writeChunk(type, payload: payload, storedTail: storedTail)
    } catch {
      // The program goes on untraced: stop recording, say so once, keep what was written.
      writeError = error.description
      obstrace_set_enabled(false)
      Recorder.reportProblem("obstrace: \(error.description); recording stopped, the program goes on untraced")
    }
  }

  // MARK: Symbols

  private func writeSymbols() {
    let table = Interner.shared.symbolTable(Interner.shared.snapshotForSymbols())
    if !table.isEmpty { write(.symbols, ChunkPayload.symbols(table)) }
  }

  static func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return "" }
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

/// What the encoder restates in each chunk: the interner's tables, and the scopes the flusher has seen begin
/// (kept here, not on the hot path). A scope is forgotten when cancelled, or when a named scope ends; the table
/// is also capped, since a scope that read nothing is never installed nor cancelled.
final class FlusherDefinitions: TraceDefinitionSource {
  static let maximumScopes = 1 << 20
  private var scopes: [UInt32: ScopeDefinition] = [:]
  /// Where types, properties, labels and stacks are found: the process's interner, or a fixed source (tests, whose
  /// chunks must not depend on what other tests running at the same time have interned).
  private let names: TraceDefinitionSource?

  init(names: TraceDefinitionSource? = nil) {
    self.names = names
  }

  @inline(__always)
  func note(_ record: obstrace_record) {
    // Accesses, willSets and didSets (kinds 1–3), most of every trace, define no scope.
    if record.kind <= EventKind.didSet.rawValue { return }
    noteScope(record)
  }

  private func noteScope(_ record: obstrace_record) {
    switch record.kind {
    case EventKind.scopeBegin.rawValue:
      if scopes.count >= Self.maximumScopes { scopes.removeAll(keepingCapacity: true) }
      if let kind = ScopeKind(rawValue: record.flags) {
        scopes[record.scope] = ScopeDefinition(kind: kind, label: record.key, parent: record.aux)
      }
    case EventKind.trackingCancelled.rawValue:
      scopes[record.scope] = nil
    case EventKind.scopeEnd.rawValue:
      if scopes[record.scope]?.kind == .named { scopes[record.scope] = nil }
    default:
      break
    }
  }

  func typeName(_ id: UInt32) -> String { names?.typeName(id) ?? Interner.shared.typeName(id) }
  func property(_ id: UInt32) -> PropertyDefinition? {
    if let names { return names.property(id) }
    let definition = Interner.shared.property(id)
    // Its stored field, found here ahead of the property's first compared write when that comes later (a property
    // read in a first frame, written on a later event): that write then finds it in the table instead of finding
    // it on the program's thread. The same answer whoever finds it first; one C load once found.
    if definition != nil && obstrace_compare_mode() != 0 {
      let field = obstrace_property_field(id)
      if field == 0 {
        _ = Interner.shared.storedField(id, onWriter: false)
      } else if StoredField.isOriginPending(field) {
        // Found by a program's thread, which left who wrote the getter to this thread.
        _ = Interner.shared.settleOrigin(id)
      }
    }
    return definition
  }
  func label(_ id: UInt32) -> String { names?.label(id) ?? Interner.shared.label(id) }
  func scope(_ id: UInt32) -> ScopeDefinition? { scopes[id] }
  func stack(_ id: UInt32) -> [UInt64] { names?.stack(id) ?? Interner.shared.stack(id) }
  func labelStack(_ id: UInt32) -> UInt32 { names?.labelStack(id) ?? Interner.shared.labelStack(id) }
}
