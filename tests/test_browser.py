"""`make test-browser` (lab.report.browser): what fails a reader of the published page. The rules are
tested without a browser; the probe itself in headless Chromium where one is installed."""

from __future__ import annotations

import base64
import json

import pytest

from lab.report import browser

PNG_1PX = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8ffff3f0005fe02fea7d2a6a90000000049454e44ae426082")).decode()
FIRST = ('<section class="first-screen"><p><strong>At (4, 16, 4096, 64) non-causal (hot), x reaches 469 TFLOP/s.'
         '</strong></p><p><strong>The bar</strong>: <strong>20 of 39 parts met</strong>; 19 missed.</p></section>')


def _page(body: str = FIRST, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"


def test_the_probe_goes_first_in_the_head():
    page = browser.probed(_page(head="<script>1</script>"))
    assert page.index("browser-check") < page.index("<script>1</script>")
    assert page.index("<head>") < page.index("browser-check")
    with pytest.raises(ValueError, match="no <head>"):
        browser.probed("<html><body></body></html>")


@pytest.mark.parametrize("seen, expected", [
    (dict(images=3, finding_top=120, bar_top=300), []),
    (dict(images=3, errors=["Uncaught TypeError: x"], finding_top=120, bar_top=300), ["console: Uncaught TypeError: x"]),
    (dict(images=3, broken=["TFLOP/s of every step"], finding_top=120, bar_top=300),
     ["figure not rendered: TFLOP/s of every step"]),
    (dict(images=0, finding_top=120, bar_top=300), ["no figure on the page"]),
    (dict(images=3, finding_top=None, bar_top=300), ["the first screen has no the finding"]),
    (dict(images=3, finding_top=120, bar_top=None), ["the first screen has no the bar's verdict"]),
    (dict(images=3, finding_top=120, bar_top=800), ["the bar's verdict is below the first screen (800 px down, "
                                                   "the screen is 800 px high)"]),
    (dict(images=3, finding_top=120, bar_top=799), []),
])
def test_what_fails_a_reader(seen, expected):
    assert browser.Seen(**seen).problems() == expected


def test_the_dom_record_is_read_back():
    record = {"errors": [], "images": 2, "broken": [], "finding_top": 10.5, "bar_top": 50, "viewport_height": 800}
    dom = f'<html><body>x<pre id="browser-check">{json.dumps(record).replace(chr(34), "&quot;")}</pre></body></html>'
    assert browser.parse_dom(dom) == browser.Seen(**record)
    assert browser.parse_dom("<html></html>").problems()[0].startswith("console: the page did not finish loading")


def test_the_patterns_match_what_the_report_writes():
    """The probe looks for the first screen's own words (lab.report.ladder.finding, the bar's line)."""
    import re

    from lab.report import committed

    md = committed.REPORT.read_text(encoding="utf-8")
    first = md[:md.index("\n## ")]
    assert re.search(browser.FINDING, first) and re.search(browser.BAR_VERDICT, first)


needs_browser = pytest.mark.skipif(browser.browser() is None, reason="no headless Chromium here (apt-get install chromium)")


@needs_browser
def test_chromium_sees_a_good_page(tmp_path):
    page = tmp_path / "good.html"
    page.write_text(_page(FIRST + f'<img alt="hero" src="data:image/png;base64,{PNG_1PX}">'))
    seen = browser.check(page, tmp_path / "shot.png", browser.browser())
    assert seen.problems() == [] and seen.images == 1, seen
    assert (tmp_path / "shot.png").stat().st_size > 1000


@needs_browser
def test_chromium_sees_a_broken_figure_a_console_error_and_a_verdict_below_the_fold(tmp_path):
    page = tmp_path / "bad.html"
    body = FIRST.replace("<p><strong>The bar", '<div style="height:2000px"></div><p><strong>The bar')
    page.write_text(_page(body + '<img alt="hero" src="figures/missing.png"><script>console.error("boom")</script>'))
    problems = browser.check(page, tmp_path / "shot.png", browser.browser()).problems()
    assert "console: boom" in problems
    assert "figure not rendered: hero" in problems
    assert any(p.startswith("console: failed to load") for p in problems)
    assert any(p.startswith("the bar's verdict is below the first screen") for p in problems), problems
