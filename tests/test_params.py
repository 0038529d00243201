"""A run's parameters have one home (lab.studies.params): every way to start a run takes its
defaults from RunParams, a tuning run from TuneParams, and an old run's params.json reads back
with its missing fields filled in."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.kernels.shape import Shape
from lab.studies.params import RUN_OPTIONS, TUNE_OPTIONS, RunParams, TuneParams

REPO = Path(__file__).resolve().parent.parent


def test_the_pipeline_and_the_command_line_default_to_run_params():
    import lab.__main__ as cli
    from lab import pipeline

    assert RunParams.from_args(pipeline.parser().parse_args([])) == RunParams()
    assert RunParams.from_args(cli.parser().parse_args(["run"])) == RunParams()
    assert RunParams().shapes == tuple(RunParams.from_text(shapes="canonical,large,long,sweep,models").shapes)
    args = cli.parser().parse_args(["tune"])
    assert TuneParams.from_args(args) == TuneParams()
    assert TuneParams.from_args(cli.parser().parse_args(["tune", "--heldout", "x", "--fake"])).heldout_shapes == "x"


def test_notebook_00_and_notebook_support_leave_every_default_to_run_params():
    import inspect

    from lab import notebook_support

    sig = inspect.signature(notebook_support.start_or_open)
    assert [p.name for p in sig.parameters.values()] == ["run_id", "params"]  # run_id, then **params
    nb = json.loads((REPO / "notebooks" / "00_environment.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    values = {}
    for node in ast.parse("".join(cell["source"])).body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
        values[target.id] = ast.literal_eval(node.value)
    assert values.pop("run_id") == ""
    assert values == {o.name: None for o in RUN_OPTIONS}, "one None parameter per option: RunParams' default"


def _make_vars(name: str) -> list[str]:
    text = (REPO / "Makefile").read_text()
    return re.search(rf"^{name} := (.*)$", text, re.M).group(1).split()


def test_make_passes_on_only_what_it_is_given_and_knows_every_option():
    assert _make_vars("RUN_VARS") == [o.make for o in RUN_OPTIONS if o.make]
    assert _make_vars("TUNE_VARS") == [o.make for o in TUNE_OPTIONS if o.make]
    text = (REPO / "Makefile").read_text()
    for var in {*_make_vars("RUN_VARS"), *_make_vars("TUNE_VARS")}:
        assert not re.search(rf"^{var}\s*[?:]?=", text, re.M), f"the Makefile gives {var} a default of its own"

    def dry(*assignments):  # PYTHON=false: make skips its dependency probes (seconds each), the recipe is the same
        out = subprocess.run(["make", "-n", "ablation", "PYTHON=false", *assignments], cwd=REPO,
                             capture_output=True, text=True, timeout=120).stdout
        return next(line for line in out.splitlines() if "lab.pipeline" in line).split("lab.pipeline", 1)[1].strip()

    assert dry() == ""
    assert dry("SHAPES=large;4,16,512,64", "MIN_SAMPLES=20") == "--shapes 'large;4,16,512,64' --min-samples '20'"
    # every make variable reaches its option under the flag make spells from its name
    from lab import pipeline

    known = pipeline.parser()._option_string_actions
    for o in RUN_OPTIONS:
        flag = "--" + o.make.lower().replace("_", "-")
        assert flag in known and known[flag].dest == o.name, o.make


def test_the_option_tables_set_distinct_fields_and_know_the_samplers_the_search_takes():
    from dataclasses import fields

    from lab.studies.tuning import search

    for options, params in ((RUN_OPTIONS, RunParams), (TUNE_OPTIONS, TuneParams)):
        names, flags = [o.name for o in options], [o.flag for o in options]
        assert len(set(names)) == len(names) and len(set(flags)) == len(flags)
        assert set(names) <= {f.name for f in fields(params)}, "every option sets a field of its dataclass"
    by_name = {o.name: o for o in TUNE_OPTIONS}
    assert by_name["sampler"].choices == search.SAMPLERS and by_name["trials"].type is int
    assert {o.name: o.choices for o in RUN_OPTIONS if o.choices} == {"profile_shapes": ("distinct", "all"),
                                                                    "knockouts": (0, 1)}


def test_old_runs_read_back_with_what_they_did():
    old = {"variants": ["baseline", "wmma"], "shapes": [[4, 16, 512, 64, False], [1, 8, 512, 64, True]],
           "modes": ["hot"], "cap_s": 3.0, "rel_ci": 0.005, "profile": True, "check": "full",
           "backends": ["flash", "cudnn"], "seed": 0}
    p = RunParams.from_json(old)
    assert p.min_samples == 20 and p.stop_guard == (None, 2.0) and p.knockouts is False and p.peers is None
    assert p.scopes == {Shape(4, 16, 512, 64, False): "ladder", Shape(1, 8, 512, 64, True): "ladder"}
    rule = p.stop_rule()
    assert rule.min_samples == 20 and rule.guard_confidence is None and rule.cap_s == 3.0
    assert p.cold_turn_us == 0 and rule.turn_us is None  # cold turns were never limited before the option
    assert p.hot_turn_us == 0 and rule.hot_turn_us is None  # nor hot ones before HOT_TURN_US
    assert p.sustained_turns == 3 and rule.sustained_turns == 3  # three turns a sustained row before SUSTAINED_TURNS


def test_a_new_run_records_its_parameters_and_reads_them_back_unchanged():
    p = RunParams.from_text(variants="wmma,ftz_exp2", shapes="large,sweep", modes="hot", cap_s="2", peers="sdpa_flash",
                            knockouts="0").resolved()
    back = RunParams.from_json(json.loads(json.dumps(p.to_json())))
    assert back == p and back.scopes[Shape(4, 16, 4096, 64, False)] == "ladder"
    assert back.to_json()["backends"] == ["flash"] and back.knockouts is False and back.cap_s == 2.0
    assert RunParams().resolved().peers and RunParams().resolved().variants


@pytest.mark.parametrize("given, needle", [
    ({"variants": "wmma,nope"}, "--variants / VARIANTS: unknown variant(s) nope"),
    ({"shapes": "4,16,512"}, "--shapes / SHAPES='4,16,512': shape '4,16,512': 3 of the 4 numbers B,H,S,D; expected B,H,S,D"),
    ({"backends": "flash,warp"}, "--backends / BACKENDS='flash,warp': a comma-separated subset of"),
    ({"cap_s": "soon"}, "--cap / CAP='soon': not float"),
    ({"knockouts": 2}, "--knockouts / KNOCKOUTS=2: 0 or 1"),
    ({"cold_turn_us": "-5"}, "--cold-turn-us / COLD_TURN_US=-5: microseconds of GPU time a cold turn, 0 or more"),
    ({"hot_turn_us": "-1"}, "--hot-turn-us / HOT_TURN_US=-1: microseconds of GPU time a hot turn, 0 or more"),
    ({"sustained_turns": "2"}, "--sustained-turns / SUSTAINED_TURNS=2: at least 3, the rounds a row's ratio needs"),
    ({"sustained_turns": "many"}, "--sustained-turns / SUSTAINED_TURNS='many': not int"),
    ({"nonsense": 1}, "unknown run parameter(s) nonsense"),
])
def test_a_bad_option_is_named(given, needle):
    with pytest.raises(ValueError) as err:
        RunParams.from_text(**given)
    assert needle in str(err.value)


def test_sustained_turns_reach_the_record():
    """The rules it gives: test_stopping_rule's test_a_runs_rule_gives_the_sustained_rows_their_turns..."""
    p = RunParams.from_text(sustained_turns="10", replicates="5")
    assert RunParams.from_json(json.loads(json.dumps(p.to_json()))).sustained_turns == 10
    assert p.as_text()["sustained_turns"] == "10"


def test_make_help_lists_the_defaults():
    out = subprocess.run([sys.executable, "-m", "lab.studies.params"], cwd=REPO, capture_output=True, text=True,
                         timeout=60).stdout
    defaults = RunParams().as_text()
    for o in RUN_OPTIONS:
        assert f"  {o.make}={defaults[o.name]} " in out, o.make
    assert "  TRIALS=16 " in out and "  CAP=1 " in out  # make tune's own


def test_a_run_stopped_between_timing_and_factorial_resumes_with_the_factorial():
    from lab.studies.stages import stage_done

    assert not stage_done("timing", {"timing_s": 416.6}, knockouts=True)  # the factorial still to run
    assert stage_done("timing", {"timing_s": 416.6, "factorial_s": 30.9}, knockouts=True)
    assert stage_done("timing", {"timing_s": 416.6}, knockouts=False)
    assert not stage_done("timing", {}, knockouts=False)
    assert stage_done("profile", {"profile_s": 151.5}, knockouts=True)
    assert not stage_done("profile", {"timing_s": 416.6, "factorial_s": 30.9}, knockouts=True)


def test_the_reports_method_text_states_the_cold_turn_limit_only_where_the_run_had_one():
    from lab.report.sections.method import block_sizes

    with_limit = RunParams(replicates=3).replicate_rule()
    without = RunParams(replicates=3, cold_turn_us=0, hot_turn_us=0).replicate_rule()
    assert block_sizes(without) == "3 (9 once a row has its minimum)"  # ceil(50 / 3) = 17 in 6 blocks: 3, then 9
    assert block_sizes(with_limit).startswith("3 (9 once a row has its minimum), a cold block holding at most 1000 µs")
    assert ", a hot block at most 4000 µs of GPU time" in block_sizes(with_limit)
    only_cold = RunParams(replicates=3, hot_turn_us=0).replicate_rule()
    assert "hot block" not in block_sizes(only_cold) and "cold block" in block_sizes(only_cold)


def test_a_hot_turn_is_limited_by_hot_turn_us_and_a_cold_turn_by_cold_turn_us():
    rule = RunParams(cold_turn_us=1000, hot_turn_us=10000).stop_rule()
    # a 3 ms hot sample: floor(10000 / 3000) = 3 of the block's 10; a 900 us one keeps the block
    assert rule.block_size(0, 3000.0, hot=True) == 3 and rule.block_size(0, 900.0, hot=True) == 10
    # the same sample cold: floor(1000 / 3000) = 0, so one sample
    assert rule.block_size(0, 3000.0) == 1 and rule.block_size(0, 900.0) == 1
    assert rule.block_size(0, 30000.0, hot=True) == 1  # at least one sample
    assert RunParams(hot_turn_us=0).stop_rule().block_size(0, 3000.0, hot=True) == 10  # 0: no limit


@pytest.mark.parametrize("given", [
    {},
    {"variants": "wmma,ftz_exp2", "shapes": "large,long", "sustained": "large,long,models",
     "sustained_turns": "10", "replicates": "5", "cap_s": "2.5", "peers": "sdpa_flash", "knockouts": "0"},
])
def test_the_reports_make_line_starts_the_same_run_again(given):
    """The report's `make ablation` line (results.reproduce_args), read back as make would hand it over (shell
    words, each VAR=value naming its option), gives the run's own parameters: none left out, none changed."""
    import shlex

    from lab.report.sections.results import reproduce_args

    p = RunParams.from_text(**given).resolved()
    by_make = {o.make: o.name for o in RUN_OPTIONS}
    typed = dict(word.split("=", 1) for word in shlex.split(reproduce_args(p)))
    assert set(typed) <= set(by_make)
    assert RunParams.from_text(**{by_make[k]: v for k, v in typed.items()}).resolved() == p
