# The study as a DAG of make targets. Quick start: `make ablation` (GPU machine), `make test`.
#
# Python: if the python3 on PATH already has the study's packages (as on a prepared GPU
# machine with no package registry), it is used as is; otherwise a .venv is made from
# requirements.txt, with torch's CPU build where there is no NVIDIA GPU.

PYTHON ?= python3
VENV := .venv
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

# Parameters (override on the command line, e.g. `make ablation SHAPES=large PROFILE=0`)
VARIANTS ?=
SHAPES ?= canonical,large,long,sweep
MODES ?= hot,cold
CAP ?= 3
MIN_SAMPLES ?= 50
PROFILE_SHAPES ?= distinct
KNOCKOUTS ?= 1
PROFILE ?= 1
CHECK ?= full
PEERS ?=
RUN ?=
SHAPE ?= 4,16,4096,64
# make tune: SHAPES, MODES and CAP given on make's command line apply to it too; otherwise it
# takes its own defaults (the ablation's would be the wrong shapes and a longer cap).
cmdline_or = $(if $(filter command line,$(origin $(1))),$($(1)),$(2))
VARIANT ?= ftz_exp2
TUNE_SHAPES ?= $(call cmdline_or,SHAPES,tune)
HELDOUT ?= heldout
TRIALS ?= 16
SAMPLER ?= tpe
GPUS ?= all
SEED ?= 0
TUNE_MODES ?= $(call cmdline_or,MODES,hot)
TUNE_CAP ?= $(call cmdline_or,CAP,1)
BUDGET ?= 300
TUNE_FLAGS ?=

.PHONY: tune tune-report help env ablation report notebooks build check check-quick bench sanitize compare test test-cpu test-gpu clean

help:
	@echo "make ablation    the whole study on a GPU: notebooks 00-05 for one new run -> reports/"
	@echo "                 (SHAPES=canonical,large,long,sweep MODES=hot,cold CAP=3 MIN_SAMPLES=50 PROFILE=1 PROFILE_SHAPES=distinct|all KNOCKOUTS=1 CHECK=full VARIANTS=a,b"
	@echo "                 PEERS=sdpa_flash,flex_attention,...: default SDPA's backends, flex_attention, importable externals)"
	@echo "make tune        search $(VARIANT)'s tile constants on every GPU -> data/tuning/<run_id>/, dispatch table, held-out check"
	@echo "                 (VARIANT=ftz_exp2 SHAPES=tune|tune-wide HELDOUT=heldout TRIALS=16 SAMPLER=tpe|cmaes|random|bruteforce"
	@echo "                  GPUS=all|N SEED=0 MODES=hot|hot,cold CAP=1 BUDGET=300 TUNE_FLAGS='--no-heldout --fake ...')"
	@echo "make report      rebuild reports/ from RUN=<run_id> or the latest run (no GPU needed)"
	@echo "make test        the test suite (GPU tests skip, with the reason, without a GPU)"
	@echo "make notebooks | build | check | check-quick | bench | sanitize | compare | test-cpu | test-gpu | clean"

env: $(ENV_STAMP)

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "$(TORCH_SPEC)" -r requirements.txt
	touch $@

# The main job: on a GPU, measure a new run and write the report from it; without one, say so
# and rebuild the report from the latest recorded run.
ablation: env
	$(PY) -m lab.pipeline --shapes $(SHAPES) --modes $(MODES) --cap $(CAP) --min-samples $(MIN_SAMPLES) --profile $(PROFILE) \
		--profile-shapes $(PROFILE_SHAPES) --knockouts $(KNOCKOUTS) \
		--check $(CHECK) $(if $(VARIANTS),--variants $(VARIANTS)) $(if $(PEERS),--peers $(PEERS))

tune: $(TUNE_STAMP)
	$(TUNE_PY) -m lab tune --variant $(VARIANT) --shapes '$(TUNE_SHAPES)' --heldout-shapes '$(HELDOUT)' \
		--trials $(TRIALS) --sampler $(SAMPLER) --gpus $(GPUS) --seed $(SEED) --modes $(TUNE_MODES) \
		--cap $(TUNE_CAP) --budget $(BUDGET) $(TUNE_FLAGS)

tune-report: $(TUNE_STAMP)
	$(TUNE_PY) -m lab.report.tuning $(RUN)

report: env
	$(PY) -m lab.report $(RUN)

notebooks: env
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install -q jupyterlab
	$(PY) -m jupyter lab notebooks/

compare: env
	$(PY) -m lab compare $(RUN)

build: env
	$(PY) -m lab build $(if $(VARIANTS),--variants $(VARIANTS))

check: env
	$(PY) -m lab check $(if $(VARIANTS),--variants $(VARIANTS))

check-quick: env
	$(PY) -m lab check --quick $(if $(VARIANTS),--variants $(VARIANTS))

bench: env
	$(PY) -m lab bench --shape $(SHAPE) $(if $(VARIANTS),--variants $(VARIANTS))

sanitize: env
	$(PY) -m lab sanitize $(if $(VARIANTS),--variants $(VARIANTS))

test: env
	$(PY) -m pytest -q

test-cpu: env
	$(PY) -m pytest -q -m "not gpu"

test-gpu: env
	$(PY) -m pytest -q -m gpu

# Build outputs and caches only: data/ (the measurements) and reports/ are never cleaned.
clean:
	rm -rf build .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
