#if canImport(Glibc)
  import Glibc
#endif

/// The `obstrace` command: parse, validate, run, one exit point.
public enum CommandLineInterface {
  /// Computed, not stored: a stored array of metatypes is not `Sendable` to Swift 6, and its warning showed in every
  /// build of the CLI (the demo's first lines).
  static var commands: [any TraceCommand.Type] {
    [
      RecordCommand.self, ReportCommand.self, GraphCommand.self, TimelineCommand.self, BaselineCommand.self,
      CheckCommand.self, ExportCommand.self, SymbolizeCommand.self, DumpCommand.self,
    ]
  }

  static let overview = """
    OVERVIEW: see inside Swift's Observation framework: who read what, which write invalidated whom, and which \
    invalidations were wasted.

    USAGE: obstrace <command> [options]

    COMMANDS:
    \(commands.map { "  " + $0.name.padding(toLength: 11) + $0.abstract }.joined(separator: "\n"))

    Run 'obstrace <command> --help' for a command's options and an example.

    """

  /// Runs the command line (without the program name); returns the exit code.
  public static func run(_ arguments: [String], output: CommandOutput) -> Int32 {
    guard let name = arguments.first else {
      output.writeError(overview)
      return 2
    }
    if name == "--help" || name == "-h" || name == "help" {
      output.write(overview)
      return 0
    }
    guard let command = commands.first(where: { $0.name == name }) else {
      output.writeError("obstrace: unknown command '\(name)'; see 'obstrace --help'\n")
      return 2
    }
    let rest = Array(arguments.dropFirst())
    if rest.first == "--help" || rest.first == "-h" || (rest.contains("--help") && !rest.contains("--")) {
      output.write(command.help)
      return 0
    }
    var status: Int32
    do {
      status = try command.run(rest, output: output)
    } catch {
      output.writeError(error.message + "\n")
      status = error.exitCode
    }
    // What standard output could not take is lost: the command failed, whatever it found (a cut report or JUnit
    // file must not pass in CI).
    output.finish()
    if let failure = output.standardOutputError {
      output.writeError("obstrace \(name): cannot write standard output (\(String(cString: strerror(failure))))\n")
      status = 2
    }
    return status
  }
}

/// One subcommand.
protocol TraceCommand {
  static var name: String { get }
  static var abstract: String { get }
  static var help: String { get }
  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32
}

extension String {
  func padding(toLength length: Int) -> String {
    count >= length ? self + " " : self + String(repeating: " ", count: length - count)
  }
}

/// Opening a trace for a command: the one-line errors of unreadable input.
enum TraceInput {
  static func singlePath(_ parsed: ParsedArguments, command: String) throws(CommandError) -> String {
    guard parsed.positionals.count == 1 else {
      throw CommandError(
        parsed.positionals.isEmpty
          ? "obstrace \(command): missing the trace file; see 'obstrace \(command) --help'"
          : "obstrace \(command): expected one trace file, got \(parsed.positionals.count)")
    }
    return parsed.positionals[0]
  }
}
