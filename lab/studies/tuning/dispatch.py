"""The tuned dispatch: a shape class -> configuration table, and a callable that follows it.

Shape classes (the rule): head dim D, causal or not, and S short (S <= 1024) or long, e.g.
`D64-causal-long`. A tuning run chooses per class the configuration with the best geometric-mean
speedup over the default across that class's tuning shapes, and only when the lower end of its
95 % interval is above 1; otherwise (or with no tuning shape in the class) the class keeps the
default. The table is a small JSON file committed beside the kernel
(`kernels/variants/dispatch_<variant>.json`, the variant being the manifest's tuned kernel,
`lab.kernels.manifest.tuned_kernel()`), naming the run id that chose it.

    >>> from lab.studies.tuning import dispatch as td
    >>> attn = td.load()                    # builds the table's configurations (cached)
    >>> attn(q, k, v, is_causal=True)       # like the variant: picks the kernel by the launch shape
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lab.kernels import manifest
from lab.kernels.variants import VARIANTS_DIR, check_inputs

S_SPLIT = 1024  # S <= S_SPLIT is "short"
TUNED_SUFFIX = "+tuned"  # the tuned dispatch's impl name: `<variant>+tuned`
RULE = f"class = (D, causal, S <= {S_SPLIT} 'short' else 'long')"
Z95 = 1.959963984540054


def dispatch_path(variant: str | None = None) -> Path:
    return VARIANTS_DIR / f"dispatch_{variant or manifest.tuned_kernel()}.json"


def shape_class(D: int, causal: bool, S: int) -> str:
    """The class of a launch shape, e.g. 'D128-full-short'."""
    return f"D{int(D)}-{'causal' if causal else 'full'}-{'short' if S <= S_SPLIT else 'long'}"


def entry_for(table: dict, D: int, causal: bool, S: int) -> dict:
    """{"class", "impl", "defines"}: the table's configuration for the shape, or the default."""
    cls = shape_class(D, causal, S)
    entry = table.get("classes", {}).get(cls)
    if entry is None:
        return {"class": cls, "impl": table["variant"], "defines": {}}
    return {"class": cls, **entry}


def empty_table(variant: str | None = None) -> dict:
    return {"variant": variant or manifest.tuned_kernel(), "run_id": None, "rule": RULE, "classes": {}}


def read_table(path: Path | None = None, variant: str | None = None) -> dict:
    path = path or dispatch_path(variant)
    return json.loads(Path(path).read_text()) if Path(path).exists() else empty_table(variant)


def tables_of_other_steps(variant: str | None = None) -> list[dict]:
    """The committed dispatch tables tuned for another step than `variant` (default: the tuned kernel): left by
    a branch end that has moved on, so what they chose served that step, not this one."""
    own = dispatch_path(variant)
    return [read_table(p) for p in sorted(VARIANTS_DIR.glob("dispatch_*.json")) if p != own]


def other_steps_note(variant: str | None = None) -> str:
    """One sentence on the tables of tables_of_other_steps, '' if there are none."""
    others = [t for t in tables_of_other_steps(variant) if t.get("run_id")]
    if not others:
        return ""
    named = "; ".join(f"`dispatch_{t['variant']}.json` by run `{t['run_id']}` for `{t['variant']}`" for t in others)
    return (f"The committed dispatch tables were tuned for another step than `{variant or manifest.tuned_kernel()}`, "
            f"the one a table would serve now ({named}): what they chose is not this step's.")


# --- choosing the table from a tuning run ---------------------------------------------------


def _log_se(row) -> float:
    """Standard error of log(ratio) from its 95 % interval (log-symmetric approximation)."""
    lo, hi = row["ratio_to_default_lo"], row["ratio_to_default_hi"]
    return (math.log(hi) - math.log(lo)) / (2 * Z95) if lo > 0 and hi > lo else 0.0


def class_scores(tuning, mode: str = "hot"):
    """Per (class, impl) measured on every tuning shape of its class: the geometric-mean speedup
    over the default and its 95 % interval (log-space mean; per-shape standard errors from the
    shapes' bootstrap intervals, combined as independent). A DataFrame sorted best first."""
    import pandas as pd

    ok = tuning[(tuning["kind"] == "trial") & (tuning["status"] == "ok") & (tuning["mode"] == mode)].copy()
    cols = ["shape_class", "impl", "head_dim", "config", "shapes", "gm_ratio", "gm_lo", "gm_hi", "trial"]
    if ok.empty:
        return pd.DataFrame(columns=cols)
    ok["shape_class"] = [shape_class(d, c, s) for d, c, s in zip(ok["D"], ok["causal"], ok["S"])]
    ok["shape_id"] = [f"{b},{h},{s},{d},{c}" for b, h, s, d, c in zip(ok["B"], ok["H"], ok["S"], ok["D"], ok["causal"])]
    ok = ok.sort_values("trial").drop_duplicates(["impl", "shape_id"])  # the first measurement of each
    n_shapes = ok.groupby("shape_class")["shape_id"].nunique()
    out = []
    for (cls, impl), g in ok.groupby(["shape_class", "impl"]):
        if g["shape_id"].nunique() < n_shapes[cls]:
            continue  # pruned before this class's other shapes: not comparable
        logs = [math.log(r) for r in g["ratio_to_default"]]
        ses = [_log_se(r) for _, r in g.iterrows()]
        mean = sum(logs) / len(logs)
        se = math.sqrt(sum(s * s for s in ses)) / len(ses)
        out.append(dict(shape_class=cls, impl=impl, head_dim=int(g["D"].iloc[0]),
                        config=g["config"].iloc[0] if "config" in g else "", shapes=len(logs),
                        gm_ratio=math.exp(mean), gm_lo=math.exp(mean - Z95 * se), gm_hi=math.exp(mean + Z95 * se),
                        trial=int(g["trial"].min())))
    return pd.DataFrame(out, columns=cols).sort_values(["shape_class", "gm_ratio"], ascending=[True, False])


def choose_table(tuning, run_id: str, variant: str | None = None, mode: str = "hot") -> dict:
    """The dispatch table a tuning run implies (see the module doc for the rule)."""
    from lab.studies.tuning.space import space

    sp = space(variant)
    table = empty_table(sp.variant)
    table["run_id"] = run_id
    table["mode"] = mode
    table["considered"] = {}
    scores = class_scores(tuning, mode)
    for cls, g in scores.groupby("shape_class"):
        best = g.iloc[0]
        verdict = (f"best {best['impl']} x{best['gm_ratio']:.3f} [{best['gm_lo']:.3f}, {best['gm_hi']:.3f}] "
                   f"over {int(best['shapes'])} shape(s)")
        table["considered"][cls] = verdict
        if best["impl"] == variant or not best["gm_lo"] > 1.0:
            continue  # no interval above 1: the class keeps the default
        cfg = sp.parse_impl(best["impl"], head_dim=int(best["head_dim"]))
        table["classes"][cls] = {"impl": best["impl"], "defines": sp.defines(cfg), "ratio": float(best["gm_ratio"]),
                                 "ci_lo": float(best["gm_lo"]), "ci_hi": float(best["gm_hi"]),
                                 "shapes": int(best["shapes"]), "trial": int(best["trial"])}
    return table


def heldout_verdict(lo: float, hi: float) -> str:
    """A held-out shape's verdict from its speedup interval over the default."""
    return "faster" if lo > 1 else ("slower" if hi < 1 else "no difference")


def heldout_verdicts(heldout, table: dict):
    """Per held-out row: its verdict; per class the table chose a configuration for: 'validated'
    when some held-out shape of the class is faster, 'overfitted' when none is, 'not validated'
    when the held-out set has no shape in it."""
    ok = heldout[heldout["status"] == "ok"].copy() if not heldout.empty else heldout
    if not ok.empty:  # where the table keeps the default, the comparison is the default against itself
        default = table.get("variant")
        ok["verdict"] = [f"same kernel: A/A ({heldout_verdict(lo, hi)})" if cfg == default else heldout_verdict(lo, hi)
                         for cfg, lo, hi in zip(ok.get("config", [None] * len(ok)), ok["ratio_to_default_lo"],
                                                ok["ratio_to_default_hi"])]
    classes = {}
    for cls in table.get("classes", {}):
        rows = ok[ok["shape_class"] == cls] if not ok.empty else ok
        classes[cls] = ("not validated" if rows.empty else
                        "validated" if (rows["verdict"] == "faster").any() else "overfitted")
    return ok, classes


def without_overfitted(table: dict, heldout) -> dict:
    """The table to commit after the held-out check: a class whose configuration is faster on none
    of its held-out shapes (overfitted) keeps the default, and `considered` says why; validated
    and not-validated classes stay. The search's own choice stays in the run's dispatch.json."""
    _, classes = heldout_verdicts(heldout, table)
    out = json.loads(json.dumps(table))
    out.setdefault("considered", {})
    for cls, v in classes.items():
        if v == "overfitted":
            e = out["classes"].pop(cls)
            out["considered"][cls] = (f"{e['impl']} x{e['ratio']:.3f} [{e['ci_lo']:.3f}, {e['ci_hi']:.3f}] on its tuning "
                                      "shape(s) but faster on none of its held-out shapes: overfitted, default kept")
    return out


def write_table(table: dict, path: Path) -> None:
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


# --- the callable ---------------------------------------------------------------------------


class TunedDispatch:
    """KernelAttention's interface (`__call__`, `launch`); each call runs the configuration the
    table names for its shape class, the default where the table names none."""

    def __init__(self, table: dict, kernels: dict, default):
        self.table = table
        self.name = f"{table['variant']}{TUNED_SUFFIX}"
        self._kernels = dict(kernels)
        self._default = default
        missing = {e["impl"] for e in table.get("classes", {}).values()} - set(self._kernels) - {table["variant"]}
        if missing:
            raise ValueError(f"dispatch table names configurations that were not loaded: {sorted(missing)}")

    def __repr__(self) -> str:
        return f"TunedDispatch({self.name!r}, run_id={self.table.get('run_id')!r}, classes={len(self.table['classes'])})"

    def entry_for(self, D: int, causal: bool, S: int) -> dict:
        return entry_for(self.table, D, causal, S)

    def not_taken(self, shape) -> str:
        """Why the dispatch cannot take `shape`'s element type or K/V heads, ''. Its configurations
        are builds of one twin, so they take what the default takes (for steps 28 and later: fp16 and bf16, any H_kv dividing H)."""
        return self._default.not_taken(shape)

    def kernel_for(self, D: int, causal: bool, S: int):
        impl = self.entry_for(D, causal, S)["impl"]
        return self._default if impl == self.table["variant"] else self._kernels[impl]

    def __call__(self, q, k, v, is_causal: bool = False, scale: float | None = None, out=None):
        check_inputs(q, k, v, scale, takes=getattr(self._default, "takes", None))
        return self.kernel_for(q.shape[3], is_causal, q.shape[2])(q, k, v, is_causal=is_causal, scale=scale, out=out)

    def launch(self, q, k, v, out, is_causal: bool = False, scale: float | None = None) -> None:
        self.kernel_for(q.shape[3], is_causal, q.shape[2]).launch(q, k, v, out, is_causal, scale)


def load(path: Path | None = None, variant: str | None = None, **build_options) -> TunedDispatch:
    """Build (cached) and load every configuration of the committed table."""
    from lab.kernels import build, variants

    table = read_table(path, variant)
    v = variants.get(table["variant"])

    def one(impl, defines):
        r = build.build_variant(v, defines=defines, impl=impl, **build_options)
        if not r.ok:
            raise RuntimeError(f"dispatch configuration {impl!r} failed to build:\n{r.log}")
        return r.load()

    kernels = {e["impl"]: one(e["impl"], e.get("defines", {})) for e in table["classes"].values()}
    return TunedDispatch(table, kernels, one(table["variant"], {}))
