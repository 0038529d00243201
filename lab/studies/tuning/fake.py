"""A GPU-free backend for the tuning search: a deterministic synthetic latency model.

Used by the CPU tests and by `python -m lab tune --fake` (a dry run of the whole search,
records and report on a CPU). Nothing it produces is a measurement: every row it yields has
gpu_name 'fake'. The model has a known best configuration per head dim, and a few
configurations that fail in each way a real one can, so the tests can check that each failure
is recorded and never raised:

  D = 64:  latency factor 1 + 0.03 |st64 - 5| + 0.05 [bc64 = 128] - 0.02 [wgs64 = 2]
           best: bc64=64, st64=5, wgs64=2; st64=8 fails to build; st64=7 spills registers
  D = 128: latency factor 1 + 0.04 |st128 - 4| + 0.03 [bc128 = 128]
           best: bc128=64, st128=4; st128=6 gives wrong results; bc128=64 with st128=2 fails to launch
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass

from lab.kernels.build import BuildResult

SDPA_FACTOR = 1.05
NOISE = 0.002  # relative spread of the synthetic samples


@dataclass
class FakeKernel:
    name: str
    params: dict  # short name -> value (a head dim's configuration, defaults filled in)


@dataclass
class FakeCase:
    passed: bool
    case: str

    @property
    def failed(self) -> bool:  # as lab.measure.check.CaseResult's: every synthetic case runs
        return not self.passed

    def explain(self) -> str:
        return f"{self.case}: {'ok' if self.passed else 'max abs err 0.5 > tolerance 0.004 (synthetic)'}"


def _params(defines: dict) -> dict:
    from lab.studies.tuning.space import space

    sp = space()
    out = {p.short: p.default for p in sp.params}
    for p in sp.params:
        if p.macro in defines:
            out[p.short] = int(defines[p.macro])
    return out


def factor(params: dict, D: int) -> float:
    if D == 64:
        return 1 + 0.03 * abs(params["st64"] - 5) + 0.05 * (params["bc64"] == 128) - 0.02 * (params["wgs64"] == 2)
    return 1 + 0.04 * abs(params["st128"] - 4) + 0.03 * (params["bc128"] == 128)


class FakeBackend:
    def __init__(self):
        self._n = 0

    def gpu(self) -> dict:
        from lab.studies.tuning.worker import worker_name

        name = worker_name()
        digits = "".join(ch for ch in name if ch.isdigit())
        index = int(digits) if digits else 0
        return {"gpu_index": index, "gpu_name": "fake", "gpu_uuid": f"FAKE-{index:04d}"}

    def build(self, variant: str, impl: str, defines: dict) -> BuildResult:
        p = _params(defines)
        if p["st64"] == 8:
            return BuildResult(name=impl, ok=False, defines=defines, log="ptxas error: synthetic build failure")
        spills = 64 if p["st64"] == 7 else 0
        ptxas = [{"kernel": "fa_kernel<64>", "head_dim": 64, "spill_stores": spills, "spill_loads": spills},
                 {"kernel": "fa_kernel<128>", "head_dim": 128, "spill_stores": 0, "spill_loads": 0}]
        return BuildResult(name=impl, ok=True, defines=defines, ptxas=ptxas, key=impl)

    def prebuild(self, variant: str, configs: dict) -> dict:
        out = {}
        for impl, defines in {variant: {}, **configs}.items():
            r = self.build(variant, impl, defines)
            out[impl] = {"ok": r.ok, "cached": False, "seconds": 0.0, "key": r.key, "ptxas": r.ptxas, "log": r.log}
        return out

    def load(self, result: BuildResult) -> FakeKernel:
        return FakeKernel(result.name, _params(result.defines))

    def check(self, kernels: dict, full: bool = False) -> list:
        out = []
        for name, k in kernels.items():
            for i in range(116 if full else 12):
                wrong = _of(k, 128, False, 512).params["st128"] == 6
                out.append(FakeCase(passed=not wrong, case=f"{name} case {i}"))
        return out

    def measure(self, shape, kernels, peer_backends, modes, rule, seed, run_id, aa_impl):
        B, H, S, D, causal = shape
        base_us = B * H * S * S * D * 4e-7 * (0.5 if causal else 1.0) + 5.0
        n = max(int(rule.get("min_samples", 50)), 20)
        impls = {name: factor(_of(k, D, causal, S).params, D) for name, k in kernels.items()}
        if aa_impl:
            impls[aa_impl + "__aa"] = impls[aa_impl]
        impls.update({f"sdpa_{b}": SDPA_FACTOR for b in peer_backends})
        notes, samples = {"errors": {}}, []
        for name, f in impls.items():
            k = kernels.get(name.removesuffix("__aa"))
            if k is not None and _of(k, D, causal, S).params["bc128"] == 64 and \
                    _of(k, D, causal, S).params["st128"] == 2 and D == 128:
                for mode in modes:
                    notes["errors"][f"{name}/{mode}"] = "RuntimeError: kernel launch failed (synthetic)"
                continue
            rng = random.Random(zlib.crc32(f"{name}|{shape}|{seed}".encode()))
            for mode in modes:
                scale = base_us * f * (1.3 if mode == "cold" else 1.0)
                samples += [dict(run_id=run_id, impl=name, B=B, H=H, S=S, D=D, causal=causal, dtype="float16",
                                 mode=mode, sample=i, latency_us=scale * math.exp(rng.gauss(0, NOISE)),
                                 sm_clock_mhz=1980.0, throttled=False) for i in range(n)]
        return samples, [], notes


def _of(kernel, D: int, causal: bool, S: int) -> FakeKernel:
    """The fake kernel a call would run (through a dispatch, the one its table picks)."""
    return kernel.kernel_for(D, causal, S) if hasattr(kernel, "kernel_for") else kernel
