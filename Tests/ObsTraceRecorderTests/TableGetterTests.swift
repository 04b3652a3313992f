import Foundation
import ObsTraceFormat
import ObsTraceSymbols
import Testing

@testable import ObsTraceRecorder

class TableModel {
  var width: Double = 1
  var count = 0
}

final class TableSquare: TableModel {
  override var width: Double {
    didSet { count += 1 }
  }
}

/// A key path getter with no symbol that calls its property's getter through the root class's table, as an
/// optimized build makes it for a property a subclass overrides (a fresh-clone try-out's H16: `Rect.width` was
/// `Rect.<Double #11>` in release). The getter is written out here byte for byte as the try-out's binary had it
/// (`keypath_get.10` of its Reentry, at 0x1fa30), its table offset the test class's own.
@Suite("Table getters")
struct TableGetterTests {
  /// The try-out's getter: `push %rbp; mov %rsp,%rbp; push %r13; push %rbx; mov %rax,%rbx; mov (%rdi),%r13; mov
  /// 0x0(%r13),%rax; call *0x160(%rax); movsd %xmm0,(%rbx); pop %rbx; pop %r13; pop %rbp; ret`.
  static let tryout: [UInt8] = [
    0x55, 0x48, 0x89, 0xe5, 0x41, 0x55, 0x53, 0x48, 0x89, 0xc3, 0x4c, 0x8b, 0x2f, 0x49, 0x8b, 0x45, 0x00, 0xff, 0x90,
    0x60, 0x01, 0x00, 0x00, 0xf2, 0x0f, 0x11, 0x03, 0x5b, 0x41, 0x5d, 0x5d, 0xc3,
  ]

  @Test("the getter's table offset is read from its code exactly; any other code is not such a getter")
  func offsets() {
    #expect(TableGetter.tableOffset(Self.tryout) == 0x160)
    // `call *0x58(%rax)` (a short displacement), a result in %rax (`push %rax`, `mov %rax,(%rbx)` aside).
    let short: [UInt8] = [
      0x55, 0x48, 0x89, 0xe5, 0x41, 0x55, 0x50, 0x4c, 0x8b, 0x2f, 0x49, 0x8b, 0x45, 0x00, 0xff, 0x50, 0x58, 0x48, 0x83,
      0xc4, 0x08, 0x41, 0x5d, 0x5d, 0xc3,
    ]
    #expect(TableGetter.tableOffset(short) == 0x58)
    // Another call after the table's (a getter that does more), a jump, or code cut short: none.
    var calls = Self.tryout
    calls.insert(contentsOf: [0xe8, 0, 0, 0, 0], at: 23)
    #expect(TableGetter.tableOffset(calls) == nil)
    var jumps = Self.tryout
    jumps.insert(contentsOf: [0xeb, 0x00], at: 23)
    #expect(TableGetter.tableOffset(jumps) == nil)
    #expect(TableGetter.tableOffset(Array(Self.tryout.prefix(25))) == nil)
    // Not through the root object (`mov (%rsi),%r13`).
    var other = Self.tryout
    other[12] = 0x2e
    #expect(TableGetter.tableOffset(other) == nil)
  }

  @Test("a getter's symbol names the property only when it is the root's own getter of the member's type")
  func names() {
    #expect(
      TableGetterNaming.name(
        getter: "Models.Rect.width.getter : Swift.Double", root: "Models.Rect", member: "Swift.Double")
        == PropertyName(module: "Models", type: "Rect", property: "width"))
    #expect(
      TableGetterNaming.name(
        getter: "Models.Outer.Rect.width.getter : Swift.Double", root: "Models.Outer.Rect", member: "Swift.Double")
        == PropertyName(module: "Models", type: "Outer.Rect", property: "width"))
    for (getter, root, member) in [
      ("Models.Square.width.getter : Swift.Double", "Models.Rect", "Swift.Double"),
      ("Models.Rect.width.getter : Swift.Double", "Models.Rect", "Swift.Int"),
      ("Models.Rect.width.setter : Swift.Double", "Models.Rect", "Swift.Double"),
      ("Models.Rect.width.read : Swift.Double", "Models.Rect", "Swift.Double"),
      ("generic specialization <Swift.Int> of Models.Rect.width.getter : Swift.Double", "Models.Rect", "Swift.Double"),
    ] {
      #expect(TableGetterNaming.name(getter: getter, root: root, member: member) == nil, "\(getter)")
    }
  }

  @Test(
    "a property is named from the root class's table when its key path getter only calls through it, in this process")
  func namedFromTheTable() throws {
    #if arch(x86_64)
      // The table offset of `TableModel.width.getter` in its class's metadata, found by its symbol.
      let metadata = unsafeBitCast(TableModel.self, to: UnsafeRawPointer.self)
      let size = Int(metadata.load(fromByteOffset: 0x20, as: UInt32.self))
      let addressPoint = Int(metadata.load(fromByteOffset: 0x24, as: UInt32.self))
      var slot: Int?
      for offset in stride(from: 0x30, to: size - addressPoint, by: 8) {
        let entry = metadata.load(fromByteOffset: offset, as: UInt64.self)
        if entry != 0,
          SymbolCache.functionStarting(at: entry) == "ObsTraceRecorderTests.TableModel.width.getter : Swift.Double"
        {
          slot = offset
        }
      }
      let offset = try #require(slot)
      let name = "obstrace_table_getter_\(getpid())"
      let bytes =
        Self.tryout.prefix(19) + withUnsafeBytes(of: Int32(offset).littleEndian, Array.init) + Self.tryout.dropFirst(23)
      let source = """
          .text
          .globl \(name)
          .type \(name),@function
        \(name):
          .byte \(bytes.map { String($0) }.joined(separator: ", "))
          .size \(name), .-\(name)
          .section .note.GNU-stack,"",@progbits

        """
      let address = try #require(try LineZeroTests.load(name, source, labels: [name])[name])
      #expect(SymbolCache.tableGetterOffset(at: address) == offset)
      #expect(
        TableGetterNaming.name(getterAddress: address, root: TableModel.self, member: Double.self)
          == PropertyName(module: "ObsTraceRecorderTests", type: "TableModel", property: "width"))
      // The subclass's table holds its own getter: named for it when it is the root.
      #expect(
        TableGetterNaming.name(getterAddress: address, root: TableSquare.self, member: Double.self)
          == PropertyName(module: "ObsTraceRecorderTests", type: "TableSquare", property: "width"))
      // Another member type, or a root that is not a class: no name.
      #expect(TableGetterNaming.name(getterAddress: address, root: TableModel.self, member: Int.self) == nil)
      #expect(TableGetterNaming.name(getterAddress: address, root: Int.self, member: Double.self) == nil)
    #endif
  }
}
