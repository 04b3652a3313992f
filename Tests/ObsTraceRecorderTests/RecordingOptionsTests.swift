import ObsTraceRecorder
import Testing

@Suite("Recording options from the environment")
struct RecordingOptionsTests {
  @Test(
    "OBSTRACE_RING_CAPACITY: within 64…4194304 as given; outside, the nearest bound; not a number, the default; each problem says the value used",
    arguments: [
      ("65536", 65_536, nil),
      ("100", 100, nil),
      ("64", 64, nil),
      ("4194304", 4_194_304, nil),
      (
        "4194305", 4_194_304,
        "OBSTRACE_RING_CAPACITY=4194305 is out of range (64 to 4194304 records a thread's ring); using 4194304"
      ),
      (
        "1073741824", 4_194_304,
        "OBSTRACE_RING_CAPACITY=1073741824 is out of range (64 to 4194304 records a thread's ring); using 4194304"
      ),
      ("63", 64, "OBSTRACE_RING_CAPACITY=63 is out of range (64 to 4194304 records a thread's ring); using 64"),
      ("-5", 64, "OBSTRACE_RING_CAPACITY=-5 is out of range (64 to 4194304 records a thread's ring); using 64"),
      (
        "1e6", 65_536, "OBSTRACE_RING_CAPACITY=1e6 is not a number (64 to 4194304 records a thread's ring); using 65536"
      ),
      ("", 65_536, "OBSTRACE_RING_CAPACITY= is not a number (64 to 4194304 records a thread's ring); using 65536"),
    ] as [(String, Int, String?)])
  func ringCapacity(value: String, capacity: Int, problem: String?) {
    let (options, problems) = RecordingOptions.fromEnvironment(["OBSTRACE_RING_CAPACITY": value])
    #expect(options.ringCapacity == capacity)
    #expect(problems == (problem.map { [$0] } ?? []))
  }

  @Test("OBSTRACE_DROP: 1 or true drops, 0, false or empty waits; anything else is said, and waits")
  func drop() {
    for (value, drops) in [("1", true), ("true", true), ("0", false), ("false", false), ("", false)] {
      let (options, problems) = RecordingOptions.fromEnvironment(["OBSTRACE_DROP": value])
      #expect(options.dropWhenFull == drops, "\(value)")
      #expect(problems.isEmpty)
    }
    let (options, problems) = RecordingOptions.fromEnvironment(["OBSTRACE_DROP": "yes"])
    #expect(!options.dropWhenFull)
    #expect(problems == ["OBSTRACE_DROP=yes is not one of 1, true, 0, false; using 0 (lossless)"])
  }
}
