/// A trace file could not be written or read. Carries the path, the byte offset it concerns (when there is one),
/// and the underlying cause.
public struct TraceFileError: Error, CustomStringConvertible, Sendable, Equatable {
  public enum Code: String, Sendable {
    case cannotOpen = "cannot-open"
    case cannotWrite = "cannot-write"
    /// Another process's recording holds the file (its lock): it is being written.
    case held
    /// Asked to keep a written file (`TraceFileWriter(path:header:keepingWrittenFile:)`, under `obstrace record`), the
    /// file already holds something: an earlier process's trace.
    case written
    case notATrace = "not-a-trace"
    case unsupportedVersion = "unsupported-version"
    case damaged
  }

  public var code: Code
  public var path: String
  public var offset: UInt64?
  public var message: String

  public init(_ code: Code, path: String, offset: UInt64? = nil, _ message: String) {
    self.code = code
    self.path = path
    self.offset = offset
    self.message = message
  }

  public var description: String {
    if let offset { return "\(path): at byte \(offset): \(message)" }
    return "\(path): \(message)"
  }
}
