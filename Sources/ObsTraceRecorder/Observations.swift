import CObsTraceRing
import ObsTraceFormat
import Synchronization

/// Observation's `Observations`, traced: the same API and the same behaviour, with each value's run recorded as
/// a scope of kind `observations` (labelled with the sequence's call site, or a name), the write that woke it,
/// the actor it ran on, and how the sequence ended.
///
/// In a file that imports ObsTrace, `Observations` is this type. It follows Observation's own implementation
/// (stdlib/public/Observation/Sources/Observation/Observations.swift, the path before Swift 6.4): one tracking
/// per value, on the closure's isolation; a change resumes the waiting iterators or, if none waits, marks the
/// sequence dirty; a burst of writes in one turn of the writer's actor therefore yields one value.
public struct Observations<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
  public enum Iteration: Sendable {
    case next(Element)
    case finish
  }

  /// The waiting iterators and the dirty flag, shared by every iterator of the sequence.
  final class Shared: Sendable {
    let state = LockedValue(State())
  }

  struct State {
    enum Continuation {
      case cancelled
      case active(UnsafeContinuation<Void, Never>)

      func resume() {
        if case .active(let continuation) = self { continuation.resume() }
      }
    }

    var id = 0
    var continuations: [Int: Continuation] = [:]
    var dirty = false

    static func generation(_ shared: Shared) -> Int {
      shared.state.withLock { state in
        defer { state.id &+= 1 }
        return state.id
      }
    }

    /// Cancelling a wait only resumes it early; the iterator then sees the task cancelled.
    static func cancel(_ shared: Shared, id: Int) {
      shared.state.withLock { state -> Continuation? in
        guard let continuation = state.continuations.removeValue(forKey: id) else {
          state.continuations[id] = .cancelled  // a tombstone: the wait that starts later resumes at once
          return nil
        }
        return continuation
      }?.resume()
    }

    /// A change: resume every waiting iterator, or mark the sequence dirty when none waits.
    static func emitWillChange(_ shared: Shared) {
      let continuations = shared.state.withLock { state in
        if state.continuations.isEmpty { state.dirty = true }
        defer { state.continuations.removeAll() }
        return Array(state.continuations.values)
      }
      for continuation in continuations { continuation.resume() }
    }

    static func willChange(isolation iterationIsolation: isolated (any Actor)? = #isolation, shared: Shared, id: Int)
      async
    {
      await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
        shared.state.withLock { state -> UnsafeContinuation<Void, Never>? in
          defer { state.dirty = false }
          switch state.continuations[id] {
          case .cancelled:
            return continuation
          case .active:
            fatalError("Iterator incorrectly shared across task isolations")
          case nil:
            if state.dirty { return continuation }
            state.continuations[id] = .active(continuation)
            return nil
          }
        }?.resume()
      }
    }
  }

  /// The closure, of either form; `@isolated(any)` closures cannot be composed, so both are kept as given.
  enum Emit: Sendable {
    case iteration(@isolated(any) @Sendable () throws(Failure) -> Iteration)
    case element(@isolated(any) @Sendable () throws(Failure) -> Element)

    var isolation: (any Actor)? {
      switch self {
      case .iteration(let closure): closure.isolation
      case .element(let closure): closure.isolation
      }
    }
  }

  let shared: Shared
  let emit: Emit
  /// What labels every run: a name, or the call site of the initializer (found whether recording or not: a sequence
  /// made before `Recorder.start` is labelled by its line too). Interned at the first run that is recorded, not here: a sequence of a program that is not
  /// recording must do nothing but what Observation's own does (interning walks the stack and gives the thread a
  /// ring, megabytes zeroed, on the thread that creates the sequence).
  let name: String?
  let callSite: UInt

  init(emit: Emit, name: String?, callSite: UInt = 0) {
    self.emit = emit
    self.shared = Shared()
    Recorder.startFromEnvironmentIfNeeded()
    self.name = name
    self.callSite = callSite
  }

  /// A sequence of the values of `emit`: the first at once, then one each time something it read changes.
  @inline(never)  // its frame is where its call site is found
  public init(@_inheritActorContext _ emit: @escaping @isolated(any) @Sendable () throws(Failure) -> Element) {
    Recorder.startFromEnvironmentIfNeeded()
    self.init(emit: .element(emit), name: nil, callSite: CallSite.returnAddressOfCallerWithoutRing())
  }

  /// The same, with runs labelled `name` in traces instead of the call site.
  public init(
    named name: String, @_inheritActorContext _ emit: @escaping @isolated(any) @Sendable () throws(Failure) -> Element
  ) {
    self.init(emit: .element(emit), name: name)
  }

  /// A sequence that ends when `emit` returns `.finish` (or throws).
  @inline(never)  // its frame is where its call site is found
  public static func untilFinished(
    @_inheritActorContext _ emit: @escaping @isolated(any) @Sendable () throws(Failure) -> Iteration
  ) -> Observations<Element, Failure> {
    Recorder.startFromEnvironmentIfNeeded()
    return Observations(emit: .iteration(emit), name: nil, callSite: CallSite.returnAddressOfCallerWithoutRing())
  }

  /// `untilFinished` with runs labelled `name`.
  public static func untilFinished(
    named name: String, @_inheritActorContext _ emit: @escaping @isolated(any) @Sendable () throws(Failure) -> Iteration
  ) -> Observations<Element, Failure> {
    Observations(emit: .iteration(emit), name: name)
  }

  public struct Iterator: AsyncIteratorProtocol {
    /// Nil once the sequence ended for this iterator.
    var shared: Shared?
    let emit: Emit
    let name: String?
    let callSite: UInt
    /// The label of this iterator's runs, interned at its first recorded run; 0 until then.
    var label: UInt32 = 0
    var started = false
    /// Shared by the iterator's copies made after its first recorded run: this iterator's serial (its runs are
    /// one instance in the trace) and its last run; when the last copy goes away before the sequence ended for it
    /// (a loop that left by `break`), the trace says so. Nil until a run is recorded: an iterator of a program that
    /// is not recording allocates nothing Observation's own would not.
    var lifetime: IteratorLifetime?

    /// Runs the closure under tracking on its own isolation, as a run of this sequence: what it returned or threw
    /// (Observation installs the tracking of a run that read something either way), and the run's scope.
    fileprivate static func trackEmission(
      isolation trackingIsolation: isolated (any Actor)?, shared: Shared, emit: Emit, label: ScopeLabel,
      sequence: UInt32
    ) -> (Result<Iteration, Failure>, UInt32) {
      let (result, scope) = TracedTracking.track(
        .observations, label, instance: .continuing(sequence), sequence: sequence,
        isolation: trackingIsolation
      ) { () -> Result<Iteration, Failure> in
        do throws(Failure) {
          switch emit {
          case .element(let element):
            return .success(.next(try ElementClosure(element).toSynchronous()()))
          case .iteration(let iteration):
            return .success(try IterationClosure(iteration).toSynchronous()())
          }
        } catch {
          return .failure(error)
        }
      } onChange: { [shared] in
        State.emitWillChange(shared)
      }
      return (result, scope)
    }

    fileprivate mutating func terminate(throwing failure: Failure? = nil, id: Int, _ ending: SequenceEnding)
      throws(Failure) -> Element?
    {
      shared?.state.withLock { $0.continuations.removeValue(forKey: id) }?.resume()
      if shared != nil {
        lifetime?.end(ending)
      }
      shared = nil
      if let failure { throw failure }
      return nil
    }

    fileprivate mutating func trackEmission(
      isolation iterationIsolation: isolated (any Actor)?, shared: Shared, id: Int
    ) async throws(Failure) -> Element? {
      guard !Task.isCancelled else { return try terminate(id: id, .cancelled) }
      if obstrace_is_enabled() {
        if label == 0 { label = ScopeLabel.intern(name, callSite: callSite) }
        if lifetime == nil { lifetime = IteratorLifetime(sequence: TrackingScopes.nextSequenceSerial()) }
      }
      let (result, scope) = await Iterator.trackEmission(
        isolation: emit.isolation, shared: shared, emit: emit,
        label: label != 0 ? .interned(label) : name.map { .name($0) } ?? .callSite(callSite),
        sequence: lifetime?.sequence ?? 0)
      // A run that threw is the sequence's last run too: its tracking is installed if it read something, and the
      // sequence's end ends it (not the run before it, whose tracking fired to wake this one).
      if scope != 0 { lifetime?.lastRun = scope }
      let iteration: Iteration
      switch result {
      case .success(let value): iteration = value
      case .failure(let failure): throw failure
      }
      switch iteration {
      case .finish: return try terminate(id: id, .finished)
      case .next(let element): return element
      }
    }

    /// The next value: at once the first time, then after the next change (on the closure's isolation, after
    /// the writer's turn), or nil when the task is cancelled or the closure finished.
    public mutating func next(isolation iterationIsolation: isolated (any Actor)? = #isolation) async throws(Failure)
      -> Element?
    {
      guard let shared else { return nil }
      let id = State.generation(shared)
      do throws(Failure) {
        if !started {
          started = true
          return try await trackEmission(isolation: iterationIsolation, shared: shared, id: id)
        }
        await withTaskCancellationHandler {
          await State.willChange(isolation: iterationIsolation, shared: shared, id: id)
        } onCancel: {
          State.cancel(shared, id: id)
        }
        return try await trackEmission(isolation: iterationIsolation, shared: shared, id: id)
      } catch {
        return try terminate(throwing: error, id: id, .threw)
      }
    }

    // Calling an @isolated(any) closure synchronously once on its isolation, as Observation itself does: the
    // two function types share a representation.
    fileprivate struct ElementClosure {
      typealias Isolated = @isolated(any) @Sendable () throws(Failure) -> Element
      typealias Synchronous = () throws(Failure) -> Element
      let function: Isolated
      init(_ function: @escaping Isolated) { self.function = function }
      func toSynchronous() -> Synchronous { unsafeBitCast(self, to: Synchronous.self) }
    }

    fileprivate struct IterationClosure {
      typealias Isolated = @isolated(any) @Sendable () throws(Failure) -> Iteration
      typealias Synchronous = () throws(Failure) -> Iteration
      let function: Isolated
      init(_ function: @escaping Isolated) { self.function = function }
      func toSynchronous() -> Synchronous { unsafeBitCast(self, to: Synchronous.self) }
    }
  }

  public func makeAsyncIterator() -> Iterator {
    Iterator(shared: shared, emit: emit, name: name, callSite: callSite)
  }
}

/// How an `Observations` iterator ended, recorded once: by `next()` (cancelled, finished, threw) or, when the
/// iterator is released first, as abandoned.
final class IteratorLifetime: @unchecked Sendable {
  let sequence: UInt32
  /// Its last value's run; set by the iterator, which only one task uses at a time.
  var lastRun: UInt32 = 0
  private var ended = false

  init(sequence: UInt32) {
    self.sequence = sequence
  }

  func end(_ ending: SequenceEnding) {
    guard !ended else { return }
    ended = true
    guard lastRun != 0 else { return }
    // The last value's tracking stays installed in Observation until something it read changes; for the trace,
    // that run ends here. A last run whose tracking already fired (a change came before the iterator ended) or was
    // never installed (it read nothing) is cancelled all the same: the replay knows it and places the cancel.
    TrackingScopes.cancelled(lastRun, reason: EventFlags.cancelledBySequenceEnd)
    TrackingScopes.sequenceEnded(sequence, lastRun: lastRun, ending)
  }

  deinit {
    end(.abandoned)
  }
}
