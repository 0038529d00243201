from __future__ import annotations

from lab import records
from pathlib import Path
import argparse
import base64
import html
import re
import sys

from lab.report.load import _data
from lab.report.helpers import Report


# HTML
# ---------------------------------------------------------------------------------------------

CSS = """
body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:0;background:#f6f7f9;color:#1d2330;
font-size:14px;line-height:1.45}
header{background:#1d2b44;color:#fff;padding:18px 32px}
header h1{margin:0 0 6px 0;font-size:22px;border:none;color:#fff}
header .label{font-size:14px;opacity:.9}
main{max-width:1500px;margin:0 auto;padding:12px 32px 48px 32px}
h1{font-size:22px} h2{font-size:19px;border-bottom:2px solid #1d2b44;padding-bottom:3px;margin-top:32px}
h3{font-size:16px;margin-top:22px} h4{font-size:14px;margin:16px 0 6px 0}
table{border-collapse:collapse;margin:8px 0 12px 0;background:#fff;font-size:12.5px}
th,td{border:1px solid #cfd5df;padding:3px 7px;vertical-align:top}
th{background:#e8ecf3;text-align:left}
td.r,th.r{text-align:right} td.c,th.c{text-align:center}
.tw{overflow-x:auto;max-width:100%}
tr:nth-child(even) td{background:#fafbfd}
code{background:#eef1f6;padding:0 3px;border-radius:3px;font-family:'DejaVu Sans Mono',monospace;font-size:12px}
pre{background:#fff;border:1px solid #cfd5df;padding:8px 10px;overflow-x:auto;font-size:12px;line-height:1.35}
pre code{background:none;padding:0}
blockquote{border-left:4px solid #d9822b;margin:10px 0;padding:4px 12px;background:#fff6ec}
figure{margin:14px 0;background:#fff;border:1px solid #cfd5df;padding:8px;display:inline-block}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:12px;color:#4a5468;margin-top:4px}
pre.diff{font-family:'DejaVu Sans Mono',monospace}
pre.diff .add{background:#e3f6e5;color:#135c1e;display:block}
pre.diff .del{background:#fbe4e4;color:#8a1414;display:block}
pre.diff .hunk{color:#2a53a0;display:block;background:#eef3fc}
pre.diff .hdr{color:#59606e;display:block;font-weight:bold}
pre.diff .ctx{display:block}
.meta{color:#4a5468;font-size:12.5px}
"""


def _inline(text: str) -> str:
    """Escape, then `code` and **bold**; a scheme-like '://' is defused so no URL is referenced."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if len(p) >= 2 and p.startswith("`") and p.endswith("`"):
            out.append(f"<code>{_esc(p[1:-1])}</code>")
        else:
            e = _esc(p)
            e = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", e)
            e = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"<em>\1</em>", e)
            out.append(e)
    return "".join(out)


def _esc(text: str) -> str:
    return html.escape(text, quote=True).replace("://", ":&#47;&#47;")


def _split_row(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def markdown_to_html(md: str, images: dict[str, bytes]) -> str:
    """The subset of Markdown this module writes: headings, paragraphs, pipe tables, lists, fenced
    code, block quotes and image paragraphs (embedded from `images`, keyed by their path)."""
    lines = md.splitlines()
    out: list[str] = []
    i = 0
    slug_seen: dict = {}
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre><code>" + _esc("\n".join(lines[i + 1:j])) + "</code></pre>")
            i = j + 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            level, text = len(m.group(1)), m.group(2)
            slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
            slug_seen[slug] = slug_seen.get(slug, 0) + 1
            if slug_seen[slug] > 1:
                slug = f"{slug}-{slug_seen[slug]}"
            out.append(f'<h{level} id="{slug}">{_inline(text)}</h{level}>')
            i += 1
            continue
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            header = _split_row(block[0])
            aligns = []
            for c in _split_row(block[1]) if len(block) > 1 else []:
                aligns.append("r" if c.endswith(":") and not c.startswith(":") else "c" if c.startswith(":") and
                              c.endswith(":") else "")
            cls = lambda k: f' class="{aligns[k]}"' if k < len(aligns) and aligns[k] else ""  # noqa: E731
            h = "<table><thead><tr>" + "".join(f"<th{cls(k)}>{_inline(c)}</th>" for k, c in enumerate(header))
            h += "</tr></thead><tbody>"
            for row in block[2:]:
                h += "<tr>" + "".join(f"<td{cls(k)}>{_inline(c)}</td>" for k, c in enumerate(_split_row(row))) + "</tr>"
            out.append('<div class="tw">' + h + "</tbody></table></div>")
            continue
        if re.match(r"^(- |\d+\. )", line):
            ordered = not line.startswith("- ")
            items = []
            while i < len(lines) and re.match(r"^(- |\d+\. )", lines[i]):
                items.append(re.sub(r"^(- |\d+\. )", "", lines[i]))
                i += 1
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    items[-1] += " " + lines[i].strip()
                    i += 1
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{_inline(it)}</li>" for it in items) + f"</{tag}>")
            continue
        m = re.match(r"^!\[(.*)\]\((.*)\)\s*$", line)
        if m:
            alt, src = m.group(1), m.group(2)
            data = images.get(src)
            if data is not None:
                b64 = base64.b64encode(data).decode("ascii")
                out.append(f'<figure><img alt="{_esc(alt)}" src="data:image/png;base64,{b64}">'
                           f"<figcaption>{_inline(alt)}</figcaption></figure>")
            else:
                out.append(f"<p><em>figure missing: {_esc(src)}</em></p>")
            i += 1
            continue
        if line.startswith(">"):
            block = []
            while i < len(lines) and lines[i].startswith(">"):
                block.append(lines[i].lstrip(">").strip())
                i += 1
            out.append("<blockquote><p>" + _inline(" ".join(block)) + "</p></blockquote>")
            continue
        block = []
        while i < len(lines) and lines[i].strip() and not re.match(r"^(#{1,6}\s|\||```|- |\d+\. |>|!\[)", lines[i]):
            block.append(lines[i])
            i += 1
        if not block:  # a line no rule took: keep it as a paragraph
            block, i = [line], i + 1
        out.append("<p>" + _inline(" ".join(block)) + "</p>")
    return "\n".join(out)


def _diff_html(diffs: list[dict]) -> str:
    out = ['<h2 id="code-diffs">Code diffs between neighbouring steps</h2>',
           "<p>Each step's variant file against its parent's (<code>difflib.unified_diff</code>, 3 lines of "
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


def render_html(rep: Report, reports_dir: Path) -> str:
    images = {f"figures/{p.name}": p.read_bytes() for p in rep.figures.values()}
    md = rep.markdown
    # the title and label go in the page header; the body starts after them
    body_md = "\n".join(ln for ln in md.splitlines()[1:] if ln.strip() != f"**{rep.label}**")
    body = markdown_to_html(body_md, images)
    marker = '<h2 id="how-to-reproduce">'
    diffs = _diff_html(rep.diffs)
    body = body.replace(marker, diffs + "\n" + marker, 1) if marker in body else body + "\n" + diffs
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_esc(rep.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{_inline(md.splitlines()[0].lstrip('# '))}</h1>"
            f"<div class=\"label\">{_esc(rep.label)}</div></header>\n<main>\n{body}\n</main>\n</body>\n</html>\n")


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def write(rec, reports_dir) -> Path:
    """Write OPTIMIZATION_REPORT.md, ablation.html and figures/ under reports_dir; returns the .md path."""
    data = _data(rec)
    reports_dir = Path(reports_dir)
    reports_dir.mkdir(parents=True, exist_ok=True)
    from lab.report.sections import build

    rep = build(data, reports_dir)
    md_path = reports_dir / "OPTIMIZATION_REPORT.md"
    md_path.write_text(rep.markdown, encoding="utf-8")
    (reports_dir / "ablation.html").write_text(render_html(rep, reports_dir), encoding="utf-8")
    return md_path


def default_run(root: Path | None = None) -> str | None:
    """The latest complete run, else the latest run of any state."""
    return records.latest_run(root) or records.latest_run(root, complete_only=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab.report", description="The report of one run: Markdown, HTML and figures under reports/.")
    ap.add_argument("run_id", nargs="?", default="", help="a run under data/runs (default: the latest complete "
                    "run, else the latest run)")
    ap.add_argument("--reports-dir", default="reports")
    ap.add_argument("--runs-root", default=None, help="where the runs are (default: data/runs)")
    args = ap.parse_args(argv)
    root = Path(args.runs_root) if args.runs_root else None
    run_id = args.run_id or default_run(root)
    if not run_id:
        print(f"no run under {root or records.RUNS_DIR} to report on", file=sys.stderr)
        return 1
    try:
        rec = records.RunRecord.open(run_id, root)
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    state = rec.status.get("state", "unknown")
    if state != "complete":
        print(f"note: run {run_id} is '{state}', not complete; the report says so", file=sys.stderr)
    path = write(rec, args.reports_dir)
    print(f"{path}\n{Path(args.reports_dir) / 'ablation.html'}")
    return 0
