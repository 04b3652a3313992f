import CObsTraceRing

/// Where the recorder's first-use work runs: naming a key path or a type (the runtime's printing and reflection),
/// finding a property's stored field or a call's line (libdw). That work happens once per key path, type or call
/// site, on the thread that first meets it, and takes tens of kilobytes of stack: a thread made with a small stack
/// (a worker of 32–40 KiB) that runs fine untraced crashed when recording if it was the first to touch a model (a
/// fresh-clone try-out's F13). A thread with less than `needed` left runs the work on a thread of its own, with a
/// stack of `size`, and waits for it; one with enough runs it in place, as before.
enum RoomyStack {
  static let needed = 256 << 10
  static let size = 8 << 20

  static func run<T>(_ body: () -> T) -> T {
    if obstrace_stack_left() >= needed { return body() }
    var result: T?
    let ran = withoutActuallyEscaping({ result = body() }) { work -> Bool in
      let job = Job(work)
      return withExtendedLifetime(job) {
        obstrace_run_with_stack(runJob, Unmanaged.passUnretained(job).toOpaque(), size)
      }
    }
    // No thread could be made: the work runs here, as it always did.
    guard ran, let result else { return body() }
    return result
  }

  private final class Job {
    let work: () -> Void
    init(_ work: @escaping () -> Void) { self.work = work }
  }

  private static let runJob: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    guard let context else { return }
    Unmanaged<Job>.fromOpaque(context).takeUnretainedValue().work()
  }
}
