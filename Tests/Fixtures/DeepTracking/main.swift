import Foundation
import Observation

// A recursive render of a tree, each level tracked and nested in its parent's tracking, on a thread with a small
// stack (tryout14's H10: a traced level took 2.1x the stack of Observation's own, even not recording, and a depth
// that ran untraced crashed traced). Built by Tests/ObsTraceCommandsTests/StackDepthTests.swift with -DOBSTRACE
// (traced) and without (Observation alone), -Onone and -O; both print the same.
//
// Usage: DeepTracking KIND DEPTH STACK_KB. KIND is how each level nests:
//   plain      withObservationTracking { read; render(level + 1) }
//   named      withObservationTracking(named:) (traced build; untraced: the plain form)
//   scope      withTrackingScope(named:) inside one tracking (untraced: the body called directly)
//   harness    a RenderHarness per level (untraced: the plain form)
//   getter     a computed property that reads another model's property and recurses, inside one tracking
// Prints the depth reached and the fires to stdout, and the stack bytes per level (levels 0 to 100) to stderr.
#if OBSTRACE
  import ObsTrace
#endif

@Observable final class Counter: @unchecked Sendable {
  var value = 0
}

/// A chain of nodes: `total` reads another model's property (the counter's) and the next node's `total`.
@Observable final class Node: @unchecked Sendable {
  var next: Node?
  let counter: Counter
  let level: Int
  init(level: Int, counter: Counter, next: Node?) {
    self.level = level
    self.counter = counter
    self.next = next
  }
  var total: Int {
    Probe.mark(level)
    return counter.value + 1 + (next?.total ?? 0)
  }
}

final class State: @unchecked Sendable {
  var fires = 0
  var deepest = 0
}

#if OBSTRACE
  /// The harnesses, kept: a harness counts its own invalidations (its handler holds it weakly).
  nonisolated(unsafe) var rows: [RenderHarness<Void>] = []
#endif

enum Probe {
  nonisolated(unsafe) static var base: UInt = 0
  nonisolated(unsafe) static var perLevel: UInt = 0
  /// Notes the address of a local at levels 0 and 100.
  @inline(never) static func mark(_ level: Int) {
    var marker = 0
    withUnsafeMutablePointer(to: &marker) { p in
      let here = UInt(bitPattern: p)
      if level == 0 { base = here } else if level == 100 { perLevel = (base - here) / 100 }
    }
  }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let depth = Int(arguments[2]), let stackKB = Int(arguments[3]) else {
  print("usage: DeepTracking plain|named|scope|harness|getter DEPTH STACK_KB")
  exit(2)
}
let kind = arguments[1]

/// The recursive renders, one per kind of nesting.
enum Render {
  static let depth = Int(CommandLine.arguments[2])!
  static let counter = Counter()
  static let state = State()

  static func plain(_ level: Int) {
    Probe.mark(level)
    withObservationTracking {  // site: plain
      _ = counter.value
      state.deepest = max(state.deepest, level)
      if level < depth { plain(level + 1) }
    } onChange: {
      state.fires += 1
    }
  }

  static func named(_ level: Int) {
    Probe.mark(level)
    #if OBSTRACE
      withObservationTracking(named: "Deep.render") {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { named(level + 1) }
      } onChange: {
        state.fires += 1
      }
    #else
      withObservationTracking {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { named(level + 1) }
      } onChange: {
        state.fires += 1
      }
    #endif
  }

  static func scope(_ level: Int) {
    Probe.mark(level)
    #if OBSTRACE
      withTrackingScope(named: "Deep.level") {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { scope(level + 1) }
      }
    #else
      {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { scope(level + 1) }
      }()
    #endif
  }

  static func harness(_ level: Int) {
    Probe.mark(level)
    #if OBSTRACE
      let row = RenderHarness("Deep.row") {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { harness(level + 1) }
      }
      rows.append(row)
      row.render()
    #else
      withObservationTracking {
        _ = counter.value
        state.deepest = max(state.deepest, level)
        if level < depth { harness(level + 1) }
      } onChange: {
        state.fires += 1
      }
    #endif
  }

}

let counter = Render.counter
let state = Render.state
let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var chain: Node?
let worker = Thread {
  switch kind {
  case "plain": Render.plain(0)
  case "named": Render.named(0)
  case "scope":
    withObservationTracking {  // site: scope tracking
      Render.scope(0)
    } onChange: {
      state.fires += 1
    }
  case "harness": Render.harness(0)
  case "getter":
    withObservationTracking {
      state.deepest = (chain?.total ?? 1) - 1
    } onChange: {
      state.fires += 1
    }
  default: print("unknown kind \(kind)")
  }
  counter.value += 1
  done.signal()
}
if kind == "getter" {
  // Built here, not on the small stack.
  for level in (0...depth).reversed() { chain = Node(level: level, counter: counter, next: chain) }
}
worker.stackSize = stackKB << 10
worker.start()
done.wait()
#if OBSTRACE
  state.fires += rows.reduce(0) { $0 + $1.invalidations }
#endif
print("\(kind): depth \(state.deepest) fires \(state.fires)")
FileHandle.standardError.write("stack bytes per level: \(Probe.perLevel)\n".data(using: .utf8)!)
