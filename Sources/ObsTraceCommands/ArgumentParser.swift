/// A small hand-written parser in the shape of swift-argument-parser: options with values (`-o FILE`,
/// `--format=json`), flags, positionals, and `--` ending the options. Every error names the flag.
struct ParsedArguments {
  var options: [String: [String]] = [:]
  var flags: Set<String> = []
  var positionals: [String] = []
  /// Everything after `--` (`record`'s command), which are also positionals: `report -- run.trc` reads run.trc, and
  /// a file whose name begins with `-` can be named.
  var rest: [String] = []

  /// The single value of an option, or nil.
  func value(_ name: String) -> String? { options[name]?.last }

  func values(_ name: String) -> [String] { options[name] ?? [] }

  func has(_ flag: String) -> Bool { flags.contains(flag) }
}

struct ArgumentSpecification {
  /// Options that take a value, by every spelling (`-o`, `--output`) mapped to their canonical name.
  var options: [String: String] = [:]
  /// Flags without a value, by spelling.
  var flags: [String: String] = [:]
  var command: String
  /// The options (canonical names) that may be given more than once (`check --max`); any other given twice is an
  /// error naming it, not the last one taken in silence (`timeline --scope A --scope B` is not both).
  var repeatable: Set<String> = []

  func parse(_ arguments: [String]) throws(CommandError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--" {
        parsed.rest = Array(arguments[index...])
        parsed.positionals += parsed.rest
        break
      }
      guard argument.hasPrefix("-"), argument.count > 1 else {
        parsed.positionals.append(argument)
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      if let canonical = flags[name] {
        if inlineValue != nil { throw CommandError("obstrace \(command): \(name) takes no value") }
        parsed.flags.insert(canonical)
      } else if let canonical = options[name] {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < arguments.count else {
            throw CommandError("obstrace \(command): \(name) needs a value; see 'obstrace \(command) --help'")
          }
          value = arguments[index]
          index += 1
        }
        if let earlier = parsed.options[canonical]?.first, !repeatable.contains(canonical) {
          throw CommandError(
            "obstrace \(command): \(name) is given twice ('\(earlier)', '\(value)'); it takes one value"
              + "; see 'obstrace \(command) --help'")
        }
        parsed.options[canonical, default: []].append(value)
      } else {
        throw CommandError("obstrace \(command): unknown option '\(argument)'; see 'obstrace \(command) --help'")
      }
    }
    return parsed
  }
}
