"""The decode set in a run (issue 50) without a GPU: DECODE's parsing and its default for old runs, the
decode part of the timing stage with stand-ins for the build, the checks, the timing and the copy (what it
records, what it leaves out and why, a failure that never takes the run down), and the report's decode
section from a decode.json written by hand, its numbers worked out here from the hand-written medians."""

from types import SimpleNamespace

import pytest

from lab.kernels import manifest
from lab.measure import records
from lab.report.sections.decode import section_decode
from lab.studies import stages
from lab.studies.decode_study import check_cases, decode_rule
from lab.studies.params import RunParams
from lab.studies.shapes import decode_shapes, decode_shapes_from

import decode_fakes

SMALL = "8,32,8,128,8192;1,32,8,128,131072;64,71,1,64,1024;16,32,8,128,32768,q4,page64"


# --- DECODE -------------------------------------------------------------------------------------


def test_decode_names_the_set_shapes_or_nothing():
    assert decode_shapes_from("decode") == decode_shapes()
    assert decode_shapes_from("") == [] and decode_shapes_from("  ") == []
    shapes = decode_shapes_from(SMALL)
    assert [(s.B, s.H, s.H_kv, s.D, s.cache_len) for s in shapes] == [(8, 32, 8, 128, 8192), (1, 32, 8, 128, 131072),
                                                                      (64, 71, 1, 64, 1024), (16, 32, 8, 128, 32768)]
    assert (shapes[3].q_len, shapes[3].page_size) == (4, 64)


@pytest.mark.parametrize("spec, needle", [("8,32,8,abc,8192", "D"), ("1,32,8,128,9999999", "at most 8 GiB"),
                                          ("8,30,8,128,64", "H_kv=8 must divide H=30")])
def test_a_bad_decode_shape_is_refused_naming_what_is_wrong(spec, needle):
    with pytest.raises(ValueError, match=needle):
        RunParams.from_text(decode=spec)
    with pytest.raises(ValueError, match="DECODE"):
        RunParams.from_text(decode=spec)


def test_decode_defaults_to_the_set_and_old_runs_had_none():
    assert RunParams().decode == "decode" and len(RunParams().decode_shapes) == len(decode_shapes())
    old = RunParams().to_json()
    del old["decode"]
    assert RunParams.from_json(old).decode_shapes == []
    assert RunParams.from_text(decode="").decode_shapes == []
    assert RunParams().as_text()["decode"] == "decode"


def test_the_decode_rule_caps_a_row_and_keeps_the_rest_of_the_runs():
    p = RunParams.from_text(cap_s="3", rel_ci="0.01")
    rule = decode_rule(p)
    assert rule.cap_s == 0.25 and rule.rel_ci == 0.01 and rule.min_samples == 20 and rule.hot_turn_us == 2000
    assert rule.turn_us == p.stop_rule().turn_us and rule.guard_factor == p.stop_rule().guard_factor
    # a run's own smaller values are kept; no hot-turn limit in the run: the decode one
    small = decode_rule(RunParams.from_text(cap_s="0.2", min_samples="19", hot_turn_us="1999"))
    assert (small.cap_s, small.min_samples, small.hot_turn_us) == (0.2, 19, 1999)
    edge = decode_rule(RunParams.from_text(cap_s="0.25", min_samples="20", hot_turn_us="2000"))
    assert (edge.cap_s, edge.min_samples, edge.hot_turn_us) == (0.25, 20, 2000)
    assert decode_rule(RunParams.from_text(hot_turn_us="0")).hot_turn_us == 2000


def test_the_checks_take_the_grid_for_every_step_and_the_set_for_the_end():
    from lab.measure.decode_check import decode_grid

    grid = len(decode_grid())
    full = RunParams.from_text(decode=SMALL, check="full")
    cases = check_cases(full, ["a", "b"], "b")
    # 16 x 32,768 tokens x 8 heads x 128 x 2 bytes x K and V = 2.1 GB is past the check's 1.2 GB; the
    # other three (268, 537 and 16 MB) are checked
    assert len(cases) == 2 * grid + 3 and [c[0] for c in cases[2 * grid:]] == ["b", "b", "b"]
    assert len({c[2] for c in cases if c[0] == "b"}) == grid + 3  # each case its own seed
    assert len(check_cases(RunParams.from_text(decode=SMALL, check="quick"), ["a", "b"], "b")) == 2 * grid
    assert check_cases(RunParams.from_text(decode=SMALL, check="none"), ["a", "b"], "b") == []


def test_the_timing_stage_is_done_only_with_its_decode_set():
    done = {"timing_s": 400.0, "factorial_s": 30.0}
    assert stages.stage_done("timing", done, knockouts=True, decode=False)
    assert not stages.stage_done("timing", done, knockouts=True, decode=True)
    assert stages.stage_done("timing", {**done, "decode_s": 41.0}, knockouts=True, decode=True)


# --- the decode part of the timing stage, with stand-ins -----------------------------------------


def _run(tmp_path, **params):
    rec = records.RunRecord(root=tmp_path)
    rec.write_json("params.json", RunParams.from_text(**params).resolved().to_json())
    return rec


def _stand_ins(broken_build="", failing_check=""):
    steps = manifest.names(problem=manifest.DECODE)

    def build(names, progress):
        return decode_fakes.build(names, progress, broken_build)

    def check(step, fn, shape, index):
        assert fn == decode_fakes.FAKE_FN
        return {"impl": step, "case": shape.id, "passed": step != failing_check, "max_abs_err": 0.5, "error": ""}

    measured = []

    def measure(shape, kernels, peers, modes, rule, clocks, run_id, seed, progress):
        measured.append((shape.id, sorted(kernels), modes, rule.cap_s, seed))
        return decode_fakes.measure(shape, kernels, peers, modes, rule, clocks, run_id, seed, progress)

    return steps, dict(build=build, check=check, measure=measure, copy=decode_fakes.copy, peers=[], l2_bytes=60 << 20,
                       gpus=[]), measured


def test_the_decode_set_records_every_shape_and_leaves_out_what_failed(tmp_path):
    steps, stand_ins, measured = _stand_ins(broken_build=manifest.names(problem=manifest.DECODE)[0],
                                            failing_check=manifest.names(problem=manifest.DECODE)[1])
    rec = _run(tmp_path, decode=SMALL, modes="hot,cold,sustained", check="quick", cap_s="3", seed="7")
    out = stages.decode_stage(rec, progress=lambda *_: None, **stand_ins)
    d = rec.read_json("decode.json")
    assert d == {**out} and "error" not in d
    assert d["steps"] == steps and d["end"] == steps[-1]
    from lab.measure.decode_peers import NOT_WIRED

    assert d["peers_not_measured"] == NOT_WIRED  # the record the report's decode section reads
    assert d["excluded"][steps[0]].startswith("not built: nvcc: no")
    assert d["excluded"][steps[1]].startswith("failed the decode check at")
    timed = sorted(steps[2:])
    assert [m[1] for m in measured] == [timed] * 4  # the steps that built and passed, at every shape
    assert {tuple(m[2]) for m in measured} == {("hot", "cold")}  # sustained is not a decode mode
    assert [m[3] for m in measured] == [0.25] * 4 and [m[4] for m in measured] == [3008, 3009, 3010, 3011]
    # 8 x 8192 x 8 heads x 128 x 2 bytes x K and V = 268 MB against 4 x 60 MB of L2: streams; Falcon's 16 MB not
    assert list(d["streams"].values()) == [True, True, False, True]
    assert len(d["rows"]) == 4 * 2 * (len(timed) + 1) and d["copy"]["gbps"] == 5368.7
    assert len(rec.read_table("decode_samples.parquet")) == len(d["rows"])
    assert set(d["seconds"]) == {"build", "correctness", "timing", "total"}


def test_a_failing_decode_set_is_recorded_and_never_raises(tmp_path):
    _, stand_ins, _ = _stand_ins()

    def copy():
        raise RuntimeError("no GPU here")

    rec = _run(tmp_path, decode=SMALL)
    out = stages.decode_stage(rec, progress=lambda *_: None, **{**stand_ins, "copy": copy})
    assert out["error"] == "RuntimeError: no GPU here" == rec.read_json("decode.json")["error"]


def test_no_decode_shapes_no_decode_set(tmp_path):
    rec = _run(tmp_path, decode="")
    d = stages.decode_stage(rec, progress=lambda *_: None, **_stand_ins()[1])
    assert d["shapes"] == [] and d["reason"].startswith("no decode shapes")


def _logged(path) -> list[dict]:
    import json

    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def test_the_sets_checks_and_timing_shared_over_gpus_give_the_one_process_records(tmp_path, monkeypatch):
    steps, stand_ins, measured = _stand_ins(failing_check=manifest.names(problem=manifest.DECODE)[1])
    params = dict(decode=SMALL + ";2,32,8,128,4096", modes="hot,cold", check="quick", seed="7")
    one = stages.decode_stage(_run(tmp_path / "one", **params), progress=lambda *_: None, **stand_ins)
    log, checked = tmp_path / "log.jsonl", tmp_path / "checks.jsonl"
    monkeypatch.setenv("DECODE_FAKE_LOG", str(log))
    monkeypatch.setenv("DECODE_FAKE_CHECKS", str(checked))
    monkeypatch.setenv("DECODE_FAKE_FAIL", steps[1])  # the children's checks fail the step the one process's did
    rec = _run(tmp_path / "two", **params)
    lines = []
    shared = stages.decode_stage(rec, progress=lines.append, **{**stand_ins, "gpus": ["4", "7"],
                                                                "command": decode_fakes.child_command,
                                                                "check": lambda *a: pytest.fail("checked here")})
    assert "error" not in shared and shared["rows"] == one["rows"]  # the same rows, in the shapes' order
    assert shared["checks"] == one["checks"] and shared["excluded"] == one["excluded"]
    assert [n["shape"] for n in shared["notes"]] == [n["shape"] for n in one["notes"]]
    # check case k on GPU ["4", "7"][k % 2], each once (the cases in the one process's order)
    order = [f"{step}/{shape.id}/{index}" for step, shape, index in
             check_cases(RunParams.read(rec), [s for s in steps], steps[-1])]
    by_case = {c["case"]: c["gpu"] for c in _logged(checked)}
    assert len(_logged(checked)) == len(by_case) == len(order) == len(one["checks"])
    assert [by_case[c] for c in order] == ["47"[k % 2] for k in range(len(order))]
    # the shapes dealt by their estimated costs, a fixed 10.4 GB each plus the cache (0.27, 0.54, 0.02, 2.15 and
    # 0.03 GB), the costliest first to the GPU with the least so far: shape 4 to GPU 4 (12.5), 2 to GPU 7 (10.9),
    # 1 to GPU 7 (10.9 against 12.5), 5 to GPU 4 (12.5 against 21.6), 3 to GPU 7 (21.6 against 23.0); each shape
    # timed once, with the seed the one process gives it
    timed = _logged(log)
    ids = [s.id for s in decode_shapes_from(params["decode"])]
    gpu_of = ["7", "7", "7", "4", "4"]
    assert sorted((t["shape"], t["gpu"], t["seed"]) for t in timed) == \
        sorted((sid, gpu_of[i], 3008 + i) for i, sid in enumerate(ids))
    assert [n["gpu"] for n in shared["notes"]] == gpu_of
    assert {tuple(t["kernels"]) for t in timed} == {tuple(s for s in steps if s != steps[1])}  # failed: not timed
    assert {t["cap_s"] for t in timed} == {0.25} and {tuple(t["modes"]) for t in timed} == {("hot", "cold")}
    assert shared["copies"] == {"4": {**decode_fakes.copy(), "gbps": 5368.7 + 4},
                                "7": {**decode_fakes.copy(), "gbps": 5368.7 + 7}}
    assert set(shared["seconds"]["children"]) == {"4", "7"}
    assert rec.read_table("decode_samples.parquet").equals(
        records.RunRecord.open(str(tmp_path / "one" / one_run(tmp_path / "one"))).read_table("decode_samples.parquet"))
    assert not rec.path("decode_parts").exists()  # the children's files, once in decode.json
    assert any(ln.startswith("  [GPU 7] decode shape 2 of 5") for ln in lines)
    assert len(measured) == 5  # the one-process run's five shapes; the shared run timed none in this process


def test_a_step_that_fails_a_check_in_one_child_is_left_out_of_every_childs_rows(tmp_path, monkeypatch):
    steps, stand_ins, _ = _stand_ins()
    monkeypatch.setenv("DECODE_FAKE_FAIL", f"7:{steps[2]}")  # only GPU 7's child sees it fail
    rec = _run(tmp_path, decode=SMALL, modes="hot", check="quick", seed="7")
    d = stages.decode_stage(rec, progress=lambda *_: None, **{**stand_ins, "gpus": ["4", "7"],
                                                              "command": decode_fakes.child_command})
    assert d["excluded"][steps[2]].startswith("failed the decode check at")
    assert steps[2] not in {r["impl"] for r in d["rows"]}  # GPU 4 timed it; its rows are dropped
    assert steps[2] not in set(rec.read_table("decode_samples.parquet")["impl"])
    assert {r["impl"] for r in d["rows"]} == {*(s for s in steps if s != steps[2]), "sdpa_cudnn"}


def one_run(root):
    import os

    return next(iter(os.listdir(root)))


def test_a_case_or_shape_no_child_finished_is_done_here_and_nothing_measured_is_lost(tmp_path, monkeypatch):
    steps, stand_ins, measured = _stand_ins()
    ids = [s.id for s in decode_shapes_from(SMALL)]
    # dealt by cost (a fixed 10.4 GB a shape plus its cache): the 2.15 GB paged cache (shape 4) to GPU 0, shapes 2
    # and 1 to GPU 1, shape 3 to GPU 0 (12.5 against 21.6); GPU 0's child times shape 3 and is lost at shape 4
    monkeypatch.setenv("DECODE_FAKE_DIE_AT", f"0:{ids[3]}")
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("DECODE_FAKE_LOG", str(log))
    lines = []
    rec = _run(tmp_path, decode=SMALL, modes="hot", check="quick", seed="7")
    d = stages.decode_stage(rec, progress=lines.append,
                            **{**stand_ins, "gpus": ["0", "1"], "command": decode_fakes.child_command,
                               "check": lambda *a: pytest.fail("its checks were written before it was lost")})
    assert [n["shape"] for n in d["notes"]] == ids and "error" not in d
    assert [n.get("gpu") for n in d["notes"]] == ["1", "1", "0", None]  # shape 4: here, in this process
    assert [m[0] for m in measured] == [ids[3]] and measured[0][4] == 3011  # its own seed, wherever it runs
    assert [(t["shape"], t["gpu"]) for t in _logged(log) if t["gpu"] == "0"] == [(i, "0") for i in ids[2:]]
    assert any("GPU 0 exited with code 3 after 1 of its 2 shapes" in ln for ln in lines)
    # a child lost in its checks: its cases are checked here, its shapes timed here
    asked = []
    monkeypatch.delenv("DECODE_FAKE_DIE_AT")
    monkeypatch.setenv("DECODE_FAKE_DIE_IN_CHECK", "1")
    rec = _run(tmp_path / "b", decode=SMALL, modes="hot", check="quick", seed="7")
    d = stages.decode_stage(rec, progress=lambda *_: None, **{
        **stand_ins, "gpus": ["0", "1"], "command": decode_fakes.child_command,
        "check": lambda step, fn, shape, index: asked.append(index) or decode_fakes.check(step, fn, shape, index)})
    n_cases = len(check_cases(RunParams.read(rec), steps, steps[-1]))
    assert len(d["checks"]) == n_cases and len(asked) == n_cases // 2  # the odd cases, GPU 1's
    assert [n.get("gpu") for n in d["notes"]] == [None, None, "0", "0"]


def test_the_decode_child_refuses_shapes_and_checks_outside_the_set(tmp_path, capsys):
    from lab.studies import decode_child

    rec = _run(tmp_path, decode=SMALL, check="quick")
    n_cases = len(check_cases(RunParams.read(rec), ["split_kv"], manifest.names(problem=manifest.DECODE)[-1]))
    for shapes, checks, needle in (
            ("0,2", "", "--shapes [0]"), ("5", "", "--shapes [5]: the run's DECODE has shapes 1 to 4"),
            ("1,x", "", "--shapes '1,x' / --checks '': comma-separated numbers"),
            ("1", f"0,{n_cases}", f"--checks [{n_cases}]: the run has check cases 0 to {n_cases - 1} for these steps")):
        with pytest.raises(SystemExit) as exc:
            decode_child.main([str(rec.dir), "--shapes", shapes, "--checks", checks, "--steps", "split_kv",
                               "--out", str(tmp_path / "o.json")])
        assert exc.value.code == 2 and needle in capsys.readouterr().err


# --- the report's section -----------------------------------------------------------------------


def _row(impl, shape, median, lo, hi, mode="hot"):
    s = decode_shapes_from(shape)[0]
    return dict(impl=impl, B=s.B, H=s.H, H_kv=s.H_kv, D=s.D, cache_len=s.cache_len, q_len=s.q_len, mixed=s.mixed,
                page_size=s.page_size or 0, dtype=s.dtype, mode=mode, median_us=median, ci_lo_us=lo, ci_hi_us=hi,
                gbps=s.bytes_moved() / (median * 1e3))


def _section(tmp_path, decode: dict | None):
    rec = records.RunRecord(root=tmp_path)
    if decode is not None:
        rec.write_json("decode.json", decode)
    return section_decode(SimpleNamespace(data=SimpleNamespace(rec=rec)))


def test_the_decode_section_is_absent_without_a_decode_set(tmp_path):
    assert _section(tmp_path, None) == []
    assert _section(tmp_path / "b", {"shapes": [], "reason": "no decode shapes (DECODE is empty)"}) == []


def test_the_decode_section_gives_the_end_against_the_fastest_peer_and_the_targets(tmp_path):
    steps = manifest.names(problem=manifest.DECODE)
    end, parent = steps[-1], manifest.get(steps[-1]).parent
    big, one = "8,32,8,128,8192", "1,32,8,128,131072"
    bytes_big = 8 * 8192 * 8 * 128 * 2 * 2 + 2 * 8 * 32 * 128 * 2  # K and V once; Q read, O written
    assert decode_shapes_from(big)[0].bytes_moved() == bytes_big
    copy_gbps = bytes_big / (60.0 * 1e3)  # the end at 63.0 us reaches 60 / 63 = 0.952 of it
    rows = [_row(end, big, 63.0, 62.0, 64.0), _row(parent, big, 66.15, 65.0, 67.0),
            _row("sdpa_cudnn", big, 64.0, 63.5, 64.5), _row("sdpa_flash", big, 70.0, 69.0, 71.0),
            # batch 1: 1,032 us; 64 MB... of copy 0.5; cuDNN faster (900 us): target 2 missed here
            _row(end, one, 1032.0, 1030.0, 1034.0), _row(parent, one, 1032.0, 1031.0, 1033.0),
            _row("sdpa_cudnn", one, 900.0, 899.0, 901.0)]
    decode = {"shapes": [big, one], "steps": steps, "end": end, "excluded": {}, "rows": rows,
              "copy": {"bytes": 2 * (256 << 20), "gbps": copy_gbps, "samples": 15},
              "streams": {decode_shapes_from(big)[0].id: True, decode_shapes_from(one)[0].id: True},
              "seconds": {"total": 41.5}}
    md = "\n".join(_section(tmp_path, decode))
    # the end at the batch-8 shape: 63.0 us, 60/63 = 0.95 of the copy; cuDNN's 64.0 over 63.0 = 1.016,
    # interval 63.5 / 64.0 = 0.992 to 64.5 / 62.0 = 1.040
    assert f"| 8,32,8,128,8192,bf16 | yes | 63.0 [62.0, 64.0] | {bytes_big / 63e3:.0f} | 0.95 | sdpa_cudnn 64.0 | " \
           "1.016 [0.992, 1.040] |" in md
    # batch 1: 1,032 us against the copy's time for its bytes
    frac_one = decode_shapes_from(one)[0].bytes_moved() / 1032e3 / copy_gbps
    assert f"| {frac_one:.2f} | sdpa_cudnn 900.0 | {900 / 1032:.3f} [{899 / 1034:.3f}, {901 / 1030:.3f}] |" in md
    assert "- Target 1 (at least 95% of the copy bandwidth where the cache streams from HBM, batch >= 8): met at " \
           "1 of 1 shapes." in md
    # target 2: the batch-8 shape's point 1.016 is at least 1.00 and its lower end 0.992 above 0.99; batch 1's
    # (0.872, 0.869) are not
    assert f"missed at 1: 1,32,8,128,131072,bf16 ({900 / 1032:.4f}, lower end {899 / 1034:.3f} against sdpa_cudnn)" \
        in md
    assert f"- Target 3 (batch 1: at least 80% of the copy): 1,32,8,128,131072,bf16 at {frac_one:.2f} (" \
           + ("met" if frac_one >= 0.8 else "missed") + ")." in md
    assert "41.5 s on this GPU (within)" in md
    # the peers the issue names and the run did not measure: a run recorded before the record gets today's code's,
    # said as such; a run's own record is taken as it is
    from lab.measure.decode_peers import NOT_WIRED

    first = next(iter(NOT_WIRED))
    assert f"Not measured: **{first}**: {NOT_WIRED[first][:40]}" in md and "predates the record" in md
    assert all(f"**{name}**" in md for name in NOT_WIRED) and "**flex_attention**" not in md  # wired since
    md = "\n".join(_section(tmp_path / "d", {**decode, "peers_not_measured": {"flashinfer": "not importable"}}))
    assert "Not measured: **flashinfer**: not importable." in md and "flex_attention**" not in md
    md = "\n".join(_section(tmp_path / "e", {**decode, "peers_not_measured": {}}))
    assert "Every decode peer issue 50 names was measured." in md
    decode["streams"] = {}
    md = "\n".join(_section(tmp_path / "c", decode))
    assert "batch >= 8): not judged: no shape of the set streams at batch >= 8." in md
    # what the end bought over its parent: 66.15 / 63.0 = 1.05 and 1032 / 1032 = 1, geomean sqrt(1.05)
    lo, hi = manifest.get(end).speedup
    assert f"| `{end}` | `{parent}` | {1.05 ** 0.5:.3f} | 1.000-1.050 | {lo}-{hi} |" in md


def test_the_targets_are_judged_on_the_other_gpus_run_too(tmp_path):
    """A BASE of another GPU model with a decode set gets issue 50's targets of its own (its end, peers and copy),
    hot and cold; a BASE of the same model, or without a decode set, adds nothing."""
    steps = manifest.names(problem=manifest.DECODE)
    end, big = steps[-1], "8,32,8,128,8192"
    nbytes = decode_shapes_from(big)[0].bytes_moved()

    parent = manifest.get(end).parent

    def decode(end_us, cudnn_us, copy_us):
        rows = [_row(end, big, end_us, end_us - 0.1, end_us + 0.1, mode) for mode in ("hot", "cold")]
        # the end's parent, faster than cuDNN: a step, never the fastest peer
        rows += [_row(parent, big, cudnn_us - 1, cudnn_us - 1.1, cudnn_us - 0.9, mode) for mode in ("hot", "cold")]
        rows += [_row("sdpa_cudnn", big, cudnn_us, cudnn_us - 0.1, cudnn_us + 0.1, mode) for mode in ("hot", "cold")]
        return {"shapes": [big], "steps": steps, "end": end, "excluded": {}, "rows": rows,
                "copy": {"bytes": 2 * (256 << 20), "gbps": nbytes / (copy_us * 1e3), "samples": 15},
                "streams": {decode_shapes_from(big)[0].id: True}, "seconds": {"total": 50.0}}

    def run(folder, gpu, d):
        rec = records.RunRecord(root=tmp_path / folder)
        if d is not None:
            rec.write_json("decode.json", d)
        return SimpleNamespace(rec=rec, env={"gpu": gpu}, run_id=folder)

    here = run("h100", "H100", decode(63.0, 64.0, 60.0))
    # on the other GPU the end takes 50 us, cuDNN 49 (0.98x: target 2 missed), the copy 45 us (0.90: target 1 missed)
    other = run("h200", "H200", decode(50.0, 49.0, 45.0))
    lines = section_decode(SimpleNamespace(data=here, base=other))
    md = "\n".join(lines)
    head = (f"**On the other GPU** (H200: run h200, the run this report is replicated against, its decode end "
            f"`{end}`, its copy {nbytes / 45e3:.0f} GB/s), against issue 50's targets:")
    at = lines.index(head)
    assert lines[at + 1] == "" and lines[at + 2] == "- Hot:" and lines[at + 6] == "- Cold:"  # targets 1, 2, 4 each
    assert lines[at + 9].startswith("  - Target 4 (") and lines[at + 10] == ""
    part = md.split("**On the other GPU**")[1]
    for mode in ("Hot", "Cold"):
        block = part.split(f"- {mode}:")[1].split("\n- ")[0]
        assert f"  - Target 1 (at least 95% of the copy bandwidth where the cache streams from HBM, batch >= 8): " \
               f"missed at 1 of 1 shapes: 8,32,8,128,8192,bf16 ({45 / 50:.3f} of the copy)." in block
        assert f"missed at 1: 8,32,8,128,8192,bf16 ({49 / 50:.4f}, lower end {48.9 / 50.1:.3f} against sdpa_cudnn)" \
            in block
        assert "  - Target 4 (the decode set adds at most 60 s to a run, on an H100): 50.0 s on that GPU (within)." \
            in block
    # this run's own targets are still judged on its rows: met here
    assert "- Target 2 (at least 1.00× the fastest peer, the interval's lower end above 0.99): met at every shape" in md
    # a decode.json without its steps (none recorded): every implementation counts as a peer, and the block stands
    stepless = {k: v for k, v in decode(50.0, 49.0, 45.0).items() if k != "steps"}
    md = "\n".join(section_decode(SimpleNamespace(data=here, base=run("stepless", "H200", stepless))))
    assert f"missed at 1: 8,32,8,128,8192,bf16 ({48 / 50:.4f}, lower end {47.9 / 50.1:.3f} against {parent})" in md
    rowless = {**decode(50.0, 49.0, 45.0), "rows": []}
    copyless = {k: v for k, v in decode(50.0, 49.0, 45.0).items() if k != "copy"}
    for base in (run("same", "H100", decode(50.0, 49.0, 45.0)), run("none", "H200", None), None,
                 run("rowless", "H200", rowless), run("copyless", "H200", copyless)):
        assert "On the other GPU" not in "\n".join(section_decode(SimpleNamespace(data=here, base=base)))
    # the other run's roofline copy at 40 us (its decode copy took no lead-in): target 1 read against it too, 40 / 50
    roofed = run("roofed", "H200", decode(50.0, 49.0, 45.0))
    roofed.ceilings = {"dram_gbps": nbytes / 40e3}
    part = "\n".join(section_decode(SimpleNamespace(data=here, base=roofed))).split("**On the other GPU**")[1]
    assert f"    - Against the run's roofline copy instead ({nbytes / 40e3:.0f} GB/s), since its decode copy took no " \
           f"lead-in and reads low: missed at 1 of 1 shapes: 8,32,8,128,8192,bf16 ({40 / 50:.3f} of the copy)." in part


def test_the_dispatcher_is_the_fastest_peer_only_where_it_is_the_one_peer_timed():
    """SDPA's default route runs one backend's kernels: at the H100's batch-64 call (call 4 of the persistent decode
    exploration) it read 92.77 us against cuDNN's own 92.84, two draws of one kernel. The faster of the two is not
    another peer, so the dispatcher counts only where no SDPA backend was timed, as in the prefill report."""
    from lab.report.sections.decode import fastest_peer

    def rows(**medians):
        return {name: dict(impl=name, median_us=m) for name, m in medians.items()}

    peers = {"sdpa_default", "sdpa_cudnn", "sdpa_flash", "flex_attention"}
    assert fastest_peer(rows(end=93.17, sdpa_default=92.77, sdpa_cudnn=92.84, sdpa_flash=107.61), peers)["impl"] \
        == "sdpa_cudnn"
    assert fastest_peer(rows(end=93.17, sdpa_default=92.77, sdpa_flash=107.61, flex_attention=92.9), peers)["impl"] \
        == "flex_attention"
    # no backend beside it: it stands for SDPA, against flex_attention too
    assert fastest_peer(rows(end=93.17, sdpa_default=92.77, flex_attention=94.5), peers)["impl"] == "sdpa_default"
    assert fastest_peer(rows(end=93.17, sdpa_default=92.77), peers)["impl"] == "sdpa_default"
    assert fastest_peer(rows(end=93.17, sdpa_default=92.77, sdpa_cudnn=92.84), {"sdpa_default"})["impl"] == \
        "sdpa_default"  # cuDNN timed but not a peer of the run: the dispatcher is the one peer
    assert fastest_peer(rows(end=93.17), peers) is None


def test_the_targets_at_their_edges():
    """Each bar judged at exactly its value (met) and just past it (missed): 95 % of the copy at batch 8
    (not at batch 7, which target 1 does not judge), a peer's lower end of exactly 0.99 (missed: it must be
    above), a point of exactly 1.00 (met) and of 0.999 with its lower end above 0.99 (missed: "at least 1.00x"
    is the point's bar too), 80 % at batch 1, 60 s."""
    from lab.report.sections.decode import targets

    def key(B):
        return (B, 32, 8, 128, 8192, 1, False, 0, "bf16")

    def row(impl, median, lo, hi, gbps):
        return dict(impl=impl, median_us=median, ci_lo_us=lo, ci_hi_us=hi, gbps=gbps)

    def shape_id(B):
        return decode_shapes_from(f"{B},32,8,128,8192")[0].id

    by_shape = {
        key(32): {"peer": row("peer", 100.0, 99.0, 101.0, 950.0)},  # the end not timed: not judged, the rest goes on
        key(8): {"end": row("end", 100.0, 99.0, 100.0, 950.0), "peer": row("peer", 100.0, 99.0, 101.0, 950.0)},
        key(16): {"end": row("end", 100.0, 99.0, 100.0, 949.0)},
        key(7): {"end": row("end", 100.0, 99.0, 100.0, 100.0)},
        key(1): {"end": row("end", 100.0, 99.0, 100.0, 800.0), "peer": row("peer", 100.0, 100.0, 101.0, 1.0)},
    }
    d = {"copy": {"gbps": 1000.0}, "streams": {shape_id(B): True for B in (32, 8, 16, 7, 1)},
         "seconds": {"total": 60.0}}
    lines = targets(d, by_shape, "end", {"peer"})
    # 950 / 1000 = 0.95 at batch 8 meets the bar, 0.949 at batch 16 misses it; batch 7 and 1 are not judged
    assert lines[0] == "- Target 1 (at least 95% of the copy bandwidth where the cache streams from HBM, batch >= 8): " \
                       "missed at 1 of 2 shapes: 16,32,8,128,8192,bf16 (0.949 of the copy)."
    # batch 8: the peer's 99.0 over the end's 100.0 is a lower end of exactly 0.99: missed;
    # batch 1: 100.0 over 100.0 = 1.000: met
    assert lines[1] == "- Target 2 (at least 1.00× the fastest peer, the interval's lower end above 0.99): missed " \
                       "at 1: 8,32,8,128,8192,bf16 (1.0000, lower end 0.990 against peer)."
    assert lines[2].endswith("1,32,8,128,8192,bf16 at 0.80 (met).")
    assert lines[3].endswith("60.0 s on this GPU (within).")
    # the Nsight Compute share of the decode set's time, where the record has it
    with_profile = targets({**d, "seconds": {"total": 60.0, "profile": 16.25}}, by_shape, "end", {"peer"})
    assert with_profile[3].endswith("60.0 s on this GPU, 16.2 s of it Nsight Compute's (within).")
    by_shape[key(16)]["end"]["gbps"] = 950.0
    by_shape[key(1)]["end"]["gbps"] = 799.0
    by_shape[key(8)]["peer"]["ci_lo_us"] = 99.01
    lines = targets({**d, "seconds": {"total": 60.01}}, by_shape, "end", {"peer"})
    assert lines[0].endswith("batch >= 8): met at 2 of 2 shapes.")
    assert lines[1].endswith("met at every shape a peer takes.")
    assert lines[2].endswith("1,32,8,128,8192,bf16 at 0.80 (missed).")
    assert lines[3].endswith("60.0 s on this GPU (over).")
    # the point under 1.00 with the lower end above 0.99: missed on the point
    by_shape[key(8)]["peer"]["median_us"] = 99.9
    by_shape[key(8)]["peer"]["ci_lo_us"] = 99.5
    lines = targets(d, by_shape, "end", {"peer"})
    assert lines[1].endswith("missed at 1: 8,32,8,128,8192,bf16 (0.9990, lower end 0.995 against peer).")
    by_shape[key(8)]["peer"]["median_us"] = 100.0
    # two shapes missed, joined; a record without streams or seconds: target 1 not judged, no target 4
    by_shape[key(16)]["peer"] = row("peer", 50.0, 49.0, 51.0, 1.0)
    by_shape[key(8)]["peer"]["ci_lo_us"] = 98.0
    lines = targets({"copy": {"gbps": 1000.0}}, by_shape, "end", {"peer"})
    assert lines[0].endswith("batch >= 8): not judged: no shape of the set streams at batch >= 8.")
    assert lines[1].endswith("missed at 2: 8,32,8,128,8192,bf16 (1.0000, lower end 0.980 against peer); "
                             "16,32,8,128,8192,bf16 (0.5000, lower end 0.490 against peer).")
    assert len(lines) == 3 and "Target 4" not in "".join(lines)
    # target 1 missed at two shapes: both named, joined
    by_shape[key(8)]["end"]["gbps"] = 940.0
    by_shape[key(16)]["end"]["gbps"] = 949.0
    lines = targets(d, by_shape, "end", {"peer"})
    assert lines[0].endswith("batch >= 8): missed at 2 of 2 shapes: 8,32,8,128,8192,bf16 (0.940 of the copy); "
                             "16,32,8,128,8192,bf16 (0.949 of the copy).")


def test_a_cache_of_exactly_the_check_s_limit_is_checked():
    shape = "1,1,1,128,2343750"  # 2 x 2,343,750 tokens x 128 x 2 bytes = 1,200,000,000 bytes
    assert decode_shapes_from(shape)[0].cache_bytes == 1_200_000_000
    cases = check_cases(RunParams.from_text(decode=shape, check="full"), ["a"], "a")
    assert cases[-1][1] == decode_shapes_from(shape)[0]


def test_a_speed_interval_and_the_geometric_mean():
    from lab.report.sections.decode import geomean, speed_interval

    a = dict(median_us=50.0, ci_lo_us=40.0, ci_hi_us=80.0)
    b = dict(median_us=100.0, ci_lo_us=90.0, ci_hi_us=120.0)
    assert speed_interval(a, b) == (2.0, 90.0 / 80.0, 3.0)
    assert geomean([2.0, 8.0]) == pytest.approx(4.0) and geomean([5.0]) == pytest.approx(5.0)
    assert geomean([]) != geomean([])  # nan: no shape


def test_a_tie_between_peers_names_the_same_peer_every_time():
    """sdpa_default runs cuDNN's kernel: their medians can tie, and the peer named must not depend on the
    order the peers come in (a set's order changes from one process to the next)."""
    shape = decode_shapes_from("8,32,8,128,8192")[0]
    from lab.report.sections.decode import targets

    def row(impl, median):
        return dict(impl=impl, median_us=median, ci_lo_us=median + 1, ci_hi_us=median + 2, gbps=1.0)

    by_shape = {(shape.B, shape.H, shape.H_kv, shape.D, shape.cache_len, shape.q_len, shape.mixed, shape.page_size or 0,
                 shape.dtype): {"end": row("end", 100.0), "sdpa_default": row("sdpa_default", 80.0),
                                "sdpa_cudnn": row("sdpa_cudnn", 80.0)}}
    d = {"copy": {"gbps": 1000.0}, "streams": {}}
    for order in (["sdpa_default", "sdpa_cudnn"], ["sdpa_cudnn", "sdpa_default"]):
        lines = targets(d, by_shape, "end", order)
        assert "against sdpa_cudnn)" in lines[1], lines[1]


def test_a_kernel_that_outruns_the_copy_is_said():
    from lab.report.sections.decode import copy_exceeded

    def row(impl, gbps, mode="hot"):
        return dict(impl=impl, B=8, H=32, H_kv=8, D=128, cache_len=8192, q_len=1, mixed=False, page_size=0,
                    dtype="bf16", mode=mode, gbps=gbps)

    assert copy_exceeded([row("a", 999.0), row("b", 1000.0)], 1000.0) is None  # at the copy: no news
    frac, impl, spec, mode = copy_exceeded([row("a", 1100.0), row("b", 1190.0, "cold"), row("c", 900.0)], 1000.0)
    assert (round(frac, 3), impl, spec, mode) == (1.19, "b", "8,32,8,128,8192,bf16", "cold")
    # a tie: the name decides, the same way whatever the rows' order
    for rows in ([row("a", 1100.0), row("b", 1100.0)], [row("b", 1100.0), row("a", 1100.0)]):
        assert copy_exceeded(rows, 1000.0)[1] == "b"


def test_a_shape_timed_on_another_gpu_is_held_to_that_processs_copy(tmp_path):
    """Shared over GPUs, each shape's share of the copy is against the copy its own process measured (the
    GPU its note names), not the stage's: 950 GB/s is 0.95 of GPU 1's 1000 and 0.95 of GPU 0's 1000 and
    would be 1.19 of the stage's 800; a shape whose note names no GPU is held to the stage's."""
    from lab.report.sections.decode import copy_exceeded, copy_of, targets

    ids = {B: decode_shapes_from(f"{B},32,8,128,8192")[0].id for B in (8, 16, 32)}
    d = {"copy": {"gbps": 800.0}, "copies": {"0": {"gbps": 1000.0}, "1": {"gbps": 1250.0}},
         "notes": [{"shape": ids[8], "gpu": "0"}, {"shape": ids[16], "gpu": "1"}, {"shape": ids[32]}],
         "streams": {ids[B]: True for B in (8, 16, 32)}}
    assert (copy_of(d, ids[8]), copy_of(d, ids[16]), copy_of(d, ids[32])) == (1000.0, 1250.0, 800.0)
    assert copy_of({"copy": {"gbps": 800.0}}, ids[8]) == 800.0  # one process: the set's copy

    def row(B, gbps):
        return dict(impl="end", median_us=100.0, ci_lo_us=99.0, ci_hi_us=100.0, gbps=gbps, B=B, H=32, H_kv=8,
                    D=128, cache_len=8192, q_len=1, mixed=False, page_size=0, dtype="bf16", mode="hot")

    by_shape = {(B, 32, 8, 128, 8192, 1, False, 0, "bf16"): {"end": row(B, g)}
                for B, g in ((8, 950.0), (16, 1187.0), (32, 760.0))}
    # 950 / 1000 = 0.95 met; 1187 / 1250 = 0.9496 missed; 760 / 800 = 0.95 met
    assert targets(d, by_shape, "end", set())[0].endswith("missed at 1 of 3 shapes: 16,32,8,128,8192,bf16 "
                                                          "(0.950 of the copy).")
    rows = [r["end"] for r in by_shape.values()]
    assert copy_exceeded(rows, lambda sid: copy_of(d, sid)) is None  # each under its own process's copy
    assert copy_exceeded(rows, 800.0)[:2] == (1187.0 / 800.0, "end")  # one number for all: the most over it


def test_a_shape_is_measured_with_the_calls_own_arguments_and_one_that_raises_is_a_note():
    """measure_one passes the shape, the kernels, the peers, the set's modes and rule, the clocks, the run id,
    the shape's own seed (the run's + 3000 + i) and the progress through; a shape whose measure raises is an
    empty row set and a note naming the shape and the error."""
    from lab.studies.decode_study import measure_one

    p = RunParams.from_text(decode=SMALL, seed="7", modes="hot,cold,sustained").resolved()
    shape = p.decode_shapes[1]
    seen = {}
    peers, clocks, kernels = ["a peer"], object(), {"step": object()}

    def progress(line):
        return None

    def measure(*args):
        seen["args"] = args
        return "samples", "rows", "notes"

    assert measure_one(measure, shape, kernels, peers, p, clocks, "RUN-1", 2, progress) == ("samples", "rows", "notes")
    got = seen["args"]
    assert got[0] is shape and got[1] is kernels and got[2] is peers and got[5] is clocks and got[8] is progress
    assert list(got[3]) == ["hot", "cold"] and got[4] == decode_rule(p) and got[6] == "RUN-1" and got[7] == 3009

    def broken(*args):
        raise RuntimeError("no GPU here")

    assert measure_one(broken, shape, kernels, peers, p, clocks, "RUN-1", 2, progress) == \
        ([], [], {"shape": shape.id, "errors": {"shape": "RuntimeError: no GPU here"}})


def test_a_row_over_its_own_processs_copy_is_measured_against_that_copy():
    from lab.report.sections.decode import copy_exceeded, copy_of

    ids = {B: decode_shapes_from(f"{B},32,8,128,8192")[0].id for B in (8, 16)}
    d = {"copy": {"gbps": 800.0}, "copies": {"0": {"gbps": 1000.0}, "1": {"gbps": 1250.0}},
         "notes": [{"shape": ids[8], "gpu": "0"}, {"shape": ids[16], "gpu": "1"}]}

    def row(B, gbps):
        return dict(impl=f"k{B}", gbps=gbps, B=B, H=32, H_kv=8, D=128, cache_len=8192, q_len=1, mixed=False,
                    page_size=0, dtype="bf16", mode="hot")

    # 1300 over GPU 1's 1250 = 1.04 (over GPU 0's copy it would be 1.3, over the stage's 1.625); 990 is under 1000
    assert copy_exceeded([row(8, 990.0), row(16, 1300.0)], lambda sid: copy_of(d, sid)) == \
        (1300.0 / 1250.0, "k16", "16,32,8,128,8192,bf16", "hot")


def test_the_front_pages_decode_sentence_reads_the_end_against_the_copy_and_the_fastest_peer():
    """README.md's decode sentence, worked by hand: the end's share of the copy at the two streaming shapes (60 / 63
    and batch 1's bytes over 1,032 us), its speed against the fastest peer at each (cuDNN's 64.0 / 63.0 and
    900 / 1,032), and their geometric mean."""
    from lab.report.sections.decode import front_page

    steps = manifest.names(problem=manifest.DECODE)
    end = steps[-1]
    big, one = "8,32,8,128,8192", "1,32,8,128,131072"
    copy_gbps = decode_shapes_from(big)[0].bytes_moved() / (60.0 * 1e3)
    rows = [_row(end, big, 63.0, 62.0, 64.0), _row("sdpa_cudnn", big, 64.0, 63.5, 64.5),
            _row("sdpa_flash", big, 70.0, 69.0, 71.0), _row(end, one, 1032.0, 1030.0, 1034.0),
            _row("sdpa_cudnn", one, 900.0, 899.0, 901.0), _row(end, one, 1100.0, 1090.0, 1110.0, mode="cold")]
    d = {"shapes": [big, one], "steps": steps, "end": end, "rows": rows, "copy": {"gbps": copy_gbps},
         "streams": {decode_shapes_from(big)[0].id: True, decode_shapes_from(one)[0].id: True}}
    share_one = decode_shapes_from(one)[0].bytes_moved() / 1032e3 / copy_gbps
    lo, hi = sorted([60 / 63, share_one])
    text = front_page(d)
    assert text.startswith(f"The decode branch's end, `{end}`, hot, at the 2 decode shapes")
    assert f": {lo:.2f}-{hi:.2f} of the GPU's copy bandwidth where the cache streams from HBM" in text
    assert (f"; {900 / 1032:.3f}×-{64 / 63:.3f}× the fastest peer measured (sdpa_cudnn, sdpa_flash; geometric mean "
            f"{(64 / 63 * 900 / 1032) ** 0.5:.3f}× over the 2 shapes a peer takes)." in text)
    assert front_page({**d, "rows": []}) == ""


def test_the_front_pages_decode_sentence_word_for_word_and_with_records_missing():
    """The sentence whole; a shape the end did not run is passed over, not the end of the count; each shape's share
    is against the copy of the process that timed it (decode.json's copies, by the GPU its note names); a record
    without rows, steps or streams gives what it can."""
    from lab.report.sections.decode import front_page

    steps = manifest.names(problem=manifest.DECODE)
    end = steps[-1]
    big, other = "8,32,8,128,8192", "64,32,8,128,1024"
    s_big, s_other = decode_shapes_from(big)[0], decode_shapes_from(other)[0]
    copy = s_big.bytes_moved() / (60.0 * 1e3)
    rows = [_row("sdpa_cudnn", other, 70.0, 69.0, 71.0),  # the end did not run this shape: first in the rows
            _row(end, big, 63.0, 62.0, 64.0), _row("sdpa_cudnn", big, 64.0, 63.5, 64.5)]
    d = {"shapes": [other, big], "steps": steps, "end": end, "rows": rows, "copy": {"gbps": 2 * copy},
         "copies": {"1": {"gbps": copy}}, "notes": [{"shape": s_big.id, "gpu": "1"}],
         "streams": {s_big.id: True, s_other.id: True}}
    assert front_page(d) == (
        f"The decode branch's end, `{end}`, hot, at the 2 decode shapes (1-8 new queries against a K/V cache): "
        f"{60 / 63:.2f}-{60 / 63:.2f} of the GPU's copy bandwidth where the cache streams from HBM; "
        f"{64 / 63:.3f}×-{64 / 63:.3f}× the fastest peer measured (sdpa_cudnn; geometric mean {64 / 63:.3f}× over "
        "the 1 shapes a peer takes).")
    bare = {k: v for k, v in d.items() if k not in ("steps", "streams")}
    text = front_page(bare)  # without steps, the end counts among the peers; without streams, no share
    assert "of the GPU's copy bandwidth" not in text
    assert f"({', '.join(sorted(['sdpa_cudnn', end]))}; geometric mean" in text  # the peers sorted, the end among them
    assert front_page({k: v for k, v in d.items() if k != "rows"}) == ""
    # a copy with no lead-in and a roofline copy of 1.5 x the child's: the share against it too, 60 / 63 / 1.5
    roofline = {"dram_gbps": 1.5 * copy}
    assert front_page(d, roofline).startswith(
        f"The decode branch's end, `{end}`, hot, at the 2 decode shapes (1-8 new queries against a K/V cache): "
        f"{60 / 63:.2f}-{60 / 63:.2f} of the GPU's copy bandwidth where the cache streams from HBM (a copy taken "
        f"with no lead-in, which reads low; {60 / 63 / 1.5:.2f}-{60 / 63 / 1.5:.2f} of the run's roofline copy); ")
    led = {**d, "copy": {**d["copy"], "lead_in": {"samples": 57}}}
    assert front_page(led, roofline) == front_page(led)  # with a lead-in the copy stands alone


def test_the_decode_stages_copy_is_shown_beside_the_runs_roofline_copy(tmp_path):
    """The H100 RUN's two copies, by hand: the decode stage's 2,572 GB/s over the roofline's 3,014 is 0.853; a run
    without a roofline copy (or without a decode copy) gets no line."""
    from lab.report.sections.decode import roofline_copy_line

    d = {"copy": {"gbps": 2572.0}}
    line = roofline_copy_line(d, {"dram_gbps": 3014.0, "copy_bytes": 1 << 30})
    assert "read 3014 GB/s" in line and "is 0.853 of it" in line and "1024 MB" in line
    assert "MB" not in roofline_copy_line(d, {"dram_gbps": 3014.0}).split("read")[0]
    assert roofline_copy_line(d, None) is None and roofline_copy_line(d, {"dram_gbps": None}) is None
    assert roofline_copy_line({}, {"dram_gbps": 3014.0}) is None
    assert "no lead-in, so its bar reads low" in line  # a copy recorded before the lead-in
    led = {"copy": {"gbps": 3012.0, "lead_in": {"samples": 57, "slowest_gbps": 2581.4}}}
    line = roofline_copy_line(led, {"dram_gbps": 3014.0})
    assert "is 0.999 of it" in line and "lead-in of 57 samples" in line and "read 2581 GB/s" in line
    assert "reads low" not in line
    rec = records.RunRecord(root=tmp_path)
    big = "8,32,8,128,8192"
    rec.write_json("decode.json", {"shapes": [big], "rows": [_row("x", big, 90.0, 89.0, 91.0)],
                                   "copy": {"gbps": 2572.0, "bytes": 1 << 29, "samples": 15}})
    ceilings = {"dram_gbps": 3014.0, "copy_bytes": 1 << 30}
    section = "\n".join(section_decode(SimpleNamespace(data=SimpleNamespace(rec=rec, ceilings=ceilings))))
    assert "is 0.853 of it" in section


def test_target_1_is_read_again_against_the_roofline_copy_where_the_copy_took_no_lead_in():
    """A run whose decode copy took no lead-in (900 GB/s here) reads its bar low: target 1 is read again against the
    run's roofline copy (1,000), by hand: 950 / 1,000 = 0.950 at batch 8 meets it, 949 / 1,000 = 0.949 at batch 16
    misses it, where against the copy both pass (1.056 and 1.054). A copy with a lead-in, or no roofline copy: no
    second reading."""
    from lab.report.sections.decode import targets

    def key(B):
        return (B, 32, 8, 128, 8192, 1, False, 0, "bf16")

    def row(gbps):
        return dict(impl="end", median_us=100.0, ci_lo_us=99.0, ci_hi_us=101.0, gbps=gbps)

    by_shape = {key(8): {"end": row(950.0)}, key(16): {"end": row(949.0)}}
    streams = {decode_shapes_from(f"{B},32,8,128,8192")[0].id: True for B in (8, 16)}
    d = {"copy": {"gbps": 900.0}, "streams": streams}
    lines = targets(d, by_shape, "end", set(), ceilings={"dram_gbps": 1000.0})
    assert lines[0].endswith("batch >= 8): met at 2 of 2 shapes.")
    assert lines[1] == "  - Against the run's roofline copy instead (1000 GB/s), since its decode copy took no " \
                       "lead-in and reads low: missed at 1 of 2 shapes: 16,32,8,128,8192,bf16 (0.949 of the copy)."
    led = {**d, "copy": {"gbps": 900.0, "lead_in": {"samples": 57, "slowest_gbps": 800.0}}}
    assert not any("roofline" in line for line in targets(led, by_shape, "end", set(), ceilings={"dram_gbps": 1e3}))
    assert not any("roofline" in line for line in targets(d, by_shape, "end", set()))


def test_target_3_is_held_to_the_copy_of_the_process_that_timed_its_shape():
    """A set shared over GPUs: the batch-1 shape timed on GPU 1, whose child copied 500 GB/s (the stage's own
    process 1,000): 800 / 500 = 1.60 of its copy, where against the stage's own copy it would read 0.80."""
    from lab.report.sections.decode import targets

    key = (1, 32, 8, 128, 8192, 1, False, 0, "bf16")
    shape_id = decode_shapes_from("1,32,8,128,8192")[0].id
    by_shape = {key: {"end": dict(impl="end", median_us=100.0, ci_lo_us=99.0, ci_hi_us=101.0, gbps=800.0)}}
    d = {"copy": {"gbps": 1000.0}, "copies": {"1": {"gbps": 500.0}}, "notes": [{"shape": shape_id, "gpu": "1"}],
         "streams": {}}
    lines = targets(d, by_shape, "end", set())
    assert lines[2].endswith("1,32,8,128,8192,bf16 at 1.60 (met).")
