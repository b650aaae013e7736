# The README's quick start: `make demo` and `make test`. Each creates .venv and
# installs what it needs on a fresh machine (Python 3.11+).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# A fresh demo league each time (a finished one would only print its standings).
demo: $(STAMP)
	rm -rf runs/demo
	$(BIN)/referee tournament run tournaments/demo.toml

test: $(STAMP)
	$(BIN)/python -m pytest -q
	$(BIN)/ruff check .

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) build *.egg-info
