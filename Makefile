# The study as a DAG of make targets. Quick start: `make ablation` (GPU machine), `make test`.
#
# Python: if the python3 on PATH already has the study's packages (as on a prepared GPU
# machine with no package registry), it is used as is; otherwise a .venv is made from
# requirements.txt, with torch's CPU build where there is no NVIDIA GPU.

PYTHON ?= python3
VENV := .venv
HAVE_DEPS := $(shell $(PYTHON) -c "import torch, numpy, scipy, pandas, ninja, pytest" >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_DEPS),yes)
PY := $(PYTHON)
ENV_STAMP :=
else
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.installed
endif
HAVE_NVIDIA_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
TORCH_SPEC := $(if $(HAVE_NVIDIA_GPU),torch,torch==2.13.0)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# Parameters (override on the command line, e.g. `make bench SHAPE=4,16,4096,128`)
VARIANTS ?=
SHAPE ?= 4,16,4096,64
RUN_DIR ?= data/checks/$(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: help env ablation build check check-quick bench sanitize test test-cpu test-gpu clean

help:
	@echo "make ablation    build, check and time every variant (needs an NVIDIA GPU)"
	@echo "make test        the test suite (GPU tests skip, with the reason, without a GPU)"
	@echo "make build | check | check-quick | bench | sanitize | test-cpu | test-gpu | clean"

env: $(ENV_STAMP)

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "$(TORCH_SPEC)" -r requirements.txt
	touch $@

# The main job. Until the measurement and report stages land it stops after build, correctness,
# the sanitizer and a first speed reading, and says so.
ablation: env
	@$(PY) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'make ablation needs an NVIDIA GPU: torch.cuda.is_available() is False on this machine')"
	@mkdir -p $(RUN_DIR)
	$(PY) -m lab build
	$(PY) -m lab check --out $(RUN_DIR)/correctness.json
	$(PY) -m lab sanitize --out $(RUN_DIR)/sanitize.json
	$(PY) -m lab bench --shape $(SHAPE) --out $(RUN_DIR)/bench.json
	@echo "ablation: build, correctness, sanitizer and a first speed reading are done ($(RUN_DIR)). Timing with intervals, profiling and the report are not built yet."

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

clean:
	rm -rf build .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
