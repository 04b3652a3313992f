// Writes whose sites an optimized build's line table does not give plainly: in a property's observer (the macro's
// peer buffer), and through an existential after a loop. Built by Tests/ObsTraceCommandsTests/SiteTests.swift with
// -DOBSTRACE (traced) and without (Observation alone), -Onone and -O; both print the same. Each `// site:` comment
// names the write its line makes.
#if OBSTRACE
  import ObsTrace
#endif
import Observation

let m = M()
let holder = Holder()
holder.count += 1  // site: count
holder.level = 15  // site: level
holder.target = 40  // site: target
print(holder.changes, holder.level, holder.target)
let h: any HasX = m
h.x = 4  // site: existential set
var k = 0
while k < 1 { m.dict["z", default: 0] += 1; k += 1 }  // site: loop
@inline(never) func viaProto(_ h: any HasX) {
  h.x += 1  // site: via protocol
}
viaProto(m)
h.x += 5  // site: existential after loop
m.y += 1  // site: after existential
print(m.x, m.y, m.dict)
let panel = LoudPanel()
panel.width = 5  // site: override set
panel.width += 1  // site: override modify
print(panel.width, panel.changes)
