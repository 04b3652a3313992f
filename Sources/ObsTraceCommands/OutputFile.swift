import Foundation

extension TraceInput {
  /// Writes a command's output to `path`, or to standard output when there is none; a file that cannot be
  /// written is one line naming it.
  static func write(_ text: String, to path: String?, output: CommandOutput, command: String) throws(CommandError) {
    guard let path else {
      output.write(text)
      return
    }
    do {
      try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
      throw CommandError("obstrace \(command): cannot write \(path) (\(error.localizedDescription))")
    }
  }

  /// `--source-root`: the folder that source paths are written relative to (GitHub annotations); by default the
  /// current directory, where a CI job runs.
  static func sourceRoot(_ parsed: ParsedArguments, command: String) -> String {
    parsed.value("source-root") ?? FileManager.default.currentDirectoryPath
  }
}
