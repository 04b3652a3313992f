import ObsTraceFormat
import Testing

@testable import ObsTraceAnalysis

/// A write's facts hold what it fired and what it was coalesced into apart from their other fields, nothing when
/// there is nothing (most writes: a fact with empty arrays cost retains and releases at each write); what they say
/// through `fired`, `predicted`, `firedAgain` and `coalescedInto` is the same.
@Suite("What a write's facts hold")
struct WriteFactStorageTests {
  func facts(_ script: EventScript) -> (began: [WriteBeganFact], written: [WriteFact]) {
    var began: [WriteBeganFact] = []
    var written: [WriteFact] = []
    for fact in script.replay().1 {
      if case .writeBegan(let write) = fact { began.append(write) }
      if case .write(let write) = fact { written.append(write) }
    }
    return (began, written)
  }

  @Test("a write that fired nothing holds nothing; one that fired holds its scopes once, read as before")
  func firedHeldOnlyWhenAny() throws {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)], kind: .untraced)  // its fire is predicted at the next willSet
    script.run(2, label: 2, reads: [(1, 1)])  // its fire is recorded
    script.write(1, 1, firing: [2], unchanged: false)
    script.write(1, 1, unchanged: false)
    let written = facts(script).written
    try #require(written.count == 2)
    #expect(written[0].firedScopes != nil)
    #expect(written[0].firedCount == 2 && written[0].fired.map(\.scope) == [1, 2])
    #expect(written[0].predicted == [1] && written[0].firedAgain.isEmpty)
    #expect(written[1].firedScopes == nil)
    #expect(written[1].firedCount == 0 && written[1].fired.isEmpty && written[1].predicted.isEmpty)

    // Set through its arrays: each keeps the others, and emptied, the fact holds nothing again.
    var write = written[1]
    write.fired = [(scope: 7, label: 3)]
    write.predicted = [7]
    #expect(write.fired.map(\.scope) == [7] && write.fired.map(\.label) == [3] && write.predicted == [7])
    #expect(write.firedCount == 1)
    write.firedAgain = [(scope: 7, how: .nested)]
    #expect(write.firedAgain.map(\.how) == [.nested] && write.fired.map(\.scope) == [7] && write.predicted == [7])
    write.fired = []
    write.predicted = []
    write.firedAgain = []
    #expect(write.firedScopes == nil)
    // Described by what it fired, as the arrays were (tests compare facts by their description).
    #expect(String(describing: written[0]).contains("predicted: [1]"))
  }

  @Test("a write coalesced into nothing holds no list, and a list set empty equals one never set")
  func coalescedHeldOnlyWhenAny() throws {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)])
    script.write(1, 1, firing: [1], unchanged: false)  // fires the run: its instance waits to run again
    script.write(1, 1, unchanged: false)  // coalesced into that instance
    let began = facts(script).began
    try #require(began.count == 2)
    #expect(began[0].coalescedList == nil && began[0].coalescedInto.isEmpty)
    #expect(began[1].coalescedInto == [CoalescedInstances(label: 1, instances: 1)])
    var emptied = began[1]
    emptied.coalescedInto = []
    #expect(emptied.coalescedList == nil)
    var unlisted = began[1]
    unlisted.coalescedList = nil
    #expect(emptied == unlisted)
  }
}
