# The README's quick start: `make demo` and `make test`. Each creates .venv and
# installs what it needs on a fresh machine (Python 3.11+).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-sweep soak lint bench clean system sandbox

# System packages the tests need, installed with apt-get when missing and we are
# root (CI); otherwise say what to install.  bubblewrap: the bots' sandbox;
# libseccomp2: its seccomp filter (built through pyseccomp, a ctypes binding);
# python3 (Debian's): the interpreter of the sandbox tests' attacking bots;
# chromium: the report's browser tests (Debian's, never a downloaded browser);
# nodejs and npm: the JavaScript example bots.  Without them those tests are
# skipped, and fail with CI=true.
system:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing="$$missing libseccomp2"; \
	[ -x /usr/bin/python3 ] || missing="$$missing python3"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "make: missing system packages:$$missing (Debian/Ubuntu: sudo apt-get install$$missing);" \
	         "the tests that need them are skipped, and fail with CI=true" >&2; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The sandbox the demo league runs its bots in: bubblewrap, installed with apt-get
# when missing and we are root; otherwise say how (a league never runs unsandboxed).
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make: installing bubblewrap (the bots' sandbox)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "make: the demo league runs its bots in bubblewrap: install it first" \
	         "(Debian/Ubuntu: sudo apt-get install bubblewrap)" >&2; exit 1; \
	  fi; }

# A fresh demo league each time: the example bots submitted (each copied into the
# league and checked in the sandbox), played at 2 and 3 seats, the standings and
# the report (leagues/demo.toml).  The JavaScript bot joins when Node.js is here.
DEMO := runs/demo-league
demo: $(STAMP) sandbox
	rm -rf $(DEMO)
	$(BIN)/referee league new $(DEMO) --config leagues/demo.toml
	$(BIN)/referee league submit -q $(DEMO) python-heuristic example_bots/python --command "python3 heuristic_bot.py"
	$(BIN)/referee league submit -q $(DEMO) python-random example_bots/python --command "python3 random_bot.py --seed 1"
	@if command -v node >/dev/null 2>&1; then \
	  $(BIN)/referee league submit -q $(DEMO) js-lowest example_bots/js --command "node bot.js"; \
	else echo "make: no Node.js here: the JavaScript example bot sits this one out"; fi
	$(BIN)/referee league run $(DEMO) --report $(DEMO)/report

# Both CPUs (pytest-xdist): the tests share no port, file or name (tmp_path, port 0).
# Everything but the oracle's long sweep (make test-sweep).
test: $(STAMP) system
	$(BIN)/python -m pytest -q -n auto -m "not sweep"
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The fast tier (under a minute): the tests not marked slow, ruff, mypy and the
# layers.  make test runs everything.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m "not slow"
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The oracle's long sweep: the engine against the independent oracle over 1,200
# random games (tests/oracle/test_differential.py; make test plays the first 120).
# About a minute of CPU; the soak runs it with everything else.
test-sweep: $(STAMP)
	$(BIN)/python -m pytest -q -n auto -m sweep

# The proof that the suite does not flake: the whole suite RUNS times in a row, in
# MODE busy (every 4th run with the other CPU kept busy), background (started from a
# background job, SIGINT ignored) or oversubscribed (six spinning processes); see
# tests/soak.sh.  About an hour for 20 busy runs.
RUNS ?= 20
MODE ?= busy
soak: $(STAMP) system
	tests/soak.sh --mode $(MODE) $(RUNS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) build *.egg-info
