# The README's quick start: `make demo` and `make test`. Each creates .venv and
# installs what it needs on a fresh machine (Python 3.11+).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# A fresh demo league each time (a finished one would only print its standings),
# and its report (a static site: open the index.html it prints in a browser).
demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/referee tournament run tournaments/demo.toml
	$(BIN)/referee report runs/demo -o runs/demo/report

test: $(STAMP) chromium
	$(BIN)/python -m pytest -q
	$(BIN)/ruff check .

# The report's browser tests drive Debian's chromium (never a downloaded browser).
# Installed when missing if we may (root); otherwise they are skipped, or fail with
# CI=true.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "make test: the browser tests need Debian's chromium at /usr/bin/chromium:" \
	         "run 'sudo apt-get install chromium' (without it they are skipped, and fail" \
	         "with CI=true)" >&2; \
	  fi; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) build *.egg-info
