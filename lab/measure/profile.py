"""Nsight Compute over one launch of each implementation per shape (its CSV parsed by lab.measure.ncu_metrics).

Host side (needs ncu and a GPU; never raises where profiling is impossible):

    >>> from lab.measure import profile
    >>> r = profile.profile_impl("wmma", (4, 16, 4096, 64), causal=False, out_dir=Path("data/prof"))
    >>> r.ok, r.reason, r.main["duration"], r.main["top_stalls"]
    >>> r.to_record()                       # one flat dict, a pandas row

It runs, in the repository root,

    ncu --clock-control none --print-units base --nvtx --nvtx-include profile/ --csv --page raw \
        --metrics <METRICS> python -m lab.measure.profile --target IMPL --shape B,H,S,D [--causal]

Target side (inside ncu): builds nothing new for a variant that profile_impl has built, makes the
shape's inputs (fp16, or bf16 where the shape says so; K/V with its K/V heads: `--shape` takes
lab.kernels.shape's words, e.g. `4,32,2048,128,kv8,bf16`), runs two warm-up launches, then exactly one launch inside the NVTX push/pop range
`profile`, which is all that ncu profiles. IMPL is a variant name or a peer's (lab.measure.peers).

Clocks are left alone (`--clock-control none`, never `base`): ncu's default locks the SM clock to
base, which would make its durations disagree with lab.measure.timing's. Caches are flushed between
replay passes (ncu's default `--cache-control all`), so `duration` is a cold-cache time.

The roofline a result is set against (`achieved_tflops`, `arithmetic_intensity`, the measured ceilings):
lab.measure.roofline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lab.cli import OneLineParser
from lab.measure.ncu_process import failure_reason, find_ncu, first_line, run_in_group
from lab.kernels.shape import DTYPES, Shape, dtype_name
from lab.measure.ncu_metrics import (DERIVED, HYPOTHESIS_ALIASES, METRICS, OPTIONAL_METRICS, main_kernel, parse_ncu_csv,
                                      plain_number)
from lab.measure.roofline import achieved_tflops, arithmetic_intensity, measure_ceilings
from lab.measure.stats import attention_flops

PROFILE_RANGE = "profile"
DEFAULT_TIMEOUT_S = 300.0


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

RECORD_METRICS = tuple(METRICS) + tuple(OPTIONAL_METRICS) + ("duration_us",) + DERIVED + HYPOTHESIS_ALIASES


def _inputs(shape, causal: bool) -> Shape:
    """The problem profiled: a Shape (its K/V heads and dtype kept, `causal` as given) or a
    (B, H, S, D) tuple (fp16, as many K/V heads as query heads)."""
    if isinstance(shape, Shape):
        return Shape(*shape.dims, bool(causal), shape.H_kv, shape.dtype)
    return Shape(*(int(x) for x in shape), bool(causal))


@dataclass
class ProfileResult:
    impl: str
    shape: tuple[int, int, int, int]  # (B, H, S, D)
    causal: bool
    ok: bool
    reason: str = ""
    csv_path: str = ""
    kernels: list[dict] = field(default_factory=list)
    main: dict | None = None
    H_kv: int | None = None  # K/V heads (None: H)
    dtype: str = "fp16"

    def to_record(self) -> dict:
        """A flat dict (one pandas row): identity, outcome and the main kernel's metrics."""
        B, H, S, D = self.shape
        rec = {"impl": self.impl, "B": B, "H": H, "S": S, "D": D, "causal": bool(self.causal),
               "H_kv": H if self.H_kv is None else self.H_kv, "dtype": DTYPES[dtype_name(self.dtype)], "ok": self.ok,
               "reason": self.reason, "csv_path": self.csv_path, "n_kernels": len(self.kernels),
               "kernel": self.main.get("kernel") if self.main else None}
        m = self.main or {}
        for key in RECORD_METRICS:
            v = m.get(key)
            if key == "top_stalls":
                v = ";".join(f"{r}:{val:.4g}" for r, val in v) if v else ""
            rec[key] = v
        flops = attention_flops(B, H, S, D, self.causal)
        rec["achieved_tflops"] = achieved_tflops(B, H, S, D, self.causal, m.get("duration"))
        rec["arithmetic_intensity"] = arithmetic_intensity(flops, m.get("dram_bytes"))
        return rec


def _result(impl: str, s: Shape, **kw) -> ProfileResult:
    return ProfileResult(impl=impl, shape=s.dims, causal=s.causal, H_kv=s.H_kv, dtype=s.dtype, **kw)


def shape_id(shape, causal: bool) -> str:
    """'B4_H16_S4096_D64_full' ('_kv8_bf16' where they apply): the stem of a profile's files."""
    s = _inputs(shape, causal)
    return "_".join([f"B{s.B}_H{s.H}_S{s.S}_D{s.D}_{'causal' if s.causal else 'full'}", *s.input_words])


def ncu_command(ncu: str, impl: str, shape, causal: bool, metrics: dict[str, str] | None = None) -> list[str]:
    s = _inputs(shape, causal)
    metric_names = ",".join(dict.fromkeys((metrics or METRICS).values()))
    cmd = [ncu, "--clock-control", "none", "--print-units", "base", "--nvtx", "--nvtx-include", f"{PROFILE_RANGE}/",
           "--csv", "--page", "raw", "--metrics", metric_names,
           sys.executable, "-m", "lab.measure.profile", "--target", impl, "--shape",
           ",".join([f"{s.B},{s.H},{s.S},{s.D}", *s.input_words])]
    if causal:
        cmd.append("--causal")
    return cmd


def _prebuild(impl: str) -> str | None:
    """Build a variant here (not under ncu); None if fine or not a variant, else why not."""
    from lab.kernels import switches
    from lab.measure import peers

    if peers.is_peer(impl):
        return None
    try:
        switches.impl_config(impl)  # a variant or a knock-out configuration of one
    except (KeyError, ValueError) as exc:
        return f"unknown implementation {impl!r}: {str(exc).strip()[:300]}"
    try:
        result = switches.build_impl(impl)
    except Exception as exc:  # noqa: BLE001 - recorded as the reason, never raised
        return f"build failed: {type(exc).__name__}: {str(exc).strip()[:300]}"
    if not result.ok:
        return f"build failed: {result.log.strip()[:300]}"
    return None


def profile_impl(impl: str, shape, causal: bool, out_dir, timeout: float = DEFAULT_TIMEOUT_S,
                 prebuild: bool = True, gpu: str | None = None) -> ProfileResult:
    """ncu over one launch of impl on shape (on `gpu`: run_in_group's); returns ok=False with a reason
    where it cannot.

    Never raises for a missing ncu, a refusal (no counter permission, non-zero exit), a timeout,
    a failed build or an empty capture. The raw CSV goes to out_dir/ncu_<impl>_<shapeid>.csv and
    ncu's stderr next to it (.log).
    """
    shape = _inputs(shape, causal)
    result = _result(impl, shape, ok=False)
    ncu = find_ncu()
    if ncu is None:
        result.reason = "ncu (Nsight Compute) not found on PATH or under CUDA_HOME/bin"
        return result
    if prebuild:
        why = _prebuild(impl)
        if why:
            result.reason = why
            return result
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"ncu_{impl}_{shape_id(shape, causal)}"
    csv_path = out_dir / f"{stem}.csv"
    cmd = ncu_command(ncu, impl, shape, causal)
    try:
        rc, out, err = run_in_group(cmd, timeout, gpu)
    except subprocess.TimeoutExpired:
        result.reason = f"ncu timed out after {timeout:g} s"
        return result
    except OSError as exc:
        result.reason = f"ncu could not be started: {exc}"
        return result
    csv_path.write_text(out)
    (out_dir / f"{stem}.log").write_text(" ".join(cmd) + "\n" + err)
    result.csv_path = str(csv_path)
    why = failure_reason(rc, out, err)
    if why:
        result.reason = why
        return result
    result.kernels = parse_ncu_csv(out)
    if not result.kernels:
        both = out + "\n" + err
        warnings = [ln.strip() for ln in both.splitlines() if "==WARNING==" in ln and "GPU clocks" not in ln]
        detail = first_line(both, "==ERROR==") or (warnings[0] if warnings else None)
        result.reason = f"ncu captured no kernel in the NVTX range '{PROFILE_RANGE}'" + (f" ({detail})" if detail else "")
        return result
    result.main = main_kernel(result.kernels)
    result.ok = True
    return result


VARIANT_KERNEL = "attention_fwd"  # every variant's kernel is named so (one launch per call)
# The kernel that ends each peer's launches in a batch of peers (torch.cuda._sleep's): a peer's call may
# launch helper kernels beside its main one, so the capture is cut at these, not counted.
SEPARATOR_KERNEL = "spin_kernel"
SEPARATOR_CYCLES = 1000


def run_capture(cmd: list[str], out_dir: Path, stem: str, timeout: float, gpu: str | None = None,
                runner=None) -> tuple[list[dict] | None, str, str]:
    """One ncu command (`runner(cmd, timeout, gpu)`, run_in_group's by default): its output to
    out_dir/<stem>.csv, the command and ncu's stderr to <stem>.log. (the captured kernels, "", the CSV's path),
    or (None, why not, the CSV's path where ncu ran, else "")."""
    try:
        rc, out, err = (runner or run_in_group)(cmd, timeout, gpu)
    except subprocess.TimeoutExpired:
        return None, f"ncu timed out after {timeout:g} s", ""
    except OSError as exc:
        return None, f"ncu could not be started: {exc}", ""
    csv_path = out_dir / f"{stem}.csv"
    csv_path.write_text(out)
    (out_dir / f"{stem}.log").write_text(" ".join(cmd) + "\n" + err)
    if why := failure_reason(rc, out, err):
        return None, why, str(csv_path)
    return parse_ncu_csv(out), "", str(csv_path)


def _profile_batch(names: list[str], shape: Shape, causal: bool, out_dir, stem: str, split,
                   timeout: float, gpu: str | None = None) -> list[ProfileResult] | None:
    """One ncu process over one launch of each of `names`, in order; `split(kernels)` gives each name's
    kernels (a list per name) or None where the capture does not map. None where ncu fails as a whole
    or the capture does not map: the caller then profiles them one by one (profile_impl), which
    records the reasons."""
    ncu = find_ncu()
    if ncu is None or not names:
        return None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    kernels, _, csv_path = run_capture(ncu_command(ncu, ",".join(names), shape, causal), out_dir, stem, timeout, gpu)
    if kernels is None:
        return None
    parts = split(kernels)
    if parts is None or len(parts) != len(names) or not all(parts):
        return None
    return [_result(name, shape, ok=True, csv_path=csv_path, kernels=ks, main=main_kernel(ks))
            for name, ks in zip(names, parts)]


def profile_variants(names: list[str], shape, causal: bool, out_dir, timeout: float = DEFAULT_TIMEOUT_S,
                     gpu: str | None = None) -> list[ProfileResult] | None:
    """One ncu process over one launch of each variant in `names`, in order: most of a profile's
    time is process start-up (Python, torch, CUDA context, ncu), not the 7 replay passes.

    A variant's call launches exactly one kernel, so the captured kernels map to the variants in
    launch order; the capture is accepted only when it has one kernel per variant, each named
    VARIANT_KERNEL. Returns None otherwise (or when ncu fails as a whole), and the caller profiles
    the variants one by one (profile_impl), which records the reasons. A variant that does not
    build gets its own failed result here and is left out of the batch.
    """
    shape = _inputs(shape, causal)
    if find_ncu() is None or not names:
        return None
    results, batch = {}, []
    for name in names:
        why = _prebuild(name)
        if why:
            results[name] = _result(name, shape, ok=False, reason=why)
        else:
            batch.append(name)

    def one_each(kernels):
        if len(kernels) != len(batch) or not all(VARIANT_KERNEL in str(k.get("kernel", "")) for k in kernels):
            return None
        return [[k] for k in kernels]

    if batch:
        together = _profile_batch(batch, shape, causal, out_dir, f"ncu_variants_{shape_id(shape, causal)}", one_each,
                                  timeout, gpu)
        if together is None:
            return None
        results.update({r.impl: r for r in together})
    return [results[n] for n in names]


def split_at_separators(kernels: list[dict]) -> list[list[dict]] | None:
    """A peer batch's capture cut into each peer's kernels: every peer's launch is followed by one
    SEPARATOR_KERNEL. None where the capture does not end in one (a peer's launch failed part way)."""
    parts, current = [], []
    for k in kernels:
        if SEPARATOR_KERNEL in str(k.get("kernel", "")):
            parts.append(current)
            current = []
        else:
            current.append(k)
    return None if current else parts


def profile_peers(names: list[str], shape, causal: bool, out_dir, timeout: float = DEFAULT_TIMEOUT_S,
                  gpu: str | None = None) -> list[ProfileResult] | None:
    """One ncu process over one launch of each peer in `names`, in order (profile_variants' reason: a
    process a peer and shape, 12 of them at a run's three shapes, made the profile stage 42.6 s longer:
    data/checks/2026-11-27-h100-run-within-cost).
    A peer's launch may hold several kernels, so the target ends each with a SEPARATOR_KERNEL and the
    capture is cut there; it is accepted only with one non-empty part per peer, else None (the caller
    then profiles them one by one)."""
    shape = _inputs(shape, causal)
    return _profile_batch(list(names), shape, causal, out_dir, f"ncu_peers_{shape_id(shape, causal)}",
                          split_at_separators, timeout, gpu)


def profile_all(impls, shapes, out_dir, causal_flags=(False,), progress=print, **kwargs) -> list[ProfileResult]:
    """profile_impl over every (impl, shape, causal); a skipped one never stops the rest."""
    results = []
    for shape in shapes:
        for causal in causal_flags:
            for impl in impls:
                try:
                    r = profile_impl(impl, shape, causal, out_dir, **kwargs)
                except Exception as exc:  # noqa: BLE001 - profiling must never stop a run
                    r = _result(impl, _inputs(shape, causal), ok=False,
                                reason=f"profiling raised {type(exc).__name__}: {exc}")
                results.append(r)
                if progress:
                    m = r.main or {}
                    progress(f"  {impl:<18} {shape_id(shape, causal):<28} "
                             + (f"{m.get('duration'):.1f} us, {r.to_record()['top_stalls']}" if r.ok and
                                plain_number(m.get("duration")) is not None else f"skipped: {r.reason}"))
    return results


# ---------------------------------------------------------------------------------------------
# Target side (runs inside ncu)
# ---------------------------------------------------------------------------------------------

def target(impl: str, shape, causal: bool) -> None:
    """One profiled launch of impl; impl may be a comma-separated list of variants, or of peers (one
    launch each, in that order, on the same inputs: see profile_variants and profile_peers)."""
    import torch

    shape = _inputs(shape, causal)
    q, k, v = shape.random_inputs()
    if "," in impl:
        from lab.kernels import switches, variants
        from lab.measure import peers

        names = impl.split(",")
        if all(peers.is_peer(n) for n in names):
            for name in names:
                _peer_launch(name, q, k, v, causal)
                separator()
            return
        unknown = [n for n in names if not switches.is_impl(n)]
        if unknown:
            raise SystemExit("only variants, or only peers, can be profiled together; not variants: "
                             + ", ".join(unknown))
        variants.check_inputs(q, k, v)
        out = torch.empty_like(q)
        for name in names:
            attn = switches.build_impl(name).load()
            _refuse_not_taken(attn, shape)
            launch_once(lambda attn=attn: attn.launch(q, k, v, out, causal, None))
        return
    from lab.measure import peers

    if peers.is_peer(impl):
        _peer_launch(impl, q, k, v, causal)
    else:
        from lab.kernels import switches, variants

        if not switches.is_impl(impl):
            raise SystemExit(f"unknown implementation {impl!r}; known: {', '.join(variants.names())}, "
                             f"their knock-outs <variant>~no_<switch>, {', '.join(peers.known_names())}")
        attn = switches.build_impl(impl).load()
        variants.check_inputs(q, k, v)
        _refuse_not_taken(attn, shape)
        out = torch.empty_like(q)
        launch_once(lambda: attn.launch(q, k, v, out, causal, None))


def _peer_launch(impl: str, q, k, v, causal: bool) -> None:
    from lab.measure import peers

    try:
        peer = peers.get(impl)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    if impl == peers.FLEX:
        # ncu follows child processes: compile in this one (from the inductor cache the
        # timing stage filled) rather than in a pool of compile workers
        import torch._inductor.config as inductor_config

        inductor_config.compile_threads = 1
    with peer.context():
        # the warm-up launches compile where the peer compiles (flex_attention), outside the range
        launch_once(peer.bind(q, k, v, causal, None))


def separator() -> None:
    """One SEPARATOR_KERNEL in the profiled range, after a peer's launch in a batch of peers."""
    import torch

    torch.cuda.nvtx.range_push(PROFILE_RANGE)
    torch.cuda._sleep(SEPARATOR_CYCLES)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def _refuse_not_taken(attn, shape: Shape) -> None:
    """A variant asked for inputs it does not take exits with why (the profile stage leaves such a
    variant out beforehand; this keeps a direct `--target` call from launching it on them)."""
    if why := attn.not_taken(shape):
        raise SystemExit(why)


def launch_once(launch) -> None:
    import torch

    for _ in range(2):
        launch()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(PROFILE_RANGE)
    launch()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m lab.measure.profile", description=__doc__.splitlines()[0])
    p.add_argument("--target", metavar="IMPL", help="(inside ncu) run one profiled launch of IMPL")
    p.add_argument("--impls", help="host side: comma-separated variants and peers (sdpa_<backend>, "
                   "flex_attention, ...)")
    p.add_argument("--shape", type=Shape.parse, default=Shape(4, 16, 4096, 64, False),
                   help="B,H,S,D[,causal][,kvN][,fp16|bf16] (lab.kernels.shape)")
    p.add_argument("--causal", action="store_true", help="causal (as ',causal' in --shape)")
    p.add_argument("--out", default="data/profile", help="host side: folder for CSVs and records.json")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    p.add_argument("--ceilings", action="store_true", help="measure and print the GPU's roofline ceilings")
    args = p.parse_args(argv)
    dims, causal = args.shape, args.causal or args.shape.causal
    if args.target:
        target(args.target, dims, causal)
        return 0
    if args.ceilings:
        print(json.dumps(measure_ceilings(), indent=1))
    if args.impls:
        results = profile_all(args.impls.split(","), [dims], args.out, causal_flags=(causal,), timeout=args.timeout)
        path = Path(args.out) / f"records_{shape_id(dims, causal)}.json"
        path.write_text(json.dumps([r.to_record() for r in results], indent=1, default=str))
        print(f"records: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
