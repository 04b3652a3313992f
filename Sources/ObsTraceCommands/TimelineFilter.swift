import ObsTraceAnalysis
import ObsTraceFormat

/// The filters of the commands that show the trace's events one by one (`timeline`, `export`): which scope,
/// property, object, thread and time window. Parsed here once for both, with the same errors; matched against the
/// replay's facts by `Matcher`; and, when nothing matched, checked against what the trace holds by `Evidence` (a
/// name or number the trace does not have is a mistake, not an empty answer).
struct TimelineFilter {
  var scope: String?
  /// A run named as the timeline prints it (`FirstView.body (#3)`): its label and its number. A label named `scope`
  /// matches whole; one named `scopeOfRun`, in that run only.
  var scopeOfRun: String?
  var scopeRun: UInt32?
  var property: String?
  /// With `property` given as one object's (`Model#1.items`): that object, and the text given.
  var propertyObject: UInt32?
  /// With `propertyObject`: the type written before its `#`.
  var propertyObjectType: String?
  var givenProperty: String?
  var object: UInt32?
  /// With `object` given as `Type#n`: the type object n must have (serials are counted across types).
  var objectType: String?
  var givenObject: String?
  var thread: UInt32?
  /// `--thread` as given (`T9` or `9`).
  var givenThread: String?
  var from: UInt64 = 0
  var to: UInt64 = .max

  /// The options, by spelling, with their canonical names.
  static let options = [
    "--scope": "scope", "--property": "property", "--object": "object", "--thread": "thread", "--from": "from",
    "--to": "to",
  ]

  /// The options' lines of a command's help.
  static let help = """
      --scope <label>       Only runs of this scope, and writes that invalidated it (or one run: Label (#3)).
      --property <name>     Only lines that involve this property (Type.name), or this object's (Type#n.name).
      --object <n>          Only lines that involve object #n (also Type#n).
      --thread <n>          Only thread Tn.
      --from <ms>, --to <ms>  Only this time window.
    """

  init() {}

  /// The filter the options of `parsed` give; a value that is not one is an error naming its flag.
  init(_ parsed: ParsedArguments, command: String) throws(CommandError) {
    scope = parsed.value("scope")
    property = parsed.value("property")
    if let scope, let run = PrintedNames.run(scope) {
      scopeOfRun = run.label
      scopeRun = run.run
    }
    givenProperty = property
    if let property, let named = PrintedNames.objectProperty(property) {
      self.property = named.property
      propertyObject = named.object
      propertyObjectType = named.type
    }
    if let text = parsed.value("object") {
      guard let object = PrintedNames.object(text) else {
        throw CommandError("obstrace \(command): --object must be a number or Type#n, not '\(text)'")
      }
      self.object = object.object
      objectType = object.type
      givenObject = text
    }
    if let text = parsed.value("thread") {
      let digits = text.hasPrefix("T") ? String(text.dropFirst()) : text
      guard let thread = UInt32(digits) else {
        throw CommandError("obstrace \(command): --thread must be a number, not '\(text)'")
      }
      self.thread = thread
      givenThread = text
    }
    for (name, flag) in [("from", "--from"), ("to", "--to")] {
      guard let text = parsed.value(name) else { continue }
      // Finite and under 2^64 ns (about 584 years): a larger value cannot be converted without trapping.
      guard let milliseconds = Double(text), milliseconds >= 0, milliseconds < 1.8e13 else {
        throw CommandError("obstrace \(command): \(flag) must be milliseconds since the start, not '\(text)'")
      }
      if name == "from" { from = UInt64(milliseconds * 1e6) } else { to = UInt64(milliseconds * 1e6) }
    }
    guard from <= to else {
      throw CommandError("obstrace \(command): --from must not be later than --to")
    }
  }

  /// Whether no filter was given: everything matches.
  var isEmpty: Bool {
    scope == nil && property == nil && object == nil && thread == nil && from == 0 && to == .max
  }

  /// Whether what matches depends on more than a fact's time and thread (what a run read, whom a write invalidated).
  var namesSomething: Bool { scope != nil || property != nil || object != nil }

  /// Matches facts against a filter, resolving each label, property and type it meets once.
  struct Matcher {
    let filter: TimelineFilter
    private let reader: TraceReader
    /// With --scope and --property: whether a label or property id has the name asked for.
    private var labelMatches = DenseTable<LabelMatch>()
    private var propertyMatches = DenseTable<Bool>()
    /// With --object Type#n: by type id, whether the type's name is the one asked for.
    private var objectTypeMatches = DenseTable<Bool>()

    init(filter: TimelineFilter, reader: TraceReader) {
      self.filter = filter
      self.reader = reader
    }

    /// How label `id` is the one asked for: by its name, or as the label of the run asked for (`Label (#3)`).
    enum LabelMatch {
      case none, name, labelOfRun
    }

    private mutating func labelMatch(_ id: UInt32, _ wanted: String) -> LabelMatch {
      if let match = labelMatches[id] { return match }
      // In place (`withDefinitions`): `reader.definitions` is a copy of the whole struct.
      let (name, defined) = reader.withDefinitions { ($0.labelName(id), $0.labels[id] != nil) }
      let match: LabelMatch = name == wanted ? .name : name == filter.scopeOfRun ? .labelOfRun : .none
      // Kept once the trace has defined the label: until then its name is worked out again, never frozen as unknown.
      if defined { labelMatches[id] = match }
      return match
    }

    /// Whether run `scope` of label `label` is asked for (`scope` nil: a line about the label, not about a run).
    private mutating func scopeMatches(_ label: UInt32, _ scope: UInt32?, _ wanted: String) -> Bool {
      switch labelMatch(label, wanted) {
      case .name: true
      case .labelOfRun: scope != nil && scope == filter.scopeRun
      case .none: false
      }
    }

    private mutating func propertyMatches(_ id: UInt32, _ wanted: String) -> Bool {
      if let match = propertyMatches[id] { return match }
      let (name, defined) = reader.withDefinitions { ($0.propertyName(id), $0.properties[id] != nil) }
      let match = name == wanted
      if defined { propertyMatches[id] = match }
      return match
    }

    /// Whether a fact at `time` on `thread` about `keys` (and, for a run or fire, its label and run; for a write, the
    /// runs it invalidated) is asked for.
    mutating func matches<Keys: Collection<PropertyKey>>(
      time: UInt64, thread: UInt32, keys: Keys, label: UInt32?, scope: UInt32? = nil,
      labels: [(scope: UInt32, label: UInt32)] = []
    ) -> Bool {
      if time < filter.from || time > filter.to { return false }
      if let wanted = filter.thread, wanted != thread { return false }
      if let wanted = filter.object, !keys.contains(where: { $0.object == wanted }) || !objectHasWantedType(wanted) {
        return false
      }
      if let wanted = filter.property {
        let object = filter.propertyObject
        var found = false
        for key in keys where propertyMatches(key.property, wanted) && (object == nil || object == key.object) {
          found = true
          break
        }
        if !found { return false }
      }
      if let wanted = filter.scope {
        if let label { return scopeMatches(label, scope, wanted) }
        for run in labels where scopeMatches(run.label, run.scope, wanted) { return true }
        return false
      }
      return true
    }

    /// Whether a fact about object `serial` alone (its creation, its free) is asked for: only when --object names
    /// that object (and no --scope or --property is given), in the time window and thread.
    mutating func matchesObject(_ serial: UInt32, time: UInt64, thread: UInt32) -> Bool {
      guard filter.scope == nil, filter.property == nil, filter.object == serial else { return false }
      if time < filter.from || time > filter.to { return false }
      if let wanted = filter.thread, wanted != thread { return false }
      if let type = filter.objectType {
        return reader.withDefinitions { PrintedNames.wrongType(type, object: serial, in: $0) } == nil
      }
      return true
    }

    /// Whether an object has the type --object named it with (`Holder#3`), or --object gave a bare number. An object
    /// of another type with that serial matches nothing: serials are counted across types.
    private mutating func objectHasWantedType(_ serial: UInt32) -> Bool {
      guard let wanted = filter.objectType else { return true }
      // In place (`withDefinitions`): this is asked for every line about the object.
      guard let type = reader.withDefinitions({ $0.objects[serial] }) else { return false }
      if let known = objectTypeMatches[type] { return known }
      let matches = reader.withDefinitions { PrintedNames.isType(type, named: wanted, in: $0) }
      // A match is kept; a mismatch is not (a property defined later may qualify the type's name: isType).
      if matches { objectTypeMatches[type] = true }
      return matches
    }
  }

  /// What a filter that matched nothing is checked against, noted from the facts (only what is asked: the threads
  /// and objects seen for --thread and --object, the labels and properties for --scope and --property, as the
  /// report would list them).
  struct Evidence {
    let filter: TimelineFilter
    private let noteThreadsAndObjects: Bool
    private let noteLabels: Bool
    private let noteProperties: Bool
    private(set) var seenThreads = Set<UInt32>()
    private(set) var seenObjects = Set<UInt32>()
    private(set) var seenLabels = Set<UInt32>()
    /// With --scope naming a run: the label of the run of that number, if one began.
    private(set) var labelOfRun: UInt32?
    private(set) var seenProperties = Set<UInt32>()

    init(filter: TimelineFilter) {
      self.filter = filter
      noteThreadsAndObjects = filter.thread != nil || filter.object != nil || filter.propertyObject != nil
      noteLabels = filter.scope != nil
      noteProperties = filter.property != nil
    }

    mutating func note(_ fact: ReplayFact) {
      if noteThreadsAndObjects { fact.note(threads: &seenThreads, objects: &seenObjects) }
      if noteLabels, case .runBegan(let run) = fact {
        seenLabels.insert(run.label)
        if let wanted = filter.scopeRun, run.scope == wanted { labelOfRun = run.label }
      }
      if noteProperties {
        switch fact {
        case .read(let read): seenProperties.insert(read.key.property)
        case .writeBegan(let write): seenProperties.insert(write.key.property)
        case .write(let write): seenProperties.insert(write.key.property)
        case .fire(let fire): if let cause = fire.cause { seenProperties.insert(cause.property) }
        default: break
        }
      }
    }

    /// When nothing matched: the error of a filter that names what `path` does not have, if it does.
    func check(_ reader: TraceReader, path: String, command: String) throws(CommandError) {
      let definitions = reader.definitions
      if let scope = filter.scope {
        let known = Set(seenLabels.map { definitions.labelName($0) }).union(
          definitions.labels.keys.map { definitions.labelName($0) })
        if !known.contains(scope), !known.contains(filter.scopeOfRun ?? scope) {
          throw CommandError(
            "obstrace \(command): --scope '\(scope)' names no scope of \(path); "
              + NameSuggestions.describe(scope, in: known.sorted()))
        }
        // A run of that number of another scope is not one of this one's (tryout16's P4: "nothing matches", exit 0).
        if !known.contains(scope), let label = filter.scopeOfRun, let run = filter.scopeRun,
          labelOfRun.map({ definitions.labelName($0) }) != label
        {
          let other = labelOfRun.map { "; run #\(run) is a run of \(definitions.labelName($0))" } ?? ""
          throw CommandError(
            "obstrace \(command): --scope '\(scope)': \(label) has no run #\(run) in \(path)\(other)")
        }
      }
      if let property = filter.property {
        let known = Set(seenProperties.map { definitions.propertyName($0) }).union(
          definitions.properties.keys.map { definitions.propertyName($0) })
        if !known.contains(property) {
          throw CommandError(
            "obstrace \(command): --property '\(filter.givenProperty ?? property)' names no property of \(path); "
              + NameSuggestions.describe(property, in: known.sorted()))
        }
        if let object = filter.propertyObject, !seenObjects.contains(object) {
          throw CommandError(
            "obstrace \(command): --property '\(filter.givenProperty ?? property)' names object #\(object), "
              + "which is not an object of \(path)")
        }
        if let object = filter.propertyObject, let type = filter.propertyObjectType,
          let why = PrintedNames.wrongType(type, object: object, in: definitions)
        {
          throw CommandError(
            "obstrace \(command): --property '\(filter.givenProperty ?? property)' names \(type)#\(object), "
              + "which is not an object of \(path) \(why)")
        }
      }
      if let thread = filter.thread, !seenThreads.contains(thread) {
        throw CommandError(
          "obstrace \(command): --thread \(filter.givenThread ?? "\(thread)") is not a thread of \(path) ("
            + (seenThreads.isEmpty
              ? "no thread has events in it"
              : "its threads: " + seenThreads.sorted().map { "T\($0)" }.joined(separator: ", ")) + ")")
      }
      if let object = filter.object, let type = filter.objectType,
        let why = PrintedNames.wrongType(type, object: object, in: definitions)
      {
        throw CommandError(
          "obstrace \(command): --object \(filter.givenObject ?? "") is not an object of \(path) \(why)")
      }
      if let object = filter.object, !seenObjects.contains(object) {
        throw CommandError(
          "obstrace \(command): --object \(filter.givenObject ?? "\(object)") is not an object of \(path) ("
            + Self.objects(seenObjects, definitions) + ")")
      }
    }

    /// `its objects: Model#1, Item#2, … (40 in all)`, or that it has none.
    static func objects(_ serials: Set<UInt32>, _ definitions: TraceDefinitions) -> String {
      guard !serials.isEmpty else { return "it has no objects" }
      let sorted = serials.sorted()
      let named = sorted.prefix(10).map { serial in
        definitions.objects[serial].map { "\(definitions.typeName($0))#\(serial)" } ?? "#\(serial)"
      }
      return "its objects: " + named.joined(separator: ", ")
        + (sorted.count > 10 ? ", … (\(sorted.count) in all)" : "")
    }
  }
}

extension ReplayFact {
  /// Adds the thread this fact happened on and the objects it names.
  fileprivate func note(threads: inout Set<UInt32>, objects: inout Set<UInt32>) {
    switch self {
    case .objectCreated(let object), .objectFreed(let object):
      threads.insert(object.thread)
      objects.insert(object.object)
    case .read(let read):
      threads.insert(read.thread)
      objects.insert(read.key.object)
    case .writeBegan(let write):
      threads.insert(write.thread)
      objects.insert(write.key.object)
    case .write(let write):
      threads.insert(write.thread)
      objects.insert(write.key.object)
    case .runBegan(let run):
      threads.insert(run.thread)
    case .runEnded(let ended):
      threads.insert(ended.run.thread)
      for key in ended.reads { objects.insert(key.object) }
    case .fire(let fire):
      threads.insert(fire.thread)
      if let cause = fire.cause { objects.insert(cause.object) }
    case .cancel(let cancel):
      threads.insert(cancel.thread)
    case .sequenceEnded(let ended):
      threads.insert(ended.thread)
    case .anomaly(let anomaly):
      threads.insert(anomaly.thread)
      if let key = anomaly.key { objects.insert(key.object) }
    }
  }
}
