"""Issue 50, target 2: does the decode end (merge_side_by_side) lose to SDPA where it does because of how many
chunks it splits the keys into? Each configuration is step 47 with FA_DECODE_FORCE_SPLITS (force_splits.patch,
applied on the device copy only) or as it is; each is checked on the decode grid (lab.measure.decode_check, the
fp32 reference, poisoned outputs) before it is timed; then every shape is timed hot (HotTimer: CUDA graphs of
back-to-back launches over input sets that do not fit the L2 together, medians of 15 samples), and where
SWEEP_MODES names it cold (ColdTimer: one launch after an L2 flush), with every
configuration and SDPA's backends, interleaved in rounds so that the configurations share the GPU's state.
The chunks a configuration takes are read off its workspace (splits x B x H x q_len x (D + 1) floats).

    python sweep.py OUT cfg=step[@MACRO=V[@MACRO=V]] ... -- shape shape ...
"""
import json
import os
import statistics
import sys

import torch

from lab import variants
from lab.kernels.decode import DecodeShape
from lab.measure.decode_check import check_decode_case, decode_grid
from lab.measure.decode_peers import DecodeSdpaPeer
from lab.measure.timing import ColdTimer, HotTimer, l2_bytes
from lab.studies.measure_decode import decode_input_sets

out = sys.argv[1]
cut = sys.argv.index("--")
configs = dict(a.split("=", 1) for a in sys.argv[2:cut])
shapes = [DecodeShape.parse(s) for s in sys.argv[cut + 1:]]
ROUNDS, PER_ROUND = 5, 3
rec = {"gpu": torch.cuda.get_device_name(), "configs": configs, "checks": {}, "rows": []}

from lab.kernels.build import build_all  # noqa: E402

parsed = {}
for name, spec in configs.items():
    base, *knobs = spec.split("@")
    parsed[name] = (base, dict(k.split("=", 1) for k in knobs))
build_all([], configs={f"{b}_{n}": (b, d) for n, (b, d) in parsed.items()})  # side by side, then loaded
calls = {}
for name, (base, defines) in parsed.items():
    fn = variants.load(base, defines=defines, impl=f"{base}_{name}")
    call = lambda q, k, v, lens, table, o, fn=fn: fn(q, k, v, lens, table, out=o)  # noqa: E731
    results = [check_decode_case(name, call, s, i) for i, s in enumerate(decode_grid())]
    ok = sum(bool(r.get("passed")) for r in results)
    rec["checks"][name] = {"cases": len(results), "passed": ok}
    print(f"check {name}: {len(results)} cases, {ok} passed", flush=True)
    if ok == len(results):
        calls[name] = fn

peers = [DecodeSdpaPeer(b) for b in ("cudnn", "flash", "default")]
for shape in shapes:
    n_sets = decode_input_sets(shape, l2_bytes())
    sets = [shape.random_inputs(seed=7 + i) for i in range(n_sets)]
    args = [(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"], x["block_table"]) for x in sets]
    splits, launches, contexts = {}, {}, {}
    for name, fn in calls.items():
        q, k, v, lens, table = args[0]
        splits[name] = max(1, fn.workspace_bytes(q, k, table) // (4 * q.numel() // q.shape[-1] * (q.shape[-1] + 1)))
        launches[name] = []
        for a, x in zip(args, sets):
            need = fn.workspace_bytes(a[0], a[1], a[4])
            ws = torch.empty(need, dtype=torch.uint8, device="cuda") if need else None
            launches[name].append(lambda a=a, x=x, ws=ws, fn=fn: fn.launch(*a, x["out"], workspace=ws))
    for peer in peers:
        if peer.unsupported_reason(*args[0]):
            continue
        with peer.context():
            launches[peer.name] = [peer.bind(*a) for a in args]
        contexts[peer.name] = peer.context
    for mode in os.environ.get("SWEEP_MODES", "hot").split(","):
        timers = {}
        for n, ls in launches.items():
            with (contexts[n]() if n in contexts else torch.no_grad()):
                timers[n] = (HotTimer if mode == "hot" else ColdTimer)(ls)
        samples = {n: [] for n in timers}
        for r in range(ROUNDS):
            for n, t in timers.items():
                with (contexts[n]() if n in contexts else torch.no_grad()):
                    samples[n] += t.samples(PER_ROUND)
        med = {n: statistics.median(s) for n, s in samples.items()}
        rec["rows"].append({"shape": shape.spec, "mode": mode, "splits": splits, "median_us": med, "samples": samples})
        best_peer = min(((v, n) for n, v in med.items() if n.startswith("sdpa")), default=(float("nan"), "none"))
        print(f"{shape.spec:<34} {mode:<4} " + " ".join(f"{n}[{splits[n]}] {med[n]:.1f}" for n in calls)
              + f" | best peer {best_peer[1]} {best_peer[0]:.1f}", flush=True)
        del timers
    del sets, args, launches
    torch.cuda.empty_cache()
json.dump(rec, open(f"{out}/sweep.json", "w"), indent=1)
