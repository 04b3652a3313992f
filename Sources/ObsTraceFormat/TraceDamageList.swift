/// The damage a reading met, in memory bounded whatever the file holds: each damaged spot the reader skips was kept
/// whole before (≈ 450 bytes with its message), and a file of nothing but chunk magics has one every few bytes
/// (tryout14: `obstrace dump` of a 20 MB file of them took 2.2 GB). What the commands print is kept: every spot's
/// count (and how many are copies of chunks already read), the first `listedLimit` spots themselves, and of the
/// others the first and the last (the report and the loss notes list 20, then one line for the rest). `obstrace
/// dump`, which lists every one, reads them again (`TraceReader.forEachDamage`).
///
/// A footer that does not decode (`TraceReader.malformedFooterMessage`) is counted, and kept apart
/// (`malformedFooter`): every command says it as what it is, not as a damaged chunk.
public struct TraceDamageList: Sendable, Equatable {
  /// Damaged spots kept whole, in file order (the footer apart): those every command lists one by one.
  public static let listedLimit = 20

  /// Every damaged spot, the malformed footer included.
  public private(set) var count = 0
  /// Of them, copies of a thread's chunk already read (`TraceDamage.isCopy`): nothing is lost by those.
  public private(set) var copies = 0
  /// The footer, when its checksum holds and its contents do not decode.
  public private(set) var malformedFooter: TraceDamage?
  /// The first `listedLimit` spots other than the footer, in file order.
  public private(set) var listed: [TraceDamage] = []
  /// The spots past `listed` (the footer apart): how many, how many are copies, the first and the last.
  public private(set) var more = 0
  public private(set) var moreCopies = 0
  public private(set) var firstMore: TraceDamage?
  public private(set) var lastMore: TraceDamage?

  public init() {}

  /// The list of `damage`, in that order.
  public init(_ damage: [TraceDamage]) {
    for spot in damage { append(spot) }
  }

  public var isEmpty: Bool { count == 0 }

  /// The spots other than the footer: `listed`'s and `more`.
  public var chunks: Int { count - (malformedFooter == nil ? 0 : 1) }

  /// Counts `spot`, keeping it when it is among the first `listedLimit` (or the footer).
  public mutating func append(_ spot: TraceDamage) {
    count += 1
    if spot.isCopy { copies += 1 }
    if spot.isFooter, malformedFooter == nil {
      malformedFooter = spot
      return
    }
    if listed.count < Self.listedLimit {
      listed.append(spot)
      return
    }
    more += 1
    if spot.isCopy { moreCopies += 1 }
    if firstMore == nil { firstMore = spot }
    lastMore = spot
  }

  /// Counts the spots of `other` after these, as if each had been appended: exactly, since `other` keeps its first
  /// `listedLimit` whole, and past them these have as many.
  public mutating func append(contentsOf other: TraceDamageList) {
    if let footer = other.malformedFooter { append(footer) }
    for spot in other.listed { append(spot) }
    guard other.more > 0 else { return }
    count += other.more
    copies += other.moreCopies
    more += other.more
    moreCopies += other.moreCopies
    if firstMore == nil { firstMore = other.firstMore }
    lastMore = other.lastMore
  }
}

/// Told of each damaged spot as a reading meets it (`TraceReader.forEachDamage`). Unchecked: only a reading on one
/// thread has one (that reading does without the reader thread), so `body` is called on the thread that reads.
final class DamageObserver: @unchecked Sendable {
  let body: (TraceDamage) -> Void

  init(_ body: @escaping (TraceDamage) -> Void) { self.body = body }
}

extension TraceDamageList: ExpressibleByArrayLiteral {
  public init(arrayLiteral spots: TraceDamage...) { self.init(spots) }
}
