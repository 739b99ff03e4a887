# The two commands: `make lab` (the main job on the embedded default) and
# `make test` (the whole suite). Each installs what is missing first.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
LAB_DIR ?= runs/lab-$(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: setup lab test bench clean

setup:
	@scripts/bootstrap.sh

# Until `dbtier lab` lands: probe the current directory and write the report.
lab: setup
	uv run dbtier probe . --out $(LAB_DIR)/probe
	uv run dbtier report $(LAB_DIR)/probe --out $(LAB_DIR)/report
	@echo "report: $(LAB_DIR)/report/report.html"

test: setup
	uv run pytest -q

bench: setup
	uv run python bench/probe_vs_handtuned.py

clean:
	rm -rf runs .pytest_cache
