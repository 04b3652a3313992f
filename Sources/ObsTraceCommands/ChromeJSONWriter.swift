import ObsTraceAnalysis

/// The Chrome JSON trace event format (what chrome://tracing, Perfetto's UI and many tools read), with the same
/// content as the Perfetto export: `B`/`E` slices and `i` instants per thread (`tid`), thread names as `M`
/// metadata, arguments in `args`, and the same flows as `s`/`f` pairs bound to the slices they link (run → the
/// write that invalidated it, fire → the run it caused). Times are microseconds since the recording started, to the nanosecond.
/// Streamed: one event per line, as they come.
struct ChromeJSONWriter: ExportWriter {
  let output: OutputFile
  let processID: Int32
  let processName: String
  private var threads: [UInt32: Int32] = [:]
  private var first = true
  /// Per thread, the begin times of the open slices: a flow on a slice's end is bound at its begin, where the
  /// slice encloses it.
  private var begins: [UInt32: [UInt64]] = [:]

  init(output: OutputFile, processID: Int32, processName: String) {
    self.output = output
    self.processID = processID
    self.processName = processName
  }

  mutating func declare(_ thread: ExportThread) throws(CommandError) {
    try startIfNeeded()
    let tid = thread.osThreadID != 0 ? thread.osThreadID : Int32(bitPattern: thread.thread)
    threads[thread.thread] = tid
    try line(
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":\(processID),\"tid\":\(tid),"
        + "\"args\":{\"name\":\(jsonString(thread.name))}}")
  }

  mutating func write(_ event: ExportEvent) throws(CommandError) {
    try startIfNeeded()
    let tid = threads[event.thread] ?? Int32(bitPattern: event.thread)
    let where_ = "\"pid\":\(processID),\"tid\":\(tid),\"ts\":\(Self.microseconds(event.time))"
    var text = "{"
    switch event.phase {
    case .begin: text += "\"ph\":\"B\",\"name\":\(jsonString(event.name)),\"cat\":\(jsonString(event.category)),"
    case .end: text += "\"ph\":\"E\","
    case .instant:
      text += "\"ph\":\"i\",\"s\":\"t\",\"name\":\(jsonString(event.name)),\"cat\":\(jsonString(event.category)),"
    }
    text += where_
    if !event.arguments.isEmpty {
      let arguments = event.arguments.map { argument -> String in
        let value: String
        switch argument.value {
        case .string(let string): value = jsonString(string)
        case .number(let number): value = "\(number)"
        case .flag(let flag): value = flag ? "true" : "false"
        }
        return "\(jsonString(argument.name)):\(value)"
      }
      text += ",\"args\":{\(arguments.joined(separator: ","))}"
    }
    try line(text + "}")
    // Flows after the slice they bind to (`s` and `f` with "bp":"e" bind to the slice enclosing their time): at
    // the event's time for a begin or an instant, at the slice's begin for an end.
    var flowTime = event.time
    switch event.phase {
    case .begin: begins[event.thread, default: []].append(event.time)
    case .end: flowTime = begins[event.thread]?.popLast() ?? event.time
    case .instant: break
    }
    let at = "\"pid\":\(processID),\"tid\":\(tid),\"ts\":\(Self.microseconds(flowTime))"
    for flow in event.flowsOut {
      try line("{\"ph\":\"s\",\"name\":\"invalidation\",\"cat\":\"flow\",\"id\":\(flow),\(at)}")
    }
    for flow in event.flowsIn {
      try line("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"invalidation\",\"cat\":\"flow\",\"id\":\(flow),\(at)}")
    }
  }

  /// What the trace lost: a global instant (seen in a viewer) and, at the end, the file's `metadata`.
  private var loss: String?

  mutating func noteLoss(_ text: String, at time: UInt64) throws(CommandError) {
    try startIfNeeded()
    loss = text
    try line(
      "{\"ph\":\"i\",\"s\":\"g\",\"name\":\(jsonString(text)),\"cat\":\"obstrace\",\"pid\":\(processID),\"tid\":0,"
        + "\"ts\":\(Self.microseconds(time))}")
  }

  mutating func finish() throws(CommandError) {
    try startIfNeeded()
    let metadata = loss.map { ",\"metadata\":{\"obstrace-incomplete\":\(jsonString($0))}" } ?? ""
    try output.write("\n],\"displayTimeUnit\":\"ns\"\(metadata)}\n")
    try output.flush()
  }

  private mutating func startIfNeeded() throws(CommandError) {
    guard first else { return }
    first = false
    try output.write(
      "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\(processID),"
        + "\"args\":{\"name\":\(jsonString(processName))}}")
  }

  private func line(_ text: String) throws(CommandError) {
    try output.write(",\n" + text)
  }

  /// Nanoseconds as microseconds with three decimals: `12345` → `12.345`.
  static func microseconds(_ nanoseconds: UInt64) -> String {
    let fraction = String(nanoseconds % 1000)
    return "\(nanoseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }
}
