import CDw

#if canImport(Glibc)
  import Glibc
#endif

/// What the `.symtab` of an executable built with `--static-swift-stdlib` says of the toolchain's code linked into
/// it (`ObservationRuntime.staticImage`): there is then no libswiftObservation.so, libswift_Concurrency.so or
/// libdispatch.so for a frame to be named by, and the executable's own name says nothing of whose code a frame is.
public struct StaticImage: Sendable, Equatable {
  /// The values of the symbols asked for that the table has (file addresses: add the load bias).
  public var symbols: [String: UInt]
  /// Observation's code (file addresses): the run of Observation's functions (named `$s11Observation…` or
  /// `_swift_observation_…`) around the tracking getter, functions less than a gap (16 KiB) apart being one run.
  /// The linker lays out the library's objects together; the functions the library's code specialized from the
  /// standard library (`$sSh5union…Tg5` and the like) lie among them. Types of Observation's that another module
  /// copies or destroys give that module small functions named after them (outlined copies, value witnesses);
  /// they lie elsewhere, and are not Observation's code. Empty when the table has no getter (a stripped file).
  public var observation: [Range<UInt>] = []
  /// The code of the toolchain's other libraries linked in (the Swift runtime and standard library, Concurrency,
  /// Dispatch, …), each range named by its library's archive, in address order (`StaticMembers`).
  public var libraries: [LibraryCode] = []

  public init(symbols: [String: UInt], observation: [Range<UInt>] = [], libraries: [LibraryCode] = []) {
    self.symbols = symbols
    self.observation = observation
    self.libraries = libraries
  }
}

/// A range of a static executable's code (file addresses) that is a library's, and the library's archive
/// (`libswift_Concurrency.a`).
public struct LibraryCode: Sendable, Equatable {
  public var code: Range<UInt>
  public var archive: String

  public init(code: Range<UInt>, archive: String) {
    self.code = code
    self.archive = archive
  }
}

/// Which code of a static executable is which toolchain library's, from the object files (archive members) it was
/// linked from, as its `.symtab` lists them.
///
/// The linker copies each member it takes whole, and lays out the members' code in the order it takes them: an
/// archive's members one after another, in the archive's order. The `.symtab` keeps that order too: for each
/// member with local symbols, a file symbol (`STT_FILE`, the member's source or object name) and then the
/// member's own local functions. So the members' local functions, in the table's order, rise through the code,
/// and each member's code is their span; those that do not rise (a `.cold` part, a `.text.unlikely` or
/// `.text.startup` section, which the linker puts before all other code) are the member's each on its own.
///
/// Whose a member is: the toolchain's Swift libraries are each one object of their module, compiled whole
/// (`Swift.o`, `_Concurrency.o`, a name no module of the user's can have), first in their archive, then their
/// runtime's C++ members (`Actor.cpp`, `Task.cpp`, …), which are theirs as long as C++ members follow it. Dispatch
/// is C: a C member whose local functions are named in Dispatch's namespace (`_dispatch_…`, `dispatch_…`) is
/// libdispatch's. Members of one library in a row are one range, from the first one's code to the last one's;
/// the hidden functions between (the runtime's `swift_job_run`, which the linker made local after the last
/// member's) are inside it. Any other member (the user's, the C library's, a member that cannot be told) ends a
/// range: code whose library the table does not show is not named.
///
/// Observation is not among them: its code is found around its tracking getter (`StaticImage.observation`),
/// which lies past its members' local functions.
struct StaticMembers {
  /// Each toolchain library's object (its module's, compiled whole), its archive, and what its other members are
  /// compiled from (the extension of their file symbol).
  static let libraries: [String: (archive: String, memberSources: [String])] = [
    "Swift.o": ("libswiftCore.a", [".cpp", ".mm", ".m"]),
    "_Concurrency.o": ("libswift_Concurrency.a", [".cpp"]),
    "SwiftOnoneSupport.o": ("libswiftSwiftOnoneSupport.a", []),
    "Synchronization.o": ("libswiftSynchronization.a", []),
    "_StringProcessing.o": ("libswift_StringProcessing.a", []),
    "_RegexParser.o": ("libswift_RegexParser.a", []),
    "Distributed.o": ("libswiftDistributed.a", [".cpp"]),
    "RegexBuilder.o": ("libswiftRegexBuilder.a", []),
  ]
  static let dispatch = "libdispatch.a"

  private struct Member {
    /// The member's library, when its file symbol says it; `dispatch` when a C member's functions may.
    var archive: String?
    var memberSources: [String] = []
    var isC = false
    var functions: [Range<UInt>] = []
  }

  private var members: [Member] = []

  /// A file symbol: the local symbols after it are a new member's.
  mutating func begin(_ name: UnsafePointer<CChar>) {
    let file = String(cString: name)
    var member = Member()
    if let library = Self.libraries[file] {
      member.archive = library.archive
      member.memberSources = library.memberSources
    } else if let previous = members.last, let archive = previous.archive, !previous.memberSources.isEmpty,
      previous.memberSources.contains(where: { file.hasSuffix($0) })
    {
      member.archive = archive
      member.memberSources = previous.memberSources
    } else {
      member.isC = file.hasSuffix(".c")
    }
    members.append(member)
  }

  /// A local function of the member begun last.
  mutating func addLocalFunction(_ code: Range<UInt>, named name: UnsafePointer<CChar>) {
    guard !members.isEmpty else { return }
    members[members.count - 1].functions.append(code)
    if members[members.count - 1].isC, members[members.count - 1].archive == nil,
      strncmp(name, "_dispatch_", 10) == 0 || strncmp(name, "dispatch_", 9) == 0
    {
      members[members.count - 1].archive = Self.dispatch
    }
  }

  /// The code of each run of one library's members, and the parts of its members' functions the linker moved
  /// before all code, in address order.
  func libraryCode() -> [LibraryCode] {
    var ranges: [LibraryCode] = []
    var frontier: UInt = 0
    var open: LibraryCode?
    for member in members {
      // Functions past every earlier member's are the member's code in order; the rest are parts the linker moved
      // before all code (`.cold` parts, `.text.unlikely`): each is the member's all the same, as its symbol says.
      let (own, moved) = (
        member.functions.filter { $0.lowerBound >= frontier }, member.functions.filter { $0.lowerBound < frontier }
      )
      if let archive = member.archive {
        ranges += moved.map { LibraryCode(code: $0, archive: archive) }
      }
      guard let start = own.map(\.lowerBound).min(), let end = own.map(\.upperBound).max() else { continue }
      frontier = max(frontier, end)
      if let archive = member.archive, let current = open, current.archive == archive {
        open = LibraryCode(code: current.code.lowerBound..<max(current.code.upperBound, end), archive: archive)
        continue
      }
      if let current = open { ranges.append(current) }
      open = member.archive.map { LibraryCode(code: start..<end, archive: $0) }
    }
    if let current = open { ranges.append(current) }
    return Self.joined(ranges.sorted { $0.code.lowerBound < $1.code.lowerBound })
  }

  /// `ranges` (in address order) with those of one library that touch, or lie less than a function's alignment
  /// (16 bytes) apart, as one.
  static func joined(_ ranges: [LibraryCode]) -> [LibraryCode] {
    var joined: [LibraryCode] = []
    for range in ranges {
      if let last = joined.last, last.archive == range.archive, range.code.lowerBound >= last.code.lowerBound,
        range.code.lowerBound <= last.code.upperBound + 15
      {
        joined[joined.count - 1].code = last.code.lowerBound..<max(last.code.upperBound, range.code.upperBound)
      } else {
        joined.append(range)
      }
    }
    return joined
  }
}
