import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace graph --dot FILE`: the dependency graph as Graphviz DOT.
enum GraphCommand: TraceCommand {
  static let name = "graph"
  static let abstract = "The dependency graph (properties → scopes) as Graphviz DOT."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace graph [--dot] <file> [--per-object] [--type <type>] [--property <Type.name>] [--scope <label>]

    Boxes are properties, ellipses are scopes. A dashed edge is "the scope read the property" (label: reads);
    a solid edge is "writes of the property invalidated the scope" (label: invalidations), red when some of
    them were wasted (the write changed nothing). Edge widths grow with counts.

    OPTIONS:
      --dot                 Graphviz DOT (the default and only format).
      --per-object          One node per object's property (Model#3.items) instead of per type.
      --type <type>         Only properties of this type.
      --property <name>     Only this property (Type.name).
      --scope <label>       Only this scope.
      -h, --help            Show this help.

    EXAMPLE:
      obstrace graph --dot run.trc | dot -Tsvg > graph.svg

    """

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: ["--type": "type", "--property": "property", "--scope": "scope"],
      flags: ["--dot": "dot", "--per-object": "per-object"], command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    let reader = try TraceInput.open(path, command: name)
    var replay = Replay()
    var ordered = TimeOrderedEvents(threads: reader.footer.map { Set($0.threads.map(\.thread)) })
    reader.forEachChunk { chunk in ordered.add(chunk) { replay.consume($0) } }
    ordered.finish { replay.consume($0) }
    output.write(
      dot(
        replay, reader.definitions, perObject: parsed.has("per-object"), type: parsed.value("type"),
        property: parsed.value("property"), scope: parsed.value("scope")))
    return 0
  }

  struct EdgeKey: Hashable {
    var property: String
    var scope: String
  }

  static func dot(
    _ replay: Replay, _ definitions: TraceDefinitions, perObject: Bool, type: String?, property: String?,
    scope: String?
  ) -> String {
    func propertyNode(_ edge: Replay.Edge) -> (name: String, type: String)? {
      let name = definitions.propertyName(edge.property)
      let typeName = definitions.properties[edge.property].map { definitions.typeName($0.rootType) } ?? ""
      if let type, typeName != type { return nil }
      if let property, name != property { return nil }
      if perObject {
        let dot = name.firstIndex(of: ".").map { name[name.index(after: $0)...] } ?? Substring(name)
        return ("\(typeName)#\(edge.object).\(dot)", typeName)
      }
      return (name, typeName)
    }
    func scopeNode(_ label: UInt32) -> String? {
      let name = definitions.labelName(label)
      if let scope, name != scope { return nil }
      return name
    }
    var reads: [EdgeKey: Int] = [:]
    var invalidations: [EdgeKey: (all: Int, wasted: Int)] = [:]
    for (edge, count) in replay.readEdges {
      guard let node = propertyNode(edge), let scopeName = scopeNode(edge.label) else { continue }
      reads[EdgeKey(property: node.name, scope: scopeName), default: 0] += count
    }
    for (edge, counts) in replay.invalidationEdges {
      guard let node = propertyNode(edge), let scopeName = scopeNode(edge.label) else { continue }
      let key = EdgeKey(property: node.name, scope: scopeName)
      let previous = invalidations[key] ?? (0, 0)
      invalidations[key] = (previous.all + counts.all, previous.wasted + counts.wasted)
    }
    let propertyNames = Set(reads.keys.map(\.property)).union(invalidations.keys.map(\.property)).sorted()
    let scopeNames = Set(reads.keys.map(\.scope)).union(invalidations.keys.map(\.scope)).sorted()
    let runs = Dictionary(
      replay.scopes.map { (definitions.labelName($0.key), $0.value.runs) }, uniquingKeysWith: +)

    var out = TextBuffer()
    out.line("digraph obstrace {")
    out.line("  rankdir=LR;")
    out.line("  node [fontname=\"Helvetica\", fontsize=11];")
    out.line("  edge [fontname=\"Helvetica\", fontsize=10];")
    for name in propertyNames {
      out.line("  \(Formatting.json("p:" + name)) [shape=box, label=\(Formatting.json(name))];")
    }
    for name in scopeNames {
      let label = name + "\n\(runs[name] ?? 0) run\(runs[name] == 1 ? "" : "s")"
      out.line("  \(Formatting.json("s:" + name)) [shape=ellipse, label=\(Formatting.json(label))];")
    }
    for key in reads.keys.sorted(by: { ($0.property, $0.scope) < ($1.property, $1.scope) }) {
      let count = reads[key]!
      out.line(
        "  \(Formatting.json("p:" + key.property)) -> \(Formatting.json("s:" + key.scope)) "
          + "[style=dashed, color=gray40, label=\"read \(count)\", penwidth=\(width(count))];")
    }
    for key in invalidations.keys.sorted(by: { ($0.property, $0.scope) < ($1.property, $1.scope) }) {
      let counts = invalidations[key]!
      let wasted = counts.wasted > 0 ? " (\(counts.wasted) wasted)" : ""
      let color = counts.wasted > 0 ? "red" : "black"
      out.line(
        "  \(Formatting.json("p:" + key.property)) -> \(Formatting.json("s:" + key.scope)) "
          + "[color=\(color), label=\"invalidated \(counts.all)\(wasted)\", penwidth=\(width(counts.all))];")
    }
    out.line("}")
    return out.text
  }

  static func width(_ count: Int) -> String {
    var log = 0
    var value = count
    while value > 1 {
      value >>= 1
      log += 1
    }
    return String(1 + min(log, 8))
  }
}
