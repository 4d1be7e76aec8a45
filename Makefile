# The two commands a new user needs: `make demo` and `make test`.
# Only Python 3.11+, git and make are assumed; everything else is installed into .venv.

VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
            command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; done)

.PHONY: demo test lint types unit venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "ourobot needs Python 3.11 or newer: install python3.11+ and retry" >&2; exit 2; }
	@command -v git >/dev/null 2>&1 || { echo "ourobot needs git: install git and retry" >&2; exit 2; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { echo "could not create $(VENV): install the venv module for $(PYTHON) (e.g. python3-venv)" >&2; exit 2; }
	@echo "installing ourobot and its dev tools into $(VENV) ..."
	@$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	@$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	@$(BIN)/ourobot demo

lint: $(STAMP)
	$(BIN)/ruff check app tasks reviewers prompts tests bench

types: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -n 4

test: lint types unit

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
