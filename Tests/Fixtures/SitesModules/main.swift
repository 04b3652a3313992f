// Writes in an app of three modules (a fresh-clone try-out's J4 and K4, its package tryout/Shop): models, helpers
// that write them (a function through an existential, a generic one, a `@dynamicMemberLookup` lens whose
// `nonmutating set` writes through a key path) and this program, whose actor's method writes last. Built by
// Tests/ObsTraceCommandsTests/SiteTests.swift with -DOBSTRACE (traced) and without, -Onone and -O, each module on its
// own as `swift build` builds a package's targets; all print the same. Each `// site:` comment names the write its
// line makes.
#if OBSTRACE
  import ObsTrace
#endif
import Observation
import ModuleModels
import ModuleScreens

actor Warehouse {
  let inventory = Inventory()
  func reserve(_ id: Int) {
    inventory.reserved.insert(id)  // site: reserve insert
    inventory.counts[id, default: 0] -= 1  // site: reserve count
    inventory.log.append("reserved \(id)")  // site: reserve log
  }
  func summary() -> String { "\(inventory.reserved.sorted()) \(inventory.counts.count) \(inventory.log.count)" }
}

@MainActor func run(_ products: [Product], _ promotions: [Promotion], _ warehouse: Warehouse) async {
  for id in 0..<4 {
    if id % 2 == 0 { retitle(products[id], "!") } else { retitleGeneric(products[id], "?") }  // site: retitle call
    let lens = Lens(promotions[id % 2])
    lens.percent += 5  // site: lens call
    await warehouse.reserve(id)
  }
}

guard screensLinked() else { fatalError() }
let products = (0..<4).map { _ in Product() }
let promotions = [Promotion(), Promotion()]
let warehouse = Warehouse()
await run(products, promotions, warehouse)
print(products.map(\.title), promotions.map(\.percent), await warehouse.summary())
