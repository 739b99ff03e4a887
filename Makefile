# The two commands: `make lab` (the main job on the embedded default) and
# `make test` (the whole suite). Each installs what is missing first.
# `make test-fast`: no engine, no browser, no property tests (markers in pyproject.toml), under a minute.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
LAB_DIR ?= runs/lab-$(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: setup lab test test-fast bench clean

setup:
	@scripts/bootstrap.sh

# The whole study of the current directory: probe, OLTP, DSS, backup, plan, report.
lab: setup
	uv run dbtier lab . --out $(LAB_DIR)

test:
	@scripts/bootstrap.sh --test
	uv run pytest -q

test-fast:
	@scripts/bootstrap.sh
	uv run pytest -q -m "not engine and not slow"

bench: setup
	for b in bench/[!_]*.py; do echo "== $$b"; uv run python $$b || exit 1; done

clean:
	rm -rf runs .pytest_cache
