#if canImport(Glibc)
  import Glibc
#endif

/// A file written through a 64 KiB buffer: what the exports stream into, so that memory stays flat whatever the
/// trace's size. Errors name the file.
final class OutputStream {
  let path: String
  let command: String
  private let file: UnsafeMutablePointer<FILE>
  private var buffer: [UInt8] = []

  init(path: String, command: String) throws(CommandError) {
    guard let file = fopen(path, "wb") else {
      throw CommandError("obstrace \(command): cannot write \(path) (\(String(cString: strerror(errno))))")
    }
    self.path = path
    self.command = command
    self.file = file
    buffer.reserveCapacity(1 << 16)
  }

  deinit { fclose(file) }

  func write(_ bytes: [UInt8]) throws(CommandError) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 1 << 16 { try flush() }
  }

  func write(_ text: String) throws(CommandError) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= 1 << 16 { try flush() }
  }

  func flush() throws(CommandError) {
    let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    guard written == buffer.count, fflush(file) == 0 else {
      throw CommandError("obstrace \(command): cannot write \(path) (\(String(cString: strerror(errno))))")
    }
    buffer.removeAll(keepingCapacity: true)
  }
}
