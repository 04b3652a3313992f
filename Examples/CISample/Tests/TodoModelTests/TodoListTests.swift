import Testing
import TodoModel

#if ObsTrace
  import ObsTrace
  import ObsTraceTesting
#endif

@Suite("TodoList")
struct TodoListTests {
  @Test("completing all leaves nothing remaining")
  func completeAll() {
    let list = TodoList()
    list.add("milk")
    list.add("bread")
    list.completeAll()
    #expect(list.remaining == 0)
  }

  #if ObsTrace
    @Test("adding two todos invalidates the list view twice, and completing all once per write")
    func invalidations() throws {
      let recorded = try recordObservation {
        let list = TodoList()
        let view = RenderHarness("TodoListView.body") { list.todos.map(\.title) }
        view.render()
        list.add("milk")
        view.flush()
        list.add("bread")
        view.flush()
      }
      #expect(recorded.invalidations(of: "TodoList.todos") == 2)
      #expect(recorded.runs(of: "TodoListView.body") == 3)
    }
  #endif
}
