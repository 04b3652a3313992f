import Foundation
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// A file a command writes (`-o`), through a 64 KiB buffer so that memory stays flat whatever the trace's size.
///
/// A regular file (or a name not yet taken) is written whole or not at all: into a new file beside it, renamed over
/// it by `commit()` once every byte was written and the file closed without an error; the old file keeps its place
/// until then (and its permission bits and owner pass to the new one), and an error leaves it as it was and removes
/// the new one. A path that is not a regular file (a device such as /dev/null or /dev/full, a FIFO) or that names a
/// descriptor (`/dev/stdout`, `/proc/self/fd/1`) is written in place: never renamed over, never removed.
///
/// Every error (opening, a write, the close, the rename) is one line naming the path as given:
/// `obstrace CMD: cannot write PATH (reason)`.
final class OutputFile {
  let path: String
  let command: String
  private var descriptor: Int32
  /// The new file renamed over `target` by `commit()`; nil when writing in place.
  private let temporary: String?
  private let target: String
  private var buffer: [UInt8] = []
  private var committed = false

  /// `inputs`: the files the command reads, each with what it is ("the trace"): a path that names one of them (the
  /// same file, by any name) is refused before anything is written, as the file would be replaced by the output.
  init(path: String, command: String, inputs: [(path: String, what: String)] = []) throws(CommandError) {
    self.path = path
    self.command = command
    var status = stat()
    let exists = stat(path, &status) == 0
    let kind = status.st_mode & S_IFMT
    if exists && kind == S_IFDIR {
      throw Self.failure(command, path, EISDIR)
    }
    if exists && kind == S_IFREG {
      for input in inputs {
        var read = stat()
        if stat(input.path, &read) == 0, read.st_dev == status.st_dev, read.st_ino == status.st_ino {
          throw CommandError(
            "obstrace \(command): -o \(path) would replace \(input.what) it reads (\(input.path)); give another path")
        }
      }
    }
    if path == "-" {
      // Standard output, as `-` means to most tools: its own descriptor, neither opened by a name (which would
      // truncate a file it appends to) nor renamed over.
      descriptor = dup(1)
      guard descriptor >= 0 else { throw Self.failure(command, "standard output", errno) }
      temporary = nil
      target = path
    } else if (exists && kind != S_IFREG) || path.hasPrefix("/dev/") || path.hasPrefix("/proc/") {
      // In place: a device, a FIFO, a descriptor's name.
      descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
      guard descriptor >= 0 else { throw Self.failure(command, path, errno) }
      temporary = nil
      target = path
    } else {
      // Beside the file a symbolic link names, so that the link stays a link.
      var link = stat()
      let resolved =
        exists && lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        ? (realpath(path, nil).map { pointer in
          defer { free(pointer) }
          return String(cString: pointer)
        } ?? path) : path
      // Split at the last `/` by hand: Foundation's NSString path methods trap on a one-character name (`-o a`,
      // a fresh-clone try-out's J10).
      let slash = resolved.lastIndex(of: "/")
      let folder = slash.map { $0 == resolved.startIndex ? "/" : String(resolved[..<$0]) } ?? ""
      let base = slash.map { String(resolved[resolved.index(after: $0)...]) } ?? resolved
      var created: (Int32, String)?
      var attempt = 0
      var lastError: Int32 = 0
      while created == nil && attempt < 100 {
        let name = (folder.isEmpty ? "" : folder + "/") + ".\(base).\(getpid()).\(attempt).obstrace-partial"
        // 0666 less the umask, as a new file would have; an existing file's bits are copied below.
        let opened = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        if opened >= 0 {
          created = (opened, name)
        } else {
          lastError = errno
          if lastError != EEXIST { break }
        }
        attempt += 1
      }
      guard let (opened, name) = created else { throw Self.failure(command, path, lastError) }
      if exists {
        _ = fchown(opened, status.st_uid, status.st_gid)
        _ = fchmod(opened, status.st_mode & 0o7777)
      }
      descriptor = opened
      temporary = name
      target = resolved
    }
    buffer.reserveCapacity(1 << 16)
  }

  deinit {
    // Not committed: an error was thrown on the way. The new file goes, the old one stays.
    if descriptor >= 0 { _ = close(descriptor) }
    if !committed, let temporary { unlink(temporary) }
  }

  func write(_ bytes: [UInt8]) throws(CommandError) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 1 << 16 { try flush() }
  }

  func write(_ text: String) throws(CommandError) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= 1 << 16 { try flush() }
  }

  /// Writes what is buffered.
  func flush() throws(CommandError) {
    let failed: Int32 = buffer.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += written
      }
      return 0
    }
    guard failed == 0 else { throw Self.failure(command, path, failed) }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Writes the rest, closes the file (an error a file system reports only then is an error too) and puts it in
  /// place.
  func commit() throws(CommandError) {
    try flush()
    let closed = close(descriptor)
    let closeError = errno
    descriptor = -1
    guard closed == 0 || closeError == EINTR else { throw Self.failure(command, path, closeError) }
    if let temporary {
      guard rename(temporary, target) == 0 else { throw Self.failure(command, path, errno) }
    }
    committed = true
  }

  static func failure(_ command: String, _ path: String, _ code: Int32) -> CommandError {
    CommandError("obstrace \(command): cannot write \(path) (\(String(cString: strerror(code))))")
  }
}

extension TraceInput {
  /// Writes a command's output to `path` (an `OutputFile`: whole or not at all), or to standard output when there
  /// is none; a file that cannot be written is one line naming it.
  static func write(
    _ text: String, to path: String?, output: CommandOutput, command: String,
    inputs: [(path: String, what: String)] = []
  ) throws(CommandError) {
    guard let path else {
      output.write(text)
      return
    }
    let file = try OutputFile(path: path, command: command, inputs: inputs)
    try file.write(text)
    try file.commit()
  }

  /// `--source-root`: the folder that source paths are written relative to (GitHub annotations); by default the
  /// current directory, where a CI job runs. A file is refused, and a folder that does not exist here is said on
  /// standard error (a typo would otherwise leave every annotation's file absolute, which GitHub cannot place,
  /// without a word: tryout15's K5); it is still used, since the paths a trace recorded on another machine are
  /// under folders this one need not have.
  static func sourceRoot(_ parsed: ParsedArguments, command: String, output: CommandOutput) throws(CommandError)
    -> String
  {
    guard let given = parsed.value("source-root") else { return FileManager.default.currentDirectoryPath }
    // Recorded paths are absolute: a relative root (`.`, `src/..`) is the folder it names from the current one
    // (taken as it was written, it matched no path, and every file stayed absolute: tryout16's P6).
    let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    let root = given.hasPrefix("/") ? given : URL(fileURLWithPath: given, relativeTo: current).standardizedFileURL.path
    var isFolder: ObjCBool = false
    let named = "--source-root '\(TraceDefinitions.escapingControls(given))'"
    if FileManager.default.fileExists(atPath: root, isDirectory: &isFolder) {
      guard isFolder.boolValue else { throw CommandError("obstrace \(command): \(named) is not a folder") }
    } else {
      output.writeError(
        "obstrace \(command): note: \(named) does not exist here; files under it are written relative to it all the "
          + "same, others whole\n")
    }
    return root
  }
}
