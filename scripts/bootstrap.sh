#!/usr/bin/env bash
# Installs what dbtier needs and is missing: uv and the Python packages (uv.lock),
# and the engines from the system package manager: fio, eatmydata, PostgreSQL 15,
# MariaDB (mariadb-server, mariadb-backup), sysbench, blkid; with --test also
# chromium (the report's browser test) and prometheus, prometheus-pushgateway,
# prometheus-node-exporter (the export/import tests). Safe to run again; does nothing when all
# is there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'bootstrap: %s\n' "$*" >&2; }

# --- uv -------------------------------------------------------------------
if ! command -v uv >/dev/null 2>&1; then
    export PATH="$HOME/.local/bin:$PATH"
fi
if ! command -v uv >/dev/null 2>&1; then
    say "installing uv from PyPI"
    if ! python3 -m pip install --quiet --user uv 2>/dev/null && ! python3 -m pip install --quiet uv; then
        say "could not install uv; install it yourself (python3 -m pip install uv) and re-run"
        exit 1
    fi
    hash -r
fi

# --- system packages ------------------------------------------------------
have_pg() {
    command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
missing=()
command -v fio >/dev/null 2>&1 || missing+=(fio)
command -v eatmydata >/dev/null 2>&1 || missing+=(eatmydata)
command -v blkid >/dev/null 2>&1 || missing+=(util-linux)
have_pg || missing+=(postgresql postgresql-contrib)
have_mariadb() {
    { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } && command -v mariadb-install-db >/dev/null 2>&1
}
have_mariadb || missing+=(mariadb-server)
command -v mariadb-backup >/dev/null 2>&1 || missing+=(mariadb-backup)
command -v sysbench >/dev/null 2>&1 || missing+=(sysbench)
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
command -v blktrace >/dev/null 2>&1 || missing+=(blktrace)   # simulate capture
# The test suite also renders the report in a real browser, and runs a real Prometheus stack
# (tests/promstack.py: the tests start the binaries themselves, never the packages' services).
if [ "${1:-}" = "--test" ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || missing+=(prometheus)
    command -v prometheus-pushgateway >/dev/null 2>&1 || missing+=(prometheus-pushgateway)
    command -v prometheus-node-exporter >/dev/null 2>&1 || missing+=(prometheus-node-exporter)
fi

if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null 2>&1; then
        say "missing: ${missing[*]}; this system has no apt-get: install them with your package manager"
        say "  (Fedora/RHEL: dnf install fio libeatmydata postgresql-server mariadb-server mariadb-backup"
        say "   sysbench util-linux; sysbench is in EPEL) and re-run"
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            SUDO="sudo -n"
        else
            say "missing: ${missing[*]}; run as root, or: sudo apt-get install -y ${missing[*]}"
            exit 1
        fi
    fi
    say "installing with apt-get: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null || say "apt-get update failed; trying the install anyway"
    if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
        say "apt-get could not install: ${missing[*]}; install them by hand and re-run"
        exit 1
    fi
fi

# --- Python packages ------------------------------------------------------
uv sync --frozen --quiet
