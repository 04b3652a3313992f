// The helpers of Tests/Fixtures/SitesModules (see main.swift), a module of their own (`ModuleScreens`) between the
// models and the program, as a package's view-model target is. An optimized build (`swift build -c release`) inlines
// `retitle`, a specialization of `retitleGeneric` and the lens's setter into the program (cross-module optimization),
// with no line of their own. Each `// site:` comment names the write its line makes.
import ModuleModels

/// Called by the program and never inlined: `swift build` links every object of a target, and the test links this
/// module as an archive, whose object would be left out when every function the program uses was inlined into it.
@inline(never) public func screensLinked() -> Bool { true }

public func retitle(_ m: any Model, _ suffix: String) { m.title += suffix }  // site: retitle
public func retitleGeneric<M: Model>(_ m: M, _ suffix: String) { m.title += suffix }  // site: retitleGeneric

@dynamicMemberLookup public struct Lens<M: AnyObject> {
  public let base: M
  public init(_ base: M) { self.base = base }
  public subscript<T>(dynamicMember kp: ReferenceWritableKeyPath<M, T>) -> T {
    get { base[keyPath: kp] }
    nonmutating set { base[keyPath: kp] = newValue }  // site: lens set
  }
}
