"""The decode set's Nsight Compute profile on the CPU (issue 50: the profiler's DRAM throughput per step):
lab.measure.decode_profile's call records and batching with a stand-in for ncu, the decode study's choice of
what to profile, and the report's table. Expectations are worked by hand from the fake captures."""

import csv
import io
import subprocess

import pytest

from lab.measure import decode_profile
from lab.measure.decode_profile import DECODE_METRICS, call_record, profile_decode
from lab.measure.profile import SEPARATOR_KERNEL

UNITS = {"duration": "nsecond", "dram_throughput_pct": "%", "dram_bytes": "Mbyte", "grid_size": "",
         "block_size": "", "registers": "register/thread"}


def capture(calls: list[list[tuple]]) -> str:
    """ncu's raw CSV for `calls`: each a list of (kernel name, ns, DRAM %, DRAM MB, grid), a separator after each
    call (as the target launches them)."""
    head = ["ID", "Kernel Name", *DECODE_METRICS.values()]
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL)
    w.writerow(head)
    w.writerow(["", "", *(UNITS[k] for k in DECODE_METRICS)])
    ident = 0
    for call in calls:
        for name, ns, pct, mb, grid in [*call, (f"void {SEPARATOR_KERNEL}(long)", 700, 0.1, 0.0, 1)]:
            w.writerow([str(ident), name, f"{ns:,}", str(pct), str(mb), str(grid), "128", "96"])
            ident += 1
    return "==PROF== Connected to process 1\n" + buf.getvalue() + "==PROF== Disconnected from process 1\n"


SPLIT = [("decode_fwd<bf16, 128, 1>", 30_000, 80.0, 100.0, 128), ("decode_combine_splits", 10_000, 20.0, 1.0, 28)]
ONE = [("cudnn_generated_fort_native_sdpa", 50_000, 60.0, 101.0, 264)]


def test_a_calls_record_sums_its_kernels_and_weights_their_dram_throughput_by_duration():
    kernels = [{"kernel": k, "duration": ns / 1000, "dram_throughput_pct": pct, "dram_bytes": mb * 1e6,
                "grid_size": grid} for k, ns, pct, mb, grid in SPLIT]
    r = call_record(kernels)
    # 30 us at 80 % and 10 us at 20 %: (30 x 80 + 10 x 20) / 40 = 65 %; bytes 100 MB + 1 MB
    assert r == {"n_kernels": 2, "duration_us": 40.0, "dram_bytes": 101e6, "dram_throughput_pct": 65.0,
                 "main_kernel": "decode_fwd<bf16, 128, 1>", "main_dram_throughput_pct": 80.0, "main_grid_size": 128}
    kernels[1]["dram_throughput_pct"] = None  # a kernel without the value: no weighted figure, not a wrong one
    assert call_record(kernels)["dram_throughput_pct"] is None
    assert call_record([])["duration_us"] is None and call_record([])["n_kernels"] == 0


@pytest.fixture
def ncu_here(monkeypatch):
    monkeypatch.setattr(decode_profile, "find_ncu", lambda: "/opt/ncu")


def test_one_process_profiles_every_call_and_cuts_the_capture_at_the_separators(tmp_path, ncu_here):
    commands = []

    def runner(cmd, timeout, gpu):
        commands.append((cmd, gpu))
        return 0, capture([SPLIT, ONE]), ""

    got = profile_decode(["chunks_one_cta_an_sm", "sdpa_cudnn"], "8,32,8,128,8192,bf16", tmp_path, gpu="3",
                         runner=runner)
    assert len(commands) == 1 and commands[0][1] == "3"
    cmd = commands[0][0]
    assert cmd[0] == "/opt/ncu" and cmd[cmd.index("--target") + 1] == "chunks_one_cta_an_sm,sdpa_cudnn"
    assert cmd[cmd.index("--shape") + 1] == "8,32,8,128,8192,bf16" and "--clock-control" in cmd
    assert [(r["impl"], r["ok"], r["n_kernels"]) for r in got] == [("chunks_one_cta_an_sm", True, 2),
                                                                     ("sdpa_cudnn", True, 1)]
    assert got[0]["dram_throughput_pct"] == 65.0 and got[0]["duration_us"] == 40.0
    assert got[1]["dram_throughput_pct"] == 60.0 and got[1]["main_grid_size"] == 264
    assert (tmp_path / "ncu_decode_8_32_8_128_8192_bf16.csv").read_text().count(SEPARATOR_KERNEL) == 2


def test_a_capture_that_does_not_map_is_profiled_one_call_at_a_time_and_a_failure_keeps_its_reason(tmp_path,
                                                                                                    ncu_here):
    def runner(cmd, timeout, gpu):
        names = cmd[cmd.index("--target") + 1].split(",")
        if len(names) > 1:  # the batch: the second call launched nothing before its separator
            return 0, capture([SPLIT, []]), ""
        if names == ["sdpa_flash"]:
            return 1, "", "==ERROR== the application returned an error code (1)"
        return 0, capture([SPLIT]), ""

    got = profile_decode(["split_kv", "sdpa_flash"], "1,32,8,128,131072,bf16", tmp_path, runner=runner)
    assert got[0]["ok"] and got[0]["n_kernels"] == 2 and got[0]["csv_path"].endswith("_split_kv.csv")
    assert not got[1]["ok"] and got[1]["reason"].startswith("ncu exited with code 1")
    assert [r["impl"] for r in got] == ["split_kv", "sdpa_flash"]


def test_several_shapes_share_one_process_and_a_capture_that_does_not_map_takes_a_process_a_shape(tmp_path,
                                                                                                      ncu_here):
    from lab.measure.decode_profile import profile_decode_shapes

    commands = []

    def runner(cmd, timeout, gpu):
        commands.append((cmd, timeout))
        return 0, capture([SPLIT, ONE, SPLIT]), ""

    calls = [("8,32,8,128,8192,bf16", ["split_kv", "sdpa_cudnn"]), ("1,32,8,128,131072,bf16", ["split_kv"])]
    got = profile_decode_shapes(calls, tmp_path, timeout=100, runner=runner)
    assert len(commands) == 1 and commands[0][1] == 200  # the timeout a shape, two shapes
    cmd = commands[0][0]
    tail = cmd[cmd.index("lab.measure.decode_profile") + 1:]
    assert tail == ["--shape", "8,32,8,128,8192,bf16", "--target", "split_kv,sdpa_cudnn",
                    "--shape", "1,32,8,128,131072,bf16", "--target", "split_kv"]
    assert [(r["impl"], r["shape"], r["n_kernels"]) for r in got] == [
        ("split_kv", "8,32,8,128,8192,bf16", 2), ("sdpa_cudnn", "8,32,8,128,8192,bf16", 1),
        ("split_kv", "1,32,8,128,131072,bf16", 2)]
    assert {r["csv_path"] for r in got} == {str(tmp_path / "ncu_decode_shapes.csv")}

    commands.clear()

    def two_parts_short(cmd, timeout, gpu):  # the joint capture lost a call; each shape's own maps
        commands.append((cmd, timeout))
        shapes = cmd.count("--shape")
        return 0, capture([SPLIT, ONE] if shapes > 1 else [SPLIT] * len(cmd[cmd.index("--target") + 1].split(","))), ""

    got = profile_decode_shapes(calls, tmp_path, timeout=100, runner=two_parts_short)
    assert [c[0].count("--shape") for c in commands] == [2, 1, 1] and [c[1] for c in commands] == [200, 100, 100]
    assert [(r["impl"], r["shape"], r["ok"]) for r in got] == [
        ("split_kv", "8,32,8,128,8192,bf16", True), ("sdpa_cudnn", "8,32,8,128,8192,bf16", True),
        ("split_kv", "1,32,8,128,131072,bf16", True)]
    assert got[2]["csv_path"].endswith("ncu_decode_1_32_8_128_131072_bf16.csv")

    def too_slow(cmd, timeout, gpu):
        raise subprocess.TimeoutExpired(cmd, timeout)

    got = profile_decode_shapes(calls, tmp_path, timeout=5, runner=too_slow)
    assert [r["reason"] for r in got] == ["ncu timed out after 10 s"] * 3  # not tried again a shape at a time
    one = profile_decode_shapes(calls[1:], tmp_path, runner=two_parts_short)  # one shape: profile_decode's stem
    assert one[0]["csv_path"].endswith("ncu_decode_1_32_8_128_131072_bf16.csv")
    assert profile_decode_shapes([], tmp_path) == [] and profile_decode_shapes([("8,32,8,128,8192,bf16", [])],
                                                                               tmp_path) == []


def test_the_target_takes_a_target_a_shape_and_refuses_unpaired_ones(monkeypatch):
    seen = []
    monkeypatch.setattr(decode_profile, "target", seen.append)
    assert decode_profile.main(["--shape", "8,32,8,128,8192,bf16", "--target", "a,b",
                                "--shape", "1,32,8,128,131072,bf16", "--target", "c"]) == 0
    assert seen == [[("8,32,8,128,8192,bf16", ["a", "b"]), ("1,32,8,128,131072,bf16", ["c"])]]
    with pytest.raises(SystemExit):
        decode_profile.main(["--shape", "8,32,8,128,8192,bf16", "--shape", "1,32,8,128,131072,bf16", "--target", "c"])


def test_without_ncu_or_in_time_every_call_is_a_reason_and_nothing_raises(tmp_path, monkeypatch):
    monkeypatch.setattr(decode_profile, "find_ncu", lambda: None)
    got = profile_decode(["split_kv"], "8,32,8,128,8192,bf16", tmp_path)
    assert got == [{"impl": "split_kv", "shape": "8,32,8,128,8192,bf16", "ok": False, "csv_path": "",
                    "reason": "ncu (Nsight Compute) not found on PATH or under CUDA_HOME/bin"}]
    monkeypatch.setattr(decode_profile, "find_ncu", lambda: "/opt/ncu")

    calls = []

    def too_slow(cmd, timeout, gpu):
        calls.append(cmd)
        raise subprocess.TimeoutExpired(cmd, timeout)

    got = profile_decode(["split_kv", "sdpa_cudnn"], "8,32,8,128,8192,bf16", tmp_path, timeout=5, runner=too_slow)
    assert [(r["ok"], r["reason"]) for r in got] == [(False, "ncu timed out after 5 s")] * 2
    assert len(calls) == 1  # a batch that timed out is not tried again one name at a time
    assert profile_decode([], "8,32,8,128,8192,bf16", tmp_path) == []


def test_the_profiled_decode_shapes_are_the_two_named_else_the_first():
    from lab.kernels.decode import DecodeShape
    from lab.studies.shapes import decode_profile_shapes, decode_shapes

    assert [s.spec for s in decode_profile_shapes(decode_shapes())] == ["8,32,8,128,8192,bf16",
                                                                        "1,32,8,128,131072,bf16"]
    other = [DecodeShape(2, 32, 8, 128, 4096), DecodeShape(4, 28, 4, 128, 2048)]
    assert decode_profile_shapes(other) == other[:1] and decode_profile_shapes([]) == []


def test_the_decode_study_profiles_the_timed_steps_and_the_peers_that_took_each_shape(tmp_path):
    from lab.kernels import manifest
    from lab.studies import stages
    from tests.test_decode_study import _run, _stand_ins

    steps, stand_ins, _ = _stand_ins(failing_check=manifest.names(problem=manifest.DECODE)[1])
    asked = []

    def profile(calls, out_dir, gpu=None):
        asked.append(([(spec, list(names)) for spec, names in calls], out_dir.name))
        return [{"impl": n, "shape": spec, "ok": True, "reason": "", "csv_path": str(out_dir / "ncu_decode.csv"),
                 "n_kernels": 1, "duration_us": 10.0, "dram_throughput_pct": 50.0, "dram_bytes": 1e6,
                 "main_kernel": "k", "main_dram_throughput_pct": 50.0, "main_grid_size": 132}
                for spec, names in calls for n in names]

    said = []
    rec = _run(tmp_path, decode="1,32,8,128,131072,bf16;64,71,1,64,1024,bf16;8,32,8,128,8192,bf16", modes="hot",
               check="quick")
    d = stages.decode_stage(rec, progress=said.append, **stand_ins, profile=profile)
    timed = [s for s in steps if s != steps[1]]  # the one that failed its check is neither timed nor profiled
    peers = sorted({r["impl"] for r in d["rows"]} - set(steps))
    assert peers == ["sdpa_cudnn"]  # tests/decode_fakes.py's one peer
    # the two named shapes in the run's order, in one call (one ncu process), the steps in the manifest's order
    assert asked == [([("1,32,8,128,131072,bf16", timed + peers), ("8,32,8,128,8192,bf16", timed + peers)], "ncu")]
    assert len(d["profile"]) == 2 * (len(timed) + 1) and rec.read_json("decode.json")["profile"] == d["profile"]
    assert [m for m in said if "decode profile" in m] == [
        f"  decode profile {spec}: {len(timed) + 1} of {len(timed) + 1} calls profiled"
        for spec in ("1,32,8,128,131072,bf16", "8,32,8,128,8192,bf16")]
    # the capture is named as the run folder's own file, not by the path of the machine that wrote it
    assert {r["csv_path"] for r in d["profile"]} == {"ncu/ncu_decode.csv"}
    assert d["seconds"]["profile"] >= 0 and d["seconds"]["total"] >= d["seconds"]["profile"]
    rec2 = _run(tmp_path / "off", decode="8,32,8,128,8192,bf16", modes="hot", check="quick", profile="0")
    d2 = stages.decode_stage(rec2, progress=lambda *_: None, **stand_ins, profile=profile)
    assert "profile" not in d2 and "profile" not in d2["seconds"] and len(asked) == 1
    rec3 = _run(tmp_path / "none", decode="64,71,1,64,1024,bf16", modes="hot", check="quick")  # not named: its first
    stages.decode_stage(rec3, progress=lambda *_: None, **stand_ins, profile=profile)
    assert asked[-1] == ([("64,71,1,64,1024,bf16", timed + peers)], "ncu")


def test_a_peer_left_out_of_the_profile_is_not_asked_for_and_its_record_says_why(tmp_path, monkeypatch):
    from lab.measure.peers import FLEX
    from lab.report.sections.decode import profile_lines
    from lab.studies import decode_study, stages
    from tests.test_decode_study import _run, _stand_ins

    assert set(decode_study.UNPROFILED_PEERS) == {FLEX}  # flex_attention's compile: 13-14 s of the set's 60 s
    monkeypatch.setattr(decode_study, "UNPROFILED_PEERS", {"sdpa_cudnn": "costs too much"})  # the fakes' one peer
    steps, stand_ins, _ = _stand_ins()
    asked = []

    def profile(calls, out_dir, gpu=None):
        asked.append([(spec, list(names)) for spec, names in calls])
        return [{"impl": n, "shape": spec, "ok": True, "reason": "", "csv_path": str(out_dir / "ncu_decode.csv"),
                 "n_kernels": 1, "duration_us": 10.0, "dram_throughput_pct": 50.0, "dram_bytes": 1e6,
                 "main_kernel": "k", "main_dram_throughput_pct": 50.0, "main_grid_size": 132}
                for spec, names in calls for n in names]

    said = []
    rec = _run(tmp_path, decode="1,32,8,128,131072,bf16;8,32,8,128,8192,bf16", modes="hot", check="quick")
    d = stages.decode_stage(rec, progress=said.append, **stand_ins, profile=profile)
    shapes = ("1,32,8,128,131072,bf16", "8,32,8,128,8192,bf16")
    assert asked == [[(spec, steps) for spec in shapes]]  # the peer is not in the ncu process
    assert [(r["impl"], r["shape"], r["ok"], r["reason"]) for r in d["profile"] if r["impl"] == "sdpa_cudnn"] == [
        ("sdpa_cudnn", spec, False, "costs too much") for spec in shapes]
    assert len(d["profile"]) == 2 * (len(steps) + 1)
    assert [m for m in said if "decode profile" in m] == [
        f"  decode profile {spec}: {len(steps)} of {len(steps)} calls profiled" for spec in shapes]
    text = "\n".join(profile_lines(d))
    assert text.count("| `sdpa_cudnn` | — | — | — | — | not profiled: costs too much |") == 2


def test_the_report_gives_each_calls_dram_throughput_and_says_why_one_was_not_profiled():
    from lab.report.sections.decode import profile_lines

    ok = {"impl": "chunks_one_cta_an_sm", "shape": "8,32,8,128,8192,bf16", "ok": True, "reason": "",
          "n_kernels": 2, "duration_us": 40.04, "dram_throughput_pct": 65.04, "dram_bytes": 101e6,
          "main_kernel": "decode_fwd", "main_dram_throughput_pct": 80.0, "main_grid_size": 128}
    bad = {"impl": "sdpa_flash", "shape": "8,32,8,128,8192,bf16", "ok": False, "reason": "ncu timed out after 5 s"}
    text = "\n".join(profile_lines({"profile": [ok, bad]}))
    assert "**Nsight Compute at 8,32,8,128,8192,bf16**" in text
    assert "| `chunks_one_cta_an_sm` | 2 | 40.0 | 65.0 | 80.0 | 128 |" in text
    assert "| `sdpa_flash` | — | — | — | — | not profiled: ncu timed out after 5 s |" in text
    assert profile_lines({})[0].startswith("The decode calls were not profiled in this run")
