// A program that execs another while it records: the new program must inherit only the descriptors the untraced
// program would pass on. Built by Tests/ObsTraceCommandsTests/ForkTests.swift with -DOBSTRACE (traced) and without
// (Observation alone), -Onone and -O; both print the same.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Box {
  var n = 0
}

let box = Box()
// A write through _modify: recording, its key path's getter is named now, so the symbol session has opened the
// binary before the exec.
box.n += 1
print("n \(box.n)")
fflush(nil)
// The shell counts its descriptors on this program's own binary or a shared library (what a symbol session opens),
// not all of them: the test runner's other tests may hand a child a pipe of theirs for a moment.
var exe = [CChar](repeating: 0, count: 4096)
let length = readlink("/proc/self/exe", &exe, exe.count - 1)
let path = String(decoding: exe.prefix(max(0, length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
let script = #"ls -l /proc/$$/fd | grep -c -E -- "-> ($1|.*\.so(\.[0-9]+)*)$"; exit 0"#
let arguments = ["sh", "-c", script, "sh", path]
var pointers = arguments.map { strdup($0) } + [nil]
execv("/bin/sh", &pointers)
print("exec failed")
