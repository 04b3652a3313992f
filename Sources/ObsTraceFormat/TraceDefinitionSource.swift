/// Where an encoder finds the definitions that events refer to by id. The recorder's intern tables implement it;
/// an id is always defined there before any event can carry it.
public protocol TraceDefinitionSource: AnyObject {
  func typeName(_ id: UInt32) -> String
  func property(_ id: UInt32) -> PropertyDefinition?
  func label(_ id: UInt32) -> String
  func scope(_ id: UInt32) -> ScopeDefinition?
  func stack(_ id: UInt32) -> [UInt64]
}
