// swift-tools-version:6.0
// ObsTrace: see inside Swift's Observation framework.
//
// Data flow, one module per layer:
//   ObsTraceTesting (assertions in tests) ─▶ ObsTrace (drop-in surface) ─▶ ObsTraceRecorder (registrar, rings, flusher) ─▶ CObsTraceRing (C hot path)
//   ObsTraceFormat (trace file writer and reader, zlib) ◀─ ObsTraceAnalysis (replay) ◀─ ObsTraceCommands ◀─ obstrace
//   ObsTraceSymbols (libdw: names and places)
import PackageDescription

let package = Package(
  name: "ObsTrace",
  products: [
    .library(name: "ObsTrace", targets: ["ObsTrace"]),
    .library(name: "ObsTraceTesting", targets: ["ObsTraceTesting"]),
    .executable(name: "obstrace", targets: ["obstrace-cli"]),
  ],
  targets: [
    // C: the recording hot path (per-thread SPSC rings) and the two Debian libraries.
    .target(name: "CObsTraceRing"),
    .systemLibrary(name: "CObsTraceZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CDw", pkgConfig: "libdw", providers: [.apt(["libdw-dev"])]),

    // The trace file: format, writer and streaming reader.
    .target(name: "ObsTraceFormat", dependencies: ["CObsTraceZlib"]),
    // Names and places: key-path getters and call stacks resolved with libdw.
    .target(name: "ObsTraceSymbols", dependencies: ["CDw", "ObsTraceFormat"]),
    // The recording engine: the tracing registrar, traced tracking, the flusher.
    .target(
      name: "ObsTraceRecorder",
      dependencies: ["CObsTraceRing", "ObsTraceFormat", "ObsTraceSymbols"]
    ),
    // The drop-in surface: `import ObsTrace` in a file that declares @Observable classes.
    .target(name: "ObsTrace", dependencies: ["ObsTraceRecorder"]),
    // Assertions in tests: `recordObservation` and its analysed result, failures reported through Swift Testing
    // (and from XCTest). Apart from ObsTrace so that a traced binary links neither Testing nor the replay.
    .target(name: "ObsTraceTesting", dependencies: ["ObsTrace", "ObsTraceRecorder", "ObsTraceAnalysis"]),
    // Replay: a model of Observation run over a trace, and the facts every command prints.
    .target(name: "ObsTraceAnalysis", dependencies: ["ObsTraceFormat"]),
    // The CLI's commands, as a library so that tests can run them in-process.
    .target(name: "ObsTraceCommands", dependencies: ["ObsTraceFormat", "ObsTraceAnalysis", "ObsTraceSymbols"]),
    .executableTarget(name: "obstrace-cli", dependencies: ["ObsTraceCommands"]),

    // Fixtures: models declared in their own modules (another module, Swift 6 language mode).
    .target(name: "ObsTraceFixtureModels", dependencies: ["ObsTrace"], path: "Tests/Fixtures/ObsTraceFixtureModels"),
    // A view module that tracks with Observation directly, without `import ObsTrace` (untraced tracking), and its
    // twin with the import.
    .target(
      name: "ObsTraceFixtureViews", dependencies: ["ObsTraceFixtureModels"], path: "Tests/Fixtures/ObsTraceFixtureViews"
    ),
    .target(
      name: "ObsTraceFixtureTracedViews", dependencies: ["ObsTrace", "ObsTraceFixtureModels"],
      path: "Tests/Fixtures/ObsTraceFixtureTracedViews"),
    .executableTarget(
      name: "obstrace-demo", dependencies: ["ObsTrace"], path: "Examples/obstrace-demo",
      swiftSettings: [.define("OBSTRACE")]),
    .executableTarget(name: "obstrace-demo-untraced", path: "Examples/obstrace-demo-untraced"),
    .executableTarget(
      name: "obstrace-observations", dependencies: ["ObsTrace"], path: "Examples/obstrace-observations",
      swiftSettings: [.define("OBSTRACE")]),
    .executableTarget(name: "obstrace-observations-untraced", path: "Examples/obstrace-observations-untraced"),
    .executableTarget(
      name: "obstrace-fidelity", dependencies: ["ObsTrace"], path: "Examples/obstrace-fidelity",
      swiftSettings: [.define("OBSTRACE")]),
    .executableTarget(name: "obstrace-fidelity-untraced", path: "Examples/obstrace-fidelity-untraced"),
    .executableTarget(name: "obstrace-labels", dependencies: ["ObsTrace"], path: "Examples/obstrace-labels"),
    .executableTarget(name: "obstrace-scenarios", dependencies: ["ObsTrace"], path: "Examples/obstrace-scenarios"),

    .target(name: "ObsTraceTestSupport", path: "Tests/Support/ObsTraceTestSupport"),
    // The benchmark (scripts/bench, release builds): what tracing costs, side by side.
    .target(name: "CObsTraceBench", dependencies: ["CObsTraceRing"], path: "Benchmarks/CObsTraceBench"),
    // The bench's medians, ranges and verdicts, apart so that tests can check the rule.
    .target(name: "ObsTraceBenchStatistics", path: "Benchmarks/ObsTraceBenchStatistics"),
    .executableTarget(
      name: "obstrace-bench",
      dependencies: ["ObsTrace", "CObsTraceBench", "CObsTraceRing", "ObsTraceFormat", "ObsTraceBenchStatistics"],
      path: "Benchmarks/obstrace-bench", swiftSettings: [.swiftLanguageMode(.v5)]),

    .testTarget(name: "ObsTraceFormatTests", dependencies: ["ObsTraceFormat"], exclude: ["Fixtures"]),
    .testTarget(
      name: "ObsTraceTests",
      dependencies: [
        "ObsTrace", "ObsTraceTesting", "ObsTraceFixtureModels", "ObsTraceFixtureViews", "ObsTraceFixtureTracedViews",
        "ObsTraceTestSupport",
      ]),
    .testTarget(name: "ObsTraceXCTests", dependencies: ["ObsTrace", "ObsTraceTesting", "ObsTraceFixtureModels"]),
    .testTarget(
      name: "ObsTraceRecorderTests",
      dependencies: [
        "ObsTrace", "ObsTraceTesting", "ObsTraceRecorder", "ObsTraceFormat", "ObsTraceFixtureModels",
        "ObsTraceTestSupport", "CObsTraceRing", "ObsTraceSymbols",
      ]
    ),
    .testTarget(name: "ObsTraceAnalysisTests", dependencies: ["ObsTraceAnalysis", "ObsTraceFormat"]),
    .testTarget(name: "ObsTraceBenchStatisticsTests", dependencies: ["ObsTraceBenchStatistics"]),
    .testTarget(
      name: "ObsTraceCommandsTests", dependencies: ["ObsTraceCommands", "ObsTraceFormat", "ObsTraceTestSupport"],
      exclude: ["Goldens"]),
  ],
  swiftLanguageModes: [.v6]
)
