import ObsTraceAnalysis
import ObsTraceFormat

/// `obstrace graph --dot FILE`: the dependency graph as Graphviz DOT.
enum GraphCommand: TraceCommand {
  static let name = "graph"
  static let abstract = "The dependency graph (write sites → properties → scopes) as Graphviz DOT."
  static let help = """
    OVERVIEW: \(abstract)

    USAGE: obstrace graph [--dot] <file> [--sites] [--top <n>] [--per-object] [--type <type>] [--property <name>]
                          [--scope <label>]

    Boxes are properties, ellipses are scopes, notes (with --sites) are the places in the code that wrote.
    A dashed grey edge is "the scope read the property" (label: reads); a solid edge is "writes of the property
    invalidated the scope" (label: invalidations), red when some of them were wasted (the write changed
    nothing). Invalidations of an untraced scope (tracking ObsTrace does not own) are predicted from
    Observation's rules, not recorded: the label says how many ('invalidated 3 (3 predicted)'), and an edge of
    predicted ones only is dotted. A property with writes that changed nothing is filled red; a scope with
    redundant runs (runs that read nothing that had really changed) is filled orange. A count marked '≥' is a
    least count: it rests on writes through _modify that were not compared, which may have changed nothing
    (OBSTRACE_COMPARE=equatable compares the Equatable ones). Edge widths grow with counts. Only the --top properties with the most invalidations, and the --top scopes with the most
    invalidations (then runs) among theirs, are drawn; one node sums up the other properties, one the other
    scopes.

    OPTIONS:
      --dot                 Graphviz DOT (the default and only format).
      --sites               Also the write sites: an edge from each place in the code to the property it wrote
                            (label: writes, no-op writes in red). A line the binary does not give for certain
                            is marked '; line approximate'; writes whose stacks hold no frame of the program's
                            own code are drawn from one '(no site: ...)' note.
      --top <n>             Draw the n properties with the most invalidations, and the n scopes with the most
                            invalidations (then runs) (default 40).
      --per-object          One node per object's property (Model#3.items, named by the object's own type)
                            instead of per property.
      --type <type>         Only properties this type declares.
      --property <name>     Only this property (Type.name), or this object's (Type#n.name, as --per-object and
                            the timeline print it).
      --scope <label>       Only this scope (a run as the timeline prints it, Label (#3), stands for its scope).
      -h, --help            Show this help.

    EXAMPLE:
      obstrace graph --dot run.trc | dot -Tsvg > graph.svg
      obstrace graph --sites --top 10 run.trc | dot -Tsvg > graph.svg

    """

  /// What to draw.
  struct Options {
    var perObject = false
    var type: String?
    var property: String?
    /// With `property` given as one object's (`Model#3.items`): that object.
    var propertyObject: UInt32?
    /// With `propertyObject`: the type written before its `#`, which the object must have.
    var propertyObjectType: String?
    var scope: String?
    var sites = false
    var top = 40
    /// --property and --scope as given, before `resolvePrintedNames` read them as printed names.
    var givenProperty: String?
    var givenScope: String?

    /// Reads a --property or --scope the trace does not know as it is written as a name the commands print
    /// (`Model#3.items`: a property of one object; `Label (#3)`: a run, standing for its scope).
    mutating func resolvePrintedNames(knownProperties: Set<String>, knownScopes: Set<String>) {
      if let property, !knownProperties.contains(property), let named = PrintedNames.objectProperty(property) {
        self.property = named.property
        propertyObject = named.object
        propertyObjectType = named.type
      }
      if let scope, !knownScopes.contains(scope), let run = PrintedNames.run(scope) { self.scope = run.label }
    }
  }

  static func run(_ arguments: [String], output: CommandOutput) throws(CommandError) -> Int32 {
    let parsed = try ArgumentSpecification(
      options: ["--type": "type", "--property": "property", "--scope": "scope", "--top": "top"],
      flags: ["--dot": "dot", "--per-object": "per-object", "--sites": "sites"], command: name
    ).parse(arguments)
    let path = try TraceInput.singlePath(parsed, command: name)
    var options = Options(
      perObject: parsed.has("per-object"), type: parsed.value("type"), property: parsed.value("property"),
      scope: parsed.value("scope"), sites: parsed.has("sites"),
      top: try TraceInput.positiveInteger(parsed, "top", flag: "--top", command: name) ?? 40)
    options.givenProperty = options.property
    options.givenScope = options.scope
    let (text, loss) = try graph(path, options, command: name)
    output.write(text)
    if let note = loss.afterFooterNote(path, command: name) { output.writeError(note) }
    if loss.verdict != nil {
      output.writeError("obstrace graph: note: \(path) is \(loss.briefSummary) (said in the graph's title)\n")
    }
    return 0
  }

  /// The DOT text of the trace at `path`, and what the trace lost (said in the graph's title).
  static func graph(_ path: String, _ options: Options, command: String) throws(CommandError) -> (
    text: String, loss: TraceLoss
  ) {
    let reader = try TraceInput.open(path, command: command)
    var replay = Replay()
    let writes = WriteTally()
    replay.onFact = writes.note
    replay.replay(reader)
    let definitions = reader.definitions
    var options = options
    options.resolvePrintedNames(
      knownProperties: Set(definitions.properties.keys.map { definitions.propertyName($0) }),
      knownScopes: Set(definitions.labels.keys.map { definitions.labelName($0) }))
    try checkFilters(options, definitions, path: path, command: command)
    if let object = options.propertyObject, definitions.objects[object] == nil {
      throw CommandError(
        "obstrace \(command): --property '\(options.givenProperty ?? "")' names object #\(object), which is not an "
          + "object of \(path)")
    }
    if let object = options.propertyObject, let type = options.propertyObjectType,
      let why = PrintedNames.wrongType(type, object: object, in: definitions)
    {
      throw CommandError(
        "obstrace \(command): --property '\(options.givenProperty ?? "")' names \(type)#\(object), which is not an "
          + "object of \(path) \(why)")
    }
    let loss = TraceLoss(reader)
    return (dot(replay, reader.definitions, options, writes: writes, loss: loss.summary), loss)
  }

  /// A --type, --property or --scope the trace does not have is a mistake (a typo draws an empty graph, which
  /// reads as "nothing is connected"): an error naming the closest names.
  static func checkFilters(_ options: Options, _ definitions: TraceDefinitions, path: String, command: String)
    throws(CommandError)
  {
    let filters: [(String, String?, [String])] = [
      ("--type", options.type, definitions.types.keys.map { definitions.typeName($0) }),
      ("--property", options.property, definitions.properties.keys.map { definitions.propertyName($0) }),
      ("--scope", options.scope, definitions.labels.keys.map { definitions.labelName($0) }),
    ]
    for (flag, wanted, known) in filters {
      guard let wanted, !known.contains(wanted) else { continue }
      let given = flag == "--property" ? options.givenProperty : flag == "--scope" ? options.givenScope : nil
      throw CommandError(
        "obstrace \(command): \(flag) '\(given ?? wanted)' names nothing in \(path); "
          + NameSuggestions.describe(wanted, in: Array(Set(known))))
    }
  }

  /// Writes by place and property, from the timeline's write entries.
  final class WriteTally {
    struct Key: Hashable {
      var object: UInt32
      var property: UInt32
      var stack: UInt32
    }
    /// Writes, those that changed nothing, and those through `_modify` not compared (which may have changed nothing:
    /// a no-op count beside them is a least count, drawn with "≥", as the report prints it).
    var counts: [Key: (all: Int, unchanged: Int, uncompared: Int)] = [:]
    /// Predicted invalidations (fires of untraced scopes) by (object, property, label), counted as the report
    /// counts invalidations (`ReplayStatistics`, `.fire`): of the replay's `invalidationEdges`, those predicted.
    var predicted: [Edge: Int] = [:]
    /// Invalidations by writes through `_modify` not compared, by (object, property, label), counted as the report
    /// counts a scope's `uncomparedInvalidations`: the wasted count of such an edge is a least count.
    var uncomparedInvalidations: [Edge: Int] = [:]

    struct Edge: Hashable {
      var object: UInt32
      var property: UInt32
      var label: UInt32
    }

    func note(_ entry: ReplayFact) {
      switch entry {
      case .write(let write):
        let key = Key(object: write.key.object, property: write.key.property, stack: write.stack)
        let previous = counts[key] ?? (0, 0, 0)
        let uncompared = write.throughModify && write.outcome == .unknown
        counts[key] = (
          previous.all + 1, previous.unchanged + (write.outcome == .unchanged ? 1 : 0),
          previous.uncompared + (uncompared ? 1 : 0)
        )
        if uncompared {
          for fire in write.fired {
            uncomparedInvalidations[
              Edge(object: write.key.object, property: write.key.property, label: fire.label), default: 0] += 1
          }
        }
      case .fire(let fire):
        guard fire.predicted, !fire.afterSequenceEnded, let cause = fire.cause else { return }
        predicted[Edge(object: cause.object, property: cause.property, label: fire.label), default: 0] += 1
      default:
        return
      }
    }
  }

  struct EdgeKey: Hashable {
    var property: String
    var scope: String
  }

  /// `loss`: what the trace lost, drawn as the graph's title (its counts are then lower bounds, and edges may be
  /// missing).
  static func dot(
    _ replay: Replay, _ definitions: TraceDefinitions, _ options: Options, writes: WriteTally = WriteTally(),
    loss: String? = nil
  ) -> String {
    // One node per property, by id: two properties whose printed names are the same (which `propertyName` avoids,
    // qualifying a type with its module where another has its name) are drawn apart, each with its number, never
    // as one node whose counts are both's.
    var idsByName: [String: UInt32] = [:]
    var sharedNames: Set<String> = []
    for id in definitions.properties.keys {
      let name = definitions.propertyName(id)
      if let other = idsByName.updateValue(id, forKey: name), other != id { sharedNames.insert(name) }
    }
    func propertyNode(object: UInt32, property id: UInt32) -> String? {
      let name = definitions.propertyName(id)
      let typeName = definitions.properties[id].map { definitions.typeName($0.rootType) } ?? ""
      if let type = options.type, typeName != type { return nil }
      if let property = options.property, name != property { return nil }
      if let wanted = options.propertyObject, object != wanted { return nil }
      if options.perObject {
        // The object's own type (`Dog#2.name`), not the class that declares the property (`Animal`): one object
        // is one node name, whichever of its class's @Observable levels declares what it holds.
        return "\(definitions.typeName(ofObject: object))#\(object).\(definitions.shortPropertyName(id))"
      }
      return sharedNames.contains(name) ? "\(name) (property #\(id))" : name
    }
    func scopeNode(_ label: UInt32) -> String? {
      let name = definitions.labelName(label)
      if let scope = options.scope, name != scope { return nil }
      return name
    }
    var reads: [EdgeKey: Int] = [:]
    var invalidations: [EdgeKey: (all: Int, wasted: Int)] = [:]
    var uncomparedInvalidations: [EdgeKey: Int] = [:]
    var predicted: [EdgeKey: Int] = [:]
    for (edge, count) in replay.readEdges {
      guard let node = propertyNode(object: edge.object, property: edge.property), let scopeName = scopeNode(edge.label)
      else { continue }
      reads[EdgeKey(property: node, scope: scopeName), default: 0] += count
    }
    for (edge, counts) in replay.invalidationEdges {
      guard let node = propertyNode(object: edge.object, property: edge.property), let scopeName = scopeNode(edge.label)
      else { continue }
      let key = EdgeKey(property: node, scope: scopeName)
      let previous = invalidations[key] ?? (0, 0)
      invalidations[key] = (previous.all + counts.all, previous.wasted + counts.wasted)
      if let count = writes.predicted[WriteTally.Edge(object: edge.object, property: edge.property, label: edge.label)]
      {
        predicted[key, default: 0] += count
      }
      if let count = writes.uncomparedInvalidations[
        WriteTally.Edge(object: edge.object, property: edge.property, label: edge.label)]
      {
        uncomparedInvalidations[key, default: 0] += count
      }
    }
    // Writes per property node and per (site, property node): the site edges, and the no-op fill.
    var siteEdges: [EdgeKey: (all: Int, unchanged: Int, uncompared: Int)] = [:]
    var siteLabels: [String: String] = [:]
    var noopWrites: [String: (unchanged: Int, uncompared: Int)] = [:]
    for (key, counts) in writes.counts {
      guard let node = propertyNode(object: key.object, property: key.property) else { continue }
      let noop = noopWrites[node] ?? (0, 0)
      noopWrites[node] = (noop.unchanged + counts.unchanged, noop.uncompared + counts.uncompared)
      guard options.sites else { continue }
      let site: String
      if let frame = definitions.site(ofStack: key.stack) {
        let file = frame.file.split(separator: "/").last.map(String.init) ?? frame.file
        // Nodes by full path and line (two main.swift files are two places), labelled as every output spells a
        // place, `Module/File.swift:line` (SiteFormatting.place). A line the
        // binary does not give for certain says so, as every other output does, and is a node of its own: it is
        // not the claim that a certain line at the same number makes (docs/symbols.md, Approximate lines).
        let approximate = !file.isEmpty && frame.lineIsApproximate
        site =
          (frame.file.isEmpty ? frame.function : "\(frame.file):\(frame.line)") + (approximate ? " (approximate)" : "")
        siteLabels[site] =
          (file.isEmpty ? "" : "\(SiteFormatting.place(frame))\n") + SiteFormatting.shortFunction(frame.function)
          + (approximate ? SiteFormatting.approximateMark : "")
      } else if definitions.frames(ofStack: key.stack).contains(where: { !$0.function.isEmpty }) {
        // Named frames, none the program's own: said, as the timeline and the findings say it, not left out.
        site = "(no site)"
        siteLabels[site] = "(\(SiteFormatting.notPlaced))"
      } else {
        continue
      }
      let edge = EdgeKey(property: node, scope: site)
      let previous = siteEdges[edge] ?? (0, 0, 0)
      siteEdges[edge] = (
        previous.all + counts.all, previous.unchanged + counts.unchanged, previous.uncompared + counts.uncompared
      )
    }

    // Large graphs: keep the properties with the most invalidations, sum up the rest in one node.
    var allProperties = Set(reads.keys.map(\.property)).union(invalidations.keys.map(\.property))
    if options.sites { allProperties.formUnion(siteEdges.keys.map(\.property)) }
    var invalidationsByProperty: [String: Int] = [:]
    for (key, counts) in invalidations { invalidationsByProperty[key.property, default: 0] += counts.all }
    let ranked = allProperties.sorted {
      (invalidationsByProperty[$1] ?? 0, $0) < (invalidationsByProperty[$0] ?? 0, $1)
    }
    let kept = Set(ranked.prefix(options.top))
    let left = ranked.dropFirst(options.top)
    reads = reads.filter { kept.contains($0.key.property) }
    invalidations = invalidations.filter { kept.contains($0.key.property) }
    siteEdges = siteEdges.filter { kept.contains($0.key.property) }

    let propertyNames = kept.sorted()
    var runs: [String: (all: Int, redundant: Int, possiblyRedundant: Int)] = [:]
    for (label, statistics) in replay.scopes {
      let name = definitions.labelName(label)
      let previous = runs[name] ?? (0, 0, 0)
      runs[name] = (
        previous.all + statistics.runs, previous.redundant + statistics.redundantRuns,
        previous.possiblyRedundant + statistics.possiblyRedundantRuns
      )
    }
    // And the scopes with the most invalidations (then runs) among those of the kept properties, the rest summed
    // up in one node: a trace of 10,000 scopes drew 10,000 ellipses and 20,000 edges whatever --top said, more
    // than Graphviz lays out (tryout17's Q3).
    var invalidationsByScope: [String: Int] = [:]
    for (key, counts) in invalidations { invalidationsByScope[key.scope, default: 0] += counts.all }
    let rankedScopes = Set(reads.keys.map(\.scope)).union(invalidations.keys.map(\.scope)).sorted {
      (invalidationsByScope[$1] ?? 0, runs[$1]?.all ?? 0, $0) < (invalidationsByScope[$0] ?? 0, runs[$0]?.all ?? 0, $1)
    }
    let keptScopes = Set(rankedScopes.prefix(options.top))
    let leftScopes = rankedScopes.dropFirst(options.top)
    reads = reads.filter { keptScopes.contains($0.key.scope) }
    invalidations = invalidations.filter { keptScopes.contains($0.key.scope) }
    let scopeNames = keptScopes.sorted()

    var out = TextBuffer()
    out.line("digraph obstrace {")
    out.line("  rankdir=LR;")
    out.line("  node [fontname=\"Helvetica\", fontsize=11];")
    out.line("  edge [fontname=\"Helvetica\", fontsize=10];")
    if let loss {
      out.line(
        "  labelloc=t; fontname=\"Helvetica\"; fontcolor=red; label="
          + Formatting.json("\(loss)\ncounts and edges here miss what was lost"))
    }
    for site in Set(siteEdges.keys.map(\.scope)).sorted() {
      out.line(
        "  \(dotString("w:" + site)) [shape=note, style=filled, fillcolor=\"#eef2f7\", "
          + "label=\(dotString(siteLabels[site] ?? site))];")
    }
    // A count that rests on writes through `_modify` not compared is a least count: "≥", as the report prints it,
    // never a plain number that reads as known (a plain "0 redundant" or no label at all said none).
    for name in propertyNames {
      let noop = noopWrites[name] ?? (0, 0)
      if noop.unchanged > 0 || noop.uncompared > 0 {
        let label =
          dotName(name)
          + "\n\(noop.uncompared > 0 ? "≥" : "")\(noop.unchanged) no-op write\(noop.unchanged == 1 ? "" : "s")"
          + (noop.uncompared > 0 ? " (\(noop.uncompared) not compared)" : "")
        let fill = noop.unchanged > 0 ? "style=filled, fillcolor=\"#f8d0d0\", " : ""
        out.line("  \(dotString("p:" + name)) [shape=box, \(fill)label=\(Formatting.json(label))];")
      } else {
        out.line("  \(dotString("p:" + name)) [shape=box, label=\(dotString(name))];")
      }
    }
    for name in scopeNames {
      let counts = runs[name] ?? (0, 0, 0)
      var label = dotName(name) + "\n\(counts.all) run\(counts.all == 1 ? "" : "s")"
      if counts.redundant > 0 || counts.possiblyRedundant > 0 {
        label += " (\(counts.possiblyRedundant > 0 ? "≥" : "")\(counts.redundant) redundant)"
      }
      if counts.redundant > 0 {
        out.line(
          "  \(dotString("s:" + name)) [shape=ellipse, style=filled, fillcolor=\"#fbd9a6\", "
            + "label=\(Formatting.json(label))];")
      } else {
        out.line("  \(dotString("s:" + name)) [shape=ellipse, label=\(Formatting.json(label))];")
      }
    }
    if !left.isEmpty {
      let hidden = left.reduce(0) { $0 + (invalidationsByProperty[$1] ?? 0) }
      let label =
        "… \(left.count) more propert\(left.count == 1 ? "y" : "ies")\n"
        + "\(hidden) invalidation\(hidden == 1 ? "" : "s") (raise --top to see them)"
      out.line("  \"more\" [shape=box, style=dashed, color=gray50, fontcolor=gray30, label=\(dotString(label))];")
    }
    if !leftScopes.isEmpty {
      let hidden = leftScopes.reduce(0) { $0 + (invalidationsByScope[$1] ?? 0) }
      let hiddenRuns = leftScopes.reduce(0) { $0 + (runs[$1]?.all ?? 0) }
      let label =
        "… \(leftScopes.count) more scope\(leftScopes.count == 1 ? "" : "s")\n"
        + "\(hiddenRuns) run\(hiddenRuns == 1 ? "" : "s"), \(hidden) invalidation\(hidden == 1 ? "" : "s") "
        + "(raise --top, or --scope LABEL, to see them)"
      out.line(
        "  \"more scopes\" [shape=ellipse, style=dashed, color=gray50, fontcolor=gray30, label=\(dotString(label))];")
    }
    for key in siteEdges.keys.sorted(by: { ($0.scope, $0.property) < ($1.scope, $1.property) }) {
      let counts = siteEdges[key]!
      let noop =
        counts.unchanged > 0 || counts.uncompared > 0
        ? " (\(counts.uncompared > 0 ? "≥" : "")\(counts.unchanged) no-op)" : ""
      out.line(
        "  \(dotString("w:" + key.scope)) -> \(dotString("p:" + key.property)) "
          + "[color=\(counts.unchanged > 0 ? "red" : "steelblue"), label=\"wrote \(counts.all)\(noop)\", "
          + "penwidth=\(width(counts.all))];")
    }
    for key in reads.keys.sorted(by: { ($0.property, $0.scope) < ($1.property, $1.scope) }) {
      let count = reads[key]!
      out.line(
        "  \(dotString("p:" + key.property)) -> \(dotString("s:" + key.scope)) "
          + "[style=dashed, color=gray40, label=\"read \(count)\", penwidth=\(width(count))];")
    }
    for key in invalidations.keys.sorted(by: { ($0.property, $0.scope) < ($1.property, $1.scope) }) {
      let counts = invalidations[key]!
      let guessed = predicted[key] ?? 0
      let uncompared = uncomparedInvalidations[key] ?? 0
      let notes =
        (guessed > 0 ? ["\(guessed) predicted"] : [])
        + (counts.wasted > 0 || uncompared > 0 ? ["\(uncompared > 0 ? "≥" : "")\(counts.wasted) wasted"] : [])
      let color = counts.wasted > 0 ? "red" : "black"
      out.line(
        "  \(dotString("p:" + key.property)) -> \(dotString("s:" + key.scope)) "
          + "[color=\(color)\(guessed == counts.all ? ", style=dotted" : ""), label=\"invalidated \(counts.all)"
          + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")") + "\", penwidth=\(width(counts.all))];")
    }
    out.line("}")
    return out.text
  }

  /// A name as a quoted DOT string, cut as `dotName` cuts it.
  static func dotString(_ name: String) -> String { Formatting.json(dotName(name)) }

  /// Graphviz refuses a quoted string over 16 KiB, and with it the whole graph (a trace's names are any length: a
  /// fresh-clone try-out's 60,000-character type name): a name over `dotNameLimit` characters is cut, saying how
  /// much, and ends with a hash of the whole name, so that two long names that begin alike stay two nodes.
  static func dotName(_ name: String) -> String {
    let scalars = name.unicodeScalars
    guard scalars.count > dotNameLimit else { return name }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    let kept = String(String.UnicodeScalarView(scalars.prefix(dotNameLimit)))
    return kept + "… (\(scalars.count - dotNameLimit) more characters; #\(String(hash, radix: 16)))"
  }

  /// At most this many characters of a name are drawn: escaped (6 bytes a control character at most) and with the
  /// counts a label adds, well under Graphviz's 16,384 bytes.
  static let dotNameLimit = 1_000

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
