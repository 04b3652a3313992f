#if canImport(Glibc)
  import Glibc
#endif

/// The process's stdout and stderr.
///
/// A write to standard output that fails (a full disk: ENOSPC; an I/O error) is kept, and nothing more is written
/// there: `CommandLineInterface.run` then says `obstrace CMD: cannot write standard output (reason)` and exits 2,
/// whatever the command returned. A closed pipe (`obstrace dump | head`) is not an error: the reader wanted no more.
public final class StandardOutput: CommandOutput {
  public private(set) var standardOutputError: Int32?

  public init() {}

  public func write(_ text: String) {
    var text = text
    text.withUTF8 { bytes in writeOut(bytes) }
  }

  public func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = Self.writeAll(2, bytes) }
  }

  public func write(_ bytes: UnsafeRawBufferPointer) {
    writeOut(bytes.bindMemory(to: UInt8.self))
  }

  private func writeOut(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard standardOutputError == nil else { return }
    let failure = Self.writeAll(1, bytes)
    if failure != 0 && failure != EPIPE { standardOutputError = failure }
  }

  /// Closes standard output: a file system may report a write's failure only then (NFS, a quota).
  public func finish() {
    guard standardOutputError == nil else { return }
    if close(1) != 0 && errno != EBADF && errno != EINTR && errno != EPIPE { standardOutputError = errno }
  }

  /// Writes all of `bytes`; 0, or the errno of the write that failed (a write of no byte is EIO).
  private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 && errno == EINTR { continue }
      if written < 0 { return errno }
      if written == 0 { return EIO }
      offset += written
    }
    return 0
  }
}

/// Output collected in strings, for tests.
public final class CapturedOutput: CommandOutput {
  public private(set) var standardOutput = ""
  public private(set) var standardError = ""

  public init() {}

  public func write(_ text: String) { standardOutput += text }
  public func writeError(_ text: String) { standardError += text }
}

/// Builds output text line by line, so that printers stay simple and fast.
struct TextBuffer {
  var text = ""

  mutating func line(_ line: String = "") {
    text += line
    text += "\n"
  }
}
