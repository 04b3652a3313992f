/// A command failed: one line for stderr, and the exit code (2 for usage and unreadable input, 1 for a failed
/// check).
public struct CommandError: Error, Equatable, CustomStringConvertible {
  public var message: String
  public var exitCode: Int32

  public init(_ message: String, exitCode: Int32 = 2) {
    self.message = message
    self.exitCode = exitCode
  }

  public var description: String { message }
}

/// Where a command writes: the real stdout and stderr, or strings in tests.
public protocol CommandOutput: AnyObject {
  func write(_ text: String)
  func writeError(_ text: String)
  /// Writes UTF-8 bytes to standard output (what commands that print a line per event send, in large pieces).
  func write(_ bytes: UnsafeRawBufferPointer)
}

extension CommandOutput {
  public func write(_ bytes: UnsafeRawBufferPointer) {
    write(String(decoding: bytes, as: UTF8.self))
  }
}
