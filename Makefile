# `make book` builds the book, `make test` runs the tests. Each does its own set-up on a
# fresh machine: it creates .venv and installs the pinned dependencies first.
PROFILE ?= laptop
# data/ (versioned by data.dvc) holds the book's laptop artifacts only; every command of
# jepa-geometry puts another profile's artifacts in .cache/data-<profile> (a `profile`
# parameter of `make chapter` included), so `make book PROFILE=smoke` never changes data/ or
# data.dvc. $JEPA_GEOMETRY_DATA, when set, names the cache instead.
# pages of the book (a task chapter chNN_<rest>.md has one page chNN_<task>_<rest> per task)
CHAPTERS := $(patsubst book/chapters/%,%,$(shell grep -o 'book/chapters/[a-z0-9_]*' _toc.yml))
LAPTOP_REBUILD := about 11.5 h on 2 cores by the calibrated estimate (README, Profiles; scripts/build_laptop.sh builds it part by part)
comma := ,
# what `make book` does when no DVC remote answers: the pages whose evidence is committed
# (evidence/laptop) render from it, the others rebuild what they read
PULL_MISS := a page without committed evidence rebuilds what it reads, and everything from nothing takes $(LAPTOP_REBUILD); to fetch instead$(comma) point DVC at a remote (README$(comma) Data and DVC)
VENV    ?= .venv
PY      := $(VENV)/bin/python
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# A venv belongs to the checkout that installed it: its stamp holds that checkout's path (an
# empty stamp, written before it did, counts as the folder's holding the venv). A clone that
# shares another checkout's venv (VENV=../other/.venv) never reinstalls it, although its own
# pyproject.toml and lock are newer than the stamp: its `pip install -e .` would point the
# other checkout's jepa-geometry at this clone. It uses the venv as it is when the two locks
# are the same file, with this checkout's src/ first on PYTHONPATH (so its commands run its
# own code), and stops in one line when they differ (the venv is not this checkout's lock).
VENV_OWNER := $(if $(wildcard $(STAMP)),$(or $(shell cat $(STAMP)),$(abspath $(dir $(abspath $(VENV))))))
ifeq ($(filter-out $(CURDIR),$(VENV_OWNER)),)
VENV_READY := $(STAMP)
else
VENV_READY := shared-venv
ifeq ($(MAKELEVEL),0)
export PYTHONPATH := $(CURDIR)/src$(if $(PYTHONPATH),:$(PYTHONPATH))
endif
endif

export MUJOCO_GL ?= egl
export DVC_NO_ANALYTICS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test test-cluster chapter html data-pull data-push lint clean-book venv lock lab shared-venv

venv: $(VENV_READY)

# another checkout's venv (VENV_OWNER): said once (a sub-make of `make book` inherits it), and
# refused in one line (make's own, without a second "Error 2" line) when the locks differ
SHARED_SAME = make: $(VENV) was installed by $(VENV_OWNER) from the same requirements.lock: used as it is, not reinstalled from here, with this checkout's src/ first on PYTHONPATH
SHARED_OTHER = $(VENV) was installed by $(VENV_OWNER), whose requirements.lock is not this checkout's; it is not reinstalled from here (that would point its jepa-geometry at this checkout): run `make venv` there, or give this checkout a venv of its own (VENV=.venv)
shared-venv:
ifeq ($(MAKELEVEL),0)
	$(if $(shell cmp -s requirements.lock $(VENV_OWNER)/requirements.lock && echo same),@echo "$(SHARED_SAME)",$(error $(SHARED_OTHER)))
endif

# The environment comes from requirements.lock (every package pinned, with its sha256), so a
# fresh machine installs exactly the files the book was built with; pyproject.toml keeps the
# direct requirements, and `make lock` re-resolves it into the lock. uv installs the lock (the
# same files, hashes checked) in about a minute on the 2-core machine, against 3 min 30 s for
# pip, which unpacks the 7 GB of torch and its CUDA libraries one by one. --compile-bytecode
# writes the .pyc files pip would have written: without them (and with
# PYTHONDONTWRITEBYTECODE set, as on CI) every kernel and worker recompiles torch on import,
# which doubled the test suite's time. The lock is the whole resolution, so it installs with
# --no-deps; the packages it leaves out on purpose (scripts/lock_environment.py, LEFT_OUT: one
# costs every notebook process 6 s of imports) are removed from a venv made before.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet 'pip==26.3' 'uv==0.13.9'
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(PY) --require-hashes --no-deps -r requirements.lock
	$(BIN)/uv pip uninstall --quiet --python $(PY) $$($(PY) scripts/lock_environment.py --left-out)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	echo "$(CURDIR)" > $@

## lock: resolve pyproject.toml into requirements.lock, keeping every pinned version (UPGRADE=1:
## re-resolve everything); then `make` reinstalls from it
lock:
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) scripts/lock_environment.py $(if $(UPGRADE),--upgrade,)

## book: execute every chapter with PROFILE (default laptop), build the HTML, say whether the
## pages' values are the committed evidence's (laptop: `evidence diff`, informative), version data/
book: $(VENV_READY)
	$(if $(filter laptop,$(PROFILE)),$(MAKE) --no-print-directory data-pull,)
	$(BIN)/jepa-geometry book --profile $(PROFILE) $(if $(FORCE),--force,)
	$(MAKE) --no-print-directory html
	$(if $(filter laptop,$(PROFILE)),-$(BIN)/jepa-geometry evidence diff --profile laptop --quiet,)
	$(if $(filter laptop,$(PROFILE)),$(MAKE) --no-print-directory data-push,)

## lab: open the chapters in JupyterLab (right-click one: Open With > Jupytext Notebook)
lab: $(VENV_READY)
	$(BIN)/jupyter lab --ServerApp.root_dir=chapters $(if $(filter 0,$(shell id -u)),--allow-root,)

## chapter: re-run one chapter, e.g. make chapter CH=ch02 PARAMS="seed=5 profile=smoke";
## non-default parameters write the page to runs/<chapter>/<task>-<parameters>-<hash>/ and
## never touch the book's page; DRY_RUN=1 prints what it would build, and stops
chapter: $(VENV_READY)
	$(if $(CH),,$(error CH=<chapter> is required; valid: $(CHAPTERS)))
	$(BIN)/jepa-geometry chapter $(CH) $(foreach p,$(PARAMS),-p $(p))$(if $(DRY_RUN), --dry-run,)

## data-pull: fetch the book's artifacts from the DVC remote; say so in one line if it cannot
data-pull: $(VENV_READY)
	@$(BIN)/dvc pull --quiet >/dev/null 2>&1 || { echo "book: no reachable DVC remote holds this book's data (dvc pull failed); $(PULL_MISS)"; \
	  $(BIN)/jepa-geometry evidence coverage; }

html: $(VENV_READY)
	$(BIN)/jepa-geometry html
	@echo "book: $(CURDIR)/_build/html/index.html"

## data-push: version data/ with DVC and push it, only when data/ holds every artifact the
## book read with its heavy files (a render from the evidence alone leaves data.dvc as it was)
data-push: $(VENV_READY)
	@if $(BIN)/jepa-geometry evidence pushable; then \
	  mkdir -p data && $(BIN)/dvc add data --quiet && $(BIN)/dvc push --quiet && $(BIN)/dvc status; \
	fi

lint: $(VENV_READY)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

## test: ruff, the unit tests and every chapter at the smoke profile, one pytest-xdist worker
## per core (each on one torch thread; tests/conftest.py), the 25 slowest tests listed; the
## tests marked cluster are left to test-cluster
TEST_WORKERS ?= $(shell nproc)
test: $(VENV_READY)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist load --maxschedchunk 1 --durations=25 -m "not cluster"

## test-cluster: the grid on a one-node SLURM cluster and a DVC remote over SSH, Debian's daemons
## started on localhost for the tests (marked cluster; root, apt-get installs what is missing)
test-cluster: $(VENV_READY)
	$(BIN)/pytest -q -m cluster --durations=10 tests

clean-book:
	rm -rf _build book/chapters
