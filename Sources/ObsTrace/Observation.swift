import ObsTraceRecorder
import Observation

// What `import ObsTrace` gives a model file and a test, and nothing of the engine: the registrar, the traced
// tracking and `Observations`, recording control, `recordObservation`, `RenderHarness` and their results. The
// engine's modules are imported, not re-exported (a test checks the surface: ExportedSurfaceTests).

/// The registrar the `@Observable` macro creates in a file that imports ObsTrace (through `Observation`).
public typealias TracingRegistrar = ObsTraceRecorder.TracingRegistrar
/// Starts and stops a recording to a file: `Recorder.start(to:options:)`, `Recorder.stop()`.
public typealias Recorder = ObsTraceRecorder.Recorder
/// What a recording records and how: backtraces, ring size, drop mode.
public typealias RecordingOptions = ObsTraceRecorder.RecordingOptions
/// How a write through `_modify` is compared to find writes that changed nothing (`RecordingOptions.comparison`,
/// `recordObservation(comparing:)`).
public typealias WriteComparison = ObsTraceRecorder.WriteComparison
/// What `Recorder.stop()` returns: the file and its totals.
public typealias RecordingSummary = ObsTraceRecorder.RecordingSummary
/// Why a recording could not start.
public typealias RecordingError = ObsTraceRecorder.RecordingError
/// ObsTrace's traced `Observations`, which behaves as Observation's and shadows it in files that import ObsTrace.
public typealias Observations<Element: Sendable, Failure: Error> = ObsTraceRecorder.Observations<Element, Failure>

/// The drop-in: in a file that imports ObsTrace, `Observation.X` resolves here before the real module, so the
/// `@Observable` macro's `Observation.ObservationRegistrar()` creates a `TracingRegistrar`, and every other
/// qualified name a user may write still reaches the real declaration.
public enum Observation {
  /// The registrar the `@Observable` macro creates: ObsTrace's, which records and forwards to the real one.
  public typealias ObservationRegistrar = TracingRegistrar
  /// The real `Observable` protocol (the macro's conformance).
  public typealias Observable = _ObservationObservable
  /// ObsTrace's traced `Observations`, which behaves as Observation's.
  public typealias Observations<Element: Sendable, Failure: Error> = ObsTraceRecorder.Observations<Element, Failure>

  /// `Observation.withObservationTracking(_:onChange:)`, traced; see the unqualified form.
  @_transparent  // inlined into the caller, whose code takes the call site (`CallSite.here()`)
  public static func withObservationTracking<T>(
    _ apply: () -> T, onChange: @autoclosure () -> @Sendable () -> Void
  ) -> T {
    TracedTracking.withObservationTracking(apply, onChange: onChange(), label: .callSiteFrame(CallSite.here()))
  }
}

/// `ObservationRegistrar` in a file that imports ObsTrace: the tracing registrar, as `Observation.ObservationRegistrar`
/// is there, so that `let registrar: Observation.ObservationRegistrar = ObservationRegistrar()` (a hand-written
/// observable, as Observation's own tests write them) compiles and is traced. It shadows Observation's own
/// (ObsTrace imports Observation).
public typealias ObservationRegistrar = TracingRegistrar

/// Tracks the properties `apply` reads and calls `onChange` once, before the first of them changes: exactly
/// Observation's `withObservationTracking`, which it calls, recorded as a tracking scope labelled with its
/// call site (`Module/File.swift:line`, resolved from the caller's return address when recording stops).
///
/// The signature is Observation's own, so that this declaration shadows it in files that import ObsTrace.
///
/// Transparent, so inlined into the caller in every build (mandatory inlining, even at -Onone), its code at the
/// caller's line: the call site is taken there, by a call (`CallSite.here()`) that returns into the caller's own
/// code. As a function of its own, its return address was the call site, and a call that is its function's last
/// statement, made a jump in an optimized build, left the caller no frame: the call site was then in the caller's
/// caller.
///
/// Its inlined code is one call, no branch: a branch makes small functions that differ only in their closures
/// alike enough for an optimized build to merge them into one body without line information, and the call site
/// is then lost (SiteTests' tail and qualified tracking, -O). Not recording, the traced function calls
/// Observation's at once, from a small frame.
@_transparent
public func withObservationTracking<T>(
  _ apply: () -> T, onChange: @autoclosure () -> @Sendable () -> Void
) -> T {
  TracedTracking.withObservationTracking(apply, onChange: onChange(), label: .callSiteFrame(CallSite.here()))
}

/// `withObservationTracking(_:onChange:)` recorded as a scope with a name of your choosing
/// (`"FirstView.body"`), so reports speak of it by that name. Transparent, as the unnamed form: no frame of its own.
@_transparent
public func withObservationTracking<T>(
  named name: String, _ apply: () -> T, onChange: @autoclosure () -> @Sendable () -> Void
) -> T {
  TracedTracking.withObservationTracking(apply, onChange: onChange(), label: .name(name))
}

/// Runs `body` as a named scope: reads inside it are attributed to `name`. For code that runs under tracking
/// ObsTrace does not own (a SwiftUI body), or to group reads in a report. Not recording, it calls `body` and
/// nothing else.
@_transparent
public func withTrackingScope<T>(named name: String, _ body: () throws -> T) rethrows -> T {
  guard TracedTracking.isRecording else { return try body() }
  return try TracedTracking.withScope(named: name, body)
}
