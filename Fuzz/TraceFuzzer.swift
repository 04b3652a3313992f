// libFuzzer's entry point over the trace reader and the replay (built by scripts/fuzz, not by SwiftPM): each
// input is a whole trace file, read the ways the CLI reads one. A crash, a trap, an ASan report or a timeout
// is a bug; damage reported is the expected answer to most inputs.
import ObsTraceAnalysis
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// The reader reads files (pread), so each input is written to one file in memory first.
nonisolated(unsafe) private var inputPath: String = {
  let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
  return "\(directory)/obstrace-fuzz-\(getpid()).trc"
}()

/// The header of the traces made from plain inputs.
private let plainHeader = TraceHeader(
  startWallClockNanoseconds: 1, processID: 42, executable: "/fuzz", dropWhenFull: false, ringCapacity: 64,
  stackLevel: 1)

/// An input is either a trace file as is (`OBSTRACE…`: mutations test the framing, checksums and zlib), or a
/// plain trace (`OTPL`, then chunks as type byte, 16-bit little-endian length, uncompressed payload) that is
/// compressed and framed with valid checksums first, so that mutations reach the decoders behind them.
/// scripts/fuzz writes the seeds in both forms.
private func writeInput(_ bytes: UnsafeBufferPointer<UInt8>) {
  if bytes.count >= 4, Array(bytes[0..<4]) == Array("OTPL".utf8) {
    guard let writer = try? TraceFileWriter(path: inputPath, header: plainHeader) else { return }
    var offset = 4
    while offset + 3 <= bytes.count {
      let typeByte = bytes[offset]
      let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8
      offset += 3
      let payload = Array(bytes[offset..<min(bytes.count, offset + length)])
      offset += length
      let type = ChunkType(rawValue: typeByte) ?? .events
      try? writer.writeChunk(type, payload: payload)
    }
    writer.close()
    return
  }
  let descriptor = open(inputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  guard descriptor >= 0 else { return }
  var written = 0
  while written < bytes.count {
    let count = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
    if count <= 0 { break }
    written += count
  }
  close(descriptor)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  writeInput(UnsafeBufferPointer(start: data, count: size))
  // As `report`, `graph`, `check` and `timeline` read it: reader, time-ordered merge, replay, findings.
  var entries = 0
  if let report = try? TraceAnalysis.analyze(path: inputPath, onFact: { _ in entries += 1 }) {
    blackHole(report.findings.count + report.properties.count + report.scopes.count + entries)
  }
  // As `dump` reads it: every event in file order, with the names of what it names.
  if let reader = try? TraceReader(path: inputPath) {
    var names = 0
    reader.forEachEvent { event in
      names += reader.definitions.propertyName(event.key).utf8.count
      names += reader.definitions.labelName(event.key).utf8.count
      names += reader.definitions.frames(ofStack: event.stack).count
    }
    blackHole(names + reader.damage.count)
  }
  return 0
}

@inline(never)
func blackHole(_ value: Int) {
  if value == -1 { print(value) }
}
