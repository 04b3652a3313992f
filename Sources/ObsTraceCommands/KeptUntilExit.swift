import Synchronization

/// What a command built and no longer needs, kept (never destroyed) until the process exits.
///
/// A command's state made of many small allocations (a replay's per-object and per-scope tables on a trace of 100 k
/// objects) takes a measurable part of the run to free, one allocation at a time, just before the process exits
/// and the system takes its memory back at once: the timeline's replay machine, ≈ 44 M instructions of ≈ 1 G on
/// the bench's 100 k-object trace (callgrind). Held here, it stays reachable, so a leak checker does not report it.
/// A process that runs commands in turn (the tests) keeps each one's: memory grows with the traces it reads.
enum KeptUntilExit {
  private final class Box {
    let value: Any
    init(_ value: Any) { self.value = value }
  }

  /// The addresses of the boxes, retained once and never released (tests run commands on several threads at once).
  private static let kept = Mutex<[UInt]>([])

  static func keep(_ value: Any) {
    let address = UInt(bitPattern: Unmanaged.passRetained(Box(value)).toOpaque())
    kept.withLock { $0.append(address) }
  }
}
