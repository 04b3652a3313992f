import ObsTraceFormat

/// What a symbol table is made from: the ids a recording interned and the addresses behind them.
public struct SymbolSources: Sendable {
  public var properties: [(UInt32, PropertyDefinition)]
  /// Type ids and their display names (empty when only reflected names are known).
  public var types: [(UInt32, String)]
  public var stacks: [[UInt64]]
  /// Labels that are call sites, and the stack to find each site in.
  public var callerLabels: [(label: UInt32, stack: [UInt64])]

  public init(
    properties: [(UInt32, PropertyDefinition)], types: [(UInt32, String)], stacks: [[UInt64]],
    callerLabels: [(label: UInt32, stack: [UInt64])]
  ) {
    self.properties = properties
    self.types = types
    self.stacks = stacks
    self.callerLabels = callerLabels
  }
}

/// Names and places for what a recording interned: type names, property names from key-path getters, call-site
/// labels, and the frames of every stack.
public enum SymbolTableBuilder {
  /// Resolves what `sources` names with `resolve`: the addresses, and the return addresses among them, each with
  /// the addresses one frame inward of it in the stacks (inside the function it called; none for a stack's
  /// innermost), by which `Symbolizer.resolve` places a call the line table cannot (`CallRole`).
  public static func build(
    _ snapshot: SymbolSources, resolve: (Set<UInt64>, [UInt64: Set<UInt64>]) -> [UInt64: SymbolizedFrame]
  ) -> SymbolTable {
    var table = SymbolTable()
    for (id, name) in snapshot.types { table.typeNames[id] = name }
    var addresses = Set<UInt64>()
    for (_, property) in snapshot.properties where property.getterAddress != 0 {
      addresses.insert(property.getterAddress)
    }
    var calls: [UInt64: Set<UInt64>] = [:]
    for stack in snapshot.stacks {
      for (index, address) in stack.enumerated() {
        if index > 0 {
          calls[address, default: []].insert(stack[index - 1])
        } else if calls[address] == nil {
          calls[address] = []
        }
      }
    }
    addresses.formUnion(calls.keys)
    let frames = resolve(addresses, calls)
    for (id, property) in snapshot.properties {
      if let frame = frames[property.getterAddress], let name = PropertyNaming.name(fromKeyPathGetter: frame.function) {
        table.propertyNames[id] = name
      }
    }
    for stack in snapshot.stacks {
      for address in stack { if let frame = frames[address] { table.frames[address] = frame } }
    }
    for (label, stack) in snapshot.callerLabels {
      if let name = SiteFilter.callerLabelName(Array(stack.lazy.compactMap({ frames[$0]?.logicalFrames }).joined())) {
        table.labelNames[label] = name
      }
    }
    return table
  }
}
