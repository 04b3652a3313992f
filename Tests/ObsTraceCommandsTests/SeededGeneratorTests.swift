import ObsTraceTestSupport
import Testing

/// The generator the tests draw random cases from: a seed gives its numbers again, so a failure can be repeated.
@Suite("Seeded generator")
struct SeededGeneratorTests {
  func draw(_ generator: inout SeededGenerator, _ count: Int) -> [UInt64] {
    (0..<count).map { _ in generator.next() }
  }

  @Test("the same seed draws the same numbers; another seed, others")
  func repeatable() {
    var first = SeededGenerator(seed: 42)
    var again = SeededGenerator(seed: 42)
    var other = SeededGenerator(seed: 43)
    let numbers = draw(&first, 1000)
    #expect(numbers == draw(&again, 1000))
    #expect(numbers != draw(&other, 1000))
    #expect(Set(numbers).count == 1000)
    // Spread over the whole range: about half of the numbers have their top bit set.
    #expect((400...600).contains(numbers.filter { $0 >> 63 == 1 }.count))
  }

  @Test("with no OBSTRACE_TEST_SEED every run starts from the same seed")
  func fixedByDefault() {
    var generator = SeededGenerator()
    var fixed = SeededGenerator(seed: generator.seed)
    #expect(draw(&generator, 10) == draw(&fixed, 10))
    #expect(SeededGenerator().seed == SeededGenerator().seed)
  }
}
