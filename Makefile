# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	# torch first, pinned, so pip takes the CPU build for the `semantic` extra (not a CUDA one)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/seatrial demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy --strict src
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/runner_overhead.py

clean:
	rm -rf $(VENV) .seatrial build dist
