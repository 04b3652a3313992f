import ObsTraceAnalysis
import ObsTraceFormat
import Testing

@Suite("What a write fired")
struct WriteFiresTests {
  func writes(_ script: EventScript) -> [WriteFact] {
    script.replay().1.compactMap { entry -> WriteFact? in
      if case .write(let write) = entry { return write }
      return nil
    }
  }

  @Test("a write's fact lists the scopes it fired, recorded and predicted, and which were predicted; a later one none")
  func recordedAndPredicted() {
    var script = EventScript()
    script.created(1)
    script.run(1, label: 1, reads: [(1, 1)], kind: .untraced)  // its fire is predicted at the next willSet
    script.run(2, label: 2, reads: [(1, 1)])  // its fire is recorded
    script.write(1, 1, firing: [2], unchanged: false)
    script.write(1, 1, unchanged: false)
    let facts = writes(script)
    #expect(facts.count == 2)
    #expect(facts.first?.fired.map(\.scope) == [1, 2])
    #expect(facts.first?.fired.map(\.label) == [1, 2])
    #expect(facts.first?.predicted == [1])
    #expect(facts.last?.fired.isEmpty == true && facts.last?.predicted.isEmpty == true)
  }

  @Test("writes in progress at once on two threads each keep their own fires")
  func interleavedWrites() {
    var script = EventScript()
    script.created(1)
    script.created(2)
    script.run(2, label: 1, reads: [(1, 1)])
    script.run(3, label: 2, reads: [(2, 1)])
    script.beginWrite(1, 1, firing: [2], thread: 1)
    script.beginWrite(2, 1, firing: [3], thread: 2)
    script.finishWrite(2, 1, unchanged: true, thread: 2)
    script.finishWrite(1, 1, unchanged: false, thread: 1)
    let facts = writes(script)
    #expect(facts.map(\.thread) == [2, 1])
    #expect(facts.map { $0.fired.map(\.scope) } == [[3], [2]])
    #expect(facts.allSatisfy { $0.predicted.isEmpty })
  }
}
