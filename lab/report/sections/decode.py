"""The decode set (issue 50): one to eight new queries a sequence against a K/V cache, read from the run's
decode.json (lab.studies.decode_study). The branch's end against the fastest peer at every shape, with the
bandwidth it reaches as a fraction of the GPU's copy bandwidth measured in the same process; what each step
bought over its parent; the issue's four targets judged from the records. Absent for runs without a decode
set (the section returns no lines)."""

from __future__ import annotations

import math

from lab.measure.peers import contenders
from lab.measure.timing import recorded_flush
from lab.report.formats import MISSING, fmt, md_table, new_lines
from lab.report.context import Context, base_on_another_gpu
from lab.report.sections.method import cold_flush_words
from lab.report.sections.reference import TARGET_MARGIN

COPY_FRACTION_BAR = 0.95  # issue 50, target 1: the end at 95 % of the copy where the cache streams, batch >= 8
BATCH_ONE_BAR = 0.80  # target 3: at batch 1
SECONDS_BAR = 60.0  # target 4: the decode set's cost to a run (on an H100)
SPEED_BAR = 1.00  # target 2: the end against the fastest peer, issue 46's "at least" (reference.TARGET_MARGIN)


def shape_key(row: dict) -> tuple:
    """A decode shape's identity in a summary row (lab.studies.measure_decode.DECODE_SHAPE_COLUMNS)."""
    return (row["B"], row["H"], row["H_kv"], row["D"], row["cache_len"], row["q_len"], bool(row["mixed"]),
            int(row["page_size"] or 0), row["dtype"])


def shape_of(key: tuple):
    """The DecodeShape of a shape key (its spec names it in the tables, its id in decode.json's streams)."""
    from lab.kernels.decode import DecodeShape

    B, H, H_kv, D, n, q_len, mixed, page, dtype = key
    return DecodeShape(B, H, H_kv, D, n, q_len, mixed, page or None, dtype)


def medians(rows: list[dict], mode: str) -> dict:
    """{shape key: {impl: row}} of one mode."""
    out: dict = {}
    for r in rows:
        if r.get("mode") == mode:
            out.setdefault(shape_key(r), {})[r["impl"]] = r
    return out


def speed_interval(a: dict, b: dict) -> tuple[float, float, float]:
    """b's time over a's (a's speed relative to b, > 1: a faster) and a conservative interval from the two
    medians' CIs (b's lower end over a's upper, b's upper over a's lower)."""
    return b["median_us"] / a["median_us"], b["ci_lo_us"] / a["ci_hi_us"], b["ci_hi_us"] / a["ci_lo_us"]


def fastest_peer(impls: dict, peers) -> dict | None:
    """The summary row of the fastest of `peers` timed at a shape (`impls`: medians' rows by name), in a fixed order
    where two tie, sdpa_default only where none of SDPA's backends was (lab.measure.peers.contenders); None where
    none was."""
    timed = [impls[p] for p in contenders(p for p in sorted(peers) if p in impls)]
    return min(timed, key=lambda r: r["median_us"]) if timed else None


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def copy_of(d: dict, shape_id: str) -> float:
    """The copy bandwidth (GB/s) measured in the process that timed shape `shape_id`: where the set was shared
    over GPUs, that GPU's child's (decode.json's copies, keyed by the GPU its shape's note names); else the
    set's own (d["copy"])."""
    gpu = next((n.get("gpu") for n in d.get("notes", []) if n.get("shape") == shape_id), None)
    return (d.get("copies", {}).get(gpu) or d["copy"])["gbps"]


def copy_exceeded(rows: list[dict], copy_gbps) -> tuple | None:
    """(fraction, impl, shape spec, mode) of the row that reads most over the copy's bandwidth, where one
    reads more than the copy (it then is no ceiling for this GPU); None where none does. `copy_gbps(shape
    id)`: the copy its row is held to (copy_of), or one number for every row."""
    def copy(r):
        return copy_gbps(shape_of(shape_key(r)).id) if callable(copy_gbps) else copy_gbps

    over = [(r["gbps"] / copy(r), r) for r in rows if r.get("gbps") and r["gbps"] > copy(r)]
    if not over:
        return None
    frac, r = max(over, key=lambda x: (x[0], x[1]["impl"]))
    return frac, r["impl"], shape_of(shape_key(r)).spec, r["mode"]


def roofline_copy_line(d: dict, ceilings: dict | None) -> str | None:
    """The decode stage's copy beside the same run's roofline copy (ceilings.json: a larger copy, the best of its
    launches timed one by one, before the timing stage), so that a reader sees how much the bar of target 1 moves
    with the copy it is held to, and, for a run whose copy took no lead-in (lab.studies.measure_decode.
    COPY_LEAD_IN_US), why its bar reads low; None where the run has no roofline copy."""
    dram = (ceilings or {}).get("dram_gbps")
    if not dram or not d.get("copy"):
        return None
    size = f"{ceilings['copy_bytes'] >> 20} MB, " if ceilings.get("copy_bytes") else ""
    line = (f"The same run's roofline copy (`ceilings.json`: {size}the best of its launches timed one by one, before "
            f"the timing stage) read {dram:.0f} GB/s; the decode stage's copy is {d['copy']['gbps'] / dram:.3f} of it.")
    lead = d["copy"].get("lead_in")
    if lead:
        return (f"{line} It was taken after a lead-in of {lead['samples']} samples, the slowest of which read "
                f"{lead['slowest_gbps']:.0f} GB/s.")
    return (f"{line} **This run took its copy with no lead-in, so its bar reads low:** after a run's decode checks "
            "the first milliseconds of copying read slow, and the median of its samples fell on them "
            "(data/explorations/2026-12-07-copy-reference, which measured it); runs since take a lead-in first. Its "
            "\"of copy\" figures and target 1 read high by as much.")


def roofline_bar(d: dict, ceilings: dict | None) -> float | None:
    """The run's roofline copy (GB/s) as target 1's bar beside the decode stage's, where that copy took no lead-in
    (roofline_copy_line); None where it took one, or where the run has no decode copy or no roofline copy."""
    dram = (ceilings or {}).get("dram_gbps")
    return dram if dram and d.get("copy") and not d["copy"].get("lead_in") else None


def lead_in_words(copy: dict) -> str:
    """" after a lead-in of N samples" where the copy took one (lab.studies.measure_decode.COPY_LEAD_IN_US), else
    ""."""
    return f" after a lead-in of {copy['lead_in']['samples']} samples" if copy.get("lead_in") else ""


def copy_caveats(d: dict, ceilings: dict | None) -> list[str]:
    """The paragraphs that qualify the copy as the bar: where a row outruns it, and the run's roofline copy beside
    it (each after a blank line; none where neither applies)."""
    lines = []
    above = copy_exceeded(d["rows"], lambda shape_id: copy_of(d, shape_id))
    if above:
        lines += ["", f"**On this GPU the copy is no ceiling**: {above[1]} reads {above[0]:.2f} of it ({above[2]}, "
                  f"{above[3]}), so the \"of copy\" column and target 1 read high here. Issue 50's bar assumes a copy "
                  "that no kernel outruns; the report does not correct for it."]
    roofline = roofline_copy_line(d, ceilings)
    if roofline:
        lines += ["", roofline]
    return lines


def copy_misses(d: dict, by_shape: dict, end: str, copy_gbps) -> tuple[int, list[str]]:
    """Target 1's reading against `copy_gbps(shape id)`: the shapes it judges (the cache streams from HBM, batch >= 8)
    and those under COPY_FRACTION_BAR, each with its fraction."""
    streaming, missed = 0, []
    for key, impls in by_shape.items():
        if end not in impls or not d.get("streams", {}).get(shape_of(key).id) or key[0] < 8:
            continue
        streaming += 1
        frac = impls[end]["gbps"] / copy_gbps(shape_of(key).id)
        if frac < COPY_FRACTION_BAR:
            missed.append(f"{shape_of(key).spec} ({frac:.3f} of the copy)")
    return streaming, missed


def copy_verdict(streaming: int, missed: list[str]) -> str:
    return ("not judged: no shape of the set streams at batch >= 8" if not streaming else
            f"met at {streaming} of {streaming} shapes" if not missed else
            f"missed at {len(missed)} of {streaming} shapes: " + "; ".join(missed))


def roofline_reading(d: dict, by_shape: dict, end: str, ceilings: dict | None) -> list[str]:
    """Target 1 read again against the run's roofline copy, for a run whose decode copy took no lead-in (its bar
    reads low: roofline_copy_line); none for a run whose copy took one, or that has no roofline copy."""
    dram = roofline_bar(d, ceilings)
    if not dram:
        return []
    verdict = copy_verdict(*copy_misses(d, by_shape, end, lambda _: dram))
    return [f"  - Against the run's roofline copy instead ({dram:.0f} GB/s), since its decode copy took no lead-in "
            f"and reads low: {verdict}."]


def targets(d: dict, by_shape: dict, end: str, peers: set, gpu: str = "this GPU", ceilings: dict | None = None
            ) -> list[str]:
    """Issue 50's targets judged from one mode's rows: each a line saying met or missed and by how much (`gpu`:
    how target 4's line names the GPU the set ran on; `ceilings`: the run's, for roofline_reading)."""
    t2_missed, t3 = [], []
    for key, impls in by_shape.items():
        if end not in impls:
            continue
        best = fastest_peer(impls, peers)
        if best:
            speed, lo, _ = speed_interval(impls[end], best)
            if speed < SPEED_BAR or lo <= SPEED_BAR - TARGET_MARGIN:  # the point too, as issue 46 reads "at least"
                t2_missed.append(f"{shape_of(key).spec} ({speed:.4f}, lower end {lo:.3f} against {best['impl']})")
        if key[0] == 1:
            t3.append((key, impls[end]["gbps"] / copy_of(d, shape_of(key).id)))
    verdict = copy_verdict(*copy_misses(d, by_shape, end, lambda shape_id: copy_of(d, shape_id)))
    lines = [f"- Target 1 (at least {COPY_FRACTION_BAR:.0%} of the copy bandwidth where the cache streams from HBM, "
             f"batch >= 8): {verdict}."] + roofline_reading(d, by_shape, end, ceilings)
    lines.append(f"- Target 2 (at least {SPEED_BAR:.2f}× the fastest peer, the interval's lower end above "
                 f"{SPEED_BAR - TARGET_MARGIN:.2f}): "
                 + ("met at every shape a peer takes." if not t2_missed else
                    f"missed at {len(t2_missed)}: " + "; ".join(t2_missed) + "."))
    lines += [f"- Target 3 (batch 1: at least {BATCH_ONE_BAR:.0%} of the copy): {shape_of(k).spec} at {f:.2f} "
              f"({'met' if f >= BATCH_ONE_BAR else 'missed'})." for k, f in t3]
    total, profiled = d.get("seconds", {}).get("total"), d.get("seconds", {}).get("profile")
    if total is not None:
        of_it = f", {profiled:.1f} s of it Nsight Compute's" if profiled is not None else ""
        lines.append(f"- Target 4 (the decode set adds at most {SECONDS_BAR:.0f} s to a run, on an H100): "
                     f"{total:.1f} s on {gpu}{of_it} ({'within' if total <= SECONDS_BAR else 'over'}).")
    return lines


def front_page(d: dict, ceilings: dict | None = None) -> str:
    """The decode set in one sentence (README.md's generated block): the end, hot, at the shapes whose cache streams
    from HBM its share of the copy bandwidth, and its speed against the fastest peer at every shape a peer takes
    (medians); "" where the run has no hot decode rows. Where the copy took no lead-in and the run has a roofline copy
    (`ceilings`), the shares are given against both (roofline_copy_line)."""
    end, by_shape = d.get("end"), medians(d.get("rows", []), "hot")
    peers = {r["impl"] for r in d.get("rows", [])} - set(d.get("steps", []))
    if not end or not by_shape or not d.get("copy"):
        return ""
    dram = roofline_bar(d, ceilings)
    shares, roofline_shares, speeds = [], [], []
    for key, impls in by_shape.items():
        if end not in impls:
            continue
        if d.get("streams", {}).get(shape_of(key).id):
            shares.append(impls[end]["gbps"] / copy_of(d, shape_of(key).id))
            if dram:
                roofline_shares.append(impls[end]["gbps"] / dram)
        if best := fastest_peer(impls, peers):
            speeds.append(speed_interval(impls[end], best)[0])
    text = (f"The decode branch's end, `{end}`, hot, at the {len(d['shapes'])} decode shapes (1-8 new queries against "
            "a K/V cache)")
    if shares:
        text += f": {min(shares):.2f}-{max(shares):.2f} of the GPU's copy bandwidth where the cache streams from HBM"
        if dram:
            text += (f" (a copy taken with no lead-in, which reads low; {min(roofline_shares):.2f}-"
                     f"{max(roofline_shares):.2f} of the run's roofline copy)")
    if speeds:
        text += (f"; {min(speeds):.3f}×-{max(speeds):.3f}× the fastest peer measured ({', '.join(sorted(peers))}; "
                 f"geometric mean {geomean(speeds):.3f}× over the {len(speeds)} shapes a peer takes)")
    return text + "."


def end_row(key: tuple, here: dict, end: str, peers, copy: float, streams: dict) -> list[str]:
    """A shape's row of the end's table: its time, bandwidth and share of the copy, the fastest peer
    (in a fixed order where two tie) and the end's speed against it."""
    row = here.get(end)
    best = fastest_peer(here, peers)
    cells = [shape_of(key).spec, "yes" if streams.get(shape_of(key).id) else "no"]
    if row is None:
        cells += [MISSING] * 3
    else:
        cells += [f"{row['median_us']:.1f} [{row['ci_lo_us']:.1f}, {row['ci_hi_us']:.1f}]",
                  f"{row['gbps']:.0f}", f"{row['gbps'] / copy:.2f}"]
    if best is None or row is None:
        return cells + [best["impl"] if best else "none takes it", MISSING]
    r, lo, hi = speed_interval(row, best)
    return cells + [f"{best['impl']} {best['median_us']:.1f}", f"{r:.3f} [{lo:.3f}, {hi:.3f}]"]


def cold_excess(d: dict) -> tuple[int, float, float, float] | None:
    """Each implementation's cold median less its hot one (µs) at the shapes whose cache streams from HBM: (pairs,
    least, most, median); None where the run timed no such shape in both modes."""
    import statistics

    hot, cold, streams = medians(d["rows"], "hot"), medians(d["rows"], "cold"), d.get("streams", {})
    xs = [cold[k][i]["median_us"] - hot[k][i]["median_us"] for k in cold if k in hot and streams.get(shape_of(k).id)
          for i in cold[k] if i in hot[k]]
    return (len(xs), min(xs), max(xs), statistics.median(xs)) if xs else None


def cold_flush_line(d: dict, flush: dict | None) -> str:
    """What the cold rows' L2 flush was (env.json's cold_flush; absent: the overwrite of the runs before it) and
    what cold cost over hot at the streaming shapes, where the overwrite's dirty lines were written back in the
    timed call (data/explorations/2026-12-04-cold-flush-writeback)."""
    read = recorded_flush({"cold_flush": flush}) == "read"
    text = f"**The cold flush**: this run {cold_flush_words(flush)}."
    if excess := cold_excess(d):
        n, lo, hi, med = excess
        text += (f" At the shapes whose cache streams from HBM, the cold median is {med:.1f} µs above the hot one "
                 f"(median over {n} implementation × shape pairs; {lo:.1f} to {hi:.1f})")
        text += "." if read else (": the write-back, where a call keeps the DRAM busy "
                                  "(data/explorations/2026-12-04-cold-flush-writeback), which target 1's cold verdicts "
                                  "below include.")
    return text


def not_measured(d: dict) -> str:
    """The decode peers issue 50 names that the run did not measure, with why: decode.json's record, or, for a
    run recorded before it, this code's (lab.measure.decode_peers.NOT_WIRED, said as such)."""
    from lab.measure.decode_peers import NOT_WIRED

    recorded = d.get("peers_not_measured")
    absent = recorded if recorded is not None else NOT_WIRED
    if not absent:
        return "Every decode peer issue 50 names was measured."
    said = "; ".join(f"**{name}**: {why}" for name, why in absent.items())
    return ("Not measured: " + said + "." + ("" if recorded is not None else
            " (This run predates the record; the reasons are today's code's.)"))


def sources_changed(d: dict) -> str:
    """A sentence naming the decode steps whose sources in this tree no longer hash as the run built them (decode.json's
    builds), with the files changed since; "" where every recorded hash matches (or none was recorded)."""
    from lab.report.provenance import files_changed_against, sources_against

    builds = d.get("builds") or {}
    _, differ = sources_against(list(d.get("steps", [])), builds)
    if not differ:
        return ""
    files = files_changed_against(differ, builds)
    where = f" (files changed since: {', '.join(f'`kernels/{f}`' for f in files)})" if files else ""
    return (f"The sources of {len(differ)} of the {len(d.get('steps', []))} decode steps in this tree differ from "
            f"those this run built ({', '.join(differ)}){where}: the numbers below are of the code as it was built.")


def what_is_left_out(d: dict) -> list[str]:
    """The lines after the decode section's opening: the steps left out and why, the steps whose sources changed
    since the run built them, the peers not measured."""
    L = [f"- `{step}` left out: {why}" for step, why in sorted(d.get("excluded", {}).items())] + [""]
    stale = sources_changed(d)
    if stale:
        L += [stale, ""]
    return L + [not_measured(d), ""]


def other_gpu_lines(ctx: Context) -> list[str]:
    """Issue 50's targets judged on the report's BASE as well, where it ran on another GPU model with a decode set (the
    issue judges them on an H100 and an H200): its own end, peers and copy, hot and cold, as this run's are."""
    other = getattr(ctx, "base", None)
    if not base_on_another_gpu(ctx.data, other) or not other.rec.has("decode.json"):
        return []
    d = other.rec.read_json("decode.json")
    if not d.get("rows") or not d.get("copy") or not d.get("end"):
        return []
    peers = {r["impl"] for r in d["rows"]} - set(d.get("steps", []))
    L = [f"**On the other GPU** ({other.env['gpu']}: run {other.run_id}, the run this report is replicated against, "
         f"its decode end `{d['end']}`, its copy {d['copy']['gbps']:.0f} GB/s), against issue 50's targets:", ""]
    for mode in ("hot", "cold"):
        by_shape = medians(d["rows"], mode)
        if by_shape:
            lines = targets(d, by_shape, d["end"], peers, "that GPU", getattr(other, "ceilings", None))
            L += [f"- {mode.capitalize()}:"] + ["  " + line for line in lines]
    return L + [""]


def section_decode(ctx: Context) -> list[str]:
    rec = ctx.data.rec
    if not rec.has("decode.json"):
        return []
    d = rec.read_json("decode.json")
    if not d.get("shapes"):
        return []
    from lab.kernels import manifest

    L, add = new_lines()
    add("## Decode: one to eight new queries against a K/V cache")
    add("")
    if d.get("error"):
        add(f"The decode set stopped with an error: `{d['error'][:300]}`; what it measured before is below.")
        add("")
    if not d.get("rows") or not d.get("copy"):
        add("No decode shape was timed.")
        add("")
        return L
    end = d.get("end")
    copy = d["copy"]["gbps"]
    steps = [s for s in d.get("steps", []) if s not in d.get("excluded", {})]
    impls = {r["impl"] for r in d["rows"]}
    peers = impls - set(d.get("steps", []))
    copies = sorted(c["gbps"] for c in d.get("copies", {}).values())
    where = (f"timed after the prefill study in {len(copies)} processes, one a GPU, each shape's implementations in "
             f"one of them; each process measured the GPU's copy beside its shapes, {copies[0]:.0f}-{copies[-1]:.0f}"
             f" GB/s (the stage's own process: {copy:.0f})" if copies else
             f"timed in one process after the prefill study; the GPU copies {copy:.0f} GB/s")
    add(f"{len(d['shapes'])} decode shapes (`DECODE`), {len(steps)} decode steps and the peers "
        f"{', '.join(sorted(peers)) or 'none'}, {where} (read plus write of {d['copy']['bytes'] >> 20} MB, the "
        f"median of {d['copy'].get('samples', MISSING)} hot samples{lead_in_words(d['copy'])}). A call's bandwidth "
        "is the bytes it must move (the valid K/V once, Q read, O written) over its median, and its share of the copy "
        "is against the copy of the process that timed it.")
    L += copy_caveats(d, getattr(ctx.data, "ceilings", None))
    L += what_is_left_out(d)
    modes = [m for m in ("hot", "cold") if any(r.get("mode") == m for r in d["rows"])]
    for mode in modes:
        if mode == "cold":
            L += [cold_flush_line(d, ctx.data.env.get("cold_flush")), ""]
        by_shape = medians(d["rows"], mode)
        table = [end_row(key, here, end, peers, copy_of(d, shape_of(key).id), d.get("streams", {}))
                 for key, here in by_shape.items()]
        add(f"**The decode branch's end, `{end}`, {mode}** (µs: median [95 % CI]; of copy: its GB/s over the "
            "copy's; speed: the fastest peer's time over the end's, > 1 the end faster; sdpa_default, which runs one "
            "of SDPA's backends, is the fastest peer only where none of them was timed):")
        add("")
        add(md_table(["shape (B,H,H_kv,D,tokens)", "streams", "µs", "GB/s", "of copy", "fastest peer (µs)",
                      "speed"], table, "llrrrlr", compact=True))
        add("")
        add(f"Against issue 50's targets ({mode}):")
        add("")
        L.extend(targets(d, by_shape, end, peers, ceilings=getattr(ctx.data, "ceilings", None)))
        add("")
    L += other_gpu_lines(ctx)
    hot = medians(d["rows"], modes[0])
    bought = []
    for step in steps:
        parent = manifest.get(step).parent
        ratios = [speed_interval(h[step], h[parent])[0] for h in hot.values() if step in h and parent in h]
        if not parent or not ratios:
            continue
        low, high = manifest.get(step).speedup if manifest.get(step).speedup else (None, None)
        bought.append([f"`{step}`", f"`{parent}`", f"{geomean(ratios):.3f}", f"{min(ratios):.3f}-{max(ratios):.3f}",
                       f"{low}-{high}" if low is not None else MISSING])
    if bought:
        add(f"**What each decode step bought** ({modes[0]}; speed over its parent: the parent's median over the "
            "step's, the geometric mean and the range over the shapes both were timed at):")
        add("")
        add(md_table(["step", "parent", "speed (geomean)", "range", "predicted"], bought, "llrrr", compact=True))
        add("")
    L.extend(profile_lines(d))
    return L


def profile_lines(d: dict) -> list[str]:
    """Nsight Compute's DRAM throughput of each decode step and peer at the profiled shapes (decode.json's
    "profile", lab.measure.decode_profile's records), a table a shape; a line saying so where the run has none."""
    records = d.get("profile")
    if records is None:
        return ["The decode calls were not profiled in this run (`PROFILE=0`, or a run from before the decode "
                "profile, lab.measure.decode_profile).", ""]
    L, add = new_lines()
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    for spec in shapes:
        here = [r for r in records if r["shape"] == spec]
        rows = [[f"`{r['impl']}`", str(r["n_kernels"]), fmt(r["duration_us"], 1), fmt(r["dram_throughput_pct"], 1),
                 fmt(r["main_dram_throughput_pct"], 1), fmt(r["main_grid_size"], 0)] if r.get("ok") else
                [f"`{r['impl']}`", MISSING, MISSING, MISSING, MISSING, f"not profiled: {r.get('reason', '')[:200]}"]
                for r in here]
        add(f"**Nsight Compute at {spec}** (one call of each, caches flushed between replay passes, so a cold "
            "call; DRAM throughput: the kernels' own, % of the DRAM's peak, weighted by their durations, launch gaps "
            "left out; µs: the kernels' summed durations):")
        add("")
        add(md_table(["implementation", "kernels", "µs", "DRAM throughput (%)", "longest kernel's (%)",
                      "its grid"], rows, "lrrrrr", compact=True))
        add("")
    return L
