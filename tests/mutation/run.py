"""Mutation testing of the code that decides the study's conclusions (issue 20), with mutmut.

    python tests/mutation/run.py [--scope full|fast] [--tests-rev REV] [--report PATH] [--max-children N]

A scope names the decision functions to mutate (SCOPES) and the CPU tests that must kill the
mutants (TESTS). The scope runs in a copy of the tree under build/mutation/<scope>/ (mutmut writes
its mutants/ there), so the working tree is never touched. The report lists the score and every
surviving mutant with its diff and, where NOTES (notes.toml beside this file) says so, why it is
equivalent or left. A note records the change it explains; a note whose change is not the
survivor's (its function changed, mutmut renumbered) is stale and explains nothing. The exit
status is 1 when a surviving mutant of the scope has no valid note.

Score = killed / (mutants - equivalent); a timeout counts as killed (the mutant hangs the rule).
`--tests-rev main` (or any revision) judges the same code and scope by that revision's tests/:
the score before a change to the tests.

This file is not a test module (pytest collects test_*.py only); `make mutation` runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTES = Path(__file__).resolve().with_name("notes.toml")

# The decision code, file -> functions ("Class.method" for a method). "fast": the rules alone,
# for CI; "full": with the statistics' intervals and the plumbing that feeds the rules.
FAST = {
    "lab/measure/check.py": ["check_case", "_restore", "_bits_equal"],
    "lab/measure/timing.py": ["StopRule.met_by", "StopRule.block_size", "interleave"],
    "lab/measure/stats/comparison.py": ["Comparison.verdict", "interval_verdict"],
    "lab/studies/params.py": ["RunParams.stop_rule", "RunParams.replicate_rule"],
    "lab/studies/compare.py": ["compare"],
    "lab/report/bar.py": ["bar_rows", "row_level", "bar_verdicts", "_profile_verdicts", "peer_rows",
                          "portable_bar_rows", "at_parity"],
    "lab/report/sections/reference.py": ["reference_rows", "parity_counts", "parity_words", "at_least", "_judged",
                                         "targets", "judged_shapes", "row_peer", "timed_peers", "standing_in",
                                         "companion_refusal", "companions_refusal", "rows_standing_in",
                                         "first_screen_line"],
    "lab/report/context.py": ["base_on_another_gpu", "companion_of", "companions_for"],
    "lab/report/tables.py": ["hypothesis_verdict", "rel_change", "_vs_prediction"],
    "lab/studies/tuning/dispatch.py": ["shape_class", "entry_for", "choose_table", "heldout_verdict",
                                       "heldout_verdicts", "without_overfitted"],
}
FULL = {
    "lab/measure/check.py": ["check_case", "_restore", "_bits_equal", "reference", "ReferenceCache.get",
                             "peer_as_attn", "CaseResult.explain", "run_grid"],
    "lab/measure/stats/samples.py": ["as_1d", "as_positive_1d", "by_replicate", "pooled",
                                     "RoundRobinSamples.__init__", "_medians_by_round", "round_log_ratios",
                                     "round_pairs", "keep_rounds", "subset_replicates"],
    "lab/measure/stats/descriptive.py": ["summarize", "median_ci", "_median_ci_rank", "relative_ci_halfwidth"],
    "lab/measure/stats/bootstrap.py": ["_ratio_of_medians", "_bootstrap_ci", "one_replicate_ci",
                                       "_resampled_medians", "log_median_var", "_bootstrap_medians", "median_var"],
    "lab/measure/stats/replicated.py": ["speedup_ci", "replicated_median", "_t_quantile", "t_interval",
                                        "replicated_median_ci", "random_effects", "replicated_speedup_ci",
                                        "_round_paired_ci", "_replicate_log_ratios", "leave_one_out", "gpu_split"],
    "lab/measure/stats/ranks.py": ["cliffs_delta", "mann_whitney_p", "hodges_lehmann_log_ratio", "_bh_fallback",
                                   "benjamini_hochberg"],
    "lab/measure/stats/comparison.py": ["Comparison.verdict", "interval_verdict", "compare", "compare_rows"],
    "lab/measure/stats/throughput.py": ["attention_flops", "tflops", "effective_gbps"],
    "lab/measure/records.py": ["with_replicate", "latencies_by_replicate", "dropped"],
    "lab/studies/params.py": ["RunParams.stop_rule", "RunParams.replicate_rule", "RunParams.sustained_shapes"],
    "lab/studies/compare.py": ["best_base", "compare"],
    "lab/report/bar.py": ["bar_shapes", "bar_rows", "row_level", "_local_bytes", "bar_verdicts",
                          "bar_tflops_lines", "_profile_verdicts", "success_bar", "peer_rows", "portable_bar_rows",
                          "at_parity"],
    "lab/report/sections/reference.py": ["reference_rows", "parity_counts", "parity_words", "at_least", "_judged",
                                         "targets", "judged_shapes", "row_peer", "timed_peers", "standing_in",
                                         "companion_refusal", "companions_refusal", "rows_standing_in",
                                         "first_screen_line"],
    "lab/report/context.py": ["base_on_another_gpu", "companion_of", "companions_for"],
    "lab/report/tables.py": ["hypothesis_verdict", "rel_change", "_vs_prediction"],
    "lab/report/replication.py": ["rows", "_se", "agreement", "_normal_cdf"],
    "lab/studies/tuning/dispatch.py": ["shape_class", "entry_for", "_log_se", "class_scores", "choose_table",
                                       "heldout_verdict", "heldout_verdicts", "without_overfitted",
                                       "TunedDispatch.kernel_for"],
    # issue 48: a run's calibration, the models section's verdict, the factorial's effects and costs
    "lab/studies/calibration.py": ["leave_one_out_run", "_leave_one_out"],
    "lab/report/models.py": ["verdicts"],
    "lab/studies/factorial.py": ["estimate", "knockout_costs"],
    # issues 49 and 50: the split of replicates between GPUs; the decode reference and its check
    "lab/measure/decode_check.py": ["valid_kv", "bottom_right_mask", "reference", "check_decode_case"],
    # issue 50's decode set in a run: which checks run, a decode row's rule, and the section's verdicts
    "lab/studies/decode_study.py": ["decode_rule", "check_cases", "measure_one"],
    "lab/report/sections/decode.py": ["speed_interval", "fastest_peer", "geomean", "targets", "copy_of",
                                      "copy_exceeded", "cold_excess", "front_page", "other_gpu_lines",
                                      "copy_misses", "copy_verdict", "roofline_reading", "roofline_bar"],
    # the copy that target 1 is held to, after its lead-in
    "lab/studies/measure_decode.py": ["copy_bandwidth"],
    # the cold mode's flush as a run records it, and what the report concludes from it
    "lab/measure/timing.py": ["StopRule.met_by", "StopRule.block_size", "interleave", "recorded_flush"],
    "lab/report/validity.py": ["cold_flush_threat"],
    # the DRAM traffic the report names (bytes over the inputs and output)
    "lab/report/traffic.py": ["_bytes_at", "dram_traffic", "dram_flags"],
    # which peers the fastest peer is chosen among (SDPA's dispatcher beside its backends)
    "lab/measure/peers.py": ["contenders"],
}
SCOPES = {"fast": FAST, "full": FULL}

# The tests each scope is judged by: the decision-rule tests with independent expectations, and
# for "full" the existing unit tests of these modules too, by node id where a file also holds slow
# tests of other code (the tuning search, flex_attention's compiles, the report rendered whole):
# each mutant runs every selected test that calls its function, so a slow test there costs
# minutes a function. The report's end-to-end tests on committed runs are left out (minutes a
# mutant; they check a rendering of one run, and the bar's rules are tested on synthetic rows).
DECISION_TESTS = ["tests/test_decision_rules.py", "tests/test_checker_fakes.py", "tests/test_stopping_rule.py",
                  "tests/test_clock_trace.py", "tests/test_fa3_targets.py", "tests/test_sustained_slowdown.py"]
UNIT_TESTS = ["tests/test_replicated_rules.py", "tests/test_properties.py", "tests/test_stats_edges.py",
              "tests/test_stats.py", "tests/test_replicates_stats.py", "tests/test_round_pairing.py",
              "tests/test_records_and_runs.py",
              "tests/test_params.py::test_old_runs_read_back_with_what_they_did",
              "tests/test_models_study.py::test_sustained_names_where_the_sustained_mode_runs",
              *(f"tests/test_replicates_runs.py::{t}" for t in (
                  "test_runs_recorded_before_replicates_read_back_as_one", "test_a_bad_replicate_count_is_named",
                  "test_the_calibration_is_at_the_confidence_asked")),
              *(f"tests/test_replication.py::{t}" for t in (
                  "test_rows_hold_where_the_kernels_behave_alike", "test_a_step_that_stops_helping_is_named",
                  "test_agreement_counts_points_inside_the_other_runs_intervals",
                  "test_median_and_speedup_over_replicates_agree")),
              *(f"tests/test_tuning.py::{t}" for t in (
                  "test_shape_class_rule", "test_dispatch_picks_the_kernel_of_the_shape_class",
                  "test_committed_dispatch_table_is_readable_and_names_legal_configurations",
                  "test_choose_table_from_a_synthetic_tuning_table", "test_heldout_verdicts_flag_overfitting")),
              *(f"tests/test_peers.py::{t}" for t in (
                  "test_measure_shape_records_a_raising_peer_and_times_the_others",
                  "test_registered_external_layouts_match_the_reference",
                  "test_a_peer_output_of_the_wrong_layout_fails_instead_of_broadcasting",
                  "test_peers_failing_correctness_are_excluded_from_timing",
                  "test_the_dispatcher_contends_only_where_no_sdpa_backend_was_timed")),
              "tests/test_knockouts.py::test_timing_times_a_knockout_only_where_its_switch_applies",
              "tests/test_verdict_edges.py", "tests/test_factorial_rules.py",
              *(f"tests/test_knockouts.py::{t}" for t in (
                  "test_factorial_effects_recover_known_coefficients",
                  "test_knockout_costs_pick_the_judged_shape_where_the_headline_does_not_apply",
                  "test_the_interaction_table_names_the_dependencies_a_factor_carries_off",
                  "test_factorial_over_replicates_covers_a_null_factor_that_one_process_does_not")),
              "tests/test_models_study.py::test_the_models_section_reports_every_model_shape_with_intervals",
              "tests/test_decode_problem.py", "tests/test_gpu_split.py", "tests/test_decode_study.py",
              "tests/test_cold_flush.py", "tests/test_dram_traffic.py", "tests/test_copy_bandwidth.py"]
TESTS = {"fast": DECISION_TESTS, "full": DECISION_TESTS + UNIT_TESTS}
# Lines that only report progress: a mutant there changes what is printed, never a conclusion.
DO_NOT_MUTATE = [r"^\s*progress\(", r"^\s*\"\"\"", r"^\s*#"]
# What the tests read besides lab/ and tests/.
ALSO = ["kernels", "data", "reports", "notebooks", "docs", "Makefile", "requirements.txt", "pyproject.toml"]


def mutant_patterns(scope: dict) -> list[str]:
    """mutmut's mutant names for the scope's functions, e.g. lab.measure.stats.x_speedup_ci__mutmut_*."""
    out = []
    for path, funcs in scope.items():
        module = path.removesuffix(".py").replace("/", ".")
        for f in funcs:
            cls, _, name = f.rpartition(".")
            out.append(f"{module}.x{'ǁ' + cls + 'ǁ' if cls else '_'}{name}__mutmut_*")
    return out


def note_key(mutant: str) -> str:
    """A survivor's key in NOTES: module leaf and mutant, e.g. stats.x_compare__mutmut_3 (unchanged
    when the module moves to another package)."""
    module, _, rest = mutant.partition(".x")
    return module.rpartition(".")[2] + ".x" + rest


def _toml_list(xs) -> str:
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def _copy(names: list[str], work: Path, rev: str | None = None) -> None:
    """names from the working tree (or from git revision `rev`) into work/, replacing what is there."""
    for name in names:
        dst = work / name
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
    if rev:
        archive = subprocess.run(["git", "archive", rev, *names], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        return
    for name in names:
        src, dst = REPO / name, work / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so", "mutants", ".hypothesis"))
        elif src.exists():
            shutil.copy2(src, dst)


def prepare(work: Path, scope: dict, tests: list[str], tests_rev: str | None = None,
            timeout: tuple[float, float] = (15.0, 1.0), isolation: str = "fork") -> list[str]:
    """A copy of the tree (its tests/ from git revision `tests_rev` where given) with a mutmut
    configuration for the scope; returns the selected tests that exist there."""
    if (work / "mutants").exists():  # mutmut keeps results of unchanged functions: start afresh
        shutil.rmtree(work / "mutants")
    work.mkdir(parents=True, exist_ok=True)
    _copy(["lab", *ALSO], work)
    _copy(["tests"], work, tests_rev)
    present = [t for t in tests if (work / t.split("::")[0]).exists()]
    text = (work / "pyproject.toml").read_text()
    text += f"""
[tool.mutmut]
source_paths = ["lab"]
only_mutate = {_toml_list(scope)}
also_copy = {_toml_list(ALSO)}
do_not_mutate_patterns = {_toml_list(DO_NOT_MUTATE)}
pytest_add_cli_args = ["-m", "not gpu", "-p", "no:cacheprovider", "--deselect",
                       "tests/test_stats.py::test_no_torch_import"]
pytest_add_cli_args_test_selection = {_toml_list(present)}
process_isolation = "{isolation}"
use_git_change_detection = false
timeout_multiplier = {timeout[0]}
timeout_constant = {timeout[1]}
"""
    (work / "pyproject.toml").write_text(text)
    return present


def results(work: Path, patterns: list[str], all_keys: bool = False) -> dict[str, str]:
    """mutant -> status (mutmut's names: killed, survived, timeout, no tests, ...), of the mutants
    that were run (all_keys: also those not run)."""
    import fnmatch

    from mutmut.stats import status_by_exit_code

    out = {}
    for meta in (work / "mutants").rglob("*.py.meta"):
        for key, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            if (code is not None or all_keys) and any(fnmatch.fnmatch(key, p) for p in patterns):
                out[key] = status_by_exit_code[code]
    return out


def diffs(work: Path, names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    code = ("import json, sys\nfrom mutmut.mutation.diff_apply import get_diff_for_mutant\n"
            "def one(n):\n    try:\n        return get_diff_for_mutant(n)\n"
            "    except Exception as exc:\n        return f'(no diff: {type(exc).__name__}: {exc})'\n"
            "print(json.dumps({n: one(n) for n in json.load(sys.stdin)}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, input=json.dumps(names), capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout)


def changed_lines(diff: str) -> str:
    lines = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return "\n".join(lines)


def _change(diff: str) -> list[str]:
    """The mutant's change as a note records it: its removed and added lines, whitespace trimmed."""
    return [ln[0] + " " + ln[1:].strip() for ln in changed_lines(diff).splitlines()]


def valid_note(notes: dict, mutant: str, diff: str) -> dict:
    """The mutant's note where it explains this change ({} where there is none or it is stale)."""
    note = notes.get(note_key(mutant), {})
    return note if note and note.get("change") == _change(diff) else {}


def write_report(path: Path, scope_name: str, scope: dict, status: dict[str, str], notes: dict,
                 diff: dict[str, str], wall_s: float, tests: list[str], what: str = "",
                 with_diffs: bool = True, before: str = "") -> int:
    """The report; returns how many survivors lack a valid note."""
    survivors = sorted(m for m, s in status.items() if s not in ("killed", "timeout"))
    note_of = {m: valid_note(notes, m, diff.get(m, "")) for m in survivors}
    equivalent = {m for m in survivors if note_of[m].get("kind") == "equivalent"}
    killed = sum(s in ("killed", "timeout") for s in status.values())
    total = len(status) - len(equivalent)
    missing = [m for m in survivors if not note_of[m]]
    left = [m for m in survivors if note_of[m].get("kind") == "left"]
    per_module: dict[str, list[int]] = {}
    for m, s in status.items():
        mod = m.partition(".x")[0]
        row = per_module.setdefault(mod, [0, 0, 0])
        row[0] += s in ("killed", "timeout")
        row[1] += m in equivalent
        row[2] += 1
    lines = [f"# Mutation testing: the decision code ({scope_name} scope)", "",
             "Generated by `make mutation` (`python tests/mutation/run.py`) with mutmut "
             f"{_version()}; " + (f"{wall_s / 60:.1f} min" if wall_s >= 0 else "a run not finished") +
             f" on {os.cpu_count()} cores. Each mutant is one small change (an "
             "operator, a constant, a condition, an argument) to one of the functions below; it is *killed* when a "
             "test fails. Score = killed / (mutants − equivalent mutants); a mutant that makes the tests time out "
             "counts as killed.", "",
             f"**Score: {killed} / {total} = {100 * killed / max(total, 1):.1f} %** "
             f"({len(status)} mutants, {len(equivalent)} equivalent, {len(survivors) - len(equivalent)} "
             f"non-equivalent survivors: {len(left)} left with a reason, {len(missing)} not explained).", "",
             "Tests: " + ", ".join(f"`{t}`" for t in tests) + "." + (f" {what}" if what else ""), "",
             *([before, ""] if before else []),
             "| module | killed | equivalent | mutants | score |", "|---|---:|---:|---:|---:|"]
    for mod, (k, e, n) in sorted(per_module.items()):
        lines.append(f"| `{mod}` | {k} | {e} | {n} | {100 * k / max(n - e, 1):.1f} % |")
    lines += ["", "Functions mutated: " + "; ".join(f"`{p}`: " + ", ".join(fs) for p, fs in scope.items()) + ".",
              "", "## Survivors", ""]
    if not survivors:
        lines.append("None.")
    for m in survivors:
        note = note_of[m]
        kind = note.get("kind", "NOT EXPLAINED")
        if not with_diffs:
            lines.append(f"- `{m}` ({status[m]}; {kind})")
            continue
        stale = note_key(m) in notes and not note
        lines += [f"### `{m}` ({status[m]}; {kind})", "", "```diff", changed_lines(diff.get(m, "")), "```", "",
                  note.get("why", "The note in tests/mutation/notes.toml is for another change (stale)." if stale
                           else "No note in tests/mutation/notes.toml: a test is missing, or the note is."), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n")
    return len(missing)


def _version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scope", choices=SCOPES, default="full")
    ap.add_argument("--tests", nargs="*", help="test files or node ids instead of the scope's")
    ap.add_argument("--tests-rev", help="judge the code by this git revision's tests/ (the score before a change)")
    ap.add_argument("--report", type=Path, help="default: reports/mutation/MUTATION.md (full), build/... (fast)")
    ap.add_argument("--work", type=Path, help="default: build/mutation/<scope>")
    ap.add_argument("--max-children", type=int, default=os.cpu_count())
    ap.add_argument("--report-only", action="store_true", help="rewrite the report from the last run's results")
    ap.add_argument("--modules", help="comma-separated files of the scope to mutate (default: all)")
    ap.add_argument("--timeout", type=float, nargs=2, default=(15.0, 1.0), metavar=("MULTIPLIER", "CONSTANT"),
                    help="mutmut's CPU-time limit a mutant: (tests' time + CONSTANT) x MULTIPLIER x 2 s")
    ap.add_argument("--isolation", choices=("fork", "forkserver"), default="fork",
                    help="mutmut's process isolation: fork (each mutant's tests in a fork of one process that "
                         "imported them; several times faster) or forkserver")
    ap.add_argument("--before", type=Path, help="a report of the same scope by earlier tests (--tests-rev): its "
                                                  "score is quoted beside this one")
    ap.add_argument("--print-notes", action="store_true",
                    help="print a note template (with its change) for each survivor without a valid note")
    args = ap.parse_args(argv)
    scope, tests = SCOPES[args.scope], args.tests or TESTS[args.scope]
    if args.modules:
        scope = {m: scope[m] for m in args.modules.split(",")}
    work = args.work or REPO / "build" / "mutation" / (args.scope + (f"-tests-{args.tests_rev}" if args.tests_rev
                                                                      else ""))
    report = args.report or (REPO / "reports" / "mutation" / "MUTATION.md" if args.scope == "full" and not
                             args.tests_rev and not args.modules and not args.tests else work / "MUTATION.md")
    patterns = mutant_patterns(scope)
    t0 = time.perf_counter()
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if not args.report_only:
        tests = prepare(work, scope, tests, args.tests_rev, tuple(args.timeout), args.isolation)
        (work / "tests.json").write_text(json.dumps(tests))
        proc = subprocess.run([*mutmut, "run", "--max-children", str(args.max_children), *patterns], cwd=work,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (work / "mutmut.log").write_text(proc.stdout)
        if proc.returncode != 0:
            print(proc.stdout[-4000:], file=sys.stderr)
            print(f"mutmut failed ({proc.returncode}); its log: {work / 'mutmut.log'}", file=sys.stderr)
            return 2
        (work / "wall_s").write_text(f"{time.perf_counter() - t0:.1f}")
    elif (work / "tests.json").exists():
        tests = json.loads((work / "tests.json").read_text())
    status = results(work, patterns)
    if not status:
        print(f"no mutant results under {work}/mutants", file=sys.stderr)
        return 2
    notes = tomllib.loads(NOTES.read_text()) if NOTES.exists() else {}
    survivors = [m for m, s in status.items() if s not in ("killed", "timeout")]
    diff = diffs(work, survivors)
    wall = float((work / "wall_s").read_text()) if (work / "wall_s").exists() else -1.0  # -1: not finished
    what = f"Tests of revision {args.tests_rev} (code of the working tree)." if args.tests_rev else ""
    if unrun := len(results(work, patterns, all_keys=True)) - len(status):
        what += f" {unrun} of the scope's mutants had not been run when this report was written: they are not counted."
    before = ""
    if args.before and args.before.exists():
        import re

        text = args.before.read_text()
        score = re.search(r"\*\*Score: (.*?)\*\*", text)
        rev = re.search(r"Tests of revision (\S+) ", text)
        if score:
            unrun = re.search(r" (\d+) of the scope's mutants had not been run", text)
            mutants = re.search(r"\((\d+) mutants,", text)
            before = (f"Before: {score.group(1)} with the tests of revision {rev.group(1) if rev else '?'} (the "
                      f"scope's code as that report mutated it, {mutants.group(1) if mutants else '?'} mutants; "
                      f"`{args.before.name}`" + (f"; {unrun.group(1)} mutants not run there" if unrun else "") + ").")
    missing = write_report(report, args.scope, scope, status, notes, diff, wall, tests, what,
                           with_diffs=not args.tests_rev, before=before)
    print(report.read_text().split("## Survivors")[0].strip())
    print(f"\nreport: {report}" + (f"; {missing} survivor(s) without a valid note" if missing else ""))
    if args.print_notes:
        for m in sorted(survivors):
            if not valid_note(notes, m, diff.get(m, "")):
                change = json.dumps(_change(diff.get(m, "")), ensure_ascii=False)
                print(f'\n["{note_key(m)}"]\nkind = ""\nchange = {change}\nwhy = ""')
    return 1 if missing and not args.tests_rev else 0


if __name__ == "__main__":
    sys.exit(main())
