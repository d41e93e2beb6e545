# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

ECHARTS_VERSION := 6.1.0
VENDOR := src/seatrial/web/static/vendor
ECHARTS := $(VENDOR)/echarts.min.js

.PHONY: demo test lint bench clean chromium catalogs

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

# Browser tests drive a system Chromium (Playwright's own browser download does not work here):
# Debian's, installed here when run as root, or the one SEATRIAL_CHROMIUM names. Without one
# the browser tests are skipped, saying why; everything else still runs. A Chinese font
# (fonts-noto-cjk) comes with it, for the dashboard's Chinese pages.
chromium:
	@if [ -n "$$SEATRIAL_CHROMIUM" ] || command -v chromium > /dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
		apt-get install -y -q chromium || (apt-get update -q && apt-get install -y -q chromium); \
	else \
		echo "make chromium: no Chromium found, and this is not root on Debian, so it was not"; \
		echo "  installed: the browser tests (tests/web/test_browser.py) will be skipped."; \
		echo "  To run them, install Chromium: as root on Debian or Ubuntu, apt-get install chromium"; \
		echo "  (Fedora: dnf install chromium; macOS: brew install --cask chromium), or set"; \
		echo "  SEATRIAL_CHROMIUM=/path/to/chromium to use one installed elsewhere."; \
	fi
	@# A Chinese font, so the dashboard's Chinese pages (and their screenshots) show characters,
	@# not empty boxes: Debian's Noto CJK, when none is installed and this is root on Debian.
	@if fc-list :lang=zh 2> /dev/null | grep -q .; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
		apt-get install -y -q fonts-noto-cjk \
			|| (apt-get update -q && apt-get install -y -q fonts-noto-cjk); \
	else \
		echo "make chromium: no Chinese font found (fc-list :lang=zh): Chinese shows as empty"; \
		echo "  boxes in the browser; install one: apt-get install fonts-noto-cjk (Debian, Ubuntu)."; \
	fi

# The translation catalogs (docs/i18n.md): the marked strings extracted into the template,
# merged into each language's .po (translate the new entries there, then run it again), and
# compiled into the .mo the package reads. tests/i18n checks that nothing is left undone.
LOCALE := src/seatrial/i18n/locale
catalogs: $(STAMP)
	$(BIN)/pybabel --quiet extract -F babel.cfg --sort-output --no-location --ignore-dirs ".* __pycache__" \
		-k phrased -k phrased_plural:1,2 --project Seatrial --copyright-holder "the Seatrial authors" \
		--header-comment "# The strings Seatrial marks for translation, written by make catalogs." \
		-o $(LOCALE)/seatrial.pot src
	$(BIN)/pybabel --quiet update -D seatrial -i $(LOCALE)/seatrial.pot -d $(LOCALE) \
		--no-fuzzy-matching --ignore-obsolete
	$(BIN)/pybabel compile -D seatrial -d $(LOCALE) --statistics

demo: $(VENV)/.installed $(ECHARTS)
	$(BIN)/seatrial demo

test: $(STAMP) $(ECHARTS) chromium
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy --strict src
	$(BIN)/lint-imports
	# the tests spread over the cores (pytest-xdist); slow ones included
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/runner_overhead.py

clean:
	rm -rf $(VENV) .seatrial build dist
