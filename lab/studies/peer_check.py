"""The peers' correctness check (flex_attention, FlashAttention-3 and the other non-SDPA peers, SDPA being
the reference) on lab.measure.check.peer_grid(), judged by the variants' rule. A peer that fails a case, or
that no case could run, is excluded from the timing, with the reason in peers.json.

Its cases cost flex_attention a compilation each (about 58 s for the 20 cases in a fresh process with cold
inductor and Triton caches on an H200 host of 16 cores, 13 s warm:
data/checks/2026-11-28-h200x4-gpus-ablation-2/peercheck.txt), work for the CPU that the grid's checks do
not wait for, so the correctness stage starts it in child processes before its grid (start) and collects
it after (finish): one child a GPU where the run has several, one beside the stage's own process where it
has one.

    pending = peer_check.start(rec, gpus)          # gpus: the run's CUDA_VISIBLE_DEVICES entries, [] for one
    ...the grid...
    results = peer_check.finish(rec, pending)      # writes peer_correctness.json and peers.json
"""

from __future__ import annotations

import os

from lab.studies.params import RunParams


def run_peers(rec) -> list:
    """The run's peers that are importable and were not excluded by the correctness stage. Runs
    recorded before peers.json timed SDPA under their `backends` only."""
    from lab.measure import peers as peer_mod

    p = RunParams.read(rec)
    if p.peers is None:
        return peer_mod.peers(p.backends)
    status = rec.read_json("peers.json") if rec.has("peers.json") else {}
    found, _ = peer_mod.resolve(list(p.peers))
    return [peer for peer in found if not status.get(peer.name, {}).get("excluded")]


def checked(rec) -> list:
    """The peers the check judges: the run's less SDPA's backends (the reference itself)."""
    return [peer for peer in run_peers(rec) if not peer.name.startswith("sdpa_")]


def check_here(rec, cases, peers=None, progress=None) -> list:
    """The peers (default: checked(rec)) on `cases` in this process: lab.measure.check.run_grid's results."""
    from lab.measure import check as checks

    peers = checked(rec) if peers is None else peers
    return list(checks.run_grid({peer.name: checks.peer_as_attn(peer) for peer in peers}, cases, progress=progress))


def child_command(run_dir, part: int, parts: int, out) -> list[str]:
    """One child of the peers' check: part `part` of `parts` of peer_grid(), written to `out`."""
    import sys

    return [sys.executable, "-m", "lab.studies.correctness_child", str(run_dir), "--peers", "--part", str(part),
            "--parts", str(parts), "--out", str(out)]


def start(rec, gpus: list, progress=print, command=child_command):
    """The peers' check started in children: one a GPU of `gpus`, or one on this process's GPU where `gpus` is
    empty (a run on one GPU). Inductor's compile threads are shared out as the warm-up's are
    (lab.studies.warm.compile_threads: half the cores, the warm-up beside them holding the other half).
    None where the run has no peer to check."""
    from lab.measure import check as checks
    from lab.studies import gpu_share, warm

    if not checked(rec):
        return None
    parts = list(gpus) or [None]
    threads = {} if warm.COMPILE_THREADS_ENV in os.environ else {
        warm.COMPILE_THREADS_ENV: str(warm.compile_threads(len(parts)))}  # one set by hand is kept
    return gpu_share.start_shared(rec, checks.peer_grid(), parts, progress, command=command, what="peers",
                                  env=threads)


def finish(rec, pending, progress=print) -> list:
    """The started check's results (a part whose child failed is checked here), recorded: each peer's verdict
    in peers.json, every result in peer_correctness.json. [] where nothing was started."""
    if pending is None:
        return []
    peers = checked(rec)
    return record(rec, peers, pending.collect(lambda part: check_here(rec, part, peers)), progress)


def check_peers(rec, progress=print) -> list:
    """The whole check in this process, recorded (what start and finish do in children)."""
    from lab.measure import check as checks

    peers = checked(rec)
    if not peers:
        return []
    return record(rec, peers, check_here(rec, checks.peer_grid(), peers, progress), progress)


def record(rec, peers: list, results: list, progress=print) -> list:
    """Write the results to peer_correctness.json and each peer's verdict to peers.json (a peer that failed a
    case, or that no case could run, excluded from timing, with the reason); returns the results."""
    from lab.measure import check as checks

    rec.write_json("peer_correctness.json", checks.as_records(results))
    status = rec.read_json("peers.json")
    for peer in peers:
        mine = [r for r in results if r.variant == peer.name]
        failed = [r for r in mine if r.failed]
        ran = [r for r in mine if not r.unsupported]
        if failed:
            status[peer.name]["excluded"] = f"failed {len(failed)} correctness cases, e.g. {failed[0].explain()}"
        elif not ran:
            why = mine[0].explain() if mine else "its check left no result"
            status[peer.name]["excluded"] = f"no correctness case could run, e.g. {why}"
        status[peer.name]["correctness"] = f"{sum(r.passed for r in mine)}/{len(ran)} passed, " \
                                           f"{len(mine) - len(ran)} unsupported"
        progress(f"  peer {peer.name}: {status[peer.name]['correctness']}"
                 + (f"; excluded: {status[peer.name]['excluded']}" if "excluded" in status[peer.name] else ""))
    rec.write_json("peers.json", status)
    return results
