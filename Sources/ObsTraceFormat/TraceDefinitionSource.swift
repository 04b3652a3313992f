/// Where an encoder finds the definitions that events refer to by id. The recorder's intern tables implement it;
/// an id is always defined there before any event can carry it.
public protocol TraceDefinitionSource: AnyObject {
  func typeName(_ id: UInt32) -> String
  func property(_ id: UInt32) -> PropertyDefinition?
  func label(_ id: UInt32) -> String
  func scope(_ id: UInt32) -> ScopeDefinition?
  func stack(_ id: UInt32) -> [UInt64]
  /// For a label that is a call site named after it at stop (`<call site of stack #N>`), the stack N to find the
  /// site in; 0 otherwise. A trace states it with the label, so that a killed process's trace can be symbolized.
  func labelStack(_ id: UInt32) -> UInt32
}

extension TraceDefinitionSource {
  public func labelStack(_ id: UInt32) -> UInt32 { 0 }
}
