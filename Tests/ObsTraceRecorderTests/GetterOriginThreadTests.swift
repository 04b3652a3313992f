import CObsTraceRing
import Foundation
import ObsTrace
import ObsTraceFormat
import Observation
import Synchronization
import Testing

@testable import ObsTraceRecorder

/// Models of their own, written by `originIsNotLookedUpOnTheWriter` alone: their key paths are met for the first time
/// by a write through `_modify`, so the writer's thread finds their stored fields itself.
@Observable
final class OriginProbeModel {
  var level = 0
}

/// A property whose accessors are written by hand (as Observation's own tests write them), its value kept in
/// `tenths`, next to an unrelated field `_degrees` of the name the macro would give its storage: only the getter's
/// origin (the line table) tells that `_degrees` is not its storage.
@Observable
final class OriginProbeHandWritten {
  @ObservationIgnored var tenths = 0
  /// A cache, not `degrees`' storage.
  @ObservationIgnored var _degrees = 0

  var degrees: Int {
    get {
      access(keyPath: \.degrees)
      return tenths / 10
    }
    _modify {
      access(keyPath: \.degrees)
      _$observationRegistrar.willSet(self, keyPath: \.degrees)
      var value = tenths / 10
      yield &value
      tenths = value * 10
      _$observationRegistrar.didSet(self, keyPath: \.degrees)
    }
  }
}

extension RecorderTests {
  /// Who wrote a property's getter (`Symbolizer.getterOrigin`: the line table and DWARF, milliseconds) was looked up
  /// on the writer's thread at the property's first compared write through `_modify` when that came before the
  /// flusher defined the property: the user's thread spent in libdw on a write. The writer now compares with the
  /// field it found and marks the didSet; the flusher looks the origin up and keeps the comparison (the macro's
  /// getter) or makes it "not compared (hand-written accessor)" before the didSet is encoded.
  @Test(
    "a first write through _modify looks up who wrote the getter off the writer's thread, and the trace is as before")
  func originIsNotLookedUpOnTheWriter() async throws {
    Interner.namingLog.withLock { $0 = Interner.NamingLog() }
    Interner.watchingNames.store(true, ordering: .relaxed)
    defer { Interner.watchingNames.store(false, ordering: .relaxed) }
    let writer = Atomic<UInt>(0)
    let trace = try await RecordingSupport.record {
      RecordingSupport.runThreads(1) { _ in
        writer.store(UInt(pthread_self()), ordering: .relaxed)
        let model = OriginProbeModel()
        let thermometer = OriginProbeHandWritten()
        // First uses of both key paths, each through `_modify`: `+= 0` leaves the value as it was.
        model.level += 0
        thermometer.degrees += 0
        model.level += 2
        thermometer.degrees += 3
      }
    }
    let log = Interner.namingLog.withLock { $0 }
    let thread = writer.load(ordering: .relaxed)
    #expect(thread != 0)
    let didSets = trace.events(.didSet)
    #expect(didSets.count == 4)
    let level = try #require(didSets.first).key
    let degrees = try #require(didSets.dropFirst().first).key
    // Each field was found (the level's on the writer, as before, unless the flusher came first) and each origin
    // looked up once, never on the writer.
    #expect(log.fieldLookups.contains { $0.property == level } && log.fieldLookups.contains { $0.property == degrees })
    for property in [level, degrees] {
      let lookups = log.originLookups.filter { $0.property == property }
      #expect(lookups.count == 1, "\(log.originLookups)")
      #expect(lookups.allSatisfy { $0.thread != thread }, "looked up on the writer's thread: \(lookups)")
    }
    // The trace says what it said when the writer looked it up: the macro's `level` compared (unchanged, then
    // changed), the hand-written `degrees` not compared, and no mark left in a didSet's flags.
    let modify = EventFlags.modify
    #expect(
      didSets.map(\.flags) == [
        modify | EventFlags.unchanged, modify | UncomparedReason.handWrittenAccessor.flags,
        modify | EventFlags.changed, modify | UncomparedReason.handWrittenAccessor.flags,
      ])
    // Settled in the table: later writes are compared (level) or not (degrees) without a mark.
    #expect(!StoredField.isOriginPending(obstrace_property_field(level)))
    #expect(obstrace_property_field(degrees) == StoredField.handWritten)
  }
}
