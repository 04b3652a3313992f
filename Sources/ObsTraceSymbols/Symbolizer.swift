import CDw
import ObsTraceFormat

#if canImport(Glibc)
  import Glibc
#endif

/// Resolves code addresses of a live process to functions, files and lines with libdw (elfutils), reading the
/// ELF symbol tables and DWARF of every module the process has mapped.
public final class Symbolizer {
  let session: OpaquePointer
  private var callbacks: UnsafeMutablePointer<Dwfl_Callbacks>
  var unitIndexes: [UInt: UnitIndex?] = [:]
  /// Each compile unit's functions that have code, keyed by the unit DIE's address in libdw's memory.
  var functionIndexes: [UInt: [Dwarf_Die]] = [:]
  /// The lines a macro buffer's rows name in a unit (`bodyLines`), keyed by the unit and the buffer's path.
  var bufferRowLines: [String: [Int32]] = [:]
  /// The user's source files read for observers' bodies (`userSource`), nil for those that cannot be used.
  var sourceLines: [String: [Substring]?] = [:]
  /// Each module's property getters (`…vg`) by mangled name, keyed by the module's address in libdw's memory
  /// (`getterOrigin`).
  var getterSymbols: [UInt: [String: Dwarf_Addr]] = [:]
  /// What each `ObservationTracked` accessor macro buffer seen in a line table is of (`darkMode in
  /// Settings.Settings`), by its file; nil for a file that is not one (`accessorMacroSubject`).
  var macroBufferSubjects: [String: String?] = [:]
  /// Each module's functions with code by linkage name, keyed by the module's address in libdw's memory
  /// (`placeInlinedFromOtherModules`); indexed at the first frame inlined from another module.
  var definitionIndexes: [UInt: DefinitionIndex] = [:]

  /// A symbolizer for binaries that are no longer running: each module's file and where it was loaded.
  public init?(modules: [LoadedModule]) {
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(
      to: Dwfl_Callbacks(
        find_elf: dwfl_build_id_find_elf, find_debuginfo: dwfl_standard_find_debuginfo,
        section_address: dwfl_offline_section_address, debuginfo_path: nil))
    guard let session = dwfl_begin(callbacks) else {
      callbacks.deallocate()
      return nil
    }
    self.session = session
    dwfl_report_begin(session)
    var reported = 0
    // Regular files only: a trace names its modules, and a FIFO there would block the open forever (a fresh-clone
    // try-out's J11), a device would be read as a binary.
    for module in modules where access(module.path, R_OK) == 0 && Self.isRegularFile(module.path) {
      if dwfl_report_elf(session, module.path, module.path, -1, Dwarf_Addr(module.base), false) != nil { reported += 1 }
    }
    dwfl_report_end(session, nil, nil)
    // Every stored property is set, so failing runs `deinit`, which ends the session: ending it here as well freed
    // it twice (heap corruption; a traced program crashed in dwfl_end).
    if reported == 0 { return nil }
  }

  /// Whether `path` names a regular file (after symbolic links).
  static func isRegularFile(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// The descriptors the session opens on the process's binaries are closed on exec (shim.h): the recording
  /// process keeps them open, and a program it execs inherits nothing the untraced one would not pass on.
  private init?(processID: pid_t) {
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(
      to: Dwfl_Callbacks(
        find_elf: obstrace_proc_find_elf, find_debuginfo: obstrace_find_debuginfo, section_address: nil,
        debuginfo_path: nil))
    guard let session = dwfl_begin(callbacks) else {
      callbacks.deallocate()
      return nil
    }
    self.session = session
    dwfl_report_begin(session)
    let reported = dwfl_linux_proc_report(session, processID)
    dwfl_report_end(session, nil, nil)
    // As above: `deinit` ends the session (the memory map could not be read: no such process, or the program
    // closed the descriptor libdw read it through).
    if reported != 0 { return nil }
  }

  deinit {
    dwfl_end(session)
    callbacks.deallocate()
  }

  /// A symbolizer for this process; nil when libdw cannot read its memory map.
  public static func forCurrentProcess() -> Symbolizer? {
    Symbolizer(processID: getpid())
  }

  /// A symbolizer for another live process (its binaries must still exist); nil when it cannot be read.
  public static func forProcess(_ processID: Int32) -> Symbolizer? {
    Symbolizer(processID: processID)
  }

  /// Whether a module of this session covers `address`. A session maps the process as it was when it was made: a
  /// library loaded after that (`dlopen`) is not in it.
  public func covers(_ address: UInt64) -> Bool { dwfl_addrmodule(session, Dwarf_Addr(address)) != nil }

  /// The first address of the session's module that covers `address` (nil: none does).
  public func moduleStart(at address: UInt64) -> UInt64? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)) else { return nil }
    var start: Dwarf_Addr = 0
    guard dwfl_module_info(module, nil, &start, nil, nil, nil, nil, nil) != nil else { return nil }
    return UInt64(start)
  }

  /// The demangled name of the function at `address` from the symbol tables alone (no line lookup), or nil.
  public func functionName(at address: UInt64) -> String? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)),
      let raw = dwfl_module_addrname(module, Dwarf_Addr(address))
    else { return nil }
    return Demangler.demangle(String(cString: raw))
  }

  /// The demangled name of the function that a function pointer (a key path's getter) runs, from the symbol tables
  /// alone: the function at `address`, or where a thunk there jumps (`followingThunk`, as `resolve` names it), or
  /// nil. `StoredField` finds a property's stored field by this name.
  public func calledFunctionName(at address: UInt64) -> String? {
    guard let module = dwfl_addrmodule(session, Dwarf_Addr(address)) else { return nil }
    let (target, lookup) = followingThunk(module, Dwarf_Addr(address))
    let function = dwfl_module_addrname(target, lookup).map { Demangler.demangle(String(cString: $0)) }
    return Self.namingMergedGetter(function ?? "", target, lookup)
      ?? Self.namingGetterCall(function ?? "", target, lookup) ?? function
  }

  /// The key path getter's name for a merged getter's thunk at `address` whose property the thunk alone makes
  /// certain (`MergedKeyPathGetter.certainName`), when `function` (the symbol there) is not a key path getter's;
  /// else nil.
  static func namingMergedGetter(_ function: String, _ module: OpaquePointer, _ address: Dwarf_Addr) -> String? {
    guard PropertyNaming.name(fromKeyPathGetter: function) == nil,
      let merged = mergedKeyPathGetter(module, address), let name = merged.certainName
    else { return nil }
    return merged.getterSymbol(for: name)
  }

  /// The code a function pointer at `address` (in `module`) runs: where it jumps when it is a thunk that only jumps
  /// on (`jumpTarget`), else `address` itself. The one rule by which both names (`resolve`) and stored fields
  /// (`calledFunctionName`) follow a key path getter's thunk.
  func followingThunk(_ module: OpaquePointer, _ address: Dwarf_Addr) -> (OpaquePointer, Dwarf_Addr) {
    guard let target = Self.jumpTarget(module, address), let targetModule = dwfl_addrmodule(session, target) else {
      return (module, address)
    }
    return (targetModule, target)
  }

  /// Resolves each address; addresses no module covers are left out. Return addresses of call stacks are
  /// looked up one byte before, so that the line is the call's, not the next statement's. Functions inlined at
  /// an address (an optimized build) become the frame's `inlined` frames, from DWARF's inlined-subroutine scopes.
  /// `callees` gives, for a return address, addresses one frame inward of it in the stacks (inside the function it
  /// called): a call in a line-0 row is placed by what it calls (`CallRole`) when the rows cannot tell.
  public func resolve(
    _ addresses: [UInt64], returnAddresses: Set<UInt64> = [], callees: [UInt64: Set<UInt64>] = [:]
  ) -> [UInt64: SymbolizedFrame] {
    var frames: [UInt64: SymbolizedFrame] = [:]
    for address in addresses {
      let isReturnAddress = returnAddresses.contains(address)
      let role = isReturnAddress ? callRole(ofCallsInto: callees[address] ?? []) : nil
      var lookup = Dwarf_Addr(isReturnAddress ? address &- 1 : address)
      guard var module = dwfl_addrmodule(session, lookup) else { continue }
      // A function pointer (a key path's getter) may be a thunk that only jumps on: name where it jumps.
      if !isReturnAddress { (module, lookup) = followingThunk(module, lookup) }
      var function = ""
      if let raw = dwfl_module_addrname(module, lookup) {
        function = Demangler.demangle(String(cString: raw))
      }
      // A merged getter's thunk (`MergedKeyPathGetter`): named where what it passes makes its property certain.
      if !isReturnAddress, let named = Self.namingMergedGetter(function, module, lookup) { function = named }
      // A generic property's specialized key path getter with no symbol that calls the property's getter.
      if !isReturnAddress, let named = Self.namingGetterCall(function, module, lookup) { function = named }
      var moduleName = ""
      if let raw = dwfl_module_info(module, nil, nil, nil, nil, nil, nil, nil) {
        moduleName = String(cString: raw)
        if let slash = moduleName.lastIndex(of: "/") {
          moduleName = String(moduleName[moduleName.index(after: slash)...])
        }
      }
      var frame = SymbolizedFrame(address: address, function: function, module: moduleName)
      if var unit = compileUnit(module, lookup) {
        let target = lookup &- unit.bias
        let bias = unit.bias
        let code = AccessCode(
          bytes: { start, end in Self.code(module, start &+ bias, count: Int(end &- start)) },
          role: { [self] callee in functionName(at: callee &+ bias).flatMap(CallRole.init(callee:)) })
        let binary = Self.binaryPath(module)
        if let place = Self.line(in: &unit.die, at: target, isReturnAddress: isReturnAddress, role: role, code: code) {
          frame.file = place.file
          frame.line = UInt32(place.line)
          frame.lineIsApproximate = place.approximate
          if place.closesFunction, let binary { placeBeforeClosingBrace(&frame, in: &unit.die, binary: binary) }
        }
        var (holder, scopes) = inlinedScopes(in: &unit.die, at: target)
        expandInlined(&frame, scopes: &scopes, in: &unit.die)
        placeInlinedFromOtherModules(&frame, scopes: scopes, module: module, binary: binary)
        if let holder {
          placeObserverBodies(&frame, scopes: scopes + [holder], in: &unit.die, binary: binary)
          markSynthesizedAccessors(&frame, scopes: scopes, holder: holder, in: &unit.die, binary: binary)
          repairInlinedChain(&frame, scopes: scopes, holder: holder, at: target, in: &unit.die, binary: binary)
        }
        if !function.isEmpty, SiteFilter.moduleName(ofFunction: function).isEmpty {
          frame.declaringModule = Self.declaringModule(in: &unit.die, at: target)
        }
      } else if let source = dwfl_module_getsrc(module, lookup) {
        var line: Int32 = 0
        var column: Int32 = 0
        if let path = dwfl_lineinfo(source, nil, &line, &column, nil, nil) {
          frame.file = String(cString: path)
          frame.line = UInt32(max(0, line))
        }
      }
      frames[address] = frame
    }
    return frames
  }
}

/// What a call does to an access, told by the function it calls: a coroutine accessor's start (`_modify`, `_read`,
/// or a protocol witness of one) begins the access a statement makes, before the statement's own code; its
/// continuation (`….resume.0`, where the accessor's code after its `yield` runs: the macro's `didSet`) ends it.
public enum CallRole: Sendable, Equatable {
  case beginsAccess
  case endsAccess

  /// The role of a call into `function` (demangled), or nil when it is neither (a release, any other function).
  public init?(callee function: String) {
    let accessors = [".modify : ", ".read : ", ".modify2 : ", ".read2 : "]
    guard accessors.contains(where: { function.contains($0) }) else { return nil }
    if let suffix = function.firstRange(of: " with unmangled suffix \"") {
      guard function[suffix.upperBound...].hasPrefix(".resume.") else { return nil }
      self = .endsAccess
    } else {
      self = .beginsAccess
    }
  }
}

extension Symbolizer {
  /// The role of the call whose callee holds `callees` (addresses one frame inward of its return address in the
  /// stacks: return addresses inside the callee, looked up one byte before), when every one of them gives the same
  /// role; nil when none does or they differ.
  func callRole(ofCallsInto callees: Set<UInt64>) -> CallRole? {
    var found: CallRole?
    for callee in callees {
      guard let function = functionName(at: callee &- 1), let role = CallRole(callee: function) else { return nil }
      if let found, found != role { return nil }
      found = role
    }
    return found
  }
}

/// What the code of a function says about an access whose coroutine call sits in a line-0 row (`Symbolizer.line`):
/// its bytes between two DWARF addresses, and the role of a call's callee (a DWARF address).
struct AccessCode {
  var bytes: (Dwarf_Addr, Dwarf_Addr) -> [UInt8]?
  var role: (Dwarf_Addr) -> CallRole?

  /// The longest run of code read: a line-0 row longer than this is not taken to keep an access open.
  static let limit: Dwarf_Addr = 4096

  /// Whether an access that a call returning at `start` began is still open at `end` (where the next row that names
  /// a line begins): no call or jump through a register or memory (its continuation's call, `call *%rax`) comes in
  /// between. False when the code cannot be read or decoded.
  func staysOpen(from start: Dwarf_Addr, to end: Dwarf_Addr) -> Bool {
    guard end > start else { return true }
    guard end &- start <= Self.limit, let code = bytes(start, end), code.count == Int(end &- start),
      let instructions = InstructionScan.instructions(code)
    else { return false }
    return !instructions.contains { $0.instruction.isIndirectCallOrJump }
  }

  /// Whether the access that a continuation call returning at `end` ends was already open where its line-0 row
  /// begins (`start`): no direct call of an accessor's start (a coroutine's `_modify` or `_read`) and no other call
  /// or jump through a register or memory comes in between, the continuation's own call (the last instruction)
  /// aside. False when the code cannot be read or decoded.
  func wasOpen(from start: Dwarf_Addr, to end: Dwarf_Addr) -> Bool {
    guard end > start, end &- start <= Self.limit, let code = bytes(start, end), code.count == Int(end &- start),
      let instructions = InstructionScan.instructions(code)
    else { return false }
    for (offset, instruction) in instructions.dropLast() {
      if instruction.isIndirectCallOrJump { return false }
      if let displacement = instruction.callDisplacement {
        let next = start &+ Dwarf_Addr(offset + instruction.length)
        let callee = Dwarf_Addr(bitPattern: Int64(bitPattern: next) &+ Int64(displacement))
        if role(callee) == .beginsAccess { return false }
      }
    }
    return true
  }
}

/// A place in the source: the file, line and column of the line table's row for an address.
public struct SourcePlace: Hashable, Sendable {
  public var file: String
  public var line: UInt32
  public var column: UInt32

  public init(file: String, line: UInt32, column: UInt32) {
    self.file = file
    self.line = line
    self.column = column
  }
}

extension Symbolizer {
  /// The source place of the innermost frame at `address` (of a function inlined there, its own line: the line
  /// table's row), with its column; nil when no debug information gives it a line. A return address is looked up
  /// as `resolve` does, one byte before. Two call instructions at one place are the same call in the source: an
  /// optimized build copies a function into each of its callers (the recorder's re-track rule, `ScopeInstances`).
  public func innermostPlace(at address: UInt64, isReturnAddress: Bool) -> SourcePlace? {
    let lookup = Dwarf_Addr(isReturnAddress ? address &- 1 : address)
    guard let module = dwfl_addrmodule(session, lookup) else { return nil }
    var place: (file: String, line: Int32, column: Int32)?
    if var unit = compileUnit(module, lookup),
      let found = Self.line(in: &unit.die, at: lookup &- unit.bias, isReturnAddress: isReturnAddress)
    {
      place = (found.file, found.line, found.column)
    } else if let source = dwfl_module_getsrc(module, lookup) {
      var line: Int32 = 0
      var column: Int32 = 0
      if let path = dwfl_lineinfo(source, nil, &line, &column, nil, nil) {
        place = (String(cString: path), line, column)
      }
    }
    guard let place, place.line > 0, !place.file.isEmpty else { return nil }
    return SourcePlace(file: place.file, line: UInt32(place.line), column: UInt32(max(0, place.column)))
  }

  /// Where the code at `address` jumps when it does nothing else: `jmp rel32`, after an optional empty frame
  /// (`push %rbp; mov %rsp,%rbp; pop %rbp`), x86-64 only. An optimized build whose files are compiled on several
  /// threads (`swift build -c release`) makes such a thunk (DWARF's `keypath_get`, no ELF symbol) for a key path
  /// built in one file (where the property's getter was inlined) to a property of another file's code: the key
  /// path's getter is then the thunk, not `key path getter for …`, which it jumps to. Nil for other code.
  static func jumpTarget(_ module: OpaquePointer, _ address: Dwarf_Addr) -> Dwarf_Addr? {
    #if arch(x86_64)
      var bias: Dwarf_Addr = 0
      guard let elf = dwfl_module_getelf(module, &bias) else { return nil }
      let address = address &- bias
      var count = 0
      guard elf_getphdrnum(elf, &count) == 0 else { return nil }
      for index in 0..<count {
        var header = GElf_Phdr()
        guard gelf_getphdr(elf, Int32(index), &header) != nil, header.p_type == PT_LOAD,
          address >= header.p_vaddr, address + 14 <= header.p_vaddr + header.p_filesz
        else { continue }
        let offset = address - header.p_vaddr + header.p_offset
        guard let data = elf_getdata_rawchunk(elf, Int64(offset), 14, ELF_T_BYTE), let raw = data.pointee.d_buf
        else { return nil }
        let bytes = Array(UnsafeRawBufferPointer(start: raw, count: 14))
        let frame: [UInt8] = [0x55, 0x48, 0x89, 0xe5, 0x5d]
        let start = Array(bytes.prefix(5)) == frame ? 5 : 0
        guard bytes[start] == 0xe9 else { return nil }
        var displacement: Int32 = 0
        for shift in 0..<4 { displacement |= Int32(bytes[start + 1 + shift]) << (8 * shift) }
        let next = Int64(bitPattern: address &+ bias) &+ Int64(start + 5)
        return Dwarf_Addr(bitPattern: next &+ Int64(displacement))
      }
      return nil
    #else
      return nil
    #endif
  }

  /// The compile units of a module with their address ranges (DWARF addresses, without the load bias).
  struct UnitIndex {
    var bias: Dwarf_Addr
    var ranges: [(start: Dwarf_Addr, end: Dwarf_Addr, unit: Dwarf_Off)]
  }

  /// The compile unit that covers `address`, and the module's load bias (DWARF address = address - bias).
  /// libdw looks addresses up through `.debug_aranges`, which Swift's compiler does not emit; without it the
  /// module's compile units are indexed here by their ranges.
  func compileUnit(_ module: OpaquePointer, _ address: Dwarf_Addr) -> (die: Dwarf_Die, bias: Dwarf_Addr)? {
    var bias: Dwarf_Addr = 0
    if let found = dwfl_module_addrdie(module, address, &bias) { return (found.pointee, bias) }
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(module)))
    if unitIndexes[key] == nil { unitIndexes[key] = Self.indexUnits(module) }
    guard let index = unitIndexes[key] ?? nil, let dwarf = dwfl_module_getdwarf(module, &bias) else { return nil }
    let target = address &- index.bias
    guard let range = index.ranges.first(where: { target >= $0.start && target < $0.end }) else { return nil }
    var unit = Dwarf_Die()
    guard dwarf_offdie(dwarf, range.unit, &unit) != nil else { return nil }
    return (unit, index.bias)
  }

  /// The file and line of DWARF address `target` from the unit's line table.
  ///
  /// Swift marks code that has no line of its own with line 0, in one of two files. In the statement's own file
  /// (`main.swift`, line 0) is the set-up of a call that the next statement makes: loading `self` and the
  /// arguments before a debug build's `_modify` call (`model.count += 1`), or an optimized build's call through a
  /// protocol witness. In the file `<compiler-generated>` is what the compiler adds after a statement's body: a
  /// coroutine's resumption, the releases of its cleanup (a `ReferenceWritableKeyPath` write is made there, when
  /// the writeback buffer is released). So at a return address inside a line-0 row, the call belongs to the next
  /// row that names a line when the row is in a source file, and to the last row before it that names a line when
  /// the row is `<compiler-generated>`. Before, the side was chosen by where the row ended: a row that ended right
  /// at the return address took the line before, and named the line of a function inlined just before a call
  /// through a protocol witness; a cleanup that ran on into the next statement's row took that statement's line.
  /// An address that is not a return address takes the last line before it. With no such row on the chosen side
  /// (the end of the sequence), the other side's.
  ///
  /// One case the rows cannot decide: a return address inside a `<compiler-generated>` line-0 row that ends right
  /// at it, the next row naming another line than the row before. The call is then either the last thing of the
  /// statement before (its cleanup, the next statement beginning where the call returns) or a call of the next
  /// statement, made from code the optimizer laid out after another statement's code that jumps away (an optimized
  /// build's call through a protocol witness after a loop: `h.x += 5` was placed at the loop's line, a fresh-clone
  /// try-out's T8). The code the call returns to is the next row's, so that row's line is taken, marked
  /// `approximate`.
  ///
  /// Neither rule holds in a debug build, whose rows do not say which kind a line-0 row is: LLVM does not start a
  /// new row for a line-0 instruction after a line-0 row, so the instructions that have no line at all (a debug
  /// build's call of a `_modify` accessor, which begins the next statement's access, and the set-up around it) join
  /// the row of the compiler-generated cleanup before them (the releases of a `print`'s arguments, the end of the
  /// statement before's own `_modify`), whose file is `<compiler-generated>`; a `_modify` call right after such a
  /// statement was placed on its line, one line early (`print(…)` then `model.count += 1`; the second and third of
  /// three `+= 0` in a row). The function the call enters tells what the rows cannot (`role`, from the stacks): a
  /// coroutine's start (a `_modify` or `_read`, or a witness of one) begins an access of the statement whose row
  /// follows; its continuation (`….resume.0`) ends the access of the statement before. Other calls keep the rules
  /// above.
  ///
  /// That holds only when the statement has a row: an access with no code between its start and its continuation
  /// (a `+= 0` an optimized build folds, an `append` inlined without rows) is a start and a continuation call in one
  /// line-0 row, and the next row that names a line is the next statement's. In a release build's async code that
  /// is the rule, not the exception: `print(…)` then `store.discount += 0`, the model in another module, has no row
  /// of line `+= 0` at all, and was placed on the print's line as certain (a fresh-clone try-out's G3), or, with the
  /// callee's rule, on the next statement's. So a role is trusted only when `code` shows the access still open
  /// where the chosen row begins: for a start, no call through a register or memory (the continuation is called so)
  /// between the return address and the next row; for a continuation, no call of an accessor's start between its
  /// row's first instruction and the return address. When the code shows the access whole inside the line-0 row,
  /// or cannot be read or decoded (`InstructionScan`), the line is the row's before it, marked approximate: the
  /// binary does not give the statement's line. (The rows alone would take the next row for a line-0 row of a source
  /// file, which is the next statement's here: the access does not run on into it. The row before is the access's
  /// own statement's when that statement has code before the access, `parent!` of `parent!.children.append(child)`,
  /// a fresh-clone try-out's H9; else it is the statement before's, a line early, as the next row is a line late.
  /// A row before that is the function's entry, `prologue_end`, names the declaration's line, no statement's: the
  /// next row is taken then, as before.)
  static func line(
    in unit: inout Dwarf_Die, at target: Dwarf_Addr, isReturnAddress: Bool, role: CallRole? = nil,
    code: AccessCode? = nil
  ) -> (file: String, line: Int32, column: Int32, approximate: Bool, closesFunction: Bool)? {
    var lines: OpaquePointer?
    var count = 0
    guard dwarf_getsrclines(&unit, &lines, &count) == 0, let lines, count > 0 else { return nil }
    struct Row {
      var address: Dwarf_Addr = 0
      var line: Int32 = 0
      var endsSequence = false
    }
    func row(_ index: Int) -> Row? {
      guard let raw = dwarf_onesrcline(lines, index) else { return nil }
      var row = Row()
      guard dwarf_lineaddr(raw, &row.address) == 0, dwarf_lineno(raw, &row.line) == 0,
        dwarf_lineendsequence(raw, &row.endsSequence) == 0
      else { return nil }
      return row
    }
    func isPrologueEnd(_ index: Int) -> Bool {
      guard let raw = dwarf_onesrcline(lines, index) else { return true }
      var flag = false
      return dwarf_lineprologueend(raw, &flag) != 0 || flag
    }
    func file(_ index: Int) -> String? {
      guard let raw = dwarf_onesrcline(lines, index), let path = dwarf_linesrc(raw, nil, nil) else { return nil }
      return String(cString: path)
    }
    // Whether the row at `index`, or a row of its line right after it, begins the function's epilogue: the row is
    // the function's closing brace.
    func closesFunction(_ index: Int) -> Bool {
      guard let line = row(index)?.line else { return false }
      var next = index
      while next < count, let candidate = row(next), !candidate.endsSequence, candidate.line == line {
        var flag = false
        if let raw = dwarf_onesrcline(lines, next), dwarf_lineepiloguebegin(raw, &flag) == 0, flag { return true }
        next += 1
      }
      return false
    }
    func location(_ index: Int) -> (file: String, line: Int32, column: Int32)? {
      guard let raw = dwarf_onesrcline(lines, index), let file = file(index), let row = row(index) else { return nil }
      var column: Int32 = 0
      if dwarf_linecol(raw, &column) != 0 { column = 0 }
      return (file, row.line, column)
    }
    // The row that covers the address: the last one at or before it (libdw sorts rows by address), unless it
    // ends a sequence.
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if let row = row(middle), row.address <= target { low = middle + 1 } else { high = middle }
    }
    let covering = low - 1
    guard covering >= 0, let coveringRow = row(covering), !coveringRow.endsSequence else { return nil }
    if coveringRow.line > 0 { return location(covering).map { ($0.file, $0.line, $0.column, false, false) } }
    // The nearest rows that name a line, after and before the line-0 row, within its sequence.
    var following: Int?
    var index = covering + 1
    while index < count, let next = row(index), !next.endsSequence {
      if next.line > 0 {
        following = index
        break
      }
      index += 1
    }
    var preceding: Int?
    index = covering - 1
    while index >= 0, let previous = row(index), !previous.endsSequence {
      if previous.line > 0 {
        preceding = index
        break
      }
      index -= 1
    }
    // The return address (the DWARF address after the call).
    let returned = target &+ 1
    var rowless = false
    if isReturnAddress, let role {
      let open: Bool
      switch role {
      case .beginsAccess:
        let end = following.flatMap(row)?.address ?? returned
        open = code?.staysOpen(from: returned, to: end) ?? true
      case .endsAccess:
        open = code?.wasOpen(from: coveringRow.address, to: returned) ?? true
      }
      if open {
        let chosen = role == .beginsAccess ? following ?? preceding : preceding ?? following
        // An access begun in a line-0 row whose next row is the function's closing brace (its epilogue): the
        // statement has no row of its own, and the brace is no statement's. An optimized build gave an actor
        // method's last statement, `inventory.log.append(…)`, no row: its `_modify` call sat in the line-0 row after
        // the statement before, its continuation in the brace's row, and the write was sited on the brace, as
        // certain (a fresh-clone try-out's J4). Approximate; the caller puts it on the last statement's line when
        // the source shows the brace alone on its line.
        let closes = role == .beginsAccess && chosen != nil && chosen == following && closesFunction(chosen!)
        return chosen.flatMap(location).map { ($0.file, $0.line, $0.column, closes, closes) }
      }
      rowless = true
    }
    let cleanup = file(covering)?.hasSuffix("<compiler-generated>") ?? false
    if isReturnAddress, cleanup, let following, let preceding, following == covering + 1,
      let next = row(following), next.address == returned, let before = row(preceding), before.line != next.line
    {
      return location(following).map { ($0.file, $0.line, $0.column, true, false) }
    }
    // An access whole inside a line-0 row of a source file: the row continues the code before it, the access's own
    // statement's when that statement has rows before the access (`parent!.children.append(child)`: `parent!` at
    // 12, then the access and the inlined append with no row, then 13: a fresh-clone try-out's H9, placed at the
    // next statement's line). A set-up row's rule (the next row) is for a call whose access runs on into that row.
    // The row before is taken only when it is a statement's, not the function's entry (`prologue_end`: a resumed
    // async function's first row names its declaration's line, which is no statement's).
    let continues = rowless && preceding.map(isPrologueEnd) == false
    let chosen = isReturnAddress && !cleanup && !continues ? following ?? preceding : preceding ?? following
    return chosen.flatMap(location).map { ($0.file, $0.line, $0.column, rowless, false) }
  }

  /// Places an access that `line` found on its function's closing brace (an access with no row of its own, begun
  /// right before the epilogue) by the user's source: when the brace's line holds nothing but closing braces, on
  /// the last line before it that holds code (the function's last statement), approximate; when it holds code (a
  /// function written on one line, or a statement ending in the brace), on that line, certain. Without the source,
  /// the brace's line, approximate.
  func placeBeforeClosingBrace(_ frame: inout SymbolizedFrame, in unit: inout Dwarf_Die, binary: String) {
    guard frame.line > 0, let path = Self.sourcePath(frame.file, in: &unit),
      let source = userSource(path, notNewerThan: binary), Int(frame.line) <= source.count
    else { return }
    func onlyBraces(_ line: Int) -> Bool {
      ObserverSource.code(source[line - 1]).allSatisfy { $0 == "}" || $0 == " " || $0 == "\t" }
    }
    guard onlyBraces(Int(frame.line)) else {
      frame.lineIsApproximate = false
      return
    }
    var line = Int(frame.line) - 1
    while line >= 1, onlyBraces(line) { line -= 1 }
    if line >= 1 { frame.line = UInt32(line) }
  }

  /// Adds to `frame` the functions inlined at DWARF address `target`: each `DW_TAG_inlined_subroutine` scope that
  /// contains it, innermost first, named by its abstract origin. The innermost keeps the line table's place;
  /// each outer frame's place is the call site (`DW_AT_call_file`, `DW_AT_call_line`) of the one inside it.
  func expandInlined(_ frame: inout SymbolizedFrame, scopes: inout [Dwarf_Die], in unit: inout Dwarf_Die) {
    guard !scopes.isEmpty else { return }
    var files: OpaquePointer?
    var fileCount = 0
    if dwarf_getsrcfiles(&unit, &files, &fileCount) != 0 { files = nil }
    var inlined: [SymbolizedFrame] = []
    var place = (file: frame.file, line: frame.line)
    for index in scopes.indices {
      inlined.append(
        SymbolizedFrame(
          address: frame.address, function: Self.functionName(&scopes[index]), file: place.file, line: place.line,
          module: frame.module))
      // The line table's row is the innermost frame's, approximate or not; a call site's line is certain.
      if index == 0 { inlined[0].lineIsApproximate = frame.lineIsApproximate }
      // The next frame out is where this one was called from.
      place = ("", 0)
      var attribute = Dwarf_Attribute()
      var value: Dwarf_Word = 0
      if dwarf_attr(&scopes[index], UInt32(DW_AT_call_line), &attribute) != nil,
        dwarf_formudata(&attribute, &value) == 0
      {
        place.line = UInt32(truncatingIfNeeded: value)
      }
      if let files, dwarf_attr(&scopes[index], UInt32(DW_AT_call_file), &attribute) != nil,
        dwarf_formudata(&attribute, &value) == 0, value < UInt64(fileCount),
        let path = dwarf_filesrc(files, Int(value), nil, nil)
      {
        place.file = String(cString: path)
      }
    }
    frame.inlined = inlined
    frame.file = place.file
    frame.line = place.line
    frame.lineIsApproximate = false
  }

  /// Places the frames of an `@Observable` property's observers. The macro moves `didSet { … }` and `willSet { … }`
  /// into its peer buffer (`@__swiftmacro_…ObservationTrackedfMp_.swift`, a file in /tmp), copying the body between
  /// `#sourceLocation(file: "App/main.swift", line: N)` and `#sourceLocation()`: the line table's rows of the body
  /// name the user's file and line, the observer's own `didSet {` and closing brace the buffer. Two things follow.
  /// - An optimized build gives a call inlined in the body the buffer as its `DW_AT_call_file`, with the user's line:
  ///   the observer's frame was placed in the buffer at the user's line (a fresh-clone try-out's T3). Its file is the
  ///   one the body's own rows at that line name.
  /// - The macro re-formats the body, one statement a line: a one-line `didSet { if level > 10 { level = 10 } }` is
  ///   three lines of the buffer under one `#sourceLocation`, whose rows say N, N+1 and N+2 (T10). Only a body of
  ///   one buffer line is at the user's line for certain; in a longer one the frame is marked approximate. The
  ///   body's length is the buffer's: from the observer's declaration line (`didSet {`) to the first row of the
  ///   buffer after it (its closing brace), less the two `#sourceLocation` lines.
  /// `scopes` are the functions of the frame's logical frames, innermost first (the inlined scopes, then the one
  /// that holds the address).
  ///
  /// The user's source file, when it is there and not modified after the binary (`binary`), tells what the rows
  /// cannot (`ObserverSource`): an observer written on one line (`didSet { if level > 10 { level = 10 } }`) has
  /// every statement on that line, certain; in a longer body a row past the body's last line (the `target = 30` of
  /// `if target > 30 { target = 30 }`, a buffer line late) is put on that last line, still approximate. Before, both
  /// were printed a line late (a fresh-clone try-out's H6, in debug and release builds).
  func placeObserverBodies(
    _ frame: inout SymbolizedFrame, scopes: [Dwarf_Die], in unit: inout Dwarf_Die, binary: String? = nil
  ) {
    var scopes = scopes
    var frames = frame.logicalFrames
    guard frames.count == scopes.count else { return }
    var placed = false
    for index in scopes.indices {
      let function = frames[index].function
      guard function.contains(".didset") || function.contains(".willset"),
        let raw = dwarf_decl_file(&scopes[index])
      else { continue }
      let buffer = String(cString: raw)
      var declared: Int32 = 0
      guard SiteFilter.isPeerMacroBuffer(buffer), dwarf_decl_line(&scopes[index], &declared) == 0 else { continue }
      placed = true
      if let renamed = Self.observerOfTrackedProperty(function, buffer: buffer) { frames[index].function = renamed }
      if Self.sameFile(frames[index].file, buffer),
        let file = Self.bodyFile(atLine: Int32(truncatingIfNeeded: frames[index].line), in: &scopes[index], unit: &unit)
      {
        frames[index].file = file
      }
      let lines = bodyLines(ofObserverDeclaredAt: declared, buffer: buffer, in: &unit)
      if Self.sameFile(frames[index].file, buffer) || lines != 1 {
        frames[index].lineIsApproximate = true
        let line = Int(frames[index].line)
        if !Self.sameFile(frames[index].file, buffer), line > 0, let binary,
          let first = Self.firstBodyLine(frames[index].file, in: &scopes[index], unit: &unit),
          let path = Self.sourcePath(frames[index].file, in: &unit),
          let source = userSource(path, notNewerThan: binary),
          let span = ObserverSource.span(
            source, first: Int(first), observer: function.contains(".didset") ? "didSet" : "willSet")
        {
          if span.oneLine {
            frames[index].line = UInt32(first)
            frames[index].lineIsApproximate = false
          } else if line > span.last {
            frames[index].line = UInt32(span.last)
          }
        }
      }
    }
    guard placed else { return }
    for index in frame.inlined.indices {
      frame.inlined[index].function = frames[index].function
      frame.inlined[index].file = frames[index].file
      frame.inlined[index].lineIsApproximate = frames[index].lineIsApproximate
      frame.inlined[index].line = frames[index].line
    }
    frame.function = frames[frames.count - 1].function
    frame.file = frames[frames.count - 1].file
    frame.lineIsApproximate = frames[frames.count - 1].lineIsApproximate
    frame.line = frames[frames.count - 1].line
  }

  /// The address ranges of `die`'s code (a function or an inlined call), as DWARF lists them; empty when it has none.
  static func addressRanges(of die: inout Dwarf_Die) -> [(start: Dwarf_Addr, end: Dwarf_Addr)] {
    var ranges: [(start: Dwarf_Addr, end: Dwarf_Addr)] = []
    var cursor = 0
    var base: Dwarf_Addr = 0
    var start: Dwarf_Addr = 0
    var end: Dwarf_Addr = 0
    repeat {
      cursor = dwarf_ranges(&die, cursor, &base, &start, &end)
      if cursor > 0 && end > start { ranges.append((start, end)) }
    } while cursor > 0
    return ranges
  }

  /// The smallest line of the rows inside `scope`'s code that name `file`: an observer body's first statement line
  /// (the `#sourceLocation` line). Nil when no row does.
  static func firstBodyLine(_ file: String, in scope: inout Dwarf_Die, unit: inout Dwarf_Die) -> Int32? {
    let ranges = Self.addressRanges(of: &scope)
    var lines: OpaquePointer?
    var count = 0
    guard !ranges.isEmpty, dwarf_getsrclines(&unit, &lines, &count) == 0, let lines else { return nil }
    var first: Int32?
    for index in 0..<count {
      guard let raw = dwarf_onesrcline(lines, index) else { continue }
      var address: Dwarf_Addr = 0
      var rowLine: Int32 = 0
      guard dwarf_lineno(raw, &rowLine) == 0, rowLine > 0, dwarf_lineaddr(raw, &address) == 0,
        ranges.contains(where: { address >= $0.start && address < $0.end }), let path = dwarf_linesrc(raw, nil, nil),
        String(cString: path) == file
      else { continue }
      first = min(first ?? rowLine, rowLine)
    }
    return first
  }

  /// The path of the user's source file that a row names: the row's own when absolute, else (the macro's
  /// `#sourceLocation(file: "App/Models.swift", …)` names the file by its `#fileID`) the one absolute path of the
  /// unit's file table with that file name; nil when there is none or more than one.
  static func sourcePath(_ file: String, in unit: inout Dwarf_Die) -> String? {
    if file.hasPrefix("/") { return file }
    // A path relative to the unit's compilation folder (an optimized build's declaration files).
    var attribute = Dwarf_Attribute()
    if dwarf_attr(&unit, UInt32(DW_AT_comp_dir), &attribute) != nil, let raw = dwarf_formstring(&attribute) {
      let joined = String(cString: raw) + "/" + file
      if access(joined, R_OK) == 0 { return joined }
    }
    guard let name = file.split(separator: "/").last else { return nil }
    var files: OpaquePointer?
    var count = 0
    guard dwarf_getsrcfiles(&unit, &files, &count) == 0, let files else { return nil }
    var found: Set<String> = []
    for index in 0..<count {
      guard let raw = dwarf_filesrc(files, index, nil, nil) else { continue }
      let path = String(cString: raw)
      if path.hasPrefix("/"), path.split(separator: "/").last == name { found.insert(path) }
    }
    return found.count == 1 ? found.first : nil
  }

  /// The file a module was loaded from (its main ELF file), or its name.
  static func binaryPath(_ module: OpaquePointer) -> String? {
    var mainFile: UnsafePointer<CChar>?
    guard let name = dwfl_module_info(module, nil, nil, nil, nil, nil, &mainFile, nil) else { return nil }
    return String(cString: mainFile ?? name)
  }

  /// The lines of the user's source file `path`, when it is an absolute path that can be read and was not modified
  /// after `binary` (an edited file's lines are not the binary's); read once per file.
  func userSource(_ path: String, notNewerThan binary: String) -> [Substring]? {
    if let known = sourceLines[path] { return known }
    var lines: [Substring]?
    var source = stat()
    var built = stat()
    if path.hasPrefix("/"), stat(path, &source) == 0, stat(binary, &built) == 0,
      (source.st_mtim.tv_sec, source.st_mtim.tv_nsec) <= (built.st_mtim.tv_sec, built.st_mtim.tv_nsec),
      source.st_size < 16 << 20, let file = fopen(path, "re")
    {
      defer { fclose(file) }
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let read = fread(&buffer, 1, buffer.count, file)
        if read <= 0 { break }
        bytes += buffer[..<read]
      }
      let text = String(decoding: bytes, as: UTF8.self)
      lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }
    sourceLines[path] = .some(lines)
    return lines
  }

  /// The observer's name as the user wrote it, when `function` is the observer of the private storage that
  /// `@Observable` made for a tracked property and moved the user's observer onto, and `buffer` is the macro's peer
  /// buffer for that property: `Models.Thermostat.(_target in _5B5C…).didset : Swift.Int` in
  /// `@__swiftmacro_6Models10ThermostatC6target18ObservationTrackedfMp_.swift` is `Models.Thermostat.target.didset :
  /// Swift.Int` (a fresh-clone try-out's H6: the site printed the storage's private name). The buffer's name says the
  /// property (`6target`: its length and name, before `18ObservationTracked`), so the name is read, not guessed; nil
  /// for any other observer (one the user wrote on a private `_target` of their own is in no such buffer).
  static func observerOfTrackedProperty(_ function: String, buffer: String) -> String? {
    let file = buffer.split(separator: "/").last ?? Substring(buffer)
    guard let tracked = file.firstRange(of: "18ObservationTrackedfMp_") else { return nil }
    // The property's mangled identifier ends where `18ObservationTracked` begins: `<length><name>`.
    let before = file[..<tracked.lowerBound]
    for observer in [".didset", ".willset"] {
      guard let kind = function.firstRange(of: observer),
        let open = function[..<kind.lowerBound].lastIndex(of: "("), function[..<kind.lowerBound].hasSuffix(")")
      else { continue }
      let discriminated = function[function.index(after: open)..<function.index(before: kind.lowerBound)]
      guard let marker = discriminated.firstRange(of: " in _") else { continue }
      let storage = discriminated[..<marker.lowerBound]
      guard storage.hasPrefix("_"), storage.count > 1 else { continue }
      let property = storage.dropFirst()
      guard before.hasSuffix("\(property.utf8.count)\(property)") else { continue }
      return String(function[..<open]) + property + function[kind.lowerBound...]
    }
    return nil
  }

  static func sameFile(_ one: String, _ other: String) -> Bool {
    !one.isEmpty && one.split(separator: "/").last == other.split(separator: "/").last
  }

  /// The file of the rows at `line` inside `scope`'s code that name neither a macro buffer nor
  /// `<compiler-generated>`: the `#sourceLocation` file of an observer's body. Nil when no such row is there.
  static func bodyFile(atLine line: Int32, in scope: inout Dwarf_Die, unit: inout Dwarf_Die) -> String? {
    let ranges = Self.addressRanges(of: &scope)
    var lines: OpaquePointer?
    var count = 0
    guard !ranges.isEmpty, dwarf_getsrclines(&unit, &lines, &count) == 0, let lines else { return nil }
    for index in 0..<count {
      guard let raw = dwarf_onesrcline(lines, index) else { continue }
      var address: Dwarf_Addr = 0
      var rowLine: Int32 = 0
      guard dwarf_lineno(raw, &rowLine) == 0, rowLine == line, dwarf_lineaddr(raw, &address) == 0,
        ranges.contains(where: { address >= $0.start && address < $0.end }), let path = dwarf_linesrc(raw, nil, nil)
      else { continue }
      let file = String(cString: path)
      if !file.contains("@__swiftmacro_") && !file.hasSuffix("<compiler-generated>") { return file }
    }
    return nil
  }

  /// How many lines of its peer buffer an observer's body takes (nil: not known), from its declaration line and the
  /// buffer's first row after it in the unit's line table (the observer's closing brace).
  func bodyLines(ofObserverDeclaredAt declared: Int32, buffer: String, in unit: inout Dwarf_Die) -> Int32? {
    let key = "\(UInt(bitPattern: unit.addr)) \(buffer)"
    if bufferRowLines[key] == nil {
      var found: Set<Int32> = []
      var lines: OpaquePointer?
      var count = 0
      if dwarf_getsrclines(&unit, &lines, &count) == 0, let lines {
        for index in 0..<count {
          guard let raw = dwarf_onesrcline(lines, index), let path = dwarf_linesrc(raw, nil, nil) else { continue }
          var line: Int32 = 0
          if dwarf_lineno(raw, &line) == 0, line > 0, Self.sameFile(String(cString: path), buffer) {
            found.insert(line)
          }
        }
      }
      bufferRowLines[key] = found.sorted()
    }
    guard let closing = bufferRowLines[key]?.first(where: { $0 > declared }) else { return nil }
    return closing - declared - 3
  }

  /// The name of the `DW_TAG_module` of the unit whose functions include the one that contains `target`, or "".
  /// Swift declares a unit's code under its module's entry (top-level code too, though its symbol, `main` or
  /// `async_Main…`, names no module); a C unit has none.
  static func declaringModule(in unit: inout Dwarf_Die, at target: Dwarf_Addr) -> String {
    var child = Dwarf_Die()
    guard dwarf_child(&unit, &child) == 0 else { return "" }
    while true {
      if Int(dwarf_tag(&child)) == DW_TAG_module, let name = dwarf_diename(&child) {
        var functions: [Dwarf_Die] = []
        collectFunctions(in: &child, into: &functions)
        if functions.contains(where: { function in
          var function = function
          return dwarf_haspc(&function, target) == 1
        }) {
          return String(cString: name)
        }
      }
      var sibling = Dwarf_Die()
      guard dwarf_siblingof(&child, &sibling) == 0 else { return "" }
      child = sibling
    }
  }

  /// The `DW_TAG_inlined_subroutine` scopes that contain `target`, innermost first.
  ///
  /// Not `dwarf_getscopes`: it prunes the `DW_TAG_module` under which Swift places its functions (a module has no
  /// addresses), and finds nothing. The unit's concrete functions are indexed once; the one that contains the
  /// address is then descended through its lexical blocks and inlined subroutines.
  func inlinedScopes(in unit: inout Dwarf_Die, at target: Dwarf_Addr) -> (function: Dwarf_Die?, inlined: [Dwarf_Die]) {
    let key = UInt(bitPattern: unit.addr)
    if functionIndexes[key] == nil {
      var functions: [Dwarf_Die] = []
      Self.collectFunctions(in: &unit, into: &functions)
      functionIndexes[key] = functions
    }
    // The last that contains it: a function nested in another (a closure, in an optimized build) comes after it.
    guard
      var scope = functionIndexes[key]!.last(where: { function in
        var function = function
        return dwarf_haspc(&function, target) == 1
      })
    else { return (nil, []) }
    let function = scope
    var inlined: [Dwarf_Die] = []
    descending: while true {
      var child = Dwarf_Die()
      guard dwarf_child(&scope, &child) == 0 else { break }
      while true {
        let tag = Int(dwarf_tag(&child))
        if tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block, dwarf_haspc(&child, target) == 1 {
          if tag == DW_TAG_inlined_subroutine { inlined.append(child) }
          scope = child
          continue descending
        }
        var sibling = Dwarf_Die()
        guard dwarf_siblingof(&child, &sibling) == 0 else { break descending }
        child = sibling
      }
    }
    return (function, inlined.reversed())
  }

  /// The functions with code under `parent`, looking inside the modules, namespaces and types that hold them, and
  /// inside functions: an optimized build nests a closure's concrete function in its enclosing function's (its
  /// `_modify` calls inlined there were otherwise found in no function, and named the macro's generated file).
  /// A nested function comes after the one that holds it.
  static func collectFunctions(in parent: inout Dwarf_Die, into functions: inout [Dwarf_Die]) {
    var child = Dwarf_Die()
    guard dwarf_child(&parent, &child) == 0 else { return }
    while true {
      switch Int(dwarf_tag(&child)) {
      case DW_TAG_subprogram:
        var low: Dwarf_Addr = 0
        if dwarf_lowpc(&child, &low) == 0 || dwarf_hasattr(&child, UInt32(DW_AT_ranges)) != 0 {
          functions.append(child)
        }
        collectFunctions(in: &child, into: &functions)
      case DW_TAG_lexical_block:
        collectFunctions(in: &child, into: &functions)
      case DW_TAG_module, DW_TAG_namespace, DW_TAG_structure_type, DW_TAG_class_type, DW_TAG_union_type,
        DW_TAG_enumeration_type:
        collectFunctions(in: &child, into: &functions)
      default:
        break
      }
      var sibling = Dwarf_Die()
      guard dwarf_siblingof(&child, &sibling) == 0 else { return }
      child = sibling
    }
  }

  /// An inlined function's demangled name, from its abstract origin's linkage name (or its plain name).
  static func functionName(_ die: inout Dwarf_Die) -> String {
    var attribute = Dwarf_Attribute()
    for name in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name] {
      if dwarf_attr_integrate(&die, UInt32(name), &attribute) != nil, let raw = dwarf_formstring(&attribute) {
        return Demangler.demangle(String(cString: raw))
      }
    }
    if let raw = dwarf_diename(&die) { return String(cString: raw) }
    return ""
  }

  static func indexUnits(_ module: OpaquePointer) -> UnitIndex? {
    var bias: Dwarf_Addr = 0
    guard let dwarf = dwfl_module_getdwarf(module, &bias) else { return nil }
    var index = UnitIndex(bias: bias, ranges: [])
    var offset: Dwarf_Off = 0
    var next: Dwarf_Off = 0
    var headerSize = 0
    while dwarf_nextcu(dwarf, offset, &next, &headerSize, nil, nil, nil) == 0 {
      var unit = Dwarf_Die()
      let unitOffset = offset + Dwarf_Off(headerSize)
      if dwarf_offdie(dwarf, unitOffset, &unit) != nil {
        var cursor: Int = 0
        var base: Dwarf_Addr = 0
        var start: Dwarf_Addr = 0
        var end: Dwarf_Addr = 0
        repeat {
          cursor = dwarf_ranges(&unit, cursor, &base, &start, &end)
          if cursor > 0 && end > start { index.ranges.append((start, end, unitOffset)) }
        } while cursor > 0
      }
      offset = next
    }
    return index
  }
}

extension LoadedModule {
  /// The modules of this process, from /proc/self/maps.
  public static func current() -> [LoadedModule] {
    guard let file = fopen("/proc/self/maps", "re") else { return [] }
    defer { fclose(file) }
    var modules: [String: UInt64] = [:]
    var order: [String] = []
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let fields = text.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 6, let path = fields.last.map({ String($0).trimmingNewline }), path.hasPrefix("/"),
        let dash = fields[0].firstIndex(of: "-"), let start = UInt64(fields[0][..<dash], radix: 16),
        UInt64(fields[2], radix: 16) == 0
      else { continue }
      if modules[path] == nil { order.append(path) }
      modules[path] = min(modules[path] ?? .max, start)
    }
    return order.map { LoadedModule(path: $0, base: modules[$0]!) }
  }
}

extension String {
  fileprivate var trimmingNewline: String {
    var text = self
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    return text
  }
}

@_silgen_name("swift_demangle")
private func swiftDemangle(
  _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
  _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Swift symbol names made readable with the runtime's own demangler.
public enum Demangler {
  /// The demangled name, or `mangled` unchanged when it is not a Swift symbol.
  public static func demangle(_ mangled: String) -> String {
    guard mangled.hasPrefix("$s") || mangled.hasPrefix("_T") || mangled.hasPrefix("$S") else { return mangled }
    return mangled.withCString { pointer in
      guard let demangled = swiftDemangle(pointer, strlen(pointer), nil, nil, 0) else { return mangled }
      defer { free(demangled) }
      return String(cString: demangled)
    }
  }
}

/// Property names from the symbols of key-path getters.
public enum PropertyNaming {
  /// `key path getter for Demo.Model.property : Swift.Int : Demo.Model` → module `Demo`, type `Model`,
  /// property `property`. Nil for any other kind of symbol.
  public static func name(fromKeyPathGetter function: String) -> PropertyName? {
    let prefix = "key path getter for "
    guard function.hasPrefix(prefix) else { return nil }
    var path = function.dropFirst(prefix.count)
    if let colon = path.firstRange(of: " : ") { path = path[..<colon.lowerBound] }
    // `(extension in Other):Demo.Model.property`: the property's own module is the one after the colon.
    if path.hasPrefix("(extension in "), let close = path.firstRange(of: "):") { path = path[close.upperBound...] }
    let components = path.split(separator: ".").map(String.init)
    guard components.count >= 3 else { return nil }
    return PropertyName(
      module: components[0], type: components[1..<(components.count - 1)].joined(separator: "."),
      property: components[components.count - 1])
  }
}
