# Quick start: `make demo` runs the main job, `make test` runs the test suite.
# Both create (or reuse) a virtual environment in .venv and install the
# package: `make demo` the package alone (what the demo needs), `make test`
# with the test extra (pytest, pandas, ArviZ, Dask, JAX).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install install-test demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: setup.cfg pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: setup.cfg pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

demo: install
	$(BIN)/pac-particles demo --out results/demo

test: install-test
	$(BIN)/python -m pytest -q tests

bench: install
	$(BIN)/python scripts/bench_kernel.py

clean:
	rm -rf $(VENV) results build *.egg-info
