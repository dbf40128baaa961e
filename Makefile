# agentctx — two commands for a fresh clone:
#   make demo   creates .venv, installs agentctx, runs it on the embedded demo store
#   make test   creates .venv, installs with dev extras, runs ruff, mypy and the whole suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: demo test lint typecheck unit bench clean

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

unit: $(VENV)/.installed-dev
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(VENV)/.installed-dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .build .pytest_cache .mypy_cache .ruff_cache
