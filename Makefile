# `make book` builds the book, `make test` runs the tests. Each does its own set-up on a
# fresh machine: it creates .venv and installs the pinned dependencies first.
PROFILE ?= laptop
VENV    ?= .venv
PY      := $(VENV)/bin/python
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

export MUJOCO_GL ?= egl
export DVC_NO_ANALYTICS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test chapters html data-push lint clean-book venv lock

venv: $(STAMP)

# The environment comes from requirements.lock (every package pinned, with its sha256), so a
# fresh machine installs exactly the files the book was built with; pyproject.toml keeps the
# direct requirements, and `make lock` re-resolves it into the lock.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet 'pip==26.3'
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

## lock: re-resolve pyproject.toml into requirements.lock (then `make` reinstalls from it)
lock:
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) scripts/lock_environment.py

## book: execute every chapter with PROFILE (default laptop), build the HTML, version data/
book: $(STAMP)
	$(BIN)/jepa-geometry book --profile $(PROFILE) $(if $(FORCE),--force,)
	$(MAKE) --no-print-directory html
	$(MAKE) --no-print-directory data-push

html: $(STAMP)
	$(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going --quiet
	@echo "book: $(CURDIR)/_build/html/index.html"

data-push: $(STAMP)
	mkdir -p data
	$(BIN)/dvc add data --quiet
	$(BIN)/dvc push --quiet
	$(BIN)/dvc status

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

## test: ruff, the unit tests and every chapter at the smoke profile
test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/pytest -q

clean-book:
	rm -rf _build book/chapters
