"""The shared Prometheus stack itself (tests/promstack.py): the three servers answer, Prometheus scrapes
node_exporter, the Pushgateway and the textfile collector every second, as an unprivileged user. (A backfill
and its restart: tests/e2e/test_export_prometheus.py.)"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.engine


def test_stack_scrapes_node_exporter_and_pushgateway(prom_stack):
    up = prom_stack.wait_for('up{job=~"node|pushgateway"} == 1', timeout_s=30)
    assert {s["metric"]["job"] for s in up} <= {"node", "pushgateway"}
    prom_stack.wait_for('count(up{job=~"node|pushgateway"} == 1) == 2', timeout_s=30)
    assert prom_stack.wait_for('node_disk_reads_completed_total', timeout_s=10)


def test_stack_runs_as_an_unprivileged_user(prom_stack):
    if os.geteuid() != 0:
        pytest.skip("not root: the stack runs as this user")
    for p in prom_stack.procs.values():
        assert os.stat(f"/proc/{p.popen.pid}").st_uid != 0, p.name


def test_textfile_collector_is_read(prom_stack, tmp_path):
    f = prom_stack.textfile_dir / "promstack_selftest.prom"
    f.write_text("# TYPE promstack_selftest gauge\npromstack_selftest 42\n")
    f.chmod(0o644)
    try:
        r = prom_stack.wait_for("promstack_selftest", timeout_s=20)
        assert float(r[0]["value"][1]) == 42
    finally:
        f.unlink()
