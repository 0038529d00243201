"""The published page as a reader sees it (`make test-browser`): reports/ablation.html rendered by
headless Chromium at 1280 x 800, a screenshot of its first screen, and a check that fails on

    - an error in the page's console or a resource that did not load,
    - a figure that did not render (an <img> with no pixels),
    - a first screen without the finding (the sentence with the judged step's TFLOP/s) or without
      the bar's verdict ("N of M parts met"), or where either lies below the fold.

A small script is put at the top of a copy of the page (the page itself is not changed): it records
errors as they happen and, once the page has loaded, writes what it saw into the DOM, which Chromium's
--dump-dom prints. Debian's `chromium` package provides the browser.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lab.cli import OneLineParser, refuse

VIEWPORT = (1280, 800)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FINDING = r"reaches [\d,.]+ TFLOP/s"  # the first screen's finding (lab.report.ladder.finding)
BAR_VERDICT = r"\d+ of \d+ parts met"  # the first screen's bar line (lab.report.sections.first_screen)

PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    errors.push(t && t !== window && (t.src || t.href) ? "failed to load " + String(t.src || t.href).slice(0, 80)
                                                          : String(e.message));
  }, true);
  var consoleError = console.error;
  console.error = function () { errors.push(Array.prototype.join.call(arguments, " ")); consoleError.apply(console, arguments); };
  function shown(pattern) {
    var first = document.querySelector("section.first-screen");
    if (!first) return null;
    var re = new RegExp(pattern);
    var hits = Array.prototype.filter.call(first.querySelectorAll("p"), function (e) { return re.test(e.textContent); });
    if (!hits.length) return null;
    return hits[0].getBoundingClientRect().top;
  }
  window.addEventListener("load", function () {
    var images = Array.prototype.slice.call(document.images);
    var out = {
      errors: errors,
      images: images.length,
      broken: images.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                    .map(function (i) { return i.getAttribute("alt") || String(i.src).slice(0, 60); }),
      finding_top: shown(%(finding)s),
      bar_top: shown(%(bar)s),
      viewport_height: window.innerHeight
    };
    var pre = document.createElement("pre");
    pre.id = "browser-check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>"""
RESULT = re.compile(r'<pre id="browser-check">(.*?)</pre>', re.S)


@dataclass
class Seen:
    """What the probe saw once the page had loaded."""
    errors: list = field(default_factory=list)
    images: int = 0
    broken: list = field(default_factory=list)
    finding_top: float | None = None
    bar_top: float | None = None
    viewport_height: int = VIEWPORT[1]

    def problems(self) -> list[str]:
        """Each way the page fails a reader, one line each ([] where it does not)."""
        out = [f"console: {e}" for e in self.errors]
        out += [f"figure not rendered: {b}" for b in self.broken]
        if self.images == 0:
            out.append("no figure on the page")
        for what, top in (("the finding", self.finding_top), ("the bar's verdict", self.bar_top)):
            if top is None:
                out.append(f"the first screen has no {what}")
            elif top >= self.viewport_height:
                out.append(f"{what} is below the first screen ({top:.0f} px down, the screen is "
                           f"{self.viewport_height} px high)")
        return out


def probed(page: str) -> str:
    """The page with the probe as the first thing in its <head>."""
    script = PROBE % {"finding": json.dumps(FINDING), "bar": json.dumps(BAR_VERDICT)}
    head = re.search(r"<head[^>]*>", page)
    if head is None:
        raise ValueError("the page has no <head>")
    return page[:head.end()] + "\n" + script + page[head.end():]


def parse_dom(dom: str) -> Seen:
    """The probe's record from Chromium's --dump-dom output."""
    m = RESULT.search(dom)
    if m is None:
        return Seen(errors=["the page did not finish loading (the probe wrote nothing)"])
    import html

    return Seen(**json.loads(html.unescape(m.group(1))))


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _chromium(exe: str, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    w, h = VIEWPORT
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={w},{h}",
           "--virtual-time-budget=10000", "--no-first-run", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)


def check(page: Path, screenshot: Path, exe: str) -> Seen:
    """Render `page` (a screenshot of its first screen to `screenshot`) and return what the probe saw."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(probed(page.read_text(encoding="utf-8")), encoding="utf-8")
        dom = _chromium(exe, "--dump-dom", copy.resolve().as_uri())
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    _chromium(exe, f"--screenshot={screenshot.resolve()}", page.resolve().as_uri())
    return parse_dom(dom.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.report.browser", description=__doc__.splitlines()[0])
    ap.add_argument("page", nargs="?", default="reports/ablation.html", help="the HTML report (`make report` writes it)")
    ap.add_argument("--screenshot", default="build/browser/first_screen.png", help="where the first screen's PNG goes")
    args = ap.parse_args(argv)
    page = Path(args.page)
    if not page.is_file():
        refuse(ap.prog, f"{page}: no such page (`make report` writes reports/ablation.html)")
    exe = browser()
    if exe is None:
        refuse(ap.prog, f"no headless browser found ({', '.join(BROWSERS)}); on Debian: apt-get install chromium")
    seen = check(page, Path(args.screenshot), exe)
    problems = seen.problems()
    for p in problems:
        print(f"{page}: {p}", file=sys.stderr)
    if not problems:
        print(f"{page}: {seen.images} figures rendered, no console error; the finding at {seen.finding_top:.0f} px and "
              f"the bar's verdict at {seen.bar_top:.0f} px of a {seen.viewport_height} px first screen; "
              f"screenshot: {args.screenshot}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
