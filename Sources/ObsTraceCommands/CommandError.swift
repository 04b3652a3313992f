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
  /// The errno of a write to standard output that failed (nil when none did): the command then fails.
  var standardOutputError: Int32? { get }
  /// Called once the command has run: closes standard output, where a late write error may show.
  func finish()
}

extension CommandOutput {
  public var standardOutputError: Int32? { nil }
  public func finish() {}

  public func write(_ bytes: UnsafeRawBufferPointer) {
    write(String(decoding: bytes, as: UTF8.self))
  }
}
