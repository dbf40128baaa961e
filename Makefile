# agentctx — two commands for a fresh clone:
#   make demo   creates .venv, installs agentctx, runs it on the embedded demo store
#   make test   creates .venv, installs with dev extras, runs ruff, mypy and the whole suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

# The vec0 path needs an interpreter whose sqlite3 can load extensions (Debian's python3 can;
# pyenv builds and macOS system Python cannot, and run the exact numpy fallback instead).
VEC_PYTHON ?= /usr/bin/python3
VEC_VENV   ?= .venv-vec
# The smoke run uses the newest Python 3.11+ on the machine.
SMOKE_PYTHON ?= $(shell for p in $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.*/bin/python 2>/dev/null | sort -V -r) $$(command -v python3.14 python3.13 python3.12 python3 2>/dev/null); do "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo "$$p"; break; }; done)
SMOKE_VENV   ?= .build/smoke

.PHONY: demo test lint typecheck unit browser test-vec0 test-wheel test-slow smoke ci bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("agentctx needs Python 3.11 or newer; found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/agentctx demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check agentctx tests bench

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The web view's browser test runs in Debian's chromium, installed from the package registry
# when it is missing; the test then fails, never skips, if Chromium cannot start.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@test -n "$$AGENTCTX_CHROMIUM" || command -v chromium >/dev/null 2>&1 || \
	  command -v chromium-browser >/dev/null 2>&1 || \
	  $(SUDO) apt-get install -y -q chromium || \
	  { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium; } || \
	  { echo "the web view's browser test needs Chromium: apt-get install chromium"; exit 1; }

unit: $(VENV)/.installed-dev browser
	AGENTCTX_TEST_BROWSER=require $(BIN)/pytest -q

# The budget: `make test` at most 6 minutes on a fresh 2-core clone (its venv built), `.ci/run`
# at most 15. Large sizes and long waits are marked `slow` and `ci`: CI runs them (test-slow),
# `make test` does not. The largest sizes are `slow` alone, run by hand: pytest -m slow.
test: lint typecheck unit

test-slow: $(VENV)/.installed-dev
	$(BIN)/pytest -q -m "slow and ci"

# The vector tests again, on the sqlite-vec vec0 path (they fail, not skip, if vec0 cannot load).
test-vec0:
	$(VEC_PYTHON) -m venv --help >/dev/null 2>&1 || apt-get install -y -q python3-venv
	test -x $(VEC_VENV)/bin/python || $(VEC_PYTHON) -m venv $(VEC_VENV)
	$(VEC_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VEC_VENV)/bin/python -m pip install --quiet -e '.[test]'
	AGENTCTX_TEST_VEC0=require $(VEC_VENV)/bin/pytest -q tests/store/test_vectors.py tests/store/test_vecside.py tests/consolidate

# Build the wheel, install it into a fresh virtual environment (not editable) and run agentctx
# from there: the one slow test of the packaging (about 90 s, most of it pip installing).
test-wheel: $(VENV)/.installed-dev
	$(BIN)/pytest -q -m slow tests/test_wheel.py

# Install on the newest Python the machine has and prove the entry points start there (the
# console script, a hook, the MCP server); the suite itself runs once, in `make test`.
smoke:
	test -n "$(SMOKE_PYTHON)" || { echo "no Python 3.11+ found for the smoke run"; exit 1; }
	test -x $(SMOKE_VENV)/bin/python || $(SMOKE_PYTHON) -m venv $(SMOKE_VENV)
	$(SMOKE_VENV)/bin/python -m pip install --quiet -e '.[test]'
	$(SMOKE_VENV)/bin/agentctx --version
	$(SMOKE_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_smoke.py

# What CI runs: the whole suite, its slow part, the clean wheel install, the vec0 path and the
# newest-Python smoke run.
ci: test test-slow test-wheel test-vec0 smoke

bench: $(VENV)/.installed-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(VEC_VENV) .build .pytest_cache .mypy_cache .ruff_cache
