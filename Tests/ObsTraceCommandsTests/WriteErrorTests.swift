import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Output that cannot be written (a full disk: /dev/full fails every write with ENOSPC) is a failed command: one line
/// naming the file, or standard output, exit 2, and no "wrote". In CI a cut baseline or JUnit file must not pass.
@Suite("Write errors")
struct WriteErrorTests {
  static let trace = Paths.root + "/traces/guide.trc"

  /// Whether `path` is still a character device: a command that renames a file over /dev/full (or removes it)
  /// leaves a regular file there, and every later write to it succeeds.
  static func isDevice(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR
  }

  @Test(
    "-o /dev/full: one line 'cannot write /dev/full (No space left on device)', exit 2, the device left a device",
    arguments: [
      ["baseline", trace, "-o", "/dev/full"],
      ["symbolize", trace, "-o", "/dev/full"],
      ["report", trace, "-o", "/dev/full"],
      ["report", trace, "--format", "json", "-o", "/dev/full"],
      ["report", trace, "--format", "html", "-o", "/dev/full"],
      ["export", trace, "--format", "perfetto", "-o", "/dev/full"],
      ["export", trace, "--format", "chrome-json", "-o", "/dev/full"],
      ["check", trace, "--max", "Model.property:writes<=100", "--format", "junit", "-o", "/dev/full"],
    ])
  func fullOutputFile(arguments: [String]) throws {
    try #require(Self.isDevice("/dev/full"), "/dev/full is not a device on this machine")
    let result = Run.command(arguments)
    #expect(result.status == 2)
    #expect(result.standardOutput.isEmpty)
    #expect(result.errorLines == ["obstrace \(arguments[0]): cannot write /dev/full (No space left on device)"])
    #expect(Self.isDevice("/dev/full"))
  }

  @Test(
    "standard output on a full disk: the command says it could not write standard output, exit 2",
    arguments: [
      ["report", trace],
      ["report", trace, "--format", "json"],
      ["report", Paths.root + "/traces/noop-modify-worse.trc", "--format", "github"],
      ["timeline", trace],
      ["dump", trace],
      ["graph", "--dot", trace],
      ["baseline", trace],
      ["check", trace, "--max", "Model.property:writes<=100"],
      ["check", trace, "--max", "Model.property:writes<=100", "--format", "junit"],
      ["symbolize", trace, "-o", "/dev/stdout"],
    ])
  func fullStandardOutput(arguments: [String]) throws {
    try #require(Self.isDevice("/dev/full"), "/dev/full is not a device on this machine")
    let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let result = try Run.program("obstrace", arguments, standardOutput: full)
    #expect(result.status == 2)
    let expected =
      arguments.contains("/dev/stdout")
      ? "obstrace symbolize: cannot write /dev/stdout (No space left on device)"
      : "obstrace \(arguments[0]): cannot write standard output (No space left on device)"
    #expect(result.errorLines == [expected])
    #expect(!result.standardError.contains("wrote"))
    #expect(Self.isDevice("/dev/full"))
  }

  @Test("a directory as -o is said to be one, not with Foundation's error domain")
  func directoryAsOutput() {
    let directory = NSTemporaryDirectory()
    for arguments in [
      ["baseline", Self.trace, "-o", directory], ["report", Self.trace, "-o", directory],
      ["export", Self.trace, "-o", directory],
    ] {
      let result = Run.command(arguments)
      #expect(result.status == 2)
      #expect(result.errorLines == ["obstrace \(arguments[0]): cannot write \(directory) (Is a directory)"])
    }
  }

  @Test("-o in a folder that does not exist: one line naming the path, exit 2")
  func missingFolder() {
    let path = Paths.temporary("x") + "/missing/out.json"
    for arguments in [
      ["baseline", Self.trace, "-o", path], ["report", Self.trace, "-o", path], ["export", Self.trace, "-o", path],
      ["symbolize", Self.trace, "-o", path],
    ] {
      let result = Run.command(arguments)
      #expect(result.status == 2)
      #expect(result.errorLines == ["obstrace \(arguments[0]): cannot write \(path) (No such file or directory)"])
    }
  }

  @Test(
    "a write that fails half way (the file-size limit) leaves the old file whole and nothing beside it",
    arguments: [
      ["export", trace, "--format", "chrome-json"], ["report", trace, "--format", "json"], ["baseline", trace],
      ["symbolize", trace],
    ])
  func failsHalfWay(arguments: [String]) throws {
    let path = Paths.temporary("out")
    let old = String(repeating: "old\n", count: 10)
    try old.write(toFile: path, atomically: false, encoding: .utf8)
    // ulimit -f 1: no file grows past one 512-byte block (a write fails with EFBIG once SIGXFSZ is ignored); the
    // output of each of these is larger.
    let command = ([Paths.binary("obstrace")] + arguments + ["-o", path]).map { "'\($0)'" }.joined(separator: " ")
    let result = try Run.program("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 1; exec \(command)"])
    #expect(result.status == 2)
    #expect(result.errorLines == ["obstrace \(arguments[0]): cannot write \(path) (File too large)"])
    #expect(try String(contentsOfFile: path, encoding: .utf8) == old)
    let folder = (path as NSString).deletingLastPathComponent
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["out"])
    // Without the limit the same command writes more than 512 bytes: the limit is what failed it.
    let whole = Run.command(arguments + ["-o", path])
    #expect(whole.status == 0)
    var status = stat()
    #expect(stat(path, &status) == 0 && status.st_size > 512)
  }

  @Test("-o naming a file the command reads (by any name): one line, exit 2, the file untouched")
  func outputIsAnInput() throws {
    let trace = Paths.temporary("run.trc")
    let folder = (trace as NSString).deletingLastPathComponent
    try FileManager.default.copyItem(atPath: Self.trace, toPath: trace)
    let link = folder + "/link.trc"
    #expect(symlink(trace, link) == 0)
    let baseline = folder + "/baseline.json"
    #expect(Run.command(["baseline", trace, "-o", baseline]).status == 0)
    let traceBytes = try Data(contentsOf: URL(fileURLWithPath: trace))
    let baselineBytes = try Data(contentsOf: URL(fileURLWithPath: baseline))
    for (arguments, output, what, input) in [
      (["report", trace], trace, "the trace", trace), (["report", trace, "--format", "html"], link, "the trace", trace),
      (["export", link], trace, "the trace", link), (["baseline", trace], link, "the trace", trace),
      (["check", trace, "--baseline", baseline, "--format", "junit"], trace, "the trace", trace),
      (["check", trace, "--baseline", baseline, "--format", "junit"], baseline, "the baseline", baseline),
    ] {
      let result = Run.command(arguments + ["-o", output])
      #expect(result.status == 2)
      #expect(
        result.errorLines == [
          "obstrace \(arguments[0]): -o \(output) would replace \(what) it reads (\(input)); give another path"
        ])
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: trace)) == traceBytes)
    #expect(try Data(contentsOf: URL(fileURLWithPath: baseline)) == baselineBytes)
    // symbolize replaces its input by design (its default output).
    #expect(Run.command(["symbolize", trace, "-o", trace]).status == 0)
  }

  @Test("-o naming a symbolic link writes the file it names; the link stays a link")
  func throughSymbolicLink() throws {
    let path = Paths.temporary("real.json")
    let folder = (path as NSString).deletingLastPathComponent
    try "old".write(toFile: path, atomically: false, encoding: .utf8)
    let link = folder + "/link.json"
    #expect(symlink(path, link) == 0)
    let result = Run.command(["baseline", Self.trace, "-o", link])
    #expect(result.status == 0)
    var status = stat()
    #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == Run.command(["baseline", Self.trace]).standardOutput)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["link.json", "real.json"])
  }

  @Test("baseline -o says what it wrote, each count with its noun in the singular or plural")
  func wroteCounts() throws {
    for (name, counts) in [("noop-modify", "1 property, 1 scope"), ("guide", "2 properties, 2 scopes")] {
      let path = Paths.temporary("\(name)-counts.json")
      let result = Run.command(["baseline", Paths.root + "/traces/\(name).trc", "-o", path])
      #expect(result.standardError == "obstrace baseline: wrote \(path) (\(counts))\n")
    }
  }

  @Test("a written file replaces the old one whole, keeps its permissions, and leaves nothing beside it")
  func replacesWhole() throws {
    let path = Paths.temporary("baseline.json")
    try "old".write(toFile: path, atomically: false, encoding: .utf8)
    #expect(chmod(path, 0o640) == 0)
    let result = Run.command(["baseline", Self.trace, "-o", path])
    #expect(result.status == 0)
    #expect(result.errorLines.count == 1 && result.standardError.hasPrefix("obstrace baseline: wrote \(path) ("))
    let written = try String(contentsOfFile: path, encoding: .utf8)
    #expect(written == Run.command(["baseline", Self.trace]).standardOutput)
    var status = stat()
    #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o640)
    let folder = (path as NSString).deletingLastPathComponent
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["baseline.json"])
  }

  @Test("record -o naming a device or a FIFO is refused before the command runs: one line, exit 2, the file left")
  func recordOnDevice() throws {
    try #require(Self.isDevice("/dev/full"), "/dev/full is not a device on this machine")
    let fifo = Paths.temporary("record.fifo")
    unlink(fifo)
    try #require(mkfifo(fifo, 0o644) == 0)
    for (path, kind) in [("/dev/full", "a character device"), ("/dev/null", "a character device"), (fifo, "a FIFO")] {
      // Under `timeout -s KILL` (the runner's children inherit SIGTERM blocked): opening the FIFO blocked record.
      let result = try Run.program(
        "/usr/bin/timeout",
        ["-s", "KILL", "60", Paths.binary("obstrace"), "record", "-o", path, "--", "/bin/sh", "-c", "echo ran"])
      #expect(result.status == 2)
      #expect(result.standardOutput.isEmpty)
      #expect(
        result.errorLines == [
          "obstrace record: -o \(path) is \(kind), not a regular file; give the trace file's path"
        ])
    }
    #expect(Self.isDevice("/dev/full"))
    var status = stat()
    #expect(stat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
  }


  @Test("the recorder whose trace file fails to close (a late I/O error): one line, the program prints the same")
  func recorderCloseFails() throws {
    // A late I/O error (NFS, a quota) that only close(2) reports, without such a file system: a preloaded close()
    // closes the trace file, then fails with EIO, as such a file system's would. Other descriptors close as usual.
    let folder = Paths.temporary("close-fails")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let shim = folder + "/libclosefails.so"
    try #"""
    #define _GNU_SOURCE
    #include <dlfcn.h>
    #include <errno.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>
    int close(int descriptor) {
      static int (*real)(int);
      if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "close");
      const char *failing = getenv("CLOSE_FAILS_FOR");
      char link[64], target[4096];
      snprintf(link, sizeof link, "/proc/self/fd/%d", descriptor);
      ssize_t length = readlink(link, target, sizeof target - 1);
      int fails = 0;
      if (failing && length > 0) {
        target[length] = 0;
        fails = strcmp(target, failing) == 0;
      }
      int result = real(descriptor);
      if (fails && result == 0) {
        errno = EIO;
        return -1;
      }
      return result;
    }
    """#.write(toFile: folder + "/closefails.c", atomically: true, encoding: .utf8)
    let compiled = try Run.program(
      "/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", shim, folder + "/closefails.c", "-ldl"])
    try #require(compiled.status == 0, "\(compiled.standardError)")
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let path = folder + "/run.trc"
    let traced = try Run.program(
      "obstrace-demo", [], environment: ["OBSTRACE_OUTPUT": path, "LD_PRELOAD": shim, "CLOSE_FAILS_FOR": path])
    #expect(traced.status == 0)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(
      traced.standardError
        == "obstrace: \(path): cannot close the trace file (Input/output error); what was written may not all be in it\n")
    // The shim did close it: the trace is whole, as far as this file system goes.
    let report = Run.command(["report", path])
    #expect(report.status == 0 && !report.standardOutput.contains("TRUNCATED"), "\(report.standardOutput)")
  }

  @Test("the recorder whose file cannot grow (a file size limit, as a full disk): one line, the program prints the same")
  func recorderOnFullDisk() throws {
    // A full disk mid-run, without filling one: `ulimit -f 1` makes every write past the first KiB fail (EFBIG; the
    // SIGXFSZ it would raise is ignored by the shell, and the ignore is inherited). /dev/full is refused as a device
    // before anything is written (EndToEndTests.outputNotARegularFile).
    let untraced = try Run.program("obstrace-demo-untraced", [])
    let path = Paths.temporary("limited.trc")
    unlink(path)
    let traced = try Run.program(
      "/bin/bash", ["-c", "trap '' XFSZ; ulimit -f 1; exec \"$0\"", Paths.binary("obstrace-demo")],
      environment: ["OBSTRACE_OUTPUT": path])
    #expect(traced.status == 0)
    #expect(traced.standardOutput == untraced.standardOutput)
    #expect(traced.errorLines.count == 1)
    #expect(traced.standardError.hasPrefix("obstrace: \(path): at byte "))
    #expect(
      traced.standardError.hasSuffix(
        ": cannot write the trace file (File too large); recording stopped, the program goes on untraced\n"))
    // What was written before the failure is read as a cut trace.
    let report = Run.command(["report", path])
    #expect(report.status == 0)
    #expect(report.standardOutput.contains("TRUNCATED"))
  }

}
