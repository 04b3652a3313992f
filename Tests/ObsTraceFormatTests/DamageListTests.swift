import Foundation
import Testing

@testable import ObsTraceFormat

/// The reader's damage list (`TraceDamageList`): every spot counted, the first ones kept, the footer apart, and
/// `forEachDamage` reading every one again.
@Suite("Damage list")
struct DamageListTests {
  /// `count` spots at offsets 100, 110, …; every seventh a copy; the one at `footerAt` the malformed footer.
  static func spots(_ count: Int, footerAt: Int? = nil) -> [TraceDamage] {
    (0..<count).map { index in
      let message =
        index == footerAt
        ? TraceReader.malformedFooterMessage
        : index % 7 == 3 ? "T1's chunk #\(index) again\(TraceDamage.copyEnding)" : "no chunk starts here; skipped"
      return TraceDamage(offset: UInt64(100 + 10 * index), message: message)
    }
  }

  @Test("every spot is counted, the first 20 but the footer kept in order, and of the rest the ends and copies")
  func keepsWhatIsPrinted() {
    for (count, footerAt) in [(0, nil), (5, nil), (20, nil), (21, 0), (22, 2), (60, 2), (60, nil), (61, 60)] {
      let all = Self.spots(count, footerAt: footerAt)
      let list = TraceDamageList(all)
      // What the commands worked out from the whole array before.
      let footer = all.first { $0.message == TraceReader.malformedFooterMessage }
      let others = all.filter { $0 != footer }
      let rest = others.dropFirst(TraceDamageList.listedLimit)
      #expect(list.count == all.count && list.isEmpty == all.isEmpty, "\(count)")
      #expect(list.copies == all.count(where: \.isCopy), "\(count)")
      #expect(list.malformedFooter == footer, "\(count)")
      #expect(list.chunks == others.count, "\(count)")
      #expect(list.listed == Array(others.prefix(TraceDamageList.listedLimit)), "\(count)")
      #expect(list.more == rest.count && list.moreCopies == rest.count(where: \.isCopy), "\(count)")
      #expect(list.firstMore == rest.first && list.lastMore == rest.last, "\(count)")
    }
  }

  @Test("a list appended to another is the list of both, wherever the cut")
  func appendingLists() {
    let all = Self.spots(50, footerAt: 4)
    for cut in 0...all.count {
      var list = TraceDamageList(Array(all[..<cut]))
      list.append(contentsOf: TraceDamageList(Array(all[cut...])))
      #expect(list == TraceDamageList(all), "cut at \(cut)")
    }
  }

  @Test("a file of many damaged spots: each counted, the first kept, and forEachDamage gives every one in order")
  func everySpotReadAgain() throws {
    let path = temporaryPath("spots.trc")
    try writeSyntheticTrace(to: path, chunks: 3, perChunk: 10, footer: false)
    // Chunk magics one after the other: each a chunk whose length runs past the end of the file, all of them met
    // in one resynchronizing walk (one scan).
    let handle = try #require(FileHandle(forWritingAtPath: path))
    handle.seekToEndOfFile()
    handle.write(Data(repeating: 0, count: 1) + Data(String(repeating: "OTCK", count: 200).utf8))
    handle.closeFile()
    for readsAhead in [false, true] {
      let reader = try TraceReader(path: path)
      reader.readsAhead = readsAhead
      var events = 0
      reader.forEachEvent { _ in events += 1 }
      #expect(events == 30)
      var again: [TraceDamage] = []
      try reader.forEachDamage { again.append($0) }
      #expect(reader.damage.count > 150, "\(reader.damage)")
      #expect(again.count == reader.damage.count)
      #expect(TraceDamageList(again) == reader.damage)
      #expect(again.map(\.offset) == again.map(\.offset).sorted())
    }
  }
}
