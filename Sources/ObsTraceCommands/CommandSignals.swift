import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What `obstrace record` does with signals while its command runs, as `time` and shells do: Ctrl-C (SIGINT) and
/// SIGQUIT, which a terminal sends to the whole foreground group, reach the command and not record (it ignores them
/// until the command ends, then summarizes the trace the command left); SIGTERM sent to record is passed on to the
/// command, whose end record then waits for and summarizes. The command starts with these signals at
/// their defaults (an ignored signal stays ignored through exec), unless record was started with one ignored (a
/// background job of a shell without job control): then the command ignores it too.
struct CommandSignals {
  /// The signals ignored while the command runs.
  static let ignored: [Int32] = [SIGINT, SIGQUIT]
  /// The signals passed on to the command.
  static let forwarded: [Int32] = [SIGTERM]

  /// The command's process id while it runs (0 before and after): where the handler sends what it forwards.
  private static let child = Atomic<Int32>(0)
  /// A signal to forward that came before the command had a process id.
  private static let pending = Atomic<Int32>(0)
  /// The last signal record forwarded (0: none).
  private static let received = Atomic<Int32>(0)

  /// The dispositions before `install`, by signal, restored by `restore`.
  private var previous: [(signal: Int32, action: sigaction)] = []
  /// The signals the command starts with at their default disposition.
  private(set) var defaultsForCommand = sigset_t()

  /// Ignores the interrupting signals and forwards the terminating ones until `restore`.
  static func install() -> CommandSignals {
    var installed = CommandSignals()
    sigemptyset(&installed.defaultsForCommand)
    // Touched once before any handler can run: a static is initialized on first use, which a handler must not be.
    child.store(0, ordering: .relaxed)
    pending.store(0, ordering: .relaxed)
    received.store(0, ordering: .relaxed)
    for signal in ignored + forwarded {
      var old = sigaction()
      // A signal record was started with ignored stays ignored, by record and the command alike.
      guard sigaction(signal, nil, &old) == 0,
        unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self)
      else { continue }
      var action = sigaction()
      sigemptyset(&action.sa_mask)
      if forwarded.contains(signal) {
        action.__sigaction_handler.sa_handler = { signal in CommandSignals.forward(signal) }
      } else {
        action.__sigaction_handler.sa_handler = SIG_IGN
      }
      guard sigaction(signal, &action, nil) == 0 else { continue }
      installed.previous.append((signal, old))
      sigaddset(&installed.defaultsForCommand, signal)
    }
    return installed
  }

  /// Runs in the signal handler: only atomics and `kill`, which are async-signal-safe.
  private static func forward(_ signal: Int32) {
    received.store(signal, ordering: .relaxed)
    let process = child.load(ordering: .relaxed)
    if process > 0 {
      kill(process, signal)
    } else {
      pending.store(signal, ordering: .relaxed)
    }
  }

  /// The command runs as `process`: a signal that came while it was being started is passed on now.
  func started(_ process: pid_t) {
    Self.child.store(process, ordering: .relaxed)
    let early = Self.pending.exchange(0, ordering: .relaxed)
    if early != 0 { kill(process, early) }
  }

  /// The command ended (it is reaped): nothing more is forwarded to its process id, which may be reused.
  func ended() {
    Self.child.store(0, ordering: .relaxed)
  }

  /// The signal record passed on to the command, if it got one.
  var forwardedSignal: Int32? {
    let signal = Self.received.load(ordering: .relaxed)
    return signal == 0 ? nil : signal
  }

  /// Puts back the dispositions record had: a Ctrl-C during the summary stops record.
  func restore() {
    for (signal, action) in previous {
      var old = action
      sigaction(signal, &old, nil)
    }
  }

  /// `SIGINT`, or `signal 42`.
  static func name(_ signal: Int32) -> String {
    let names: [Int32: String] = [
      SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
      SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
      SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
      SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGSYS: "SIGSYS",
    ]
    return names[signal] ?? "signal \(signal)"
  }
}
