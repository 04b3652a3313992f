import ObsTraceRecorder

/// Runs a closure the way SwiftUI runs a view's body, for testing models meant for SwiftUI where SwiftUI does
/// not exist: `render()` runs it under tracking (a scope labelled with the harness's name); a change to what it
/// read marks it dirty, once, as SwiftUI invalidates a view's node; `flush()` re-runs it if dirty, as the next
/// transaction would. It counts runs and invalidations.
///
///     let row = RenderHarness("Row.body") { model.title }
///     row.render()
///     model.title = "new"   // row.isDirty == true
///     row.flush()           // runs the body again: row.runs == 2
///
/// The body runs only on the thread that calls `render()`; only the change handler (any thread) touches shared
/// state, under a lock: hence `@unchecked Sendable` with a non-Sendable body, as models usually are.
public final class RenderHarness<Output>: @unchecked Sendable {
  public let name: String
  private let body: () -> Output
  private let state = LockedValue(State())
  /// Every render continues this one instance in the trace, whatever it reads.
  private let instance = TracedTracking.newInstance()

  struct State {
    var runs = 0
    var invalidations = 0
    var dirty = false
  }

  /// A harness for `body`; nothing runs until `render()`.
  public init(_ name: String, body: @escaping () -> Output) {
    self.name = name
    self.body = body
  }

  /// Times the body ran.
  public var runs: Int { state.withLock { $0.runs } }
  /// Times a change invalidated it (at most once per render, as for a view).
  public var invalidations: Int { state.withLock { $0.invalidations } }
  /// Whether a change invalidated it since it last ran.
  public var isDirty: Bool { state.withLock { $0.dirty } }

  /// Runs the body under tracking and returns what it produced.
  @discardableResult
  public func render() -> Output {
    state.withLock {
      $0.runs += 1
      $0.dirty = false
    }
    // Not recording, Observation's function alone, from this frame: a harness rendered inside another's body adds
    // this frame to the stack, and recording, `renderRecorded`'s.
    guard TracedTracking.isRecording else {
      // Weak: the model's registrar holds this handler; a strong harness would keep the model alive through its
      // body.
      return TracedTracking.untraced(body) { { [weak self] in self?.invalidated() } }
    }
    return renderRecorded()
  }

  /// `render()` recording: the body run as a scope labelled with the harness's name, continuing its one instance.
  @inline(never)
  private func renderRecorded() -> Output {
    TracedTracking.withObservationTracking(
      body,
      onChange: { [weak self] in
        self?.invalidated()
      }, label: .name(name), instance: .continuing(instance))
  }

  private func invalidated() {
    state.withLock {
      $0.invalidations += 1
      $0.dirty = true
    }
  }

  /// Runs the body again if a change invalidated it; returns whether it ran.
  @discardableResult
  public func flush() -> Bool {
    guard isDirty else { return false }
    render()
    return true
  }
}
