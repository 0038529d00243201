"""Markdown and HTML of a report, and writing them (with the figures) into reports/ at once.

The HTML is the Markdown rendered by markdown-it-py into a jinja2 template (`templates/report.html.j2`,
its CSS in `templates/report.css`), figures inlined as data URIs so that the page is one file. The
first screen (everything before the first `## ` heading) is shown as it is; every later section is a
collapsible <details>.
"""

from __future__ import annotations

import base64
import html
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from lab.cli import OneLineParser, refuse
from lab.kernels.manifest import REPO
from lab.measure import records
from lab.report import committed
from lab.report.context import Report
from lab.report.load import run_data

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _esc(text: str) -> str:
    return html.escape(text, quote=True).replace("://", ":&#47;&#47;")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _markdown(images: dict[str, bytes]):
    """markdown-it (CommonMark + tables): headings get ids, images become inlined <figure>s, tables scroll."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def heading_open(self, tokens, idx, options, env):
        text = tokens[idx + 1].content
        tokens[idx].attrSet("id", _slug(re.sub(r"[*`]", "", text)))
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens, idx, options, env):
        tok = tokens[idx]
        src, alt = tok.attrGet("src"), tok.content
        if src in images:
            data = base64.b64encode(images[src]).decode()
            return (f'<figure><img src="data:image/png;base64,{data}" alt="{_esc(alt)}">'
                    f"<figcaption>{_esc(alt)}</figcaption></figure>")
        return f"<em>figure missing: {_esc(src)}</em>"

    md.add_render_rule("heading_open", heading_open)
    md.add_render_rule("image", image)
    md.add_render_rule("table_open", lambda *a: '<div class="tw"><table>\n')
    md.add_render_rule("table_close", lambda *a: "</table></div>\n")
    return md


def split_sections(md_text: str) -> tuple[str, list[tuple[str, str]]]:
    """(the first screen, [(heading, body)] for every `## ` section after it)."""
    parts = re.split(r"^## (.+)$", md_text, flags=re.M)
    return parts[0], [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def _diff_html(diffs: list[dict]) -> str:
    out = ["<p>Each step's variant file against its parent's (<code>difflib.unified_diff</code>, 3 lines of "
            "context). Shared device code lives in <code>kernels/include/fa/</code>; a step that switches to "
            "another header shows it as a changed <code>#include</code>.</p>"]
    for d in diffs:
        out.append(f'<h3 id="diff-{_esc(d["variant"])}">{_esc(str(d.get("index", "")))}. {_esc(d["title"])}: '
                   f"<code>{_esc(d['parent'])}</code> → <code>{_esc(d['variant'])}</code></h3>")
        if d["note"]:
            out.append(f'<p class="meta">{_esc(d["note"])}</p>')
            continue
        out.append(f'<p class="meta">+{d["added"]} / −{d["removed"]} lines</p>')
        spans = []
        for ln in d["lines"]:
            if ln.startswith("+++") or ln.startswith("---"):
                cls = "hdr"
            elif ln.startswith("@@"):
                cls = "hunk"
            elif ln.startswith("+"):
                cls = "add"
            elif ln.startswith("-"):
                cls = "del"
            else:
                cls = "ctx"
            spans.append(f'<span class="{cls}">{_esc(ln) or " "}</span>')
        out.append('<pre class="diff">' + "".join(spans) + "</pre>")
    return "\n".join(out)


def render_html(rep: Report, reports_dir: Path | None = None) -> str:
    """The self-contained page: header, the open first screen, collapsible sections, the code diffs."""
    import jinja2

    images = {f"figures/{p.name}": p.read_bytes() for p in rep.figures.values()}
    md = _markdown(images)
    # the title and label go in the page header; the body starts after them
    body_md = "\n".join(ln for ln in rep.markdown.splitlines()[1:] if ln.strip() != f"**{rep.label}**")
    first, sections = split_sections(body_md)
    rendered = [dict(id=_slug(h), title=md.renderInline(h), body=md.render(b)) for h, b in sections]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
                             keep_trailing_newline=True)
    page = env.get_template("report.html.j2").render(
        title=_esc(rep.title), heading=md.renderInline(rep.markdown.splitlines()[0].lstrip("# ")),
        label=_esc(rep.label), css=(TEMPLATES / "report.css").read_text(encoding="utf-8"),
        first_screen=md.render(first), sections=rendered, diffs=_diff_html(rep.diffs))
    return page.replace("://", ":&#47;&#47;")  # the page links nowhere: no URL survives


def _move_into(tmp: Path, reports_dir: Path) -> None:
    """Move figures/, the HTML and the Markdown from tmp into reports_dir: the figures folder is swapped
    by two renames, each file by os.replace, so an interrupted write leaves whole files only."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    old = reports_dir / ".figures.old"
    shutil.rmtree(old, ignore_errors=True)
    if (reports_dir / "figures").exists():
        os.replace(reports_dir / "figures", old)
    os.replace(tmp / "figures", reports_dir / "figures")
    shutil.rmtree(old, ignore_errors=True)
    for name in ("ablation.html", "OPTIMIZATION_REPORT.md"):
        os.replace(tmp / name, reports_dir / name)


def write(rec, reports_dir, base=None, companions=None) -> Path:
    """Write OPTIMIZATION_REPORT.md, ablation.html and figures/ under reports_dir; returns the .md path.
    Everything is written into a temporary folder beside reports_dir first and moved in at the end.
    `base` (a RunRecord or RunData) adds "Does it replicate?" against it; by default the committed
    report's base for its run, else the latest complete run on another GPU model beside the run, if
    there is one (lab.report.committed.default_base). `companions` (RunRecords or RunData): runs of some of issue
    46's target modes alone (hot, sustained) on the run's GPU model, or the base's where that is another, whose rows
    the targets are judged on as well (the base's in its "On the other GPU" block); by default the committed report's,
    for its run (lab.report.committed.default_companions); CompanionRefused where they cannot stand in
    (lab.report.sections.reference.companions_refusal)."""
    from lab.report.sections import build
    from lab.report.sections.reference import CompanionRefused, companions_refusal

    data = run_data(rec)
    base, companions = committed.report_runs(data, base, companions)
    if why := companions_refusal(data, companions, base):
        raise CompanionRefused(why)
    reports_dir = Path(reports_dir)
    reports_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{reports_dir.name}-", dir=reports_dir.parent) as tmp:
        tmp = Path(tmp)
        rep = build(data, tmp, base, companions)
        (tmp / "OPTIMIZATION_REPORT.md").write_text(rep.markdown, encoding="utf-8")
        (tmp / "ablation.html").write_text(render_html(rep), encoding="utf-8")
        _move_into(tmp, reports_dir)
    return reports_dir / "OPTIMIZATION_REPORT.md"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m lab.report", description="The report of one run: Markdown, HTML and figures under reports/.")
    ap.add_argument("run_id", nargs="?", default="", help="a run under data/runs (default: the committed report's "
                    "run, else the latest complete run, else the latest run)")
    ap.add_argument("--reports-dir", default="reports")
    ap.add_argument("--runs-root", default=None, help="where the runs are (default: data/runs)")
    ap.add_argument("--base", default=None, help="a second run to replicate against (\"Does it replicate?\"; "
                    "default: the committed report's base for its run, else the latest complete run on another GPU model, if any)")
    ap.add_argument("--companion", action="append", default=None, help="a run of issue 46's target modes alone (hot, "
                    "sustained or both) on the run's GPU model or its base's, at more rounds, turns or replicates: "
                    "the targets are judged with the rows it timed as well; repeat it for several, no two timing the "
                    "same row (default: the committed report's, for its run)")
    args = ap.parse_args(argv)
    root = Path(args.runs_root) if args.runs_root else None
    run_id = args.run_id or committed.default_run(root)
    if not run_id:
        print(f"no run under {root or records.RUNS_DIR} to report on", file=sys.stderr)
        return 1
    try:
        rec = records.RunRecord.open(run_id, root)
    except FileNotFoundError as exc:
        refuse(ap.prog, str(exc))
    state = rec.status.get("state", "unknown")
    if state != "complete":
        print(f"note: run {run_id} is '{state}', not complete; the report says so", file=sys.stderr)
    try:
        base = records.RunRecord.open(args.base, root) if args.base else None
    except FileNotFoundError as exc:
        refuse(ap.prog, f"--base: {exc}")
    from lab.report.sections.reference import CompanionRefused

    try:
        companions = None if args.companion is None else [records.RunRecord.open(r, root) for r in args.companion]
        path = write(rec, args.reports_dir, base, companions)
    except (FileNotFoundError, CompanionRefused) as exc:
        refuse(ap.prog, f"--companion: {exc}")
    print(f"{path}\n{Path(args.reports_dir) / 'ablation.html'}")
    if committed.is_committed_reports_dir(args.reports_dir) and root is None:
        from lab.report import docs  # the committed report's run is the one README.md and docs/ quote

        for changed in docs.write(rec):
            print(changed.relative_to(REPO))
    return 0
