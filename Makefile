# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

ECHARTS_VERSION := 6.1.0
VENDOR := src/seatrial/web/static/vendor
ECHARTS := $(VENDOR)/echarts.min.js

.PHONY: demo test lint bench clean chromium

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

# The dashboard's charts: ECharts from the npm registry, with its licence, inside the package.
$(ECHARTS):
	mkdir -p $(VENDOR)
	cd $(VENDOR) && npm pack --silent echarts@$(ECHARTS_VERSION) > /dev/null \
		&& tar -xzf echarts-$(ECHARTS_VERSION).tgz package/dist/echarts.min.js package/LICENSE \
		&& mv package/dist/echarts.min.js echarts.min.js && mv package/LICENSE ECHARTS-LICENSE \
		&& rm -rf package echarts-$(ECHARTS_VERSION).tgz

# Browser tests drive Debian's Chromium (Playwright's own browser download does not work here).
chromium:
	@command -v chromium > /dev/null || (apt-get install -y -q chromium || \
		(apt-get update -q && apt-get install -y -q chromium))

demo: $(VENV)/.installed $(ECHARTS)
	$(BIN)/seatrial demo

test: $(STAMP) $(ECHARTS) chromium
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy --strict src
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/runner_overhead.py

clean:
	rm -rf $(VENV) .seatrial build dist
