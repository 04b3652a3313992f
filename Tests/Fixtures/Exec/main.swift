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
// The shell lists its own descriptors (what it inherited, and the pipe to wc).
let arguments = ["sh", "-c", "ls /proc/$$/fd | wc -l"]
var pointers = arguments.map { strdup($0) } + [nil]
execv("/bin/sh", &pointers)
print("exec failed")
