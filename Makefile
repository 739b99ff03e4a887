# The two commands: `make lab` (the main job on the embedded default) and
# `make test` (the whole suite). Each installs what is missing first.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
LAB_DIR ?= runs/lab-$(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: setup lab test bench clean

setup:
	@scripts/bootstrap.sh

# The whole study of the current directory: probe, OLTP, DSS, backup, plan, report.
lab: setup
	uv run dbtier lab . --out $(LAB_DIR)

test:
	@scripts/bootstrap.sh --test
	uv run pytest -q

bench: setup
	for b in bench/*.py; do echo "== $$b"; uv run python $$b || exit 1; done

clean:
	rm -rf runs .pytest_cache
