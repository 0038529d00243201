# The study as a DAG of make targets. Quick start: `make ablation` (GPU machine), `make test`.
#
# Python: if the python3 on PATH already has the study's packages (as on a prepared GPU
# machine with no package registry), it is used as is; otherwise a .venv is made from
# requirements.txt, with torch's CPU build where there is no NVIDIA GPU.

PYTHON ?= python3
VENV := .venv

# Every variable given on make's command line is one its targets read, or make stops with one line
# naming it (a typo, or another target's variable as in `make ablation VARIANT=padded`, is never
# dropped without a word). Checked first, before anything slow. PARAMS_<target>: what each reads.
RUN_VARS := VARIANTS SHAPES MODES SUSTAINED SUSTAINED_TURNS CAP REL_CI MIN_SAMPLES MIN_BLOCKS COLD_TURN_US HOT_TURN_US PROFILE PROFILE_SHAPES CHECK KNOCKOUTS PEERS BACKENDS REPLICATES SEED GPUS DECODE
TUNE_VARS := VARIANT SHAPES HELDOUT TRIALS SAMPLER GPUS SEED MODES CAP REL_CI MIN_SAMPLES BUDGET TASK_TIMEOUT KNOBS
PARAMS_ablation := $(RUN_VARS)
PARAMS_tune := $(TUNE_VARS) TUNE_FLAGS
PARAMS_tune-report := RUN
PARAMS_report := RUN BASE COMPANION
PARAMS_docs := RUN
PARAMS_compare := RUN BASE THRESHOLD
PARAMS_replicate := RUN BASE
PARAMS_build := VARIANTS
PARAMS_check := VARIANTS
PARAMS_check-quick := VARIANTS
PARAMS_sanitize := VARIANTS
PARAMS_bench := SHAPE VARIANTS PEERS
PARAMS_test := TEST_WORKERS
PARAMS_test-cpu := TEST_WORKERS
PARAMS_mutation := SCOPE
PARAMS_notebooks := JUPYTER_FLAGS
GOALS := $(or $(MAKECMDGOALS),help)
GIVEN := $(sort $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v))))
UNUSED := $(filter-out PYTHON $(foreach g,$(GOALS),$(PARAMS_$(g))),$(GIVEN))
ifneq ($(UNUSED),)
$(error $(firstword $(UNUSED))=$($(firstword $(UNUSED))) is not a parameter of `make $(GOALS)`, which takes $(or $(strip $(foreach g,$(GOALS),$(PARAMS_$(g)))),none) (`make help` lists every target's))
endif
HAVE_DEPS := $(shell $(PYTHON) -c "import torch, numpy, scipy, pandas, ninja, pytest, papermill, seaborn" >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_DEPS),yes)
PY := $(PYTHON)
ENV_STAMP :=
else
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.installed
endif
# `make tune` needs only the measuring stack plus Optuna and dask (on the GPU machine they come
# from .whl-tuning/prelude.sh), not the notebook toolchain: it uses python3 when that has them.
HAVE_TUNE_DEPS := $(shell $(PYTHON) -c "import torch, numpy, scipy, pandas, pyarrow, ninja, matplotlib, optuna, distributed" >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_TUNE_DEPS),yes)
TUNE_PY := $(PYTHON)
TUNE_STAMP :=
else
TUNE_PY := $(PY)
TUNE_STAMP := $(ENV_STAMP)
endif
HAVE_NVIDIA_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
TORCH_SPEC := $(if $(HAVE_NVIDIA_GPU),torch,torch==2.13.0)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# Parameters: `make ablation SHAPES=large PROFILE=0`, `make tune TRIALS=24`. A variable is passed
# on only when it is given, as the flag spelled from its name (MIN_SAMPLES=20 -> --min-samples '20');
# every default lives in lab/studies/params.py (RunParams, TuneParams), and `make help` lists them.
given = $(strip $(foreach v,$(1),$(if $($(v)),--$(subst _,-,$(shell echo $(v) | tr A-Z a-z)) '$($(v))')))
RUN ?=
TUNE_FLAGS ?=

.PHONY: peers tune tune-report help env ablation report test-browser docs notebooks build check check-quick bench sanitize compare replicate test test-cpu test-gpu mutation clean

help:
	@echo "make ablation    the whole study on a GPU: notebooks 00-05 for one new run -> reports/"
	@echo "make tune        search a kernel's tile constants on every GPU -> data/tuning/<run_id>/, dispatch table, held-out check"
	@echo "make report      rebuild reports/ from RUN=<run_id> (default: the committed report's run, base and companion; no GPU needed), and the generated parts of README.md and docs/"
	@echo "                 COMPANION=\"<run_id> ...\": runs of issue 46's hot or sustained mode alone (more rounds, turns, replicates) on the run's GPU model or BASE's; the targets are judged with their rows as well"
	@echo "make replicate   RUN=<a> BASE=<b>: does it replicate? each step, knock-out and bar row in both runs (BASE= on make report adds the section)"
	@echo "make peers       fetch the peers that come as binaries (FlashAttention-3: requirements-peers.txt) into .fa3/"
	@echo "make docs        only those generated parts (from RUN or the committed report's run), and data/INDEX.md"
	@echo "make test        the test suite (without a GPU its GPU tests are left out, counted in one line)"
	@echo "make test-browser  the HTML report in headless Chromium: screenshot of the first screen, console errors, figures"
	@echo "make mutation    mutation-test the decision code (mutmut) -> reports/mutation/MUTATION.md (SCOPE=full|fast)"
	@echo "make notebooks | build | check | check-quick | bench | sanitize | compare | replicate | test-cpu | test-gpu | clean"
	@echo
	@$(PYTHON) -m lab.studies.params 2>/dev/null || echo "(the parameters and their defaults: lab/studies/params.py)"

env: $(ENV_STAMP)

# pip's output goes to a log (shown where it fails): a package index's warnings are not the test log.
# A set-up that was stopped half way (no stamp) starts again from nothing, not over a broken .venv.
# Byte-compiled by compileall on every core after pip (pip compiles one file at a time, and where
# PYTHONDONTWRITEBYTECODE is set nothing is compiled later): on a 2-core machine the set-up took
# 104-124 s with pip compiling, 80 s this way. A file that does not compile (a package's test data)
# is skipped, as pip skips it.
$(VENV)/.installed: requirements.txt
	@echo "setting up $(VENV) from requirements.txt ($(TORCH_SPEC); log: $(VENV)/install.log)"
	@rm -rf $(VENV) && $(PYTHON) -m venv $(VENV)
	@( $(VENV)/bin/pip install --upgrade pip && $(VENV)/bin/pip install --no-compile "$(TORCH_SPEC)" -r requirements.txt \
		&& { $(VENV)/bin/python -m compileall -q -j 0 $(VENV)/lib || true; } ) \
		> $(VENV)/install.log 2>&1 || { tail -n 30 $(VENV)/install.log; exit 1; }
	@touch $@

# The main job: on a GPU, measure a new run and write the report from it; without one, say so
# and rebuild the committed report from its own run (lab.report.committed): the tree stays clean.
ablation: env
	$(PY) -m lab.pipeline $(call given,$(RUN_VARS))

# Peers that come as binaries, pinned by version and hash (requirements-peers.txt): FlashAttention-3's
# compiled Hopper kernels into .fa3/ (under 1 MB compressed, carried to a GPU machine with the tree).
peers: env
	$(PY) -m lab.measure.fa3 fetch

tune: $(TUNE_STAMP)
	$(TUNE_PY) -m lab tune $(call given,$(TUNE_VARS)) $(TUNE_FLAGS)

tune-report: $(TUNE_STAMP)
	$(TUNE_PY) -m lab.report.tuning $(RUN)

report: env
	$(PY) -m lab.report $(RUN) $(if $(BASE),--base $(BASE)) $(foreach c,$(COMPANION),--companion $(c))

# The published page as a reader sees it: reports/ablation.html (written by `make report` first where
# it is missing) in headless Chromium; a screenshot of the first screen to build/browser/, and a
# failure on console errors, a figure not rendered, or a first screen without the finding and the
# bar's verdict (lab.report.browser). Debian: apt-get install chromium.
test-browser: env
	@test -f reports/ablation.html || $(MAKE) --no-print-directory report
	$(PY) -m lab.report.browser reports/ablation.html --screenshot build/browser/first_screen.png

# The generated parts of README.md and docs/ (the ladder, the parameters, a run's numbers), from
# RUN or the run of the committed report (`make report` writes them too), and data/INDEX.md (the
# explorations, checks and run folders of data/index.toml; lab.report.data_index).
docs: env
	$(PY) -m lab.report.docs $(RUN)
	$(PY) -m lab.report.data_index

# Jupyter's own flags, in one place: as root (a container) it refuses to start without --allow-root.
JUPYTER_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)
notebooks: env
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install -q jupyterlab
	$(PY) -m jupyter lab $(JUPYTER_FLAGS) notebooks/

compare: env
	$(PY) -m lab compare $(RUN) $(BASE) $(if $(THRESHOLD),--threshold $(THRESHOLD))

# Does it replicate? Every step, knock-out and bar row of RUN beside BASE (another GPU, or the same again).
replicate: env
	$(PY) -m lab replicate $(RUN) $(BASE)

build: env
	$(PY) -m lab build $(if $(VARIANTS),--variants $(VARIANTS))

check: env
	$(PY) -m lab check $(if $(VARIANTS),--variants $(VARIANTS))

check-quick: env
	$(PY) -m lab check --quick $(if $(VARIANTS),--variants $(VARIANTS))

bench: env
	$(PY) -m lab bench $(call given,SHAPE VARIANTS PEERS)

sanitize: env
	$(PY) -m lab sanitize $(if $(VARIANTS),--variants $(VARIANTS))

# The property tests need hypothesis (in requirements.txt); a Python that has the study's packages
# but not it gets it here, or, with no package registry, runs without the property tests (they skip).
TEST_DEPS = @$(PY) -c "import hypothesis" 2>/dev/null || $(PY) -m pip install -qq "hypothesis>=6.100" \
	|| echo "hypothesis could not be installed: the property tests skip"
# The CPU tests are spread over TEST_WORKERS processes (pytest-xdist, in requirements.txt), a test
# file to a worker so that module fixtures run once (the time it saves: docs/methodology.md, Tests).
# Without xdist (a prepared Python that lacks it and no registry) they run in one process.
TEST_WORKERS ?= 2
XDIST = $$($(PY) -c "import xdist" 2>/dev/null && echo "-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder")
XDIST_DEP = @$(PY) -c "import xdist" 2>/dev/null || $(PY) -m pip install -qq "pytest-xdist>=3.5" \
	|| echo "pytest-xdist could not be installed: the tests run in one process"

# On a machine with a GPU the GPU tests run after the others, in one process: they share the one GPU,
# and its timing tests measure it (data/checks/2026-11-27-h100-fa3-sustained-run/gpu_tests.txt: one failed among 8).
HAS_GPU = $(PY) -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null

test: env
	$(TEST_DEPS)
	$(XDIST_DEP)
	if $(HAS_GPU); then $(PY) -m pytest -q -m "not gpu" $(XDIST) && $(PY) -m pytest -q -m gpu; \
	else $(PY) -m pytest -q $(XDIST); fi

test-cpu: env
	$(TEST_DEPS)
	$(XDIST_DEP)
	$(PY) -m pytest -q -m "not gpu" $(XDIST)

test-gpu: env
	$(PY) -m pytest -q -m gpu

# Mutation testing of the decision code (issue 20; docs/methodology.md, Tests): mutmut in a copy of
# the tree under build/mutation/. SCOPE=full (the default; about 22 min on 2 cores; writes
# reports/mutation/MUTATION.md) or fast (the decision rules alone, about 3 min: .ci/run runs it).
SCOPE ?= full
mutation: env
	@$(PY) -c "import mutmut, hypothesis" 2>/dev/null || $(PY) -m pip install -q "mutmut>=3.3" "hypothesis>=6.100"
	$(PY) tests/mutation/run.py --scope $(SCOPE)

# Build outputs and caches only (build/: the kernels' builds, build/derived/: the summaries and
# calibrations computed from run folders): data/ (the measurements) and reports/ are never cleaned.
clean:
	rm -rf build .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
