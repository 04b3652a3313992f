import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `obstrace record` and signals, as a terminal sends them: Ctrl-C is SIGINT to the whole foreground group, record
/// and its command alike (a fresh-clone try-out's G14: record died with the command and said nothing). Record is
/// started here in a process group of its own, its command `obstrace-scenarios hold-trace` (which records, says
/// "recording" and waits for its input to end), and the signal is sent to the group or to record alone.
@Suite("record and signals")
struct RecordSignalTests {
  /// How the signal is sent: to record's process group (a terminal's Ctrl-C), or to record alone (`kill PID`).
  enum Target: String, CustomStringConvertible {
    case group, record
    var description: String { rawValue }
  }

  /// Starts `obstrace record -o trace -- obstrace-scenarios hold-trace` in a new process group, its input a FIFO
  /// this test holds open (so that the command waits), its output in files of `folder`; returns its process id
  /// once the command says it records.
  static func startRecord(trace: String, folder: String) throws -> pid_t {
    try #require(mkfifo(folder + "/in", 0o600) == 0)
    let arguments = [
      Paths.binary("obstrace"), "record", "-o", trace, "--", Paths.binary("obstrace-scenarios"), "hold-trace",
    ]
    // The FIFO opened read-write: its opening does not wait for a writer, and its reader never sees its end.
    let process = try Run.job(
      arguments, input: folder + "/in", inputFlags: O_RDWR, output: folder + "/out", errors: folder + "/err")
    // Until the command has recorded its first write (at most 120 s: a loaded machine).
    for _ in 0..<1200 {
      if (try? String(contentsOfFile: folder + "/out", encoding: .utf8))?.contains("recording") == true { break }
      usleep(100_000)
    }
    return process
  }

  static func wait(_ process: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(process, &status, 0) < 0 && errno == EINTR {}
    return status
  }

  @Test(
    "Ctrl-C (SIGINT to the group) and SIGTERM (to the group, or to record alone, which passes it on) end the command; record says how, summarizes its cut trace and says how to name it",
    arguments: [(SIGINT, Target.group), (SIGTERM, Target.group), (SIGTERM, Target.record)])
  func signalled(signal: Int32, target: Target) throws {
    let trace = Paths.temporary("cut.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    let process = try Self.startRecord(trace: trace, folder: folder)
    #expect(try String(contentsOfFile: folder + "/out", encoding: .utf8) == "recording\n")
    #expect((target == .group ? killpg(process, signal) : kill(process, signal)) == 0)
    let status = Self.wait(process)
    // Record ended on its own, with the command's status (128 + the signal), not by the signal.
    #expect(status & 0x7f == 0, "record was ended by signal \(status & 0x7f)")
    #expect((status >> 8) & 0xff == 128 + signal)
    let lines = try String(contentsOfFile: folder + "/err", encoding: .utf8).split(separator: "\n").map(String.init)
    try #require(lines.count == 2, "\(lines)")
    // SIGTERM reaches record, which passes it on (to the group, the command gets it twice: its default ends it at
    // the first); Ctrl-C reaches the command alone.
    #expect(
      lines[0]
        == (signal == SIGINT
          ? "obstrace: the command was interrupted (SIGINT)"
          : "obstrace: record got SIGTERM and passed it on to the command, which was ended by SIGTERM"))
    #expect(lines[1].hasPrefix("obstrace: recorded "), "\(lines[1])")
    #expect(
      lines[1].contains(
        "; the trace is truncated: the process that recorded it ended without stopping the recording (killed or "
          + "crashed), so the events it had not yet written are not in it, nor its symbol table (names of properties "
          + "and call sites): 'obstrace symbolize \(trace)' adds it from the binaries while they are unchanged. "
          + "Findings: "), "\(lines[1])")
    // What it names is so: the trace is cut, and symbolize names it.
    let report = Run.command(["report", trace])
    #expect(report.standardOutput.contains("TRUNCATED"), "\(report.standardOutput)")
    let symbolized = try Run.program("obstrace", ["symbolize", trace])
    #expect(symbolized.status == 0, "\(symbolized.standardError)")
  }
}
