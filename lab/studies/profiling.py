"""The profile stage's work: which shapes and implementations go to Nsight Compute
(lab.measure.profile), and the records it leaves (profile.csv, ncu/, profile_status.json)."""

from __future__ import annotations

from lab.kernels.shape import Shape

# SDPA's default backend is cuDNN on the H100/H200 and "efficient" is never the fastest: profiling
# flash and cuDNN covers the SDPA peers the report compares against. flex_attention is profiled
# too: its profiling process compiles it (from the inductor cache the timing stage filled) before
# the profiled launch, which lab.measure.profile's timeout bounds; and FlashAttention-3 where present
# (its Nsight Compute duration is the check on its hot timing: issue 45).
PROFILED_BACKENDS = ("flash", "cudnn")
PROFILED_PEERS = tuple(f"sdpa_{b}" for b in PROFILED_BACKENDS) + ("flex_attention", "flash_attn3")
NOT_PROFILED_REASON = ("not profiled: only " + ", ".join(PROFILED_PEERS) + " are (lab.studies.profiling.PROFILED_PEERS), "
                       "to keep the profile stage within a run's time")


# The peer whose hot medians Nsight Compute checks, shape by shape (lab.measure.ncu_xval): the first of
# these the run times (FA3: issue 45's target; cuDNN where FA3 is absent).
XVAL_PEERS = ("flash_attn3", "sdpa_cudnn")


def xval_plan(summary, timed: list[str]) -> tuple[str | None, dict[Shape, int]]:
    """The peer to cross-check and its shapes: every hot row of it in the timing's summary
    (lab.studies.derived.summary) whose median is at least lab.measure.ncu_xval.MIN_US, with the input
    sets its hot mode rotated through. (None, {}) where the run times none of XVAL_PEERS."""
    from lab.measure.ncu_xval import MIN_US

    impl = next((n for n in XVAL_PEERS if n in timed), None)
    if impl is None or summary is None or not len(summary):
        return impl, {}
    rows = summary[(summary["impl"] == impl) & (summary["mode"] == "hot") & (summary["median_us"] >= MIN_US)]
    return impl, {Shape.from_row(r): _count(r.get("input_sets")) for r in rows.to_dict("records")}


def _count(x) -> int:
    """An input-set count of the summary (None or NaN where a run did not record it: one set)."""
    return 1 if x is None or x != x else int(x)


def select_profile_shapes(shapes: list[Shape], which: str = "all") -> list[Shape]:
    """The run's shapes to profile: "all" of them, or "distinct": one per (S, D) (runs recorded
    before the parameter existed profiled that way)."""
    if which == "all":
        return list(shapes)
    if which == "distinct":
        return one_per_s_and_d(shapes)
    raise ValueError(f"profile_shapes must be 'all' or 'distinct', not {which!r}")


def one_per_s_and_d(shapes: list[Shape]) -> list[Shape]:
    """One launch per implementation for each distinct (S, D) (and element type and query heads per
    K/V head, where a run has model inputs among its ladder shapes), non-causal where there is one:
    the cheaper choice where profiling every shape would not fit the time a run may take. The report
    says which shapes were profiled."""
    chosen: dict = {}
    for s in sorted(shapes, key=lambda s: (s.causal, -s.B * s.H)):
        chosen.setdefault((s.S, s.D, s.dtype, s.group), s)
    return list(chosen.values())


def judged_profile_work(steps, built: set[str], ladder: list[Shape], profiled: list[Shape]) -> dict[Shape, list[str]]:
    """The launches a step's hypothesis needs beyond the profiled shapes: for each built step whose
    manifest names a `judged_at` shape (`steps`: lab.kernels.manifest Variants) that the run times among its
    ladder shapes and does not profile, that step and its parent at that shape, {shape: names}. The
    report judges the step's metric there (a causal-only step's metric is not stood for by a non-causal
    launch); peers and knock-outs are not profiled at these shapes (lab.report.load: the rows' purpose)."""
    from lab.kernels.manifest import judged_shape

    work: dict[Shape, list[str]] = {}
    for v in steps:
        shape = judged_shape(v)
        if v.name not in built or shape is None or shape not in ladder or shape in profiled:
            continue
        names = work.setdefault(shape, [])
        for name in (v.parent, v.name):
            if name in built and name not in names:
                names.append(name)
    return work


JUDGED = "judged"  # profile.csv's purpose of the rows judged_profile_work asked for


PARTS = ("variants", "peers")  # a shape's two Nsight Compute processes (each with its one-by-one fallback)


def profile_shape(prof, shape, names, peer_names, out, progress=print, where=None, not_taken=None, gpu=None,
                  parts=PARTS) -> tuple[list[dict], str | None]:
    """profile_run's work at one shape (its arguments; `prof`: lab.measure.profile, `gpu`: the ncu
    processes' CUDA_VISIBLE_DEVICES entry), for `parts` of it ("variants": the steps and knock-outs, with
    the rows of those not taken; "peers"): the rows for profile.csv, and the reason Nsight Compute cannot run
    at all (missing, no counter permission) where a launch found one, else None."""
    rows, groups = [], []
    if "variants" in parts:
        here = [n for n in names if where is None or where(n, shape)]
        refused = {n: why for n in here if not_taken is not None and (why := not_taken(n, shape))}
        for n, why in refused.items():
            rows.append(prof.ProfileResult(n, shape.dims, shape.causal, ok=False, reason=f"not taken: {why}",
                                           H_kv=shape.H_kv, dtype=shape.dtype).to_record())
        groups.append(("variants", [n for n in here if n not in refused], prof.profile_variants))
    peers_here = [n for n in peer_names if where is None or where(n, shape)]
    if "peers" in parts and peers_here:
        groups.append(("peers", peers_here, prof.profile_peers))
    for label, impls, together_fn in groups:
        # the Shape itself, not (B, H, S, D): its K/V heads and dtype go to the profiled launch
        together = together_fn(list(impls), shape, shape.causal, out, gpu=gpu)
        if together is None and impls:
            progress(f"  profile {shape}: the {label} did not profile together; one by one instead")
        for res in together or []:
            rows.append(res.to_record())
            if not res.ok:
                progress(f"  profile {res.impl} {shape}: skipped ({res.reason})")
        for impl in [] if together is not None else impls:
            res = prof.profile_impl(impl, shape, shape.causal, out, gpu=gpu)
            rows.append(res.to_record())
            if not res.ok:
                progress(f"  profile {impl} {shape}: skipped ({res.reason})")
                if "ncu" in (res.reason or "") and ("not found" in res.reason or "permission" in res.reason.lower()):
                    return rows, res.reason
    return rows, None


def run_relative(rec, rows: list[dict]) -> list[dict]:
    """The rows with their captures named as the run folder's own files (RunRecord.relative)."""
    return [dict(r, csv_path=rec.relative(r.get("csv_path", ""))) for r in rows]


def profile_run(rec, names, shapes, peer_names, progress=print, not_profiled: dict | None = None,
                where=None, not_taken=None, tick=None, gpus: list[str] | None = None,
                purpose: dict | None = None) -> None:
    """Nsight Compute over one launch per (impl, shape); a refusal is recorded, never fatal.
    `not_profiled`: timed peers left out on purpose, {name: why}, kept in profile_status.json.
    `where(impl, shape)`: whether to profile a kernel there (default: everywhere). `not_taken(impl,
    shape)`: why a kernel does not take the shape's dtype or K/V heads ('' where it does); such a
    kernel is not launched, and its row in profile.csv says so. `tick(shape)` after each shape. `purpose`:
    {shape: why it is profiled} for shapes profiled for one reason only (JUDGED), profile.csv's `purpose`.
    `gpus`: CUDA_VISIBLE_DEVICES entries (lab.studies.gpu_pool.gpu_ids) sharing the work (issue 49): a shape's
    variants and its peers each a task on one GPU, each GPU's ncu with its own lock (ncu_process.ncu_tmpdir;
    data/checks/2026-11-28-h200x4-gpus-ablation); none or one: one shape after another on this process's GPU.
    profile.csv keeps the shapes' order (and within a shape, the variants' rows first) either way."""
    import queue
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    try:
        from lab.measure import profile as prof
    except ImportError as exc:
        rec.write_json("profile_status.json", {"ok": False, "reason": f"lab.measure.profile unavailable: {exc}"})
        return
    out = rec.path("ncu")
    out.mkdir(exist_ok=True)
    all_names = list(names)
    done: dict[tuple, list[dict]] = {}  # (shape index, part index) -> its rows
    fatal: list[str] = []  # ncu missing or refused: no later shape is profiled
    lock = threading.Lock()

    def write() -> None:  # the rows so far, in the shapes' order (under the lock)
        rec.write_table("profile.csv", pd.DataFrame(run_relative(rec, [r for i in sorted(done) for r in done[i]])))

    free = queue.Queue()
    for gpu in (gpus if gpus and len(gpus) > 1 else [None]):
        free.put(gpu)
    side_by_side_gpus = free.qsize() > 1
    # several GPUs: a shape's two parts are tasks of their own, the variants' (the longer) first, so that the
    # GPUs stay busy; one GPU: a shape's parts together, one shape after another
    tasks = ([(i, (part,)) for part in PARTS for i in range(len(shapes))] if side_by_side_gpus
             else [(i, PARTS) for i in range(len(shapes))])
    left = {i: len(PARTS) if side_by_side_gpus else 1 for i in range(len(shapes))}  # a shape's tasks not yet done

    def task(i: int, parts: tuple) -> None:
        if fatal:
            return
        shape = shapes[i]
        gpu = free.get()
        try:
            rows, why = profile_shape(prof, shape, all_names, peer_names, out, progress, where, not_taken, gpu, parts)
        finally:
            free.put(gpu)
        if why:
            fatal.append(why)
        rows = [{**row, "purpose": (purpose or {}).get(shape, "")} for row in rows]
        with lock:
            done[(i, PARTS.index(parts[0]))] = rows
            write()
            left[i] -= 1
            finished = left[i] == 0
        if fatal or not finished:
            return
        progress(f"  profiled {shape}" + (f" (GPU {gpu})" if gpu is not None else ""))
        if tick is not None:
            tick(str(shape))

    if not side_by_side_gpus:
        for i, parts in tasks:
            task(i, parts)
    else:
        progress(f"  {free.qsize()} GPUs side by side, a shape's variants and its peers each a task on one of them")
        with ThreadPoolExecutor(max_workers=free.qsize()) as pool:
            list(pool.map(task, *zip(*tasks)))  # list(): a task's exception is raised here
    if fatal:
        with lock:
            write()
        rec.write_json("profile_status.json", {"ok": False, "reason": fatal[0], "not_profiled": not_profiled or {}})
        return
    rec.write_json("profile_status.json", {"ok": True, "not_profiled": not_profiled or {}})


def ncu_crosscheck(rec, timed: list[str], progress=print, gpu: str | None = None) -> dict:
    """Nsight Compute's time per launch of the run's cross-checked peer (lab.studies.profiling.xval_plan) at
    every shape where its hot median is lab.measure.ncu_xval.MIN_US or more (ncu_xval.json); `gpu`: the
    CUDA_VISIBLE_DEVICES entry its ncu runs on (None: this process's GPU)."""
    from lab.measure import ncu_xval
    from lab.studies import derived

    impl, shapes = xval_plan(derived.summary(rec), timed)
    if not shapes:
        why = (f"the run times none of {', '.join(XVAL_PEERS)}" if impl is None
               else f"no hot median of {impl} is {ncu_xval.MIN_US:g} us or more")
        progress(f"  ncu cross-check: none ({why})")
        return {"impl": impl, "rows": [], "errors": {"all": why}}
    progress(f"  ncu cross-check: {impl} at {len(shapes)} shapes")
    return ncu_xval.crosscheck(impl, shapes, rec.path("ncu"), gpu=gpu)


def side_by_side(parts: list, together: bool) -> None:
    """Call each of `parts` (no arguments), all at once in threads where `together`, else one after another in
    order; a part's exception is raised here either way."""
    if not together:
        for part in parts:
            part()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        for done in [pool.submit(part) for part in parts]:
            done.result()
