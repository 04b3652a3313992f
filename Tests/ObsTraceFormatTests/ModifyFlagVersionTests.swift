import Testing

@testable import ObsTraceFormat

/// Each format version keeps a reader test: files written by an older obstrace still read.
@Suite("Format versions: the didSet flag of _modify writes")
struct ModifyFlagVersionTests {
  static let directory: String = {
    var path = #filePath
    while let last = path.last, last != "/" { path.removeLast() }
    return path
  }()

  @Test("a version-1 trace (the no-op _modify sample as recorded before version 2) reads whole")
  func version1() throws {
    let reader = try TraceReader(path: Self.directory + "Fixtures/noop-modify-version1.trc")
    var events: [TraceEvent] = []
    reader.forEachEvent { events.append($0) }
    #expect(reader.header.version == 1)
    #expect(!reader.truncated && reader.damage.isEmpty)
    let didSets = events.filter { $0.kind == .didSet }
    // Version 1 marked the compared writes only: one unchanged, one changed, and no `_modify` flag.
    #expect(didSets.map(\.flags) == [EventFlags.unchanged, EventFlags.changed])
    #expect(reader.definitions.propertyName(didSets[0].key) == "TodoStore.items")
  }

  @Test("this obstrace writes version 3")
  func currentVersion() throws {
    let path = temporaryPath("v3.trc")
    try writeSyntheticTrace(to: path, chunks: 1, perChunk: 3)
    #expect(try TraceReader(path: path).header.version == 3)
  }
}
