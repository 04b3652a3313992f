#if canImport(Glibc)
  import Glibc
#endif

/// The process's stdout and stderr.
public final class StandardOutput: CommandOutput {
  public init() {}

  public func write(_ text: String) {
    var text = text
    text.withUTF8 { bytes in writeAll(1, bytes) }
  }

  public func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in writeAll(2, bytes) }
  }

  public func write(_ bytes: UnsafeRawBufferPointer) {
    writeAll(1, bytes.bindMemory(to: UInt8.self))
  }

  private func writeAll(_ descriptor: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return }  // a closed pipe (obstrace dump | head): stop quietly
      offset += written
    }
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
