# The two commands: `make lab` (the main job on the embedded default) and
# `make test` (the whole suite). Each installs what is missing first.
# `make test-fast`: no engine, no browser, no property tests (markers in pyproject.toml), under a minute.
# `make docs`: the documentation site in site/ (mkdocs.yml).
# `make lint`: ruff and mypy (their settings in pyproject.toml); both test targets run it first.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
# Python's bytecode cache on (some shells turn it off): pytest re-compiles every test module without it.
unexport PYTHONDONTWRITEBYTECODE
LAB_DIR ?= runs/lab-$(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: setup lab lint test test-fast bench docs clean

setup:
	@scripts/bootstrap.sh

# The whole study of the current directory: probe, OLTP, DSS, backup, plan, report.
lab: setup
	uv run dbtier lab . --out $(LAB_DIR)

# ruff and mypy, at the versions uv.lock pins (the dev group): a finding fails the target, and the tests
# after it do not run.
lint: setup
	uv run ruff check src tests bench
	uv run mypy

# The engine-free tests run on one worker more than cores (pytest-xdist: many wait on a child process or a
# timer; 154 s instead of 221 on 2 cores); the engine tests one at a time after them, alone on the machine:
# they start servers, time the storage and check for processes machine-wide.
test: lint
	@scripts/bootstrap.sh --test
	uv run pytest -q -n $$(( $$(nproc) + 1 )) -m "not engine"; a=$$?; uv run pytest -q -m engine; b=$$?; \
		exit $$((a || b))

# One worker more than cores, as for `test`: many of these tests wait on a child process or a timer.
test-fast: lint
	uv run pytest -q -n $$(( $$(nproc) + 1 )) -m "not engine and not slow"

bench: setup
	for b in bench/[!_]*.py; do echo "== $$b"; uv run python $$b || exit 1; done

# The documentation site into site/: the generated pages first (the command reference from the parser, the
# benchmarks from bench/), then mkdocs with --strict (a broken link or a missing page fails). Offline.
docs: setup
	uv run python docs/gen_pages.py
	NO_MKDOCS_2_WARNING=1 uv run mkdocs build --strict --site-dir site

clean:
	rm -rf runs .pytest_cache
