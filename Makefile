# Quick start: `make demo` runs the main job, `make test` runs the test suite.
# Both create (or reuse) a virtual environment in .venv and install the package.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test bench clean

$(BIN)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/pac-particles demo --out results/demo

test: install
	$(BIN)/python -m pytest -q tests

bench: install
	$(BIN)/python scripts/bench_kernel.py

clean:
	rm -rf $(VENV) results build *.egg-info
