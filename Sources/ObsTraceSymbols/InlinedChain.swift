import CDw
import ObsTraceFormat

extension Symbolizer {
  /// Mends a chain of inlined frames whose DWARF puts a call in a function whose body does not hold the call's line.
  /// An optimized build can give inlined code the scope of the inlined function beside it: a key path's accessors,
  /// inlined at `a[keyPath: \Counter.value] += 1` (top-level code, line 16), were children of the inlined
  /// `watch(_:_:)` called on line 15, so the write was named in `watch(_:_:)`, called from line 15; `bump`'s (line
  /// 17, `bump` inlined at 19) likewise, `bump` left out (a fresh-clone try-out's H13; `llvm-symbolizer` and
  /// `llvm-dwarfdump` read the same chain). The call's own line (`DW_AT_call_line`) is right; its function is not.
  /// With the user's source (`userSource`), each inlined frame's call is checked against the body of the function
  /// DWARF calls it from (`SourceExtent`; top-level code holds every line of its file): a call outside it is
  /// placed in the nearest enclosing frame whose body holds it, the frames between dropped, and in the function
  /// declared around it when that is tighter (an inlined function of the same physical function whose body holds the
  /// line: `bump`), whose own caller's line is then that function's inlined copy nearest the address, approximate.
  /// Without the source, or when a function's file is not the call's, the chain is left as DWARF gives it.
  /// `scopes` are the inlined scopes, innermost first, `holder` the function that holds the address.
  func repairInlinedChain(
    _ frame: inout SymbolizedFrame, scopes: [Dwarf_Die], holder: Dwarf_Die, at target: Dwarf_Addr,
    in unit: inout Dwarf_Die, binary: String?
  ) {
    guard let binary, !scopes.isEmpty else { return }
    var frames = frame.logicalFrames
    var dies = scopes + [holder]
    guard frames.count == dies.count else { return }
    var changed = false
    var index = 0
    while index + 1 < frames.count {
      // Frame index + 1's place is where frame index's function was called.
      let call = frames[index + 1]
      guard call.line > 0, let path = Self.sourcePath(call.file, in: &unit),
        let source = userSource(path, notNewerThan: binary),
        let holds = extent(of: &dies[index + 1], isOutermost: index + 1 == frames.count - 1, file: path, source),
        !holds.contains(Int(call.line))
      else {
        index += 1
        continue
      }
      // The nearest enclosing frame whose body holds the call's line.
      var enclosing = index + 2
      while enclosing < frames.count {
        if let body = extent(of: &dies[enclosing], isOutermost: enclosing == frames.count - 1, file: path, source),
          body.contains(Int(call.line))
        {
          break
        }
        enclosing += 1
      }
      guard enclosing < frames.count else {
        index += 1
        continue
      }
      var outer = frames[enclosing]
      let outerBody = extent(of: &dies[enclosing], isOutermost: enclosing == frames.count - 1, file: path, source)
      outer.file = call.file
      outer.line = call.line
      outer.lineIsApproximate = false
      var mended = Array(frames[...index])
      var mendedDies = Array(dies[...index])
      // A function declared around the line, inlined into the same physical function, tighter than `outer`'s body.
      if var tighter = tightestInlined(
        around: Int(call.line), file: path, source, within: outerBody, under: &dies[dies.count - 1], at: target)
      {
        var inner = outer
        inner.function = Self.functionName(&tighter.origin)
        mended.append(inner)
        mendedDies.append(tighter.origin)
        outer.line = tighter.callLine
        outer.lineIsApproximate = true
      }
      mended.append(outer)
      mendedDies.append(dies[enclosing])
      frames = mended + frames[(enclosing + 1)...]
      dies = mendedDies + dies[(enclosing + 1)...]
      changed = true
      index = mended.count - 1
    }
    guard changed else { return }
    var physical = frames[frames.count - 1]
    physical.inlined = Array(frames.dropLast())
    for inner in physical.inlined.indices { physical.inlined[inner].inlined = [] }
    physical.declaringModule = frame.declaringModule
    frame = physical
  }

  /// The lines of `function`'s body in `file` (`SourceExtent`), every line of the file for top-level code; nil when
  /// the function is declared in another file, or its body is not found.
  func extent(of function: inout Dwarf_Die, isOutermost: Bool, file: String, _ source: [Substring])
    -> ClosedRange<Int>?
  {
    if isOutermost, SiteFilter.isTopLevelCode(Self.functionName(&function)) { return 1...max(1, source.count) }
    var line: Int32 = 0
    guard let raw = dwarf_decl_file(&function), String(cString: raw) == file, dwarf_decl_line(&function, &line) == 0
    else { return nil }
    return SourceExtent.body(source, declaredAt: Int(line))
  }

  /// The function inlined somewhere in `physical` whose body in `file` holds `line` and is the tightest such, when
  /// it is tighter than `within`: its abstract origin, and the call line of its inlined copy nearest `target`.
  func tightestInlined(
    around line: Int, file: String, _ source: [Substring], within: ClosedRange<Int>?, under physical: inout Dwarf_Die,
    at target: Dwarf_Addr
  ) -> (origin: Dwarf_Die, callLine: UInt32)? {
    var copies: [Dwarf_Die] = []
    Self.collectInlined(in: &physical, into: &copies)
    var best: (origin: Dwarf_Die, body: ClosedRange<Int>, callLine: UInt32, distance: Dwarf_Addr)?
    for var copy in copies {
      var attribute = Dwarf_Attribute()
      var origin = Dwarf_Die()
      guard dwarf_attr(&copy, UInt32(DW_AT_abstract_origin), &attribute) != nil,
        dwarf_formref_die(&attribute, &origin) != nil
      else { continue }
      var declared: Int32 = 0
      guard let raw = dwarf_decl_file(&origin), String(cString: raw) == file, dwarf_decl_line(&origin, &declared) == 0,
        let body = SourceExtent.body(source, declaredAt: Int(declared)), body.contains(line)
      else { continue }
      if let within, !(body.count < within.count && within.contains(body.lowerBound)) { continue }
      var value: Dwarf_Word = 0
      guard dwarf_attr(&copy, UInt32(DW_AT_call_line), &attribute) != nil, dwarf_formudata(&attribute, &value) == 0
      else { continue }
      let distance = Self.distance(from: target, to: &copy)
      if let found = best, found.body.count < body.count || (found.body == body && found.distance <= distance) {
        continue
      }
      best = (origin, body, UInt32(truncatingIfNeeded: value), distance)
    }
    return best.map { ($0.origin, $0.callLine) }
  }

  /// Every `DW_TAG_inlined_subroutine` under `parent`, at any depth.
  static func collectInlined(in parent: inout Dwarf_Die, into found: inout [Dwarf_Die]) {
    var child = Dwarf_Die()
    guard dwarf_child(&parent, &child) == 0 else { return }
    while true {
      let tag = Int(dwarf_tag(&child))
      if tag == DW_TAG_inlined_subroutine { found.append(child) }
      if tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block { collectInlined(in: &child, into: &found) }
      var sibling = Dwarf_Die()
      guard dwarf_siblingof(&child, &sibling) == 0 else { return }
      child = sibling
    }
  }

  /// How far `target` is from the nearest address range of `scope` (0 inside it).
  static func distance(from target: Dwarf_Addr, to scope: inout Dwarf_Die) -> Dwarf_Addr {
    var nearest = Dwarf_Addr.max
    var cursor = 0
    var base: Dwarf_Addr = 0
    var start: Dwarf_Addr = 0
    var end: Dwarf_Addr = 0
    repeat {
      cursor = dwarf_ranges(&scope, cursor, &base, &start, &end)
      guard cursor > 0, end > start else { continue }
      let gap = target < start ? start - target : (target >= end ? target - end + 1 : 0)
      nearest = min(nearest, gap)
    } while cursor > 0
    return nearest
  }
}

extension Symbolizer {
  /// Marks the setter or `_modify` the compiler made for a property's observers (`override var width: Double {
  /// didSet { … } }`, or a stored property's `willSet`/`didSet` in a class of the user's) as compiler-generated code:
  /// its file becomes `<compiler-generated>`, so that a write through it is sited at its caller, as a write through
  /// the `@Observable` macro's accessors is. The user wrote no statement in such an accessor; a debug build placed it
  /// at the property's declaration (`Models.swift:29 (LoudSquare.width.setter)`) and a release build inlined it,
  /// placed in the macro's buffer and skipped, siting the same write at the caller (`main.swift:99`): the two builds
  /// disagreed (a fresh-clone try-out's H7). An accessor the user wrote (`set { … }`, `_modify { … }`) is the user's
  /// code and keeps its statement's line, in both builds. Told by the user's source (`userSource`): the function's
  /// declaration line (a hand-written accessor's is its `set {` line) declares the property (`var width`) with no
  /// accessor of the user's on it (`set`, `get`, `_modify`, `_read`). Without the source, the frame is left as is.
  func markSynthesizedAccessors(
    _ frame: inout SymbolizedFrame, scopes: [Dwarf_Die], holder: Dwarf_Die, in unit: inout Dwarf_Die, binary: String?
  ) {
    guard let binary else { return }
    var frames = frame.logicalFrames
    var dies = scopes + [holder]
    guard frames.count == dies.count else { return }
    var marked = false
    for index in frames.indices {
      let function = String(SiteFilter.withoutQualifiers(Substring(frames[index].function)))
      guard let property = Self.observedAccessorProperty(function) else { continue }
      // The function's own declaration, wherever DWARF places the frame (an optimized build put an override's
      // inlined setter at a line of its caller's file).
      var declared: Int32 = 0
      guard dwarf_decl_line(&dies[index], &declared) == 0, declared > 0, let raw = dwarf_decl_file(&dies[index]),
        let path = Self.sourcePath(String(cString: raw), in: &unit),
        let source = userSource(path, notNewerThan: binary), Int(declared) <= source.count
      else { continue }
      let tokens = String(ObserverSource.code(source[Int(declared) - 1])).split {
        !($0.isLetter || $0.isNumber || $0 == "_")
      }
      guard let keyword = tokens.firstIndex(of: "var"), keyword + 1 < tokens.count, tokens[keyword + 1] == property,
        !tokens.contains(where: {
          ["set", "get", "_modify", "_read", "unsafeAddress", "unsafeMutableAddress"].contains($0)
        })
      else { continue }
      frames[index].file = "<compiler-generated>"
      frames[index].lineIsApproximate = false
      marked = true
    }
    guard marked else { return }
    for index in frame.inlined.indices { frame.inlined[index].file = frames[index].file }
    frame.file = frames[frames.count - 1].file
  }

  /// `width` for `Models.LoudSquare.width.setter : Swift.Double` or `….width.modify : Swift.Double`; nil for any other
  /// function (a continuation, a getter, a closure, a subscript).
  static func observedAccessorProperty(_ function: String) -> String? {
    let parts = function.split(separator: " : ", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[1].contains(" with "), !parts[0].contains(" ") else { return nil }
    for kind in [".setter", ".modify"] where parts[0].hasSuffix(kind) {
      let path = parts[0].dropLast(kind.count)
      guard let dot = path.lastIndex(of: "."), path[path.index(after: dot)...] != "subscript" else { return nil }
      return String(path[path.index(after: dot)...])
    }
    return nil
  }
}
