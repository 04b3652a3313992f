// A program that, while it records, closes every descriptor it did not open (as a daemon does) and then opens a
// file of its own, which gets the number the trace's descriptor had. Built by
// Tests/ObsTraceCommandsTests/DescriptorTests.swift with -DOBSTRACE (traced) and without (Observation alone), -Onone
// and -O; both print the same, and the program's file holds only what it wrote.
#if OBSTRACE
  import ObsTrace
#endif
import Foundation
import Observation

@Observable final class Shared {
  var hits = 0
}

let shared = Shared()
shared.hits = 1
for descriptor in Int32(3)..<1024 { close(descriptor) }
let file = open(CommandLine.arguments[1], O_CREAT | O_WRONLY | O_TRUNC, 0o644)
let data = Array("USER DATA\n".utf8)
print("opened \(file >= 0), wrote \(write(file, data, data.count))")
// Enough events for the flusher to write chunks while the file is open (and the stop writes at exit).
for _ in 0..<200_000 { shared.hits += 1 }
print("hits \(shared.hits)")
