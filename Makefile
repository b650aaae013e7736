# The README's quick start: `make demo` and `make test`. Each creates .venv and
# installs what it needs on a fresh machine (Python 3.11+).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean system

# System packages the tests need (bubblewrap: the bots' sandbox), installed with
# apt-get when missing and we are root (CI); otherwise say what to install.
system:
	@missing=""; command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing system packages:$$missing (Debian/Ubuntu: sudo apt-get install$$missing)"; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# A fresh demo league each time (a finished one would only print its standings).
demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/referee tournament run tournaments/demo.toml

test: $(STAMP) system
	$(BIN)/python -m pytest -q
	$(BIN)/ruff check .

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) build *.egg-info
