"""The harness checked against another: SDPA flash's hot median here beside
triton.testing.do_bench_cudagraph's (a run's crossval.json)."""

from __future__ import annotations

from lab.kernels.shape import Shape

CROSSVAL_ROUNDS = 5
# triton's own default: a measurement is ten replays of a graph of about this much GPU time (50 ms made
# the check 22.3 s of a run's timing stage, 20 ms 8.9 s: data/checks/2026-11-27-h100-run-within-cost)
TRITON_REP_MS = 20


def cross_validate(shape: Shape, peer, rounds: int = CROSSVAL_ROUNDS) -> dict:
    """SDPA's hot median from this harness next to triton.testing.do_bench_cudagraph's, both on
    one input set, so a bias in the harness shows up as a ratio away from 1. The two alternate
    over `rounds` rounds (10 harness samples, then one triton measurement: ten replays of a graph
    of about TRITON_REP_MS), so a clock or power drift during the comparison falls on both alike;
    each side's value is its median."""
    import statistics

    from lab.measure import timing

    out = {"shape": shape.id, "impl": peer.name}
    try:
        q, k, v = shape.random_inputs()
        if reason := peer.unsupported_reason(q, k, v, shape.causal, None):
            return {**out, "error": reason}
        launch = peer.bind(q, k, v, shape.causal, None)
        with peer.context():
            from triton.testing import do_bench_cudagraph

            timer = timing.HotTimer(launch)
            harness_rounds, triton_rounds = [], []
            for _ in range(rounds):
                harness_rounds.append(timer.samples(10))
                triton_rounds.append(do_bench_cudagraph(launch, rep=TRITON_REP_MS, return_mode="median") * 1e3)
        harness = statistics.median(x for r in harness_rounds for x in r)
        triton_us = statistics.median(triton_rounds)
        return {**out, "harness_us": harness, "triton_us": triton_us, "ratio": harness / triton_us,
                "harness_round_medians_us": [statistics.median(r) for r in harness_rounds],
                "triton_round_medians_us": triton_rounds}
    except Exception as exc:  # noqa: BLE001 - a missing triton is recorded, not fatal
        return {**out, "error": f"{type(exc).__name__}: {exc}"}
