# make synth | make test | make typecheck | make bench | make simulate-example | make mutate  -- each creates .venv on first use.
SHELL := /bin/bash
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.installed-base
DEV := $(VENV)/.installed-dev
CLI := node_modules/.installed

.PHONY: synth test typecheck bench simulate-example mutate clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(BASE): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e .
	touch $@

$(DEV): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e ".[dev]"
	touch $@ $(BASE)

$(CLI): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

## synthesize every example stack into cdk.out/ and print one line per stack; installs the pinned
## CDK CLI too (once: a stamp), so that `npx cdk synth|diff|deploy` works right after, as the README says
synth: $(BASE) $(CLI)
	rm -rf cdk.out
	$(PY) app.py
	$(PY) tools/synth_summary.py cdk.out

## the whole suite (installs the dev extra and the CDK CLI first)
test: $(DEV) $(CLI)
	$(PY) -m pytest -q $(PYTEST_ARGS)

typecheck: $(DEV)
	$(PY) -m mypy

bench: $(DEV)
	$(PY) benchmarks/run.py

## the README's simulation picture: docs/simulate-g6e-outage.png (and docs/simulate/launch-day.txt)
simulate-example: $(DEV)
	$(PY) tools/simulate_example.py

## mutation testing of the decision-making modules (docs/testing.md); not part of `make test`
## MUTATE_ARGS: module names (see MODULES in tools/mutate.py), --report, --diffs
mutate: $(DEV) $(CLI)
	nice -n 19 $(PY) tools/mutate.py $(MUTATE_ARGS)

clean:
	rm -rf cdk.out .pytest_cache .mypy_cache build/mutate
