// swift-tools-version:6.1
// A package that links ObsTrace only in test builds, through a package trait: `swift test --traits ObsTrace`
// traces its models; a plain `swift build` does not even build ObsTrace. See the README's "In CI".
import PackageDescription

let obsTrace = Target.Dependency.product(name: "ObsTrace", package: "ObsTrace", condition: .when(traits: ["ObsTrace"]))
// recordObservation, for the tests only: it links Swift Testing and the replay, which the models never need.
let obsTraceTesting = Target.Dependency.product(
  name: "ObsTraceTesting", package: "ObsTrace", condition: .when(traits: ["ObsTrace"]))

let package = Package(
  name: "CISample",
  traits: [.trait(name: "ObsTrace", description: "Trace the models' Observation with ObsTrace (test builds only).")],
  dependencies: [.package(name: "ObsTrace", path: "../..")],
  targets: [
    .target(name: "TodoModel", dependencies: [obsTrace]),
    .testTarget(name: "TodoModelTests", dependencies: ["TodoModel", obsTrace, obsTraceTesting]),
  ],
  swiftLanguageModes: [.v6]
)
