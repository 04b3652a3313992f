import Foundation
import Testing

/// The HTML report: one self-contained page, looked at in a real browser (Debian's chromium, headless, installed
/// by scripts/setup).
@Suite("HTML report")
struct HTMLReportTests {
  let worse = Paths.root + "/traces/noop-modify-worse.trc"

  func page(_ trace: String, environment: [String: String] = [:]) throws -> String {
    let path = Paths.temporary("report.html")
    let result = try Run.program(
      "obstrace", ["report", trace, "--format", "html", "-o", path], environment: environment)
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.isEmpty)
    return try String(contentsOfFile: path, encoding: .utf8)
  }

  @Test("the page holds the summary, the findings with hints and sites, the graph as SVG and who read what")
  func contents() throws {
    let html = try page(worse)
    #expect(html.hasPrefix("<!DOCTYPE html>"))
    #expect(html.contains("<svg class=\"graph\""))
    #expect(html.contains("wrote 3 (3 no&#45;op)"))  // the write site's edge, drawn by dot
    #expect(html.contains("<article class=\"finding warning\" data-kind=\"noop-write\">"))
    #expect(
      html.contains("<code title=\"")
        && html.contains("obstrace_scenarios/main.swift:\(ScenarioSource.noopWrite) (noopModify())</code>"))
    #expect(html.contains("<b>Hint:</b> writes through _modify"))
    #expect(html.contains("<div class=\"value\">3 of 4</div><div class=\"title\">wasted invalidations</div>"))
    #expect(html.contains("<table class=\"sortable\">"))
    #expect(html.contains("<code>TodoStore.items</code> <span class=\"count\">in 5 of 5 runs</span>"))
    #expect(
      html.contains(
        "writes of <code>TodoStore.items</code> at <code>obstrace_scenarios/main.swift:\(ScenarioSource.noopWrite) (noopModify())</code>: 3 (3 changed nothing)"
      ))
    #expect(html.components(separatedBy: "<b class=\"bad\">redundant</b>").count - 1 == 3)
  }

  @Test("the summary's cards say a count of 1 in the singular (\"1 warning\", \"1 thread\") and other counts in the plural")
  func summarySingular() throws {
    let one = try page(Paths.root + "/traces/stale-read.trc")  // 1 warning, 1 thread
    #expect(one.contains("<div class=\"value\">1</div><div class=\"title\">warning</div>"))
    #expect(one.contains("<div class=\"value\">1</div><div class=\"title\">thread</div>"))
    #expect(one.contains("<div class=\"value\">0</div><div class=\"title\">dropped events</div>"))
    let two = try page(Paths.root + "/traces/noop-modify.trc")  // 2 warnings
    #expect(two.contains("<div class=\"value\">2</div><div class=\"title\">warnings</div>"))
  }

  @Test("the page needs no network: no external script, style, image or font")
  func selfContained() throws {
    let html = try page(Paths.root + "/traces/observations.trc")
    for reference in ["<link", "src=", "@import", "url(", "href=\"http"] {
      #expect(!html.contains(reference), "\(reference)")
    }
  }

  @Test("without Graphviz on PATH the page says how to get it, and still has everything else")
  func withoutDot() throws {
    let html = try page(worse, environment: ["PATH": "/nonexistent"])
    #expect(!html.contains("<svg"))
    #expect(html.contains("id=\"no-graph\"") && html.contains("Install Graphviz"))
    #expect(html.contains("data-kind=\"noop-write\""))
  }

  @Test("headless chromium renders the page to a PNG that is not blank, with the SVG and the findings in its DOM")
  func rendersInBrowser() throws {
    let html = Paths.temporary("report.html")
    #expect(Run.command(["report", worse, "--format", "html", "-o", html]).status == 0)
    let blank = Paths.temporary("blank.html")
    try "<!DOCTYPE html><html><body></body></html>".write(toFile: blank, atomically: true, encoding: .utf8)
    func screenshot(_ page: String) throws -> Data {
      let png = page + ".png"
      let result = try Run.program(
        Chromium.path,
        Chromium.arguments + ["--window-size=1280,1600", "--screenshot=\(png)", "file://\(page)"])
      #expect(result.status == 0, "\(result.standardError)")
      return try Data(contentsOf: URL(fileURLWithPath: png))
    }
    let picture = try screenshot(html)
    let empty = try screenshot(blank)
    #expect(picture.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    // A white page compresses to almost nothing; the report's text, tables and graph do not.
    #expect(picture.count > 10 * empty.count, "\(picture.count) bytes against \(empty.count) for a blank page")
    let dom = try Run.program(Chromium.path, Chromium.arguments + ["--dump-dom", "file://\(html)"])
    #expect(dom.status == 0)
    #expect(dom.standardOutput.contains("<svg class=\"graph\""))
    #expect(dom.standardOutput.contains("data-kind=\"noop-write\""))
    #expect(dom.standardOutput.contains("data-kind=\"redundant-run\""))
  }
}

/// Debian's chromium, headless (as root in CI, so without its sandbox).
enum Chromium {
  static let path = "/usr/bin/chromium"
  static let arguments = [
    "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-extensions",
    "--user-data-dir=" + Paths.temporary("chromium-profile"),
  ]
}
