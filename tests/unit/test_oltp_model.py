"""Knee, wait classes and the bottleneck rule on hand-made figures."""

import pytest

from dbtier.workloads.parsers.oltp import Evidence, bottleneck, classify_wait, knee, wait_shares


def pt(clients, tps, p95):
    return {"clients": clients, "tps": tps, "lat_ms": {"p95": p95}}


def test_knee_where_throughput_stops_rising_10pct_per_doubling():
    # 1->2: +80%, 2->4: +50%, 4->8: +3%, 4->16: 275/270 over 2 doublings = +0.9% per doubling -> knee at 4
    k = knee([pt(1, 100, 10), pt(2, 180, 11), pt(4, 270, 15), pt(8, 278, 30), pt(16, 275, 60)])
    assert (k["clients"], k["tps"], k["confirmed"], k["still_rising"]) == (4, 270, True, False)
    assert "rose 3.0% from 4 to 8 clients (+3.0% per doubling)" in k["reason"]


def test_latency_growing_faster_than_throughput_does_not_make_a_knee():
    # 2->4: tps x1.2 (+20% per doubling) while p95 doubles: the curve is still rising at 4
    k = knee([pt(1, 100, 10), pt(2, 190, 10), pt(4, 228, 20)])
    assert k["clients"] == 4 and k["still_rising"] and "still rising" in k["reason"]


def test_knee_at_last_point_when_still_rising_and_order_free():
    k = knee([pt(4, 400, 10), pt(1, 100, 10), pt(2, 200, 10)])
    assert k["clients"] == 4 and "still rising" in k["reason"]
    assert knee([]) is None


@pytest.mark.parametrize("clients", [(1, 2, 4, 8, 16), (1, 2, 4, 8, 32)])
def test_the_emulated_tiers_rising_curve_is_still_rising(clients):
    """pgbench on the emulated tier (1,000 read / 500 write IOPS): 1,176 -> 1,579 -> 2,376 -> 3,813 -> 5,148
    TPS, p95 growing faster than TPS at every step. Per doubling (by hand): +34%, +50%, +60%, then +35%
    (16 clients) or 5148/3813 = 1.350 over 2 doublings = +16.2% (32 clients): all over 10%, still rising."""
    tps = (1176, 1579, 2376, 3813, 5148)
    p95 = (1.0, 3.0, 9.0, 27.0, 81.0)
    k = knee([pt(c, t, l) for c, t, l in zip(clients, tps, p95)])
    assert (k["clients"], k["tps"], k["still_rising"], k["confirmed"]) == (clients[-1], 5148, True, False)
    assert "still rising at the largest load measured" in k["reason"]


def test_a_later_point_that_gains_the_rate_resumes_the_sweep():
    """Select-only on the emulated tier, reads at the throttle from 1 client while the page cache warms:
    744, 797, 836, 923, 2,736 TPS at 1..16 clients. 2, 4 and 8 fall short of 744 (+7.2%; 836/744 = 1.124
    over 2 doublings = +6.0%; 923/744 = 1.241 over 3 = +7.5%), but 16 gains 2736/744 = 3.677 over 4
    doublings = +38.5% per doubling: the knee moves to 16, still rising."""
    k = knee([pt(c, t, 1.0) for c, t in zip((1, 2, 4, 8, 16), (744, 797, 836, 923, 2736))])
    assert (k["clients"], k["still_rising"]) == (16, True)
    # without the last point, the three short of 744 confirm the knee at 1
    k = knee([pt(c, t, 1.0) for c, t in zip((1, 2, 4, 8), (744, 797, 836, 923))])
    assert (k["clients"], k["confirmed"]) == (1, True)
    assert k["reason"].startswith("the 3 client counts after it gained under 10% per doubling of clients")


def test_select_only_on_the_emulated_tier_is_still_rising():
    k = knee([pt(1, 600, 2.0), pt(2, 1295, 5.0)])          # +116% for one doubling
    assert (k["clients"], k["still_rising"]) == (2, True)


def test_a_hard_ceiling_is_the_knee():
    """TPS = 100 x min(c, 8): 100, 200, 400, 800, 800, 800 at 1..32 clients: every doubling to 8 doubles
    throughput, 16 and 32 add 0%: the knee is 8 clients, confirmed."""
    k = knee([pt(c, 100 * min(c, 8), 1.0) for c in (1, 2, 4, 8, 16, 32)])
    assert (k["clients"], k["tps"], k["confirmed"], k["still_rising"]) == (8, 800, True, False)


def test_michaelis_menten_knee_by_hand():
    """TPS = 1000 c / (1 + c/2). From c to 2c the ratio is 2(1 + c/2)/(1 + c): under 1.10 once c/2 > 4.5,
    i.e. c > 9. 8 -> 16: 1777.8/1600 = 1.111 (progress); 16 -> 32: 1882.4/1777.8 = 1.059, 16 -> 64:
    1939.4/1777.8 = 1.0909 over 2 doublings = +4.4% each: two misses, so the knee is 16 clients."""
    sweep = [pt(c, 1000 * c / (1 + c / 2), 1.0) for c in (1, 2, 4, 8, 16, 32, 64)]
    k = knee(sweep)
    assert (k["clients"], k["confirmed"]) == (16, True)
    assert k["tps"] == pytest.approx(16000 / 9)
    assert "+5.9% per doubling" in k["reason"] and "+4.4% per doubling" in k["reason"]


def test_gain_per_doubling_normalises_uneven_steps():
    from dbtier.workloads.parsers.oltp import gain_per_doubling
    # 8 -> 12 clients at +10%: log2(1.5) = 0.585 doublings; 1.1 ** (1 / 0.585) = 1.177
    assert gain_per_doubling(8, 100, 12, 110) == pytest.approx(0.1770, abs=1e-4)
    assert gain_per_doubling(1, 100, 4, 200) == pytest.approx(2 ** 0.5 - 1)
    # TPS = 100 x min(c, 6) at 1, 3, 6, 12, 24: 3 -> 6 doubles (+100%), 6 -> 12 and 6 -> 24 add nothing
    k = knee([pt(c, 100 * min(c, 6), 1.0) for c in (1, 3, 6, 12, 24)])
    assert (k["clients"], k["confirmed"]) == (6, True)


@pytest.mark.parametrize("state,wtype,event,cls", [
    ("active", None, None, "cpu"),
    ("active", "IO", "DataFileRead", "storage"),
    ("active", "IO", "DataFileExtend", "storage"),
    ("active", "IO", "BufFileWrite", "storage"),           # temp files
    ("active", "IO", "SLRURead", "storage"),
    ("active", "IO", "WALRead", "storage"),                # reading WAL back is not a commit
    ("active", "IO", "WALSync", "commit"),                 # a WAL file reaching durable storage
    ("active", "IO", "WALWrite", "commit"),                # a write to a WAL file
    ("active", "IO", "WALInitSync", "commit"),             # a new WAL segment being synced
    ("active", "IO", "WALInitWrite", "commit"),
    ("active", "LWLock", "WALWrite", "commit"),            # waiting for WAL buffers to be written (group commit)
    ("active", "LWLock", "WALWriteLock", "commit"),        # the same before PostgreSQL 13
    ("active", "LWLock", "WALInsert", "lock"),             # inserting WAL into memory buffers: contention
    ("active", "LWLock", "WALBufMapping", "lock"),         # replacing a page in WAL buffers
    ("active", "LWLock", "BufferContent", "lock"),
    ("active", "LWLock", "BufferMapping", "lock"),
    ("active", "LWLock", "BufferIO", "storage"),           # before PostgreSQL 14
    ("active", "IPC", "BufferIO", "storage"),              # another backend's I/O on the buffer
    ("active", "IPC", "SyncRep", "commit"),                # a synchronous standby confirming the commit
    ("active", "IPC", "ProcArrayGroupUpdate", "other"),
    ("active", "Lock", "transactionid", "lock"),
    ("idle", "Client", "ClientRead", "client"),
    ("active", "Client", "ClientRead", "client"),
    ("active", "Client", "ClientWrite", "client"),
    ("idle", None, None, "client"),
    ("active", "Timeout", "PgSleep", "other"),
    ("active", "BufferPin", "BufferPin", "other"),
    ("active", "Extension", "Extension", "other"),
    ("active", "Activity", "WalWriterMain", "other"),
])
def test_classify_wait(state, wtype, event, cls):
    assert classify_wait(state, wtype, event) == cls


def test_wait_shares():
    assert wait_shares({"cpu": 3, "commit": 1}) == {"commit": 0.25, "cpu": 0.75}
    assert wait_shares({}) == {}


def ev(**kw):
    base = dict(cpu_busy_pct=40, iowait_pct=5, client_cpu_cores=0.05, client_threads=2,
                waits={"commit": 0.1, "cpu": 0.2, "storage": 0.6, "client": 0.1},
                device_await_ms=8.0, device_busy_pct=95, device_queue=6.0)
    base.update(kw)
    return Evidence(**base)


def test_storage_bound():
    kind, why = bottleneck(ev())
    assert kind == "storage" and why.startswith("storage: most backend time is storage (60%)")


def test_a_cpu_just_under_the_saturation_line_is_said_to_a_tenth():
    # 89.58% is under the 90% that makes a point CPU-bound: storage, and the evidence does not say 90%
    kind, why = bottleneck(ev(cpu_busy_pct=89.58))
    assert kind == "storage" and "CPU 89.6% busy" in why
    kind, why = bottleneck(ev(cpu_busy_pct=90.0))
    assert kind == "cpu" and "(90% busy)" in why


def test_pegged_cpu_wins_over_a_busy_looking_device():
    kind, _ = bottleneck(ev(cpu_busy_pct=97, device_busy_pct=100))
    assert kind == "cpu"


def test_io_waits_without_a_queue_are_cpu_scheduling_when_the_cpu_is_near_busy():
    # 80% busy on 2 cores with 2 clients: 80 >= 70% of 100
    kind, _ = bottleneck(ev(device_await_ms=0.2, device_queue=0.1, device_busy_pct=100, cpu_busy_pct=80, cpus=2))
    assert kind == "cpu"


def throttled(read_iops, write_iops, read_limit=1000, write_limit=500):
    from dbtier.workloads.parsers.oltp import Throttle
    return (Throttle("loop1", read_iops, write_iops, read_limit, write_limit),)


def test_reads_at_the_emulated_throttle_are_storage_whatever_the_device_shows():
    """Select-only on the emulated tier: reads at 998 IOPS against its 1,000 read IOPS throttle (998 >= 900),
    CPU 5% busy, loop1 7% busy with 0.09 ms await and no queue. The throttle holds the I/O before the device
    sees it: storage, said as the throttle (the rule without it said cpu: I/O waits without a device queue)."""
    kind, why = bottleneck(ev(cpu_busy_pct=5, device_busy_pct=7, device_await_ms=0.0905, device_queue=0.0,
                              cpus=2, client_threads=1, throttles=throttled(998, 3)))
    assert kind == "storage"
    assert why.startswith("storage: reads at 998 IOPS against the emulated tier's 1,000 read IOPS throttle (loop1)")
    assert "emulated loop1: reads 998 of 1,000 IOPS, writes 3 of 500 IOPS" in why
    # writes at 460 of 500 (92%) are at the throttle too; 440 (88%) are not, and 899 reads (89.9%) are not
    assert bottleneck(ev(throttles=throttled(10, 460)))[1].startswith("storage: writes at 460 IOPS against the "
                                                                       "emulated tier's 500 write IOPS throttle")
    assert "throttle (loop1)" not in bottleneck(ev(throttles=throttled(899, 440)))[1]


def test_mariadbs_sessions_on_cpu_with_an_idle_cpu_are_not_determined():
    """MariaDB TPC-C at 4 clients on 2 cores: sessions 71% cpu, CPU 14% busy, iowait 31%, reads at 620 of
    the throttle's 1,000. 14% is under 70% of the 100% four clients can use on two cores, no throttle is at
    90% of its limit: not the CPU, not determined, with the figures."""
    kind, why = bottleneck(ev(cpu_busy_pct=14, iowait_pct=31, client_threads=2, cpus=2,
                              waits={"cpu": 0.71, "storage": 0.2, "client": 0.09},
                              throttles=throttled(620, 140)))
    assert kind == "unknown"
    assert why.startswith("unknown: not determined, no resource measured is near its limit: most backend time is "
                          "cpu (71%) (running, no wait event), but the CPU is 14% busy, not near busy;")
    assert "CPU 14% busy, iowait 31%" in why and "reads 620 of 1,000 IOPS" in why
    # one client on 2 cores can use half the machine: 40% busy is near busy (>= 35%), so cpu
    assert bottleneck(ev(cpu_busy_pct=40, client_threads=1, cpus=2, waits={"cpu": 0.8, "client": 0.2}))[0] == "cpu"
    assert bottleneck(ev(cpu_busy_pct=30, client_threads=1, cpus=2, waits={"cpu": 0.8, "client": 0.2}))[0] == "unknown"


def test_io_waits_without_a_queue_or_a_busy_cpu_are_not_determined():
    kind, why = bottleneck(ev(device_await_ms=0.09, device_queue=0.0, device_busy_pct=7, cpu_busy_pct=5, cpus=2))
    assert kind == "unknown" and "not determined" in why and "the CPU is 5% busy" in why


def test_throttles_of_matches_the_points_devices():
    from dbtier.workloads.parsers.oltp import Throttle, throttles_of
    devs = [{"device": "sda", "read_iops": 50.0, "write_iops": 9.0}, {"device": "loop1", "read_iops": 998.0,
                                                                       "write_iops": 3.0}]
    assert throttles_of(devs, {"loop1": {"read_iops": 1000, "write_iops": 500}}) == (
        Throttle("loop1", 998.0, 3.0, 1000, 500),)
    assert throttles_of(devs, None) == () and throttles_of(devs, {"loop7": {"read_iops": 1, "write_iops": 1}}) == ()


def test_commit_bound():
    kind, _ = bottleneck(ev(waits={"commit": 0.7, "cpu": 0.2, "client": 0.1}))
    assert kind == "commit"


def test_lock_bound():
    assert bottleneck(ev(waits={"lock": 0.5, "cpu": 0.3, "commit": 0.2}))[0] == "lock"


def test_client_bound_when_pgbench_threads_saturate():
    assert bottleneck(ev(client_cpu_cores=1.9, client_threads=2))[0] == "client"


@pytest.mark.parametrize("dsn,shown", [
    ("host=db port=5432 user=alice password=s3cret dbname=x", "host=db port=5432 user=alice password=*** dbname=x"),
    ("host=db password='a b c' user=x", "host=db password=*** user=x"),
    ("postgresql://alice:s3cret@db:5432/x", "postgresql://alice:***@db:5432/x"),
    ("host=db user=alice", "host=db user=alice"),
])
def test_redact_never_shows_a_password(dsn, shown):
    from dbtier.workloads.parsers.oltp import redact
    assert redact(dsn) == shown


# -- issue 13 item 6: the verdict says what it found, and only what was measured ------------------------

def test_reclassified_storage_says_cpu_in_its_text():
    """(a) 60% of backend states wait on I/O but the device has no queue (0.1) and 0.2 ms await: the
    verdict is cpu, and the words say cpu and why, not 'most backend time is storage' as the verdict."""
    kind, why = bottleneck(ev(device_await_ms=0.2, device_queue=0.1, device_busy_pct=100, cpu_busy_pct=80))
    assert kind == "cpu"
    assert why.startswith("cpu: most backend time is storage (60%), but the devices show no queue (0.1)")
    assert "CPU scheduling, not the device" in why


def test_no_wait_samples_is_unknown_not_storage_by_the_alphabet():
    """(b) No samples: every share 0. The old rule sorted (0.0, name) and picked 'storage (0%)'."""
    kind, why = bottleneck(ev(waits={}, wait_samples=0))
    assert kind == "unknown" and why.startswith("unknown: no backend wait samples")
    kind, why = bottleneck(ev(waits={"cpu": 0.0, "storage": 0.0}))
    assert kind == "unknown"


def test_failed_sampling_query_is_unknown_with_its_error():
    """(b) The sampling query failed after a few samples: its error is the reason."""
    kind, why = bottleneck(ev(wait_error="terminating connection due to administrator command", wait_samples=3))
    assert kind == "unknown"
    assert why.startswith("unknown: the wait-event sampling query failed (terminating connection due to "
                          "administrator command)")


def test_a_saturated_cpu_is_still_cpu_without_wait_samples():
    """This machine's CPU at 97% is measured evidence of its own (managed cluster)."""
    assert bottleneck(ev(waits={}, wait_samples=0, cpu_busy_pct=97))[0] == "cpu"


def test_other_waits_count_and_can_win():
    """(c) 50% IPC/timeouts (other), 30% cpu, 20% storage: other wins (the old rule ignored it: cpu)."""
    kind, why = bottleneck(ev(waits={"other": 0.5, "cpu": 0.3, "storage": 0.2}))
    assert kind == "other" and why.startswith("other: most backend time is other (50%)")


def test_wal_insert_contention_is_lock_not_commit():
    """(d) Backends sampled: 6 on LWLock WALInsert, 3 on IO WALSync, 1 running: lock 60%, commit 30%.
    The old classes counted WALInsert as commit (90%) and called the run commit-bound."""
    from collections import Counter
    states = [("active", "LWLock", "WALInsert")] * 6 + [("active", "IO", "WALSync")] * 3 + [("active", None, None)]
    shares = wait_shares(Counter(classify_wait(*s) for s in states))
    assert shares == {"commit": 0.3, "cpu": 0.1, "lock": 0.6}
    assert bottleneck(ev(waits=shares))[0] == "lock"


def test_remote_server_is_never_cpu_bound_from_this_machines_cpu():
    """(e) --dsn: this machine at 97% CPU (pgbench's), server backends 60% on I/O, and no device of
    the server sampled (await 0, queue 0). The old rule said cpu twice over (CPU >= 90, and I/O waits
    without a queue); the server's own wait events say storage, and the text says what was not measured."""
    kind, why = bottleneck(ev(cpu_busy_pct=97, device_await_ms=0.0, device_queue=0.0, device_busy_pct=0.0,
                              remote=True, devices_measured=False))
    assert kind == "storage"
    assert "the server's CPU and devices were not measured" in why and "CPU 97%" not in why
    # idle backends waiting on the client at 80% client CPU: client, not 'cpu' from the client's CPU
    kind, _ = bottleneck(ev(cpu_busy_pct=80, waits={"client": 0.7, "cpu": 0.3}, remote=True))
    assert kind == "client"
    # the server's own backends running with no wait event: cpu, said to come from the server's states
    kind, why = bottleneck(ev(waits={"cpu": 0.8, "storage": 0.2}, remote=True))
    assert kind == "cpu" and "as the server reports it" in why


def test_managed_storage_waits_without_any_device_sampled_are_not_reclassified():
    """No placement device found: no queue figure exists, so I/O waits stay storage."""
    kind, why = bottleneck(ev(device_await_ms=0.0, device_queue=0.0, devices_measured=False))
    assert kind == "storage" and "no placement device sampled" in why


# -- issue 13 item 6f: the knee has the probe's patience -----------------------------------------------

def test_knee_survives_one_noisy_step():
    """TPS 100, 190, 170, 260, 265, 262 at 1, 2, 4, 8, 16, 32 clients (p95 flat), by hand with +10% per doubling:
    2 progresses (+90%), 4 dips (170/190: -10.5%), 8 progresses (260/190 = 1.368 over 2 doublings: +17.0%),
    16 (265/260: +1.9%) and 32 (262/260 over 2 doublings: +0.4%) fall short: two in a row, so the knee is 8
    clients at 260 TPS, confirmed."""
    sweep = [pt(c, t, 10) for c, t in zip((1, 2, 4, 8, 16, 32), (100, 190, 170, 260, 265, 262))]
    k = knee(sweep)
    assert (k["clients"], k["tps"], k["confirmed"]) == (8, 260, True)
    assert "throughput rose 1.9% from 8 to 16 clients (+1.9% per doubling)" in k["reason"]   # 265 / 260 = 1.0192
    assert "throughput rose 0.8% from 8 to 32 clients (+0.4% per doubling)" in k["reason"]   # sqrt(1.0077)


def test_one_short_point_at_the_end_is_an_unconfirmed_knee():
    """1: 100, 2: 200, 4: 260 (+30%), 8: 270 (+3.8%): only the last point falls short, so the knee is 4,
    unconfirmed (a large p95 jump at 4 changes nothing)."""
    k = knee([pt(1, 100, 10), pt(2, 200, 10), pt(4, 260, 30), pt(8, 270, 12)])
    assert (k["clients"], k["confirmed"], k["still_rising"]) == (4, False, False)
    assert k["reason"].startswith("only the last point gained under 10% per doubling")


# -- issue 13 item 4: a point's figures are true medians of its runs ----------------------------------

def run(tps, nopm, p95, mx, bn):
    return {"clients": 4, "tps": tps, "tpm": tps * 60, "nopm": nopm, "bottleneck": bn, "duration_s": 1.0,
            "lat_ms": {"p50": p95 / 2, "p95": p95, "p99": p95 * 2, "max": mx, "mean": p95 / 2}, "raw": f"raw/{tps}"}


def test_two_runs_give_the_mean_of_the_middle_two():
    """Runs of 140 and 100 TPS: TPS (100 + 140) / 2 = 120 (the old rule showed the lower run: 100),
    TPM 7,200, NOPM (63 + 45) / 2 = 54, p95 (14 + 10) / 2 = 12, max the larger, 50; the spread
    100-140, n=2, 40 / 120 = 33.3%; CPU, devices, bottleneck from the lower middle run (100 TPS, run 2)."""
    from dbtier.workloads.parsers.oltp import combine_repeats
    p = combine_repeats([run(140, 63, 14, 50, "lock"), run(100, 45, 10, 30, "cpu")])
    assert (p["tps"], p["tpm"], p["nopm"]) == (120, 7200, 54)
    assert p["lat_ms"] == {"p50": 6, "p95": 12, "p99": 24, "mean": 6, "max": 50}
    assert p["tps_spread"] == {"median": 120, "min": 100, "max": 140, "n": 2, "spread_pct": pytest.approx(33.333333)}
    assert p["tps_spread_pct"] == pytest.approx(33.333333) and p["tps_runs"] == [140, 100]
    assert p["shown_run"] == 2 and p["bottleneck"] == "cpu" and p["repeats"] == 2
    assert [r["tps"] for r in p["runs"]] == [140, 100]


def test_one_run_says_n1_not_a_zero_spread():
    from dbtier.workloads.parsers.oltp import combine_repeats
    p = combine_repeats([run(100, None, 10, 30, "cpu")])
    assert p["tps"] == 100 and p["nopm"] is None and p["repeats"] == 1
    assert p["tps_spread"]["n"] == 1 and p["tps_spread_pct"] is None and "runs" not in p


# -- issue 13 item 5: rates divide by the time measured ------------------------------------------------

def test_pgbench_seconds_round_up():
    """-T takes whole seconds: 0.4 -> 1, 2.5 -> 3 (round() gave 2: a 20% overstatement), 5 -> 5."""
    from dbtier.workloads.parsers.oltp import pgbench_seconds
    assert [pgbench_seconds(x) for x in (0.4, 2.5, 5, 0.001, 30.0)] == [1, 3, 5, 1, 30]


def test_pgbench_args_run_the_rounded_up_seconds():
    from dbtier.workloads.pgbench import pgbench_args
    a = pgbench_args("/usr/bin", "tpcb", 2, 0.4, 1, None, None, 2)
    assert a[a.index("-T") + 1] == "1"


def test_readmix_runs_at_the_loaded_scale():
    """readmix's scripts use :scale, which pgbench takes from -s only: without it they run at scale 1."""
    from dbtier.workloads.pgbench import pgbench_args
    a = pgbench_args("/usr/bin", "readmix", 4, 3, 1, None, None, 2, scale=40)
    assert a[a.index("-s") + 1] == "40"
    assert sum(x.endswith("readmix_read.sql@80") for x in a) == 1
    # the built-ins count pgbench_branches (pgbench ignores -s there); tpcc's scripts take no :scale
    assert "-s" not in pgbench_args("/usr/bin", "select-only", 4, 3, 1, None, None, 2, scale=40)
    assert "-s" not in pgbench_args("/usr/bin", "tpcc", 4, 3, 1, None, None, 2)
    with pytest.raises(ValueError):
        pgbench_args("/usr/bin", "readmix", 4, 3, 1, None, None, 2)


def test_the_scaling_factor_line_is_checked_against_the_loaded_scale():
    """A real pgbench 15 readmix run at -s 2 (tests/data/pgbench) says "scaling factor: 2"."""
    from pathlib import Path

    from dbtier.core.errors import DbtierError
    from dbtier.workloads.parsers.oltp import check_scale, parse_pgbench_summary
    text = (Path(__file__).resolve().parents[1] / "data" / "pgbench" / "readmix-s2-c2-stdout.txt").read_text()
    got = parse_pgbench_summary(text)["scaling_factor"]
    assert got == 2
    check_scale(got, 2, "readmix", 2)                     # the same: no error
    check_scale(1, None, "tpcc", 2)                       # nothing loaded by scale: nothing to check
    with pytest.raises(DbtierError) as e:
        check_scale(got, 40, "readmix", 2)
    assert "scaling factor 2" in e.value.message and "loaded at scale 40" in e.value.message
    with pytest.raises(DbtierError) as e:
        check_scale(None, 40, "readmix", 2)
    assert "no \"scaling factor\" line" in e.value.message


def test_rates_over_the_measured_window():
    """137 transactions and 100 new orders over 0.997375 s: 137.36 TPS, 8,241.7 TPM, 6,015.8 NOPM
    (dividing by the --duration 0.4 asked for gave 342.5 TPS: 2.5x)."""
    from dbtier.workloads.parsers.oltp import rates
    r = rates(137, 100, 0.997375)
    assert r["tps"] == pytest.approx(137 / 0.997375) == pytest.approx(137.36057, rel=1e-6)
    assert r["tpm"] == pytest.approx(60 * 137 / 0.997375)
    assert r["nopm"] == pytest.approx(100 * 60 / 0.997375) == pytest.approx(6015.79, rel=1e-5)
    assert rates(5, None, None) == {"tps": None, "tpm": None, "nopm": None}


def test_measured_window_prefers_pgbench_then_the_wall_clock():
    """pgbench reports tps = transactions / its time: 2608 at 522.862399 -> 4.98793 s; no transaction:
    the wall time measured around pgbench (1.02 s); nothing at all: None."""
    from dbtier.workloads.parsers.oltp import measured_window
    s, src = measured_window({"transactions": 2608.0, "tps": 522.862399}, 5.3)
    assert src == "pgbench" and s == pytest.approx(4.98793, abs=1e-5)
    assert measured_window({"transactions": 0.0, "tps": 0.0}, 1.02) == (1.02, "wall clock")
    assert measured_window({"transactions": None, "tps": None}, None) == (None, "none")
