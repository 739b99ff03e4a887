"""The cache guard: did a run's reads reach the storage, or were they served from memory? (pure)

A benchmark whose data set fits in memory measures the write and commit path, not the data and
index read path, and a placement study over it would wrongly conclude that data placement does not
matter. Every OLTP, DSS, backup and buffered probe result gets `guards[]`, each
`{kind, message, ...figures}`:

- `reads-from-memory`: the reads were served from memory (the engine's buffer: PostgreSQL's
  shared_buffers or the InnoDB buffer pool; or the OS page cache), so the figures say nothing about the
  device's read path;
- `too-few-reads`: too few page reads to judge either way;
- `remote`: --dsn: this machine's devices are not the server's, so where reads came from is unknown.

OLTP, per point: `read_path = {db_page_reads, device_read_ios, device_fraction}`. db_page_reads is
PostgreSQL's `blks_read` delta (8 KiB pages PostgreSQL asked the OS for: a page-cache hit or a device
read), device_read_ios the read I/Os (/proc/diskstats) of the devices under the data directories over
the same window. The kernel merges adjacent pages into one I/O (readahead), and other processes on the
same devices add theirs, so the fraction compares I/Os with page reads: near 1 (or above), the page
reads went to the device; near 0, they were page-cache hits.

The engine's buffer is read from the point: PostgreSQL's `pg.blks_hit` / `pg.blks_read`, or InnoDB's
`innodb.buffer_pool_read_requests` (pages asked of the buffer pool) and `innodb.buffer_pool_reads` (of
those, pages read from the files): page reads = buffer_pool_reads, hits = requests - reads.
"""

from __future__ import annotations

from typing import Any, Iterable, TypeGuard

from dbtier.model.placement import ALL_READ_STEPS
from dbtier.core.parts import dict_at

# Less than this share of PostgreSQL's page reads reached the devices as read I/Os: the page cache
# served them. A data set 4x memory reads most pages from the device (fraction near 1); a cached one
# shows a handful of I/Os from other processes (0.005 and below on this machine).
DEVICE_SHARE_MIN = 0.10
# Fewer page reads than this over the run's points: too few to judge the fraction.
MIN_PAGE_READS = 1000
# PostgreSQL found all but this share of page accesses in shared_buffers (blks_hit / (hit + read)
# above 99.5%), over at least BUFFER_MIN_ACCESSES accesses: the data set sat in shared_buffers and
# almost nothing was read at all (the saved tpcc run: 1,466 reads in 969,241 accesses, 0.15%).
BUFFER_READ_SHARE_MAX = 0.005
BUFFER_MIN_ACCESSES = 10_000
# DSS runs and backups: device read bytes below this share of the data read count as from memory.
BYTES_SHARE_MIN = 0.10

MEASURED = "this run measured the write and commit path, not the data/index read path"
NO_FRACTION_ZERO = "no page reads in the window: nothing to compare the device's reads with"
NO_DEVICE_REMOTE = "--dsn: this machine's devices are not the server's"
NO_DEVICE_SAMPLED = "no device under the data directories was sampled"


def _num(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and abs(x) != float("inf")


def read_path(db_page_reads: float | None, device_read_ios: float | None, remote: bool = False,
              devices_measured: bool = True) -> dict[str, Any]:
    """One point's read path -> {db_page_reads, device_read_ios, device_fraction, note}.

    12,000 page reads and 60 device read I/Os: fraction 0.005. The fraction is None, with the reason in
    `note`, when there were no page reads (0 / 0 says nothing) or no device figures (--dsn, none sampled)."""
    note = None
    if remote:
        device_read_ios, note = None, NO_DEVICE_REMOTE
    elif not devices_measured or not _num(device_read_ios):
        device_read_ios, note = None, NO_DEVICE_SAMPLED
    frac = None
    if note is None and device_read_ios is not None:      # a number (the checks above)
        if _num(db_page_reads) and db_page_reads > 0:
            frac = device_read_ios / db_page_reads
        else:
            note = NO_FRACTION_ZERO
    return {"db_page_reads": db_page_reads, "device_read_ios": device_read_ios, "device_fraction": frac,
            "note": note}


# The engine's page buffer, in the report's words, by the point block that holds its counters.
BUFFERS = {"pg": ("PostgreSQL", "shared_buffers"), "innodb": ("InnoDB", "the InnoDB buffer pool")}


def point_engine(p: dict[str, Any]) -> str | None:
    """'innodb' or 'pg': which engine's counters a point holds (None: neither)."""
    for block in ("innodb", "pg"):
        if isinstance(p.get(block), dict):
            return block
    return None


def page_counts(p: dict[str, Any]) -> tuple[float | None, float | None]:
    """(page reads, buffer hits) of one point: PostgreSQL's blks_read and blks_hit, or InnoDB's
    buffer_pool_reads and buffer_pool_read_requests - buffer_pool_reads (None where not recorded).
    InnoDB 1,000 requests of which 40 read from the files: (40, 960)."""
    block = point_engine(p)
    c = p.get(block) if block else None
    if not isinstance(c, dict):
        return None, None
    if block == "pg":
        reads, hits = c.get("blks_read"), c.get("blks_hit")
        return (reads if _num(reads) else None), (hits if _num(hits) else None)
    reads, requests = c.get("buffer_pool_reads"), c.get("buffer_pool_read_requests")
    reads = reads if _num(reads) else None
    hits = requests - reads if reads is not None and _num(requests) and requests >= reads else None
    return reads, hits


def point_read_path(p: dict[str, Any], remote: bool = False) -> dict[str, Any]:
    """A point's read_path; an older document without one: recomputed from what it recorded
    (pg.blks_read or innodb.buffer_pool_reads; devices[].read_ios, else read_iops x sampled_s, else the
    per-interval series)."""
    rp = p.get("read_path")
    if isinstance(rp, dict) and "db_page_reads" in rp:
        return rp
    reads, _ = page_counts(p)
    devs = [d for d in (p.get("devices") or []) if isinstance(d, dict)]
    ios: float | None = None
    if devs and all(_num(d.get("read_ios")) for d in devs):
        ios = float(sum(d["read_ios"] for d in devs))
    elif devs and _num(p.get("sampled_s")) and all(_num(d.get("read_iops")) for d in devs):
        ios = sum(d["read_iops"] for d in devs) * p["sampled_s"]
    elif isinstance(p.get("series"), list) and p["series"]:
        ios, prev = 0.0, 0.0
        for s in p["series"]:
            t = s.get("t_s") if isinstance(s, dict) else None
            if not _num(t):
                ios = None
                break
            ios += sum(d.get("read_iops", 0.0) for d in (s.get("devices") or {}).values()
                       if isinstance(d, dict) and _num(d.get("read_iops"))) * (t - prev)
            prev = t
    return read_path(reads if _num(reads) else None, ios, remote=remote, devices_measured=bool(devs))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if x >= 0.001 else f"{100 * x:.2f}%"


def oltp_guards(points: Iterable[dict[str, Any]], remote: bool = False) -> list[dict[str, Any]]:
    """The run's guards from its points (every step's, for a placement matrix).

    Over all points: R page reads, D device read I/Os, A page accesses (blks_hit + blks_read, or InnoDB's
    buffer_pool_read_requests).
    - A >= 10,000 and R / A < 0.5%: reads-from-memory (shared_buffers or the buffer pool held the data set);
    - R >= 1,000 and D / R < 10%: reads-from-memory (the OS page cache served the page reads);
      12,000 and 60 -> 0.005 fires; 12,000 and 9,000 -> 0.75 does not;
    - neither, and R < 1,000: too-few-reads (500 page reads);
    - --dsn: remote (device figures are not the server's); the shared_buffers rule still applies."""
    pts = [p for p in points if isinstance(p, dict)]
    paths = [point_read_path(p, remote) for p in pts]
    reads = sum(rp["db_page_reads"] for rp in paths if _num(rp.get("db_page_reads")))
    hits = sum(h for h in (page_counts(p)[1] for p in pts) if h is not None)
    # the engine named in the wording: the points' (InnoDB when any point holds InnoDB's counters)
    engine, buffer = BUFFERS["innodb" if any(point_engine(p) == "innodb" for p in pts) else "pg"]
    dev = [rp["device_read_ios"] for rp in paths]
    ios = sum(dev) if dev and all(_num(x) for x in dev) else None
    out: list[dict[str, Any]] = []
    memory: list[str] = []
    figures: dict[str, Any] = {"db_page_reads": reads, "db_page_hits": hits, "device_read_ios": ios,
                               "device_fraction": ios / reads if ios is not None and reads > 0 else None,
                               "threshold": DEVICE_SHARE_MIN}
    accesses = reads + hits
    if accesses >= BUFFER_MIN_ACCESSES and reads / accesses < BUFFER_READ_SHARE_MAX:
        memory.append(f"{engine} found {_pct(1 - reads / accesses)} of {accesses:,.0f} page accesses in "
                      f"{buffer} and read only {reads:,.0f} pages: the data set fit in memory")
    if remote:
        out.append({"kind": "remote", "message": "--dsn: this machine's devices are not the server's, so whether "
                    "the server's page reads reached its storage was not measured"})
    elif ios is not None and reads >= MIN_PAGE_READS and ios / reads < DEVICE_SHARE_MIN:
        memory.append(f"only {_pct(ios / reads)} of {engine}'s {reads:,.0f} page reads reached the devices "
                      f"({ios:,.0f} read I/Os; under {DEVICE_SHARE_MIN:.0%} counts as memory): the reads were "
                      "served from the OS page cache")
    if memory:
        out.append({"kind": "reads-from-memory", **figures,
                    "message": "; ".join(memory) + f": {MEASURED}. Reads not measured: give the server less "
                    "memory than its data (a larger data set, or a memory limit) to measure them."})
    elif reads < MIN_PAGE_READS:
        out.append({"kind": "too-few-reads", **figures,
                    "message": f"only {reads:,.0f} page reads over the run (under {MIN_PAGE_READS:,}): too few to "
                    "tell whether reads reached the devices"})
    return out


def reads_from_memory(guards: Any) -> bool:
    return isinstance(guards, list) and any(isinstance(g, dict) and g.get("kind") == "reads-from-memory"
                                            for g in guards)


def doc_points(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every OLTP point of a document: all steps' for a placement matrix, else the points."""
    steps = [s for s in (doc.get("steps") or []) if isinstance(s, dict)]
    pts = ([p for s in steps if isinstance(s.get("points"), list) for p in s["points"]] if steps
           else doc["points"] if isinstance(doc.get("points"), list) else [])
    return [p for p in pts if isinstance(p, dict)]


def doc_guards(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A document's guards: as recorded, else recomputed from what it holds (older documents)."""
    g = doc.get("guards")
    if isinstance(g, list):
        return [x for x in g if isinstance(x, dict)]
    if doc.get("command") == "probe":
        return probe_guards(doc)
    bench = doc.get("bench")
    if bench == "oltp":
        params = dict_at(doc, "params")
        return oltp_guards(doc_points(doc), remote=params.get("mode") == "dsn")
    if bench == "dss":
        load = dict_at(doc, "load")
        runs = [r for r in doc.get("runs") or [] if isinstance(r, list)] if isinstance(doc.get("runs"), list) else []
        return dss_guards(runs, load.get("database_bytes"))
    if bench == "backup":
        return backup_guards(doc["targets"] if isinstance(doc.get("targets"), list) else [])
    return []




def probe_guards(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A buffered probe (--buffered, direct_io false): its figures include the page cache."""
    params = dict_at(doc, "params")
    if params.get("direct_io") is False:
        return [{"kind": "reads-from-memory", "message": "buffered probe (--buffered): its figures include the OS "
                 "page cache, so reads (and writes until a flush) may have been served from memory, not the "
                 "device; probe without --buffered (O_DIRECT) for the device's own figures"}]
    return []


def dss_guards(runs: list[list[dict[str, Any]]], data_bytes: Any) -> list[dict[str, Any]]:
    """Power runs whose device reads were under 10% of the database's size were served from memory.

    Run 1 is cold (caches dropped when root); later runs are warm and read from memory unless their
    device read bytes show otherwise (a 1 GB database and 30 MB read in run 2: 3%, from memory)."""
    if not (_num(data_bytes) and data_bytes > 0):
        return []
    cached = []
    for i, run in enumerate(runs):
        recs = [r for r in run if isinstance(r, dict)]
        if not recs:
            continue
        read = sum(r["read_bytes"] for r in recs if _num(r.get("read_bytes")))
        if read / data_bytes < BYTES_SHARE_MIN:
            cached.append((i + 1, read, any(r.get("caches_dropped") is False for r in recs)))
    if not cached:
        return []
    words = ", ".join(f"run {n} read {b / 1e6:,.1f} MB" for n, b, _ in cached)
    cold = [n for n, _, undropped in cached if n == 1]
    msg = (f"{words} from the devices against a {data_bytes / 1e6:,.1f} MB database (under {BYTES_SHARE_MIN:.0%}):"
           + (" those runs were" if len(cached) > 1 else " that run was")
           + " served from memory (the OS page cache and the engine's buffers), so "
           + ("their" if len(cached) > 1 else "its") + " times measure CPU and memory, not the storage's read path")
    if cold:
        msg += "; the cold run's caches were not dropped (dropping them needs root)"
    return [{"kind": "reads-from-memory", "runs": [n for n, _, _ in cached], "message": msg}]


def backup_guards(targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Backups whose source devices read under 10% of the bytes backed up read the source from memory."""
    hit = []
    for t in targets:
        if not isinstance(t, dict) or not (_num(t.get("bytes")) and t["bytes"] > 0):
            continue
        devs = dict_at(t, "devices")
        read = sum(d.get("read_bytes", 0) for d in devs.values() if isinstance(d, dict) and _num(d.get("read_bytes")))
        if read / t["bytes"] < BYTES_SHARE_MIN:
            hit.append(f"{t.get('method')} to {t.get('target')} ({read / 1e6:,.1f} MB read for "
                       f"{t['bytes'] / 1e6:,.1f} MB backed up)")
    if not hit:
        return []
    return [{"kind": "reads-from-memory", "message": "the source was read from memory, not its device: "
             + "; ".join(hit) + f" (device reads under {BYTES_SHARE_MIN:.0%} of the bytes): those MB/s measure the "
             "target and the CPU, not the source's read path (dropping the page cache first needs root)"}]


def mark_oltp(doc: dict[str, Any], remote: bool = False) -> list[dict[str, Any]]:
    """Set doc['guards'] from every point so far and, on a placement matrix, `reads_measured` on the
    steps that move tables and indexes (False when the reads came from memory, None when not judged)."""
    guards = oltp_guards(doc_points(doc), remote=remote)
    doc["guards"] = guards
    memory = reads_from_memory(guards)
    judged = memory or not any(g.get("kind") in ("too-few-reads", "remote") for g in guards)
    for s in doc.get("steps") or []:
        if isinstance(s, dict) and s.get("name") in ALL_READ_STEPS:
            s["reads_measured"] = False if memory else (True if judged else None)
    return guards
