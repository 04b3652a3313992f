// A program that replaces itself by exec while recording (no fork: the same process, the same pid), as tryout16's
// ExecSelf (P9): the first image tracks a model and writes it 10 times, then execs itself with "second", which does
// the same with 20 writes. Built by Tests/ObsTraceCommandsTests/ExecSelfTests.swift with -DOBSTRACE (traced) and
// without; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Model {
  var value = 0
}

final class Box: @unchecked Sendable { var fires = 0 }

let second = CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "second"
let model = Model()
let box = Box()
withObservationTracking { _ = model.value } onChange: { box.fires += 1 }
for _ in 0..<(second ? 20 : 10) { model.value += 1 }
print("\(second ? "second" : "first") image: value \(model.value), fires \(box.fires)")
fflush(nil)
if !second {
  var exe = [CChar](repeating: 0, count: 4096)
  let length = readlink("/proc/self/exe", &exe, exe.count - 1)
  let path = String(decoding: exe.prefix(max(0, length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  var arguments = [strdup(path), strdup("second"), nil]
  execv(path, &arguments)
  print("exec failed")
}
