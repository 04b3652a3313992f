// A model reflected as a snapshot test or a debugger would: `dump` and `Mirror`. Built by
// Tests/ObsTraceCommandsTests/ForkTests.swift with -DOBSTRACE (traced) and without (Observation alone), -Onone and
// -O; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

@Observable final class Profile {
  var name = "Ada"
  var visits = 3
}

let profile = Profile()
profile.visits += 1
var text = ""
dump(profile, to: &text)
// The runtime names private contexts by address ("unknown context at $7f…"), which differs from run to run.
print(text.replacing(#/\$[0-9a-f]+/#, with: "$…"), terminator: "")
let registrar = Mirror(reflecting: profile).children.first { $0.label == "_$observationRegistrar" }
let children = registrar.map { Mirror(reflecting: $0.value).children.compactMap(\.label) } ?? []
print("registrar children: \(children.joined(separator: ", "))")
