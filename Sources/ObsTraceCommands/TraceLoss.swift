import ObsTraceFormat

/// What a trace lost, said the same way by every command that prints from it (`report` says it through its
/// completeness line and findings): damaged chunks skipped, with the thread and time range the chunk numbers and the
/// footer show; a cut end; events dropped, lost at the stop, or offered on threads that had no ring. Read after the
/// trace's chunks were read (damage is found while reading).
struct TraceLoss {
  /// "TRUNCATED" when the recording did not stop cleanly, else "INCOMPLETE"; nil when nothing was lost.
  let verdict: String?
  /// One clause per loss, in the order: cut end, damaged chunks, what each thread misses, drops, the stop, ringless,
  /// signal handlers'.
  let clauses: [String]
  /// Bytes after the trace's footer, not part of it (`TraceReader.afterFooter`): not a loss.
  let afterFooter: TraceDamage?

  init(_ reader: TraceReader) {
    var clauses: [String] = []
    // A footer whose checksum holds and whose contents do not decode: said once, as what it is (not as a missing
    // footer and a damaged chunk).
    let malformedFooter = reader.truncated ? reader.malformedFooter : nil
    if reader.truncated, let holder = reader.recordingProcess {
      clauses.append(
        "no footer yet: the trace is still being recorded by process \(holder) (it holds the file's lock); read up to "
          + "its last whole chunk so far")
    } else if reader.truncated, let zeros = reader.zeroTail {
      clauses.append("\(zeros); read everything whole before it")
    } else if let cut = reader.cutAt {
      clauses.append("the file is cut short \(cut); read up to the last whole chunk")
    } else if let footer = malformedFooter {
      clauses.append(Self.malformedFooterClause(footer))
    } else if reader.truncated {
      clauses.append("no footer (the recording did not stop cleanly); read up to the last whole chunk")
    }
    // The footer apart (said above), the first spots one by one (those the reader keeps whole), the rest counted.
    let damaged = reader.damage
    // With every recorded event read (the footer's counts), a damaged chunk held definitions, not events.
    let lostWhat = reader.readsEveryRecordedEvent ? Self.definitionsLost : "its events are lost"
    for damage in damaged.listed {
      clauses.append(
        damage.isCopy
          ? "chunk at byte \(damage.offset) skipped (\(Self.reason(damage.message))): its events were read once"
          : "damaged chunk at byte \(damage.offset) skipped (\(Self.reason(damage.message))): \(lostWhat)")
    }
    // The rest in one clause: a file of a million damaged spots would otherwise give a note of a million clauses.
    if damaged.more > 0, let first = damaged.firstMore, let last = damaged.lastMore {
      clauses.append(
        "\(damaged.more) more chunks skipped from byte \(first.offset) to byte \(last.offset) (\(damaged.moreCopies) of them "
          + "copies of chunks already read; 'obstrace dump' lists every one)")
    }
    clauses.append(contentsOf: Self.threadLosses(reader))
    if reader.droppedEvents > 0 {
      clauses.append(
        "\(reader.droppedEvents) event\(reader.droppedEvents == 1 ? "" : "s") dropped while recording (a full ring, OBSTRACE_DROP=1)"
      )
    }
    if let footer = reader.footer {
      if footer.lostAtStop > 0 {
        clauses.append(
          "\(footer.lostAtStop) event\(footer.lostAtStop == 1 ? "" : "s") lost at the stop (threads still running)")
      }
      if footer.ringless > 0 {
        clauses.append(
          "\(footer.ringless) event\(footer.ringless == 1 ? "" : "s") not recorded (threads that could not get a ring: "
            + "memory could not be allocated)")
      }
      if footer.signalHandlerEvents > 0 {
        clauses.append(
          "\(footer.signalHandlerEvents) event\(footer.signalHandlerEvents == 1 ? "" : "s") from signal handlers not "
            + "recorded (a handler that interrupted the recorder on its thread)")
      }
    }
    self.clauses = clauses
    afterFooter = reader.afterFooter
    verdict = clauses.isEmpty ? nil : (reader.truncated && malformedFooter == nil ? "TRUNCATED" : "INCOMPLETE")
  }

  /// What a damaged chunk lost when every event the footer counts as recorded was read.
  static let definitionsLost =
    "no recorded event is missing (every event the footer counts was read), so what it held was definitions "
    + "(names, sites, the symbol table), and those are lost"

  /// What a trace whose footer does not decode lost, in every command's words.
  static func malformedFooterClause(_ footer: TraceDamage) -> String {
    "the footer at byte \(footer.offset) is \(footer.footerState): the recording wrote it, but the counts it holds (events "
      + "recorded, dropped and lost at the stop, threads still running) cannot be read, so what the recording lost "
      + "is not known; every whole chunk before it was read"
  }

  /// The note on standard error of a command that reads a trace with bytes after its footer (`TraceReader.afterFooter`):
  /// they take nothing from the trace, and are said all the same. Nil when there are none.
  func afterFooterNote(_ path: String, command: String) -> String? {
    afterFooter.map { "obstrace \(command): note: \(path): \($0)\n" }
  }

  /// Whether the trace is known to have lost events before any chunk is read: no footer, or a footer that counts
  /// drops or events lost at the stop or on threads without a ring. (Damage is only found by reading.)
  static func knownAtOpen(_ reader: TraceReader) -> Bool {
    guard let footer = reader.footer else { return true }
    return footer.dropped > 0 || footer.lostAtStop > 0 || footer.ringless > 0 || footer.signalHandlerEvents > 0
  }

  /// The whole account in one line: `INCOMPLETE: clause; clause`.
  var summary: String? { verdict.map { $0 + ": " + clauses.joined(separator: "; ") } }

  /// The account for a one-line note on standard error: the first clauses, and how many more (a hostile file may
  /// have thousands of damaged chunks).
  var briefSummary: String {
    let shown = clauses.prefix(3).joined(separator: "; ")
    let more = clauses.count > 3 ? "; and \(clauses.count - 3) more" : ""
    return (verdict ?? "complete") + ": " + shown + more
  }

  /// A reader's damage message without its trailing "; skipped" (the clause says it).
  private static func reason(_ message: String) -> String {
    message.hasSuffix("; skipped") ? String(message.dropLast("; skipped".count)) : message
  }

  /// Per thread, what its chunk numbers and (with a footer) its recorded count show it lost, and when: the first
  /// `threadsListed` clauses, then the rest in one, as damaged chunks are (a footer may name a million threads: a
  /// fresh-clone try-out's J5, whose timeline printed a million lines and whose graph had an 85 MB title).
  private static func threadLosses(_ reader: TraceReader) -> [String] {
    let ledger = reader.chunkLedger
    var clauses: [String] = []
    // Past the listed clauses: the threads they would have named, and the recorded events those miss.
    var restThreads = Set<UInt32>()
    var restUnread: UInt64 = 0
    var described = Set<UInt32>()
    // The reserved serial is "no thread" (a chunk naming it is damage): never said as a thread.
    var recorded: [UInt32: UInt64] = [:]
    for totals in reader.footer?.threads ?? [] where totals.thread != TraceFormat.reservedThread {
      recorded[totals.thread, default: 0] &+= totals.recorded
    }
    func unread(_ thread: UInt32) -> UInt64 {
      let count = recorded[thread] ?? 0
      let read = ledger.eventsRead(thread)
      return count > read ? count - read : 0
    }
    func missing(_ thread: UInt32) -> String {
      guard let recorded = recorded[thread], unread(thread) > 0 else { return "" }
      return ", \(unread(thread)) of its \(recorded) recorded events"
    }
    for gap in ledger.gaps {
      let first = !described.contains(gap.thread)
      described.insert(gap.thread)
      guard clauses.count < threadsListed else {
        if restThreads.insert(gap.thread).inserted, first { restUnread &+= unread(gap.thread) }
        continue
      }
      let chunks = gap.count == 1 ? "chunk #\(gap.first)" : "chunks #\(gap.first)–#\(gap.first + gap.count - 1)"
      let when =
        gap.after.map { "between \(Formatting.milliseconds($0)) and \(Formatting.milliseconds(gap.before)) ms" }
        ?? "before \(Formatting.milliseconds(gap.before)) ms"
      clauses.append("T\(gap.thread) is missing \(chunks) (events \(when)\(first ? missing(gap.thread) : ""))")
    }
    // A loss no later chunk of the thread shows: its last chunks.
    for thread in recorded.keys.sorted() where !described.contains(thread) {
      let count = recorded[thread] ?? 0
      let lost = unread(thread)
      guard lost > 0 else { continue }
      guard clauses.count < threadsListed else {
        restThreads.insert(thread)
        restUnread &+= lost
        continue
      }
      if let last = ledger.lastTime(thread) {
        clauses.append(
          "T\(thread) is missing its last \(lost) of \(count) recorded events (after "
            + "\(Formatting.milliseconds(last)) ms: its last chunks)")
      } else {
        clauses.append("T\(thread) is missing all \(count) of its recorded events (none of its chunks was read)")
      }
    }
    if !restThreads.isEmpty {
      clauses.append(
        "\(restThreads.count) more thread\(restThreads.count == 1 ? " is" : "s are") missing events (\(restUnread) "
          + "of the events the footer counts as recorded, and any in missing chunks; 'obstrace report --format json' "
          + "counts them all)")
    }
    return clauses
  }

  /// Threads whose losses are said one by one; the others in one clause.
  static let threadsListed = 20
}
