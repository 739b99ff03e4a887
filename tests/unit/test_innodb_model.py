"""workloads/parsers/innodb.py on saved MariaDB 10.11 output (tests/data/innodb/README.md says how it was made).

Expected figures are worked by hand from the saved numbers (the differences written out), never by
calling the code under test; the classifier is checked on every instrument name in the samples."""

from __future__ import annotations

import re
from collections import Counter
from importlib import resources

import pytest

from dbtier.workloads.parsers.innodb import (STATUS_COUNTERS, bypasses_page_cache, classify_session, classify_wait,
                                 counters_delta, innodb_bottleneck, innodb_figures, innodb_read_path,
                                 session_classes, status_values)
from dbtier.workloads.parsers.oltp import WAIT_CLASSES, Evidence, wait_shares
from samples import DATA

D = DATA / "innodb"


def status(run: str, when: str) -> dict[str, float]:
    rows = [line.split("\t", 1) for line in (D / f"{run}-status-{when}.tsv").read_text().splitlines()[1:]]
    return status_values((n, v) for n, v in rows)


def delta(run: str) -> dict:
    return counters_delta(status(run, "before"), status(run, "after"))


def samples(run: str) -> list[list[dict]]:
    """A waits file -> its samples, each a list of row dicts (NULL -> None)."""
    out: list[list[dict]] = []
    header: list[str] = []
    for line in (D / f"{run}-waits.tsv").read_text().splitlines():
        if line.startswith("# sample"):
            out.append([])
        elif line.startswith("conn_id\t"):
            header = line.split("\t")
        elif line:
            out[-1].append({k: (None if v == "NULL" else v) for k, v in zip(header, line.split("\t"))})
    return out


def sysbench_transactions(run: str) -> int:
    return int(re.search(r"transactions:\s+(\d+)", (D / f"{run}-sysbench.txt").read_text()).group(1))


# --- counters -------------------------------------------------------------------------------------

def test_every_sampled_counter_exists_on_mariadb_10_11():
    before = status("rw", "before")
    assert [n for n in STATUS_COUNTERS if n not in before] == []
    # 10.11 has no separate redo-log fsync counter: Innodb_data_fsyncs counts them all
    assert "Innodb_os_log_fsyncs" not in before and "Innodb_data_fsyncs" in before


def test_status_sql_asks_for_exactly_the_model_counters():
    sql = resources.files("dbtier.workloads").joinpath("sql", "mariadb_status.sql").read_text()
    names = re.findall(r"'([A-Z_]+)'", sql)
    assert sorted(names) == sorted(n.upper() for n in STATUS_COUNTERS)


def test_capitals_from_information_schema_map_back_and_text_values_are_dropped():
    got = status_values([("INNODB_DATA_READS", "12"), ("Innodb_buffer_pool_load_status", "Buffer pool(s) load"),
                         ("Some_other", "3")])
    assert got == {"Innodb_data_reads": 12.0, "Some_other": 3.0}


def test_delta_is_after_minus_before_and_a_counter_that_went_down_is_none():
    d = delta("rw")
    assert d["Innodb_buffer_pool_reads"] == 320981 - 247147
    assert d["Handler_commit"] == 203165 - 138850
    assert counters_delta({"a": 10, "b": 5}, {"a": 4, "b": 7, "c": 1}) == {"a": None, "b": 2}


def test_commit_counters_match_sysbench_transactions():
    # oltp_write_only wraps each transaction in BEGIN/COMMIT: Com_commit counts them;
    # oltp_update_non_index runs autocommit UPDATEs: Com_commit stays, Handler_commit counts them.
    assert delta("wo")["Com_commit"] == 11334 - 4188 == sysbench_transactions("wo") == 7146
    assert delta("hot")["Com_commit"] == 0
    assert delta("hot")["Handler_commit"] == 138850 - 115407 == sysbench_transactions("hot") == 23443


def test_figures_of_the_read_write_run_by_hand():
    s = 10.0114   # sysbench's total time for the rw run
    f = innodb_figures(delta("rw"), s, transactions=sysbench_transactions("rw"))
    assert f["buffer_pool_hit_ratio"] == pytest.approx(1 - (320981 - 247147) / (2530288 - 2067706))  # 0.8404
    assert f["buffer_pool_reads_per_s"] == pytest.approx(73834 / s)
    assert f["data_reads_per_s"] == pytest.approx((320989 - 247156) / s)
    assert f["data_read_mb_per_s"] == pytest.approx((5258903552 - 4049240064) / 1e6 / s)   # 120.8 MB/s
    assert f["data_written_mb_per_s"] == pytest.approx((7704313856 - 6418939904) / 1e6 / s)
    assert f["log_written_mb_per_s"] == pytest.approx((119805822 - 107706412) / 1e6 / s)  # 1.21 MB/s
    assert f["log_writes_per_s"] == pytest.approx((29184 - 25567) / s)
    assert f["fsyncs_per_s"] == pytest.approx((46450 - 39540) / s)                        # 690/s
    assert f["log_waits_per_s"] == 0
    assert f["log_bytes_per_transaction"] == pytest.approx(12099410 / 3385)               # 3.6 KB
    assert f["fsyncs_per_transaction"] == pytest.approx(6910 / 3385)
    assert f["row_lock_waits_per_s"] == pytest.approx(23 / s)
    assert f["row_lock_wait_avg_ms"] == pytest.approx(85 / 23)
    # Handler_commit counts each of oltp_read_write's 18 statements and its COMMIT: 19 per transaction
    assert f["handler_commits_per_s"] == pytest.approx(64315 / s) == pytest.approx(19 * 3385 / s)
    assert f["com_commit_per_s"] == pytest.approx((14719 - 11334) / s) == pytest.approx(338.1, abs=0.1)
    assert f["doublewrite_pages_per_s"] == pytest.approx((228897 - 191426) / s)
    assert f["handler_rollbacks_per_s"] == 0 and f["com_rollback_per_s"] == 0 and f["deadlocks_per_s"] == 0


def test_row_lock_figures_of_the_hot_run_by_hand():
    s = 8.0029
    f = innodb_figures(delta("hot"), s)
    assert f["row_lock_waits_per_s"] == pytest.approx((11390 - 148) / s)        # 1,405/s
    assert f["row_lock_wait_avg_ms"] == pytest.approx((18403 - 415) / (11390 - 148))  # 1.6 ms
    assert f["row_lock_wait_sessions_avg"] == pytest.approx(17.988 / s)         # 2.25 of 8 sessions


def test_missing_or_backwards_counters_give_none_not_zero():
    f = innodb_figures({"Innodb_buffer_pool_reads": None, "Innodb_buffer_pool_read_requests": 100.0}, 2.0)
    assert f["buffer_pool_hit_ratio"] is None and f["buffer_pool_reads_per_s"] is None
    assert f["buffer_pool_read_requests_per_s"] == 50.0
    assert f["fsyncs_per_s"] is None and f["log_bytes_per_transaction"] is None
    assert innodb_figures({"Innodb_buffer_pool_read_requests": 0.0, "Innodb_buffer_pool_reads": 0.0},
                          1.0)["buffer_pool_hit_ratio"] is None
    with pytest.raises(ValueError):
        innodb_figures({}, 0)


def test_read_path_takes_the_buffer_pool_reads():
    rp = innodb_read_path(delta("wo"), 70000.0)
    assert rp["db_page_reads"] == 168925 - 94425 == 74500
    assert rp["device_fraction"] == pytest.approx(70000 / 74500)
    assert innodb_read_path(delta("wo"), None, remote=True)["device_fraction"] is None


def test_page_cache_bypass_by_flush_method():
    assert bypasses_page_cache("O_DIRECT") and bypasses_page_cache("o_direct_no_fsync")
    assert not bypasses_page_cache("fsync") and not bypasses_page_cache(None)
    variables = dict(line.split("\t") for line in (D / "server-variables.tsv").read_text().splitlines()[1:])
    assert bypasses_page_cache(variables["innodb_flush_method"])


# --- wait events -----------------------------------------------------------------------------------

# Every instrument name seen in the saved samples, classified by hand.
SEEN = {
    "idle": "client",
    "wait/io/socket/sql/client_connection": "client",
    "wait/io/file/innodb/innodb_data_file": "storage",
    "wait/io/table/sql/handler": "cpu",
    "wait/lock/table/sql/handler": "lock",
    "wait/synch/mutex/innodb/buf_pool_mutex": "lock",
    "wait/synch/mutex/innodb/lock_wait_mutex": "lock",
    "wait/synch/mutex/sql/THD::LOCK_thd_data": "lock",
    "wait/synch/rwlock/innodb/fil_space_latch": "lock",
    "wait/synch/rwlock/innodb/lock_latch": "lock",
    "wait/synch/rwlock/innodb/trx_rseg_latch": "lock",
    "wait/synch/rwlock/sql/MDL_lock::rwlock": "lock",
    "wait/synch/sxlock/innodb/index_tree_rw_lock": "lock",
}


def test_every_instrument_in_the_samples_is_classified():
    seen = {r["event_name"] for run in ("rw", "wo", "hot") for smp in samples(run) for r in smp if r["event_name"]}
    assert seen == set(SEEN)
    for name, kind in SEEN.items():
        assert classify_wait(name) == kind, name


@pytest.mark.parametrize("name,kind", [
    ("wait/io/file/innodb/innodb_log_file", "commit"),       # MySQL / MariaDB before 10.8
    ("wait/io/file/sql/binlog", "commit"),
    ("wait/synch/cond/sql/wait_for_commit::COND_wait_commit", "commit"),
    ("wait/synch/mutex/sql/MYSQL_BIN_LOG::LOCK_log", "commit"),
    ("wait/io/file/innodb/innodb_temp_file", "storage"),
    ("wait/io/file/aria/MAD", "storage"),
    ("wait/lock/metadata/sql/mdl", "lock"),
    ("wait/synch/cond/sql/COND_thread_cache", "lock"),
    ("something/else", "other"),
    (None, "other"),
])
def test_instruments_not_in_the_samples(name, kind):
    assert classify_wait(name) == kind
    assert kind in WAIT_CLASSES


def row(event_id, in_progress, event_name):
    return {"event_id": str(event_id), "in_progress": str(in_progress), "event_name": event_name}


def test_sessions_read_the_innermost_wait_in_progress_then_state():
    handler = row(10, 1, "wait/io/table/sql/handler")
    assert classify_session("Execute", "Updating", "RUNNING",
                            [handler, row(12, 1, "wait/io/file/innodb/innodb_data_file")]) == "storage"
    assert classify_session("Execute", "Updating", "RUNNING",
                            [handler, row(11, 1, "wait/synch/sxlock/innodb/index_tree_rw_lock")]) == "lock"
    assert classify_session("Execute", "Updating", "RUNNING", [handler]) == "cpu"
    # a finished wait says nothing: the session in Commit waits for the redo log (not instrumented)
    assert classify_session("Execute", "Commit", None, [row(9, 0, "wait/synch/rwlock/innodb/lock_latch")]) == "commit"
    assert classify_session("Execute", "Updating", "LOCK WAIT", [handler]) == "lock"
    assert classify_session("Sleep", None, None, [row(3, 1, "idle")]) == "client"
    assert classify_session("Execute", "Waiting for table metadata lock", None, []) == "lock"
    assert classify_session("Execute", "Sending data", None, []) == "cpu"


def test_one_sample_of_the_hot_run_by_hand():
    # sample 5: 60 handler only (cpu); 61, 63, 64, 67 LOCK WAIT; 65 LOCK WAIT with a data-file read
    # nested (the transaction's state wins); 62 in Commit, its last wait finished; 66 handler only.
    assert session_classes(samples("hot")[4]) == Counter(lock=5, cpu=2, commit=1)
    # sample 3: 60 Commit (commit); 62 and 64 in Commit reading a data file (storage); 63 Sleep
    # (client); 61, 65, 66, 67 handler only (cpu).
    assert session_classes(samples("hot")[2]) == Counter(cpu=4, storage=2, commit=1, client=1)


def test_one_sample_of_the_write_only_run_by_hand():
    # sample 2: seven sessions wait on an index tree latch nested in their table access, one (39) runs
    assert session_classes(samples("wo")[1]) == Counter(lock=7, cpu=1)


def test_hot_runs_sampled_lock_share_agrees_with_the_row_lock_counter():
    counts = sum((session_classes(s) for s in samples("hot")), Counter())
    shares = wait_shares(counts)
    counter_share = innodb_figures(delta("hot"), 8.0029)["row_lock_wait_sessions_avg"] / 8   # 0.28
    assert shares["lock"] == pytest.approx(counter_share, abs=0.12)


def test_bottleneck_reuses_oltp_and_names_the_driver():
    ev = Evidence(cpu_busy_pct=60, iowait_pct=20, client_cpu_cores=0.2, client_threads=8,
                  waits={"storage": 0.6, "cpu": 0.3, "client": 0.1}, device_await_ms=4.0,
                  device_busy_pct=95, device_queue=6.0, wait_samples=96)
    kind, why = innodb_bottleneck(ev)
    assert kind == "storage"
    assert why.startswith("storage: most session time is storage (60%)")
    assert "sysbench 0.20 cores" in why and "pgbench" not in why and "backend" not in why
    assert innodb_bottleneck(Evidence(10, 0, 0.1, 8, {}, 0, 0, 0, wait_samples=0))[0] == "unknown"
