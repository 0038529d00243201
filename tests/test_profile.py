"""lab.measure.profile on the CPU: parsing ncu's raw CSV, derived fields, and the paths where ncu cannot run."""

import csv
import io
import subprocess

import pytest

from lab.measure import ncu_metrics, ncu_process, profile, roofline
from lab.measure.ncu_metrics import METRICS, parse_ncu_csv
from lab.measure.profile import ProfileResult

HEAD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
        "Grid Size", "Device", "CC"]

# (unit, kernel 1 value, kernel 2 value) per friendly metric name, in ncu's auto units
VALUES = {
    "dram_throughput_pct": ("%", "41.2", "12.5"),
    "dram_bytes_per_s": ("Gbyte/second", "1,520.3", "300"),
    "dram_bytes": ("Mbyte", "1.5", "0.25"),
    "achieved_occupancy": ("%", "23.9", "11.0"),
    "theoretical_occupancy": ("%", "25", "12.5"),
    "registers": ("register/thread", "128", "255"),
    "smem_dynamic": ("Kbyte/block", "49.15", "0"),
    "smem_static": ("byte/block", "0", "1,024"),
    "grid_size": ("", "1,024", "256"),
    "block_size": ("", "128", "256"),
    "waves": ("", "1.94", "0.5"),
    "sm_count": ("SM", "132", "132"),
    "occupancy_limit_registers": ("block", "4", "1"),
    "occupancy_limit_shared_mem": ("block", "3", "8"),
    "occupancy_limit_warps": ("block", "16", "8"),
    "occupancy_limit_blocks": ("block", "32", "32"),
    "bank_conflicts_ld": ("", "1,000", "0"),
    "bank_conflicts_st": ("", "500", "0"),
    "shared_wavefronts": ("", "10,000", "0"),
    "tensor_pipe_active": ("%", "35.5", "n/a"),
    "sm_cycles_active_avg": ("cycle", "440,000", "0"),
    "sm_cycles_active_max": ("cycle", "500,000", "0"),
    "local_bytes_ld": ("Kbyte", "2", "0"),
    "local_bytes_st": ("byte", "512", "0"),
    "global_load_sectors": ("sector", "4,096,000", "800"),
    "global_load_requests": ("request", "1,024,000", "100"),
    "stall_barrier": ("", "3.5", "0.1"),
    "stall_long_scoreboard": ("", "7.25", "0.2"),
    "stall_short_scoreboard": ("", "0.75", "n/a"),
    "stall_mio_throttle": ("", "1.5", "0"),
    "stall_math_pipe_throttle": ("", "2.0", "0"),
    "stall_wait": ("", "1.0", "0"),
    "stall_not_selected": ("", "0.5", "0"),
    "stall_lg_throttle": ("", "0.25", "0"),
    "stall_membar": ("", "0", "0"),
    "stall_dispatch_stall": ("", "0.1", "0"),
    "stall_no_instruction": ("", "0.3", "0"),
    "stall_tex_throttle": ("", "0", "0"),
    "stall_drain": ("", "0.05", "0"),
    "stall_sleeping": ("", "0", "0"),
    "stall_branch_resolving": ("", "0.2", "0"),
    "stall_selected": ("", "9.0", "1"),
}


def _line(fields):
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(fields)
    return buf.getvalue()


def synthetic_csv(duration_unit="usecond", durations=("1,234.5", "812.00"), drop=()):
    """ncu's raw page for two kernels, with the noise ncu and the program print around it."""
    names = [n for n in METRICS if n not in drop]
    header = HEAD + [METRICS[n] for n in names]
    units = [""] * len(HEAD) + [duration_unit if n == "duration" else VALUES[n][0] for n in names]
    k1 = ["0", "4242", "python3.12", "127.0.0.1", "attention_fwd_kernel<64, 64>(const __half *, ...)", "1", "7",
          "(128, 1, 1)", "(64, 16, 4)", "0", "9.0"]
    k2 = ["1", "4242", "python3.12", "127.0.0.1", "void at::native::softmax_helper(...)", "1", "7",
          "(256, 1, 1)", "(256, 1, 1)", "0", "9.0"]
    for n in names:
        k1.append(durations[0] if n == "duration" else VALUES[n][1])
        k2.append(durations[1] if n == "duration" else VALUES[n][2])
    return "\n".join([
        "==PROF== Connected to process 4242 (/usr/bin/python3.12)",
        "building attention kernels ... done",
        "==PROF== Profiling \"attention_fwd_kernel\" - 0: 0%....50%....100% - 38 passes",
        "==PROF== Profiling \"softmax_helper\" - 1: 0%....50%....100% - 38 passes",
        "some program output, with, commas",
        '"quoted program output that is not a table"',
        "==PROF== Disconnected from process 4242",
        _line(header),
        _line(units),
        _line(k1),
        "==WARNING== something ncu says between rows",
        _line(k2),
        "",
    ])


def test_parse_two_kernels_values_and_units():
    ks = parse_ncu_csv(synthetic_csv())
    assert len(ks) == 2
    k1, k2 = ks
    assert k1["kernel"].startswith("attention_fwd_kernel")
    assert k1["id"] == 0.0 and k2["id"] == 1.0
    assert k1["block"] == "(128, 1, 1)" and k1["grid"] == "(64, 16, 4)"
    assert k1["duration"] == pytest.approx(1234.5)  # usecond -> us, thousands separator
    assert k1["duration_us"] == k1["duration"]
    assert k1["grid_size"] == 1024.0
    assert k1["registers"] == 128.0
    assert k1["dram_bytes"] == pytest.approx(1.5e6)  # Mbyte -> bytes
    assert k1["dram_bytes_per_s"] == pytest.approx(1520.3e9)  # Gbyte/second -> bytes/s
    assert k1["smem_dynamic"] == pytest.approx(49150.0)  # Kbyte/block -> bytes
    assert k2["smem_static"] == 1024.0
    assert k1["dram_throughput_pct"] == 41.2
    assert k2["tensor_pipe_active"] is None  # n/a
    assert k2["stall_short_scoreboard"] is None


@pytest.mark.parametrize("unit,value,us", [("nsecond", "1,500", 1.5), ("usecond", "2.5", 2.5),
                                           ("msecond", "1.25", 1250.0), ("second", "0.002", 2000.0)])
def test_duration_normalised_to_microseconds(unit, value, us):
    ks = parse_ncu_csv(synthetic_csv(duration_unit=unit, durations=("1", value)))
    assert ks[1]["duration"] == pytest.approx(us)


def test_derived_fields():
    k1, k2 = parse_ncu_csv(synthetic_csv())
    assert k1["bank_conflicts"] == 1500.0
    assert k1["bank_conflict_pct"] == pytest.approx(15.0)
    assert k1["global_sectors_per_request"] == pytest.approx(4.0)
    assert k1["local_bytes"] == pytest.approx(2512.0)  # 2 Kbyte + 512 byte
    assert k1["ctas_per_sm"] == 3.0  # min of the occupancy limits
    assert k2["ctas_per_sm"] == 1.0
    assert k1["top_stalls"] == [("long_scoreboard", 7.25), ("barrier", 3.5), ("math_pipe_throttle", 2.0),
                                ("mio_throttle", 1.5), ("wait", 1.0)]
    assert all(r != "selected" for r, _ in k1["top_stalls"])
    assert k2["bank_conflict_pct"] == 0.0  # no shared traffic, no conflicts
    assert k2["global_sectors_per_request"] == pytest.approx(8.0)
    assert k1["sm_active_balance"] == pytest.approx(0.88)  # mean over busiest SM's active cycles
    assert k2["sm_active_balance"] is None  # no SM active: undefined, not a perfect balance
    # the names a manifest hypothesis uses (lab.kernels.manifest.METRICS) are all present
    from lab.kernels.variants import METRICS as HYPOTHESIS

    for name in HYPOTHESIS:
        assert name in k1, name
    assert k1["shared_bank_conflicts"] == 1500.0
    assert k1["dram_throughput"] == 41.2


def test_missing_metric_columns_are_none():
    k1, _ = parse_ncu_csv(synthetic_csv(drop=("shared_wavefronts", "occupancy_limit_blocks", "stall_wait")))
    assert k1["shared_wavefronts"] is None
    assert k1["bank_conflict_pct"] is None
    assert k1["ctas_per_sm"] == 3.0  # min over the limits present
    assert "wait" not in [r for r, _ in k1["top_stalls"]]


def test_main_kernel_is_longest():
    ks = parse_ncu_csv(synthetic_csv(durations=("1,234.5", "2,000")))
    assert ncu_metrics.main_kernel(ks)["kernel"].startswith("void at::native::softmax_helper")
    ks = parse_ncu_csv(synthetic_csv(durations=("1,234.5", "900")))
    assert ncu_metrics.main_kernel(ks)["kernel"].startswith("attention_fwd_kernel")
    assert ncu_metrics.main_kernel([]) is None


def test_noise_only_gives_no_kernels():
    assert parse_ncu_csv("==PROF== Connected\nhello\n==PROF== Disconnected\n") == []
    assert parse_ncu_csv("") == []


def test_record_is_flat():
    ks = parse_ncu_csv(synthetic_csv())
    r = ProfileResult("wmma", (4, 16, 4096, 64), False, ok=True, csv_path="x.csv", kernels=ks,
                      main=ncu_metrics.main_kernel(ks))
    rec = r.to_record()
    assert (rec["impl"], rec["B"], rec["H"], rec["S"], rec["D"], rec["causal"], rec["ok"]) == (
        "wmma", 4, 16, 4096, 64, False, True)
    assert rec["top_stalls"].startswith("long_scoreboard:7.25;barrier:3.5;")
    assert rec["n_kernels"] == 2
    assert all(not isinstance(v, (list, dict, tuple)) for v in rec.values())
    flops = 4.0 * 4 * 16 * 4096 * 4096 * 64
    assert rec["achieved_tflops"] == pytest.approx(flops / 1234.5e-6 / 1e12)
    assert rec["arithmetic_intensity"] == pytest.approx(flops / 1.5e6)
    # a skipped profile has the same columns, empty
    skipped = ProfileResult("wmma", (4, 16, 4096, 64), True, ok=False, reason="no ncu").to_record()
    assert set(skipped) == set(rec)
    assert skipped["ok"] is False and skipped["duration"] is None and skipped["top_stalls"] == ""


def test_roofline_helpers():
    assert roofline.achieved_tflops(1, 1, 1000, 64, False, 1.0) == pytest.approx(4 * 1000 * 1000 * 64 / 1e-6 / 1e12)
    assert roofline.achieved_tflops(1, 1, 1000, 64, True, 1.0) == pytest.approx(2 * 1000 * 1000 * 64 / 1e-6 / 1e12)
    assert roofline.achieved_tflops(1, 1, 1, 64, False, None) is None
    assert roofline.arithmetic_intensity(100.0, 4.0) == 25.0
    assert roofline.arithmetic_intensity(100.0, 0) is None
    ceil = {"tensor_tflops": 700.0, "dram_gbps": 3000.0}
    assert roofline.attainable_tflops(10.0, ceil) == pytest.approx(30.0)
    assert roofline.attainable_tflops(1e6, ceil) == 700.0


def test_unit_scale():
    assert ncu_metrics.unit_scale("Kbyte") == 1e3
    assert ncu_metrics.unit_scale("Gbyte/second") == 1e9
    assert ncu_metrics.unit_scale("byte/usecond") == pytest.approx(1e6)
    assert ncu_metrics.unit_scale("%") == 1.0
    assert ncu_metrics.unit_scale("register/thread") == 1.0
    assert ncu_metrics.parse_value("1,234,567") == 1234567.0
    assert ncu_metrics.parse_value("n/a") is None
    assert ncu_metrics.parse_value("(128, 1, 1)") == "(128, 1, 1)"


def test_ncu_missing_returns_not_ok(monkeypatch, tmp_path):
    import lab.kernels.build

    monkeypatch.setattr(ncu_process.shutil, "which", lambda name: None)
    monkeypatch.setattr(lab.kernels.build, "cuda_home", lambda: None)

    def no_run(*a, **k):
        raise AssertionError("nothing must run without ncu")

    monkeypatch.setattr(profile.subprocess, "Popen", no_run)
    r = profile.profile_impl("wmma", (1, 1, 128, 64), False, tmp_path)
    assert r.ok is False and "ncu" in r.reason and r.main is None and r.kernels == []
    assert r.to_record()["ok"] is False
    # a cuda_home without ncu in it counts as missing too
    monkeypatch.setattr(lab.kernels.build, "cuda_home", lambda: str(tmp_path))
    assert profile.profile_impl("sdpa_flash", (1, 1, 128, 64), False, tmp_path).ok is False


class FakePopen:
    """Stands in for the ncu process; records its command."""

    calls = []

    def __init__(self, cmd, **kwargs):
        FakePopen.calls.append((cmd, kwargs))
        self.pid = 0
        self.returncode = self.rc

    def communicate(self, timeout=None):
        return self.out, self.err


def _fake_ncu(monkeypatch, tmp_path, rc, out, err):
    fake = tmp_path / "bin" / "ncu"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 99\n")
    fake.chmod(0o755)
    monkeypatch.setattr(ncu_process.shutil, "which", lambda name: str(fake) if name == "ncu" else None)
    FakePopen.calls = []
    monkeypatch.setattr(FakePopen, "rc", rc, raising=False)
    monkeypatch.setattr(FakePopen, "out", out, raising=False)
    monkeypatch.setattr(FakePopen, "err", err, raising=False)
    monkeypatch.setattr(profile.subprocess, "Popen", FakePopen)
    return fake


def test_counter_permission_refusal(monkeypatch, tmp_path):
    err = ("==PROF== Connected to process 1 (/usr/bin/python3)\n"
           "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
           "Counters on the target device 0.\n")
    _fake_ncu(monkeypatch, tmp_path, rc=1, out="==PROF== Disconnected from process 1\n", err=err)
    r = profile.profile_impl("sdpa_flash", (1, 2, 128, 64), True, tmp_path / "out")
    assert r.ok is False
    assert "ERR_NVGPUCTRPERM" in r.reason
    assert r.kernels == [] and r.main is None
    assert (tmp_path / "out" / "ncu_sdpa_flash_B1_H2_S128_D64_causal.csv").exists()


def test_nonzero_exit_and_empty_capture(monkeypatch, tmp_path):
    _fake_ncu(monkeypatch, tmp_path, rc=2, out="", err="==ERROR== Failed to find metric bogus__metric\n")
    r = profile.profile_impl("sdpa_flash", (1, 2, 128, 64), False, tmp_path / "a")
    assert not r.ok and "code 2" in r.reason and "bogus__metric" in r.reason
    FakePopen.rc, FakePopen.out, FakePopen.err = 0, "==PROF== Disconnected from process 1\n", ""
    r = profile.profile_impl("sdpa_flash", (1, 2, 128, 64), False, tmp_path / "b")
    assert not r.ok and "no kernel" in r.reason


def test_success_path_parses_and_saves_csv(monkeypatch, tmp_path):
    text = synthetic_csv()
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=text, err="")
    r = profile.profile_impl("sdpa_efficient", (4, 16, 4096, 64), False, tmp_path / "out")
    assert r.ok, r.reason
    assert len(r.kernels) == 2 and r.main["kernel"].startswith("attention_fwd_kernel")
    assert open(r.csv_path).read() == text
    assert r.csv_path.endswith("ncu_sdpa_efficient_B4_H16_S4096_D64_full.csv")


def test_timeout_is_a_reason(monkeypatch, tmp_path):
    _fake_ncu(monkeypatch, tmp_path, rc=0, out="", err="")

    def too_slow(cmd, timeout, gpu=None):
        raise subprocess.TimeoutExpired(cmd, timeout)

    monkeypatch.setattr(profile, "run_in_group", too_slow)
    r = profile.profile_impl("sdpa_flash", (1, 1, 64, 64), False, tmp_path, timeout=1)
    assert not r.ok and "timed out" in r.reason


def test_run_kills_on_timeout():
    import time

    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        ncu_process.run_in_group(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert time.monotonic() - t0 < 10


def test_command_line(monkeypatch, tmp_path):
    import sys

    cmd = profile.ncu_command("/opt/ncu", "wmma", (4, 16, 4096, 64), True)
    line = " ".join(cmd)
    assert "--clock-control none" in line
    assert "--clock-control base" not in line
    assert cmd[0] == "/opt/ncu"
    for flag in ("--nvtx", "--csv"):
        assert flag in cmd
    assert cmd[cmd.index("--nvtx-include") + 1] == "profile/"
    assert cmd[cmd.index("--page") + 1] == "raw"
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(dict.fromkeys(METRICS.values()))
    i = cmd.index(sys.executable)
    assert cmd[i:] == [sys.executable, "-m", "lab.measure.profile", "--target", "wmma", "--shape", "4,16,4096,64", "--causal"]
    # and the command profile_impl actually runs, from the repository root
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=synthetic_csv(), err="")
    profile.profile_impl("sdpa_flash", (1, 1, 64, 64), False, tmp_path / "o")
    ran, kwargs = FakePopen.calls[-1]
    assert "--clock-control" in ran and ran[ran.index("--clock-control") + 1] == "none"
    assert "base" != ran[ran.index("--clock-control") + 1]
    from lab.kernels.variants import REPO

    assert str(kwargs["cwd"]) == str(REPO)


def test_metric_names_are_well_formed():
    import re

    for name, metric in METRICS.items():
        assert re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+(\.[a-z_]+)*", metric), (name, metric)
    for reason in ncu_metrics.STALL_REASONS:
        assert METRICS[f"stall_{reason}"] == f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def test_parse_base_units_as_ncu_2025_3_prints_them():
    """Columns, units and values as `--print-units base` gave them on an H200 (abridged)."""
    cols = [
        ("ID", "", "0"), ("Process ID", "", "958"), ("Process Name", "", "python3.12"), ("Host Name", "", "127.0.0.1"),
        ("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg", "",
         '958  "<default domain>:profile:none:none:none:none:none:none" '),
        ("Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg", "", ""),
        ("Kernel Name", "", "void <unnamed>::attention_fwd<64>(const __half *, const __half *, const __half *, "
                            "__half *, AttnShape)"),
        ("Context", "", "1"), ("Stream", "", "7"), ("Block Size", "", "(160, 1, 1)"), ("Grid Size", "", "(16, 8, 2)"),
        ("Device", "", "0"), ("CC", "", "9.0"),
        ("dram__bytes.sum", "byte", "6,321,920"), ("dram__bytes.sum.per_second", "byte/s", "161,669,394,435.35"),
        ("gpu__time_duration.sum", "ns", "39,104"),
        ("launch__occupancy_limit_barriers", "block", "32"), ("launch__occupancy_limit_blocks", "block", "32"),
        ("launch__occupancy_limit_registers", "block", "2"), ("launch__occupancy_limit_shared_mem", "block", "2"),
        ("launch__occupancy_limit_warps", "block", "12"),
        ("launch__registers_per_thread", "register/thread", "147"),
        ("launch__shared_mem_per_block_dynamic", "byte/block", "73,216"),
        ("launch__cluster_scheduling_policy", "", "PolicySpread"),
        ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "inst", "1.55"),
        ("smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", "inst", "1.00"),
    ]
    text = "\n".join(["==WARNING== Note: Running with unmodified GPU clocks.",
                      "==PROF== Connected to process 958 (/usr/bin/python3.12)",
                      "==PROF== Disconnected from process 958"] + [_line([c[i] for c in cols]) for i in range(3)])
    (k,) = parse_ncu_csv(text)
    assert k["duration"] == 39.104
    assert k["dram_bytes"] == 6321920.0
    assert k["dram_bytes_per_s"] == pytest.approx(161669394435.35)
    assert k["smem_dynamic"] == 73216.0
    assert k["occupancy_limit_barriers"] == 32.0
    assert k["ctas_per_sm"] == 2.0
    assert k["top_stalls"] == [("long_scoreboard", 1.55)]
    assert k["stall_selected"] == 1.0
    assert k["bank_conflicts_ld"] is None


def test_target_failure_reason_names_the_python_error(monkeypatch, tmp_path):
    err = ("==PROF== Connected to process 7 (/usr/bin/python3)\n"
           "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
           "RuntimeError: No available kernel. Aborting execution.\n"
           "==PROF== Disconnected from process 7\n"
           "==ERROR== The application returned an error code (1).\n")
    _fake_ncu(monkeypatch, tmp_path, rc=1, out="", err=err)
    r = profile.profile_impl("sdpa_flash", (1, 1, 64, 64), False, tmp_path / "o")
    assert not r.ok
    assert "error code (1)" in r.reason and "No available kernel" in r.reason


def test_unknown_variant_is_a_reason(monkeypatch, tmp_path):
    _fake_ncu(monkeypatch, tmp_path, rc=0, out="", err="")
    r = profile.profile_impl("no_such_variant", (1, 1, 64, 64), False, tmp_path / "o")
    assert not r.ok and "unknown implementation" in r.reason
    assert FakePopen.calls == []


def test_sectors_per_request_undefined_without_global_loads():
    # A kernel whose every load goes through TMA issues no global load instructions: its
    # sectors per request is undefined, not 0 (which would read as a perfect improvement).
    assert ncu_metrics._ratio(0, 0, zero_over_zero=None) is None
    assert ncu_metrics._ratio(0, 0) == 0.0  # a percentage of nothing (bank conflicts) stays 0
    assert ncu_metrics._ratio(8, 2) == 4.0


def _two_variant_kernels():
    # the synthetic capture, with its second kernel renamed to a variant's
    return synthetic_csv().replace("void at::native::softmax_helper(...)", "void <unnamed>::attention_fwd<64>(...)")


def test_variants_profiled_together_map_in_launch_order(monkeypatch, tmp_path):
    text = _two_variant_kernels()
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=text, err="")
    monkeypatch.setattr(profile, "_prebuild", lambda impl: None)
    res = profile.profile_variants(["padded", "wmma"], (4, 16, 4096, 64), False, tmp_path / "out")
    assert [r.impl for r in res] == ["padded", "wmma"] and all(r.ok for r in res)
    k1, k2 = parse_ncu_csv(text)
    assert res[0].main == k1 and res[1].main == k2 and res[0].to_record()["n_kernels"] == 1
    (cmd, _), = FakePopen.calls
    assert cmd[cmd.index("--target") + 1] == "padded,wmma"  # one ncu process for both
    assert res[0].csv_path.endswith("ncu_variants_B4_H16_S4096_D64_full.csv") and open(res[0].csv_path).read() == text


def test_variants_together_refused_when_the_capture_does_not_map(monkeypatch, tmp_path):
    monkeypatch.setattr(profile, "_prebuild", lambda impl: None)
    # a kernel that is not a variant's (two kernels, one foreign): no guessing, None
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=synthetic_csv(), err="")
    assert profile.profile_variants(["padded", "wmma"], (1, 2, 128, 64), False, tmp_path / "a") is None
    # one kernel short
    FakePopen.out = _two_variant_kernels()
    assert profile.profile_variants(["padded", "wmma", "mma_sync"], (1, 2, 128, 64), False, tmp_path / "b") is None
    # ncu failing as a whole
    FakePopen.rc, FakePopen.err = 1, "==ERROR== ERR_NVGPUCTRPERM\n"
    assert profile.profile_variants(["padded", "wmma"], (1, 2, 128, 64), False, tmp_path / "c") is None


def test_a_variant_that_does_not_build_is_left_out_of_the_batch(monkeypatch, tmp_path):
    one_kernel = "\n".join(ln for ln in synthetic_csv().splitlines() if "softmax_helper" not in ln)
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=one_kernel, err="")
    monkeypatch.setattr(profile, "_prebuild", lambda impl: "build failed: boom" if impl == "wmma" else None)
    res = profile.profile_variants(["padded", "wmma"], (1, 2, 128, 64), False, tmp_path)
    assert res[0].ok and not res[1].ok and "boom" in res[1].reason


def _capture_of(kernels):
    """ncu's raw page for kernels given as (name, duration in us), the other metrics synthetic_csv's."""
    header = HEAD + list(METRICS.values())
    units = [""] * len(HEAD) + ["usecond" if n == "duration" else VALUES[n][0] for n in METRICS]
    rows = [[str(i), "4242", "python3.12", "127.0.0.1", name, "1", "7", "(128, 1, 1)", "(64, 16, 4)", "0", "9.0"]
            + [str(us) if n == "duration" else VALUES[n][1] for n in METRICS] for i, (name, us) in enumerate(kernels)]
    return "\n".join(["==PROF== Connected to process 4242", _line(header), _line(units), *map(_line, rows), ""])


SPIN = "at::cuda::<unnamed>::spin_kernel(long)"


def test_peers_profiled_together_are_cut_at_the_separators(monkeypatch, tmp_path):
    # a peer's call may launch a helper beside its main kernel: each peer's kernels are those
    # before its separator, and its main kernel the longest of them
    text = _capture_of([("flash_fwd_kernel", 100.0), (SPIN, 1.0), ("memset_helper", 5.0), ("cudnn_sdpa", 200.0),
                        (SPIN, 1.0)])
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=text, err="")
    res = profile.profile_peers(["sdpa_flash", "sdpa_cudnn"], (4, 16, 4096, 64), False, tmp_path / "out")
    assert [r.impl for r in res] == ["sdpa_flash", "sdpa_cudnn"] and all(r.ok for r in res)
    assert [len(r.kernels) for r in res] == [1, 2]
    assert res[0].main["duration"] == 100.0 and res[1].main["kernel"] == "cudnn_sdpa"
    assert res[1].main["duration"] == 200.0
    (cmd, _), = FakePopen.calls  # one ncu process for both
    assert cmd[cmd.index("--target") + 1] == "sdpa_flash,sdpa_cudnn"
    assert res[0].csv_path.endswith("ncu_peers_B4_H16_S4096_D64_full.csv")


def test_peers_together_refused_when_the_capture_does_not_cut(monkeypatch, tmp_path):
    shape, peers2 = (1, 2, 128, 64), ["sdpa_flash", "sdpa_cudnn"]
    # the last peer's kernels not closed by a separator (its launch failed part way)
    _fake_ncu(monkeypatch, tmp_path, rc=0, out=_capture_of([("a", 9.0), (SPIN, 1.0), ("b", 9.0)]), err="")
    assert profile.profile_peers(peers2, shape, False, tmp_path / "a") is None
    # a peer with no kernel of its own
    FakePopen.out = _capture_of([("a", 9.0), (SPIN, 1.0), (SPIN, 1.0)])
    assert profile.profile_peers(peers2, shape, False, tmp_path / "b") is None
    # one separator too many or too few for the peers asked
    FakePopen.out = _capture_of([("a", 9.0), (SPIN, 1.0)])
    assert profile.profile_peers(peers2, shape, False, tmp_path / "c") is None
    # ncu failing as a whole
    FakePopen.out = _capture_of([("a", 9.0), (SPIN, 1.0), ("b", 9.0), (SPIN, 1.0)])
    FakePopen.rc, FakePopen.err = 1, "==ERROR== ERR_NVGPUCTRPERM\n"
    assert profile.profile_peers(peers2, shape, False, tmp_path / "d") is None


def test_split_at_separators_by_hand():
    k = [{"kernel": "x"}, {"kernel": SPIN}, {"kernel": "y"}, {"kernel": "z"}, {"kernel": SPIN}]
    assert profile.split_at_separators(k) == [[{"kernel": "x"}], [{"kernel": "y"}, {"kernel": "z"}]]
    assert profile.split_at_separators(k[:-1]) is None
    assert profile.split_at_separators([]) == []


def test_a_run_profiles_its_peers_in_one_process_a_shape_and_falls_back_one_by_one(monkeypatch, tmp_path):
    from lab.kernels.shape import Shape
    from lab.measure import records
    from lab.studies import profiling

    calls = []

    def result(impl, shape, causal, out=None, *_a, **_k):
        return profile._result(impl, Shape(*shape.dims, causal, shape.H_kv, shape.dtype), ok=True,
                               csv_path=str(out / f"ncu_{impl}.csv") if out else "")

    monkeypatch.setattr(profile, "profile_variants", lambda names, shape, causal, out, gpu=None: [
        result(n, shape, causal, out) for n in names])
    monkeypatch.setattr(profile, "profile_impl", lambda impl, shape, causal, out, gpu=None: calls.append(impl) or result(
        impl, shape, causal, out))
    batches = iter([[result(n, Shape(1, 2, 128, 64, False), False) for n in ("sdpa_flash", "flash_attn3")], None])
    monkeypatch.setattr(profile, "profile_peers", lambda names, shape, causal, out, gpu=None: next(batches))
    rec = records.RunRecord(run_id="20990103T000000Z-test", root=tmp_path)
    shapes = [Shape(1, 2, 128, 64, False), Shape(1, 2, 256, 64, False)]
    profiling.profile_run(rec, ["wmma"], shapes, ["sdpa_flash", "flash_attn3"], progress=lambda *_: None)
    assert calls == ["sdpa_flash", "flash_attn3"]  # only at the second shape, whose batch failed
    import pandas as pd

    table = pd.read_csv(rec.path("profile.csv"))
    assert sorted(table.impl) == sorted(["wmma", "sdpa_flash", "flash_attn3"] * 2)
    # captures inside the run folder are named as its own files (ncu/...), wherever the folder was written
    assert set(table.csv_path.dropna()) == {"ncu/ncu_wmma.csv", "ncu/ncu_sdpa_flash.csv", "ncu/ncu_flash_attn3.csv"}


def test_a_shape_profiled_for_a_hypothesis_runs_only_the_kernels_asked_and_says_why(monkeypatch, tmp_path):
    """lab.studies.stages' profile stage adds each judged shape it does not profile with only the step and its
    parent there (lab.studies.profiling.judged_profile_work): `where` keeps the peers out too, and the rows carry
    their purpose, which lab.report.load reads (a stand-in for nothing else)."""
    from lab.kernels.shape import Shape
    from lab.measure import records
    from lab.studies import profiling

    def result(impl, shape, causal):
        return profile._result(impl, Shape(*shape.dims, causal, shape.H_kv, shape.dtype), ok=True)

    monkeypatch.setattr(profile, "profile_variants", lambda names, shape, causal, out, gpu=None: [
        result(n, shape, causal) for n in names])
    monkeypatch.setattr(profile, "profile_peers", lambda names, shape, causal, out, gpu=None: [
        result(n, shape, causal) for n in names])
    rec = records.RunRecord(run_id="20990103T000000Z-judged", root=tmp_path)
    plain, judged = Shape(1, 2, 256, 64, False), Shape(1, 2, 256, 64, True)
    profiling.profile_run(rec, ["wmma", "tma"], [plain, judged], ["sdpa_flash"], progress=lambda *_: None,
                          where=lambda impl, shape: shape != judged or impl == "tma",
                          purpose={judged: profiling.JUDGED})
    import pandas as pd

    table = pd.read_csv(rec.path("profile.csv"), keep_default_na=False)
    assert list(zip(table.impl, table.causal, table.purpose)) == [
        ("wmma", False, ""), ("tma", False, ""), ("sdpa_flash", False, ""), ("tma", True, "judged")]
