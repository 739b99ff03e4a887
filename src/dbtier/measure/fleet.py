"""`dbtier probe --hosts`: the probe's plan run on many hosts at once, through fio's client/server mode.

Each host runs `fio --server`; dbtier is fio's client: every point is one `fio --client=H1 JOB1 --client=H2
JOB2 ...` run, the same job on every host against that host's target, started together by fio. Each host's
figures come from its own job entry; the aggregate sums IOPS and MB/s over the hosts at that point and
reads its latency percentiles from the hosts' latency bins merged (--output-format=json+), never an
average of percentiles.

What fio's protocol carries is jobs and results, no file-system facts: on a host of this machine (a
loopback address) the local probe's checks run (directory, direct I/O, memory file systems, free space and
its margin, a raw device only blank and with --destroy-data); on another host they cannot, so its test file
is --size (or the profile's), fio makes it, a host without the space fails with ENOSPC and is named, and
raw devices are refused. Test files are named `.dbtier-probe-<id>-...` inside the target and removed at the
end (and on Ctrl-C) by an fio job with unlink=1 on each host still answering.

`run(ProbeFleetRequest, ...) -> ProbeFleet` is the library call: it warns of the hosts off trusted networks,
refuses the hosts whose fio server does not answer, makes the members, builds the document's section and
drives `probe(FleetRequest, ...)`, which runs the plan on the members and, with --hosts-step, the scaling steps
(measure/scaling.py judges them); what dbtier made is removed in any case. The CLI stores the document and
shows the points.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Sequence

from dbtier.core import debris
from dbtier.core.debris import Claim
from dbtier.core.errors import DbtierError
from dbtier.core.owner import Owner, alive
from dbtier.core.units import MIB
from dbtier.measure import executor, fio
from dbtier.measure.fio import FioJob
from dbtier.measure import scaling as scale
from dbtier.results.probe import COMMIT, COMMIT_NOSYNC
from dbtier.measure.probe import (Profile, Prober, Target, check_device, check_directory,
                                  honesty, load_levels, probe_target)
from dbtier.results.probe import READ_4K, RANDOM, knees, spreads, summarize
from dbtier.results.result import Frozen, Result
from dbtier.results.store import RunDir
from dbtier.core.parts import dict_at

DEFAULT_PORT = 8765          # fio --server's default
ALL_CLIENTS = "All clients"  # fio's own sum over clients (no percentiles): not read


@dataclass(frozen=True)
class Host:
    name: str                # as given: host or host:port
    address: str
    port: int = DEFAULT_PORT

    def client(self) -> str:
        """fio's --client= value."""
        return f"ip6:{self.address},{self.port}" if ":" in self.address else f"{self.address},{self.port}"


def parse_hosts(spec: str) -> list[Host]:
    """HOSTS: a comma list of host[:port] ([v6]:port for IPv6), or a file of them (one a line, # comments)."""
    p = Path(spec)
    if p.is_file():
        try:
            items = [ln.split("#", 1)[0].strip() for ln in p.read_text().splitlines()]
        except (OSError, UnicodeDecodeError) as exc:
            raise DbtierError(f"--hosts {spec}: cannot read it ({exc})", "pass a readable text file") from None
        where = f"--hosts file {spec}"
    else:
        items = [x.strip() for x in spec.split(",")]
        where = "--hosts"
    hosts: list[Host] = []
    for item in (x for x in items if x):
        hosts.append(_host(item, where))
    if not hosts:
        raise DbtierError(f"{where}: no hosts", "e.g. --hosts db1,db2:8766 (each running `fio --server`)")
    seen: set[tuple[str, int]] = set()
    for h in hosts:
        if (h.address, h.port) in seen:
            raise DbtierError(f"{where}: {h.name} is given twice", "name each host once")
        seen.add((h.address, h.port))
    return hosts


def _host(item: str, where: str) -> Host:
    addr, port = item, DEFAULT_PORT
    if item.startswith("["):
        addr, _, rest = item[1:].partition("]")
        if rest:
            port = _port(rest.lstrip(":"), item, where)
    elif item.count(":") == 1:
        addr, _, p = item.partition(":")
        port = _port(p, item, where)
    if not addr or any(c.isspace() for c in addr):
        raise DbtierError(f"{where}: '{item}' is not host[:port]", "e.g. db1, db1:8766, 10.0.0.5, [fd00::5]:8765")
    return Host(item, addr, port)


def _port(text: str, item: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise DbtierError(f"{where}: '{item}': the port must be 1 to 65535", "e.g. db1:8765")
    return int(text)


def addresses(host: Host) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The host's IP addresses (a name resolved; none when it does not resolve)."""
    try:
        return [ipaddress.ip_address(host.address)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host.address, host.port, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return sorted({ipaddress.ip_address(i[4][0]) for i in infos}, key=str)


def untrusted(host: Host, trusted: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> str | None:
    """Why fio's unauthenticated protocol to this host is not on a trusted network (None: it is): loopback is
    trusted, and the networks given with --trust."""
    addrs = addresses(host)
    if not addrs:
        return f"{host.name} does not resolve"
    bad = [a for a in addrs if not a.is_loopback and not any(a in n for n in trusted)]
    if not bad:
        return None
    return (f"{host.name} ({', '.join(map(str, bad))}) is not on loopback or a network given with --trust: fio's "
            "client/server protocol has no authentication, and a fio server runs any job it is sent")


def trust_networks(items: Sequence[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """--trust's networks (a host address given alone is a network of one)."""
    nets = []
    for item in items:
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise DbtierError(f"--trust {item}: not a network", "e.g. --trust 10.0.0.0/8") from None
    return nets


def target_paths(hosts: Sequence[Host], items: Sequence[str]) -> dict[str, str]:
    """TARGET...: one path for every host, or host=path for each host."""
    if not items:
        raise DbtierError("--hosts needs the target on the hosts", "e.g. dbtier probe --hosts db1,db2 /var/lib/pgsql")
    per = [i for i in items if "=" in i]
    if not per:
        if len(items) > 1:
            raise DbtierError(f"--hosts takes one target for every host, or host=path each; got {len(items)} paths",
                              "probe one path at a time, or name each host's: db1=/data db2=/srv/data")
        return {h.name: items[0] for h in hosts}
    if len(per) != len(items):
        raise DbtierError("mixing a plain target with host=path ones", "give host=path for every host")
    out: dict[str, str] = {}
    names = {h.name for h in hosts} | {h.address for h in hosts}
    for i in per:
        name, _, path = i.partition("=")
        if name not in names:
            raise DbtierError(f"{i}: {name} is not one of --hosts", "use the names given to --hosts")
        host = next(h for h in hosts if name in (h.name, h.address))
        if host.name in out:
            raise DbtierError(f"{i}: {host.name} has two targets", "one target per host")
        out[host.name] = path
    missing = [h.name for h in hosts if h.name not in out]
    if missing:
        raise DbtierError(f"no target for {', '.join(missing)}", "give host=path for every host")
    return out


PING_JOB = "[dbtier-ping]\nrw=read\nbs=4k\nsize=4k\nfilename=/dev/zero\nioengine=psync\n"   # makes no file


def reachable(hosts: list[Host], scratch: str) -> None:
    """Refuse, naming them, the hosts whose fio server does not run a 4 KiB read of /dev/zero (before
    anything is made there). `scratch`: a directory for the job file."""
    from concurrent.futures import ThreadPoolExecutor
    job = os.path.join(scratch, "dbtier-ping.fio")
    with open(job, "w") as f:
        f.write(PING_JOB)

    def ping(h: Host) -> str | None:
        try:
            done = executor.run(["fio", f"--client={h.client()}", job, "--output-format=json"], timeout_s=60)
        except executor.TimedOut:
            return f"{h.name} (no answer in 60 s)"
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip() or "no answer").splitlines()[-1]
            return f"{h.name} ({last})"
        return None

    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        down = [d for d in pool.map(ping, hosts) if d]
    if down:
        raise DbtierError(f"no fio server answers on {', '.join(down)}",
                          "start `fio --server` on each host (docs/commands/probe.md), or leave it out of --hosts")


def is_local(host: Host) -> bool:
    """On this machine: a loopback address (its files are this machine's, so the local checks apply)."""
    addrs = addresses(host)
    return bool(addrs) and all(a.is_loopback for a in addrs)


@dataclass
class Member:
    """One host of the fleet, its target and what dbtier made there."""
    host: Host
    target: Target
    local: bool
    entry: dict[str, Any]                   # its document entry: {host, targets: [target entry]}
    files: set[str] = field(default_factory=set)
    dropped: str | None = None              # why it stopped answering
    claim: Claim | None = None              # the registry entry of `files` on another host

    def claim_files(self) -> None:
        """Name the files made on another host in the registry: if dbtier dies, the next fleet probe of the
        host removes them (`remove_dead_remote`)."""
        if self.local:
            return
        what = [{"host": self.host.name, "address": self.host.address, "port": self.host.port,
                 "paths": sorted(self.files)}]
        if self.claim is None:
            self.claim = Claim("remote probe files", {"remote": what})
        else:
            self.claim.update(remote=what)

    @property
    def tentry(self) -> dict[str, Any]:
        first: dict[str, Any] = self.entry["targets"][0]
        return first


def remote_target(path: str, profile: Profile, size: int | None, run_id: str) -> Target:
    """A target on another host: nothing can be checked from here (see the module docstring)."""
    if not path.startswith("/"):
        raise DbtierError(f"{path}: give an absolute path on the host", "e.g. /var/lib/pgsql")
    if path.startswith("/dev/"):
        raise DbtierError(f"{path}: a raw device on another host cannot be checked blank through fio's protocol",
                          "probe a directory on that host, or run `dbtier probe --device` on the host itself")
    base = path.rstrip("/") or "/"
    return Target(path=base, kind="directory", filesystem=None, mount_options=None,
                  file_bytes=((size or profile.file_bytes) // MIB) * MIB,
                  data_file=f"{base}/.dbtier-probe-{run_id}.data", commit_dir=base,
                  commit_format=f".dbtier-probe-{run_id}-$jobname.$jobnum", info={})


def local_target(path: str, profile: Profile, margin_pct: float, size: int | None, buffered: bool,
                 destroy: bool) -> Target:
    """A target on a host of this machine: the local probe's checks and sizing."""
    if path.startswith("/dev/"):
        return check_device(path, destroy, profile, size)
    return check_directory(path, profile, margin_pct, size, buffered)


def make_members(hosts: list[Host], paths: dict[str, str], profile: Profile, margin_pct: float, size: int | None,
                 buffered: bool, destroy: bool, all_remote: bool = False) -> list[Member]:
    """Each host's target (checked where it can be; `all_remote`: nowhere, the hosts' files not being this
    machine's even on loopback -- fio servers in containers); all hosts' test files get the smallest size, so
    every host runs the same load. On failure what was made is removed."""
    run_id = uuid.uuid4().hex[:8]
    members: list[Member] = []
    try:
        for h in hosts:
            local = is_local(h) and not all_remote
            t = (local_target(paths[h.name], profile, margin_pct, size, buffered, destroy) if local
                 else remote_target(paths[h.name], profile, size, run_id))
            members.append(Member(h, t, local, {"host": h.name, "address": h.address, "port": h.port,
                                                "checks": "local" if local else "none (another host)",
                                                "status": "running", "targets": []}))
    except BaseException:
        for m in members:
            m.target.cleanup()
        raise
    common = min(m.target.file_bytes for m in members)
    for m in members:
        m.target.file_bytes = common
    return members


def parse_client(text: str, hosts: list[Host], source: str) -> tuple[dict[str, dict[str, Any]], dict[str, list[Any]]]:
    """fio's client-mode json+ output -> (parsed result per host name, raw job entries per host name); a host
    with no entry is missing from both."""
    data = fio.decode(text, source)
    by_addr: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for j in data.get("client_stats") or []:
        if j.get("jobname") == ALL_CLIENTS:
            continue
        by_addr.setdefault((str(j.get("hostname")), int(j.get("port") or 0)), []).append(j)
    out: dict[str, dict[str, Any]] = {}
    raw: dict[str, list[Any]] = {}
    for h in hosts:
        jobs = by_addr.get((h.address, h.port))
        if jobs is None:       # a name fio resolved: match by name alone when it is the only such entry
            named = [v for (a, _), v in by_addr.items() if a == h.address]
            jobs = named[0] if len(named) == 1 else None
        if jobs:
            out[h.name] = fio.parse_jobs(jobs)
            raw[h.name] = jobs
    return out, raw


def aggregate(parts: dict[str, dict[str, Any]], raw: dict[str, list[Any]]) -> dict[str, Any]:
    """The hosts' results at one point together: counts and rates summed, latency from the merged bins."""
    res: dict[str, Any] = {"error": max((r["error"] for r in parts.values()), default=0)}
    for d in ("read", "write"):
        sides = [r[d] for r in parts.values() if r[d]]
        if not sides:
            res[d] = None
            continue
        res[d] = {"iops": sum(x["iops"] for x in sides), "bw_bytes_per_s": sum(x["bw_bytes_per_s"] for x in sides),
                  "io_bytes": sum(x["io_bytes"] for x in sides), "ios": sum(x["ios"] for x in sides),
                  "lat_us": fio.merged_lat_us([j[d] for jobs in raw.values() for j in jobs])}
    syncs = [j["sync"] for jobs in raw.values() for j in jobs if (j.get("sync") or {}).get("lat_ns", {}).get("N")]
    res["sync"] = ({"ops": sum(int(s["lat_ns"]["N"]) for s in syncs), "lat_us": fio.merged_lat_us(syncs)}
                   if syncs else None)
    res["iops"] = sum(r["iops"] for r in parts.values())
    res["bw_bytes_per_s"] = sum(r["bw_bytes_per_s"] for r in parts.values())
    res["runtime_s"] = max((r["runtime_s"] for r in parts.values()), default=0.0)
    res["cpu_cores"] = sum(r["cpu_cores"] for r in parts.values())
    n = max(1, len(parts))
    res["cpu_usr_pct"] = sum(r["cpu_usr_pct"] for r in parts.values()) / n
    res["cpu_sys_pct"] = sum(r["cpu_sys_pct"] for r in parts.values()) / n
    return res


def _files(job: FioJob) -> set[str]:
    """The files a job makes on its host."""
    if job.filename:
        return set() if job.filename.startswith("/dev/") else set(job.filename.split(":"))
    if job.directory:
        return {f"{job.directory}/" + job.filename_format.replace("$jobname", job.name).replace("$jobnum", str(i))
                for i in range(job.numjobs)}
    return set()


class FleetProber(Prober):
    """The probe's plan with every point run on all hosts at once: `entry` gets the aggregate points, each
    member's target entry its own. A host that stops answering is named and left out from then on; the
    aggregate is then incomplete."""

    def __init__(self, members: list[Member], entry: dict[str, Any], profile: Profile, run_dir: RunDir,
                 save: Callable[[], None], on_point: Callable[[dict[str, Any]], None], max_lat_ms: float,
                 direct: bool, cpus: int, errors: list[dict[str, Any]]):
        super().__init__(members[0].target, entry, profile, run_dir, save, on_point, max_lat_ms, direct, cpus)
        self.members = members
        self.errors = errors

    def live(self) -> list[Member]:
        return [m for m in self.members if m.dropped is None]

    def _for(self, m: Member, job: FioJob) -> FioJob:
        """The template job (on the first member's target) on member m's target."""
        t0, t = self.t, m.target
        if job.filename == t0.data_file:
            job = replace(job, filename=t.data_file)
        if job.directory is not None and job.directory == t0.commit_dir:
            job = replace(job, directory=t.commit_dir, filename_format=t.commit_format)
        return job

    def run_point(self, job: FioJob, test: str, group: str, read_pct: int, **extra: Any) -> dict[str, Any]:
        self.n += 1
        live = self.live()
        if not live:
            raise DbtierError("no host of the fleet answers any more", "check the fio servers and run again")
        raw_name = f"{self.entry['index']:02d}-{self.n:03d}-{job.name}.json"
        raw_path = self.run_dir.raw_path(raw_name)
        argv = ["fio", "--output-format=json+", f"--output={raw_path}"]
        for m in live:
            hj = self._for(m, job)
            if not _files(hj) <= m.files:
                m.files |= _files(hj)
                m.claim_files()
            jf = self.run_dir.raw_path(f"{raw_name[:-5]}.{m.host.address}-{m.host.port}.fio")
            jf.write_text(fio.job_file(hj))
            argv += [f"--client={m.host.client()}", str(jf)]
        executor.require("fio")
        # fio's client dies of SIGPIPE, every host's result with it, when a server goes as the jobs are sent;
        # with the signal ignored it names that host and the others' results stay
        done = executor.run(argv, timeout_s=job.runtime_s + job.ramp_s + 600, ignore_sigpipe=True)
        text = raw_path.read_text() if raw_path.exists() else ""
        try:
            parts, raw = parse_client(text, [m.host for m in live], str(raw_path))
        except DbtierError:
            parts, raw = {}, {}
        for m in live:
            r = parts.get(m.host.name)
            if r is None or r["error"]:
                why = _why(m.host, done.stdout + "\n" + done.stderr + "\n" + text, r)
                self._drop(m, why)
        answered = [m for m in live if m.dropped is None]
        if not answered:
            raise DbtierError(f"no host answered {job.name}: " + "; ".join(f"{m.host.name}: {m.dropped}" for m in live),
                              "check that `fio --server` runs on each host and the targets are writable")
        for m in answered:
            hp = self.point(self._for(m, job), parts[m.host.name], test, group, read_pct, raw_name, **extra)
            m.tentry["points"].append(hp)
        res = aggregate({m.host.name: parts[m.host.name] for m in answered},
                        {m.host.name: raw[m.host.name] for m in answered})
        point = self.point(job, res, test, group, read_pct, raw_name, **extra)
        point["hosts"] = len(answered)
        point["host_names"] = [m.host.name for m in answered]
        self.entry["points"].append(point)
        self.save()
        self.on_point(point)
        return point

    def _drop(self, m: Member, why: str) -> None:
        m.dropped = why
        m.entry["status"] = "dropped"
        m.tentry["status"] = "dropped"
        self.entry["complete"] = False
        self.errors.append({"host": m.host.name, "message": f"{m.host.name}: {why}",
                            "hint": "the other hosts' points are kept; the aggregate is marked incomplete"})

    def commit(self) -> dict[str, Any]:
        agg = super().commit()
        for m in self.live():
            pts = {(p["test"], p["jobs"]): p for p in m.tentry["points"] if p["test"] in (COMMIT, COMMIT_NOSYNC)}
            if (COMMIT, 1) in pts and (COMMIT_NOSYNC, 1) in pts:
                m.tentry["fsync_honesty"] = honesty(pts[(COMMIT, 1)], pts[(COMMIT_NOSYNC, 1)], m.target)
        return agg


@dataclass(frozen=True)
class FleetRequest:
    """What `probe` runs on a fleet's members: the profile's plan (`tests`) on every host at once and, with
    `hosts_step`, the 4 KiB random read at the aggregate's peak on 1, 2, 4, ... N hosts."""
    profile: Profile
    tests: tuple[str, ...]
    max_lat_ms: float
    direct: bool
    hosts_step: bool
    cpus: int


def probe(req: FleetRequest, members: list[Member], agg: dict[str, Any], run_dir: RunDir, save: Callable[[], None],
          on_point: Callable[[dict[str, Any]], None], errors: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The plan on all members at once: `agg` gets the aggregate points, each member's target entry its own
    (with its summary, spread and knee, and `ok` unless dropped, also when the plan fails); `errors` the hosts
    dropped. Returns the scaling steps and their verdict: None without hosts_step, the random tests or a
    second host still answering."""
    fp = FleetProber(members, agg, req.profile, run_dir, save, on_point, req.max_lat_ms, req.direct, req.cpus, errors)
    try:
        probe_target(members[0].target, agg, req.profile, run_dir, save, on_point, tests=req.tests,
                     max_lat_ms=req.max_lat_ms, direct=req.direct, prober=fp)
        if req.hosts_step and RANDOM in req.tests and len(fp.live()) > 1:
            return scaling(fp, agg)
        return None
    finally:
        for m in members:
            te = m.tentry
            te["summary"] = summarize(te["points"], te.get("fsync_honesty"))
            te["spread"] = spreads(te["points"])
            te["knee"] = knees(te["points"])
            if m.dropped is None:
                te["status"] = m.entry["status"] = "ok"


def scaling(fp: FleetProber, agg: dict[str, Any]) -> dict[str, Any]:
    """The 4 KiB random read at the aggregate's peak load with 1, 2, 4, ... N hosts: how the shared storage
    scales, and the host count where each host's p99 or IOPS degrades (measure/scaling.py)."""
    best = scale.peak_load([p for p in agg["points"] if p["test"] == READ_4K])
    live = fp.live()
    steps = []
    members = fp.members
    for k in scale.host_counts(len(live)):
        fp.members = live[:k]
        try:
            job = fp.job(f"scale-{READ_4K}-h{k}", rw="randread", bs_bytes=4096, iodepth=best["iodepth"],
                         numjobs=best["jobs"])
            p = fp.measure(job, READ_4K, "scaling", 100, phase="scaling")
        finally:
            fp.members = members
        # the step's points are its own, not the plan's: out of the curves and summaries
        agg["points"].remove(p)
        per_host = [m.tentry["points"].pop() for m in live[:k] if m.dropped is None]
        steps.append(scale.step(p, per_host))
    return {"test": READ_4K, "jobs": best["jobs"], "iodepth": best["iodepth"], "steps": steps,
            **scale.verdict(steps)}


def _why(host: Host, text: str, res: dict[str, Any] | None) -> str:
    """What fio said about a host that gave no result (or an error)."""
    low = text.lower()
    for line in text.splitlines():
        if host.address in line and ("disconnect" in line or "connect" in line or "fail" in line.lower()):
            return f"fio: {line.strip()}"
    if res is not None and res["error"]:
        if res["error"] == 28:
            return "its target filled up (no space left on device)"
        return f"fio reported error {res['error']} ({os.strerror(res['error'])})"
    if "connection refused" in low:
        return "connection refused (is `fio --server` running there?)"
    return "it gave no result"


def _unlink_on(host: Host, files: set[str], run_dir: RunDir | None, tag: str = "cleanup") -> bool:
    """An fio job with unlink=1 over `files` on `host` (fio's protocol carries no other file operation)."""
    job = FioJob(name="dbtier-cleanup", rw="read", bs_bytes=4096, size_bytes=4096,
                 filename=":".join(sorted(files)), time_based=False, ramp_s=0, direct=False,
                 ioengine="psync", extra=(("unlink", "1"),))
    jf = (run_dir.raw_path(f"{tag}.{host.address}-{host.port}.fio") if run_dir is not None
          else Path(os.devnull))
    try:
        if run_dir is not None:
            jf.write_text(fio.job_file(job))
            done = executor.run(["fio", f"--client={host.client()}", str(jf)], timeout_s=120)
        else:
            import tempfile
            with tempfile.NamedTemporaryFile("w", prefix="dbtier-cleanup-", suffix=".fio") as f:
                f.write(fio.job_file(job))
                f.flush()
                done = executor.run(["fio", f"--client={host.client()}", f.name], timeout_s=120)
        return done.returncode == 0
    except (OSError, executor.TimedOut):
        return False


def cleanup(members: list[Member], run_dir: RunDir | None) -> list[str]:
    """Remove what dbtier made: local targets' work directories; on other hosts an fio job with unlink=1 over
    the files made there. Returns what could not be removed (named in the document)."""
    left: list[str] = []
    for m in members:
        if m.local:
            m.target.cleanup()
            continue
        if not m.files:
            continue
        if m.dropped is not None:
            left += [f"{m.host.name}:{f}" for f in sorted(m.files)]
            continue
        if _unlink_on(m.host, m.files, run_dir):
            if m.claim is not None:
                m.claim.release()
        else:
            left += [f"{m.host.name}:{f}" for f in sorted(m.files)]
    return left


def remove_dead_remote(hosts: list[Host]) -> list[str]:
    """The test files an earlier fleet probe made on these hosts and did not remove because its dbtier died
    (the registry names them): removed now, each host's at once. Returns what was removed."""
    done: list[str] = []
    # looked up by a registry entry's address and port: JSON values, of any type
    wanted: dict[tuple[object, object], Host] = {(h.address, h.port): h for h in hosts}
    for path, doc in debris.entries():
        owner = Owner.from_dict(doc.get("owner"))
        what = dict_at(doc, "what")
        remote = [r for r in what.get("remote") or [] if isinstance(r, dict)]
        if owner is None or not remote or alive(owner) is not False:
            continue
        rest = []
        for r in remote:
            h = wanted.get((r.get("address"), r.get("port")))
            files = {str(f) for f in r.get("paths") or []}
            if h is None or not files:
                rest.append(r)
            elif _unlink_on(h, files, None):
                done += [f"{h.name}:{f}" for f in sorted(files)]
            else:
                rest.append(r)
        try:
            if rest:
                doc["what"]["remote"] = rest
                path.write_text(json.dumps(doc))
            else:
                path.unlink()
        except OSError:
            pass
    return done


# ---------------------------------------------------------------- the library call


@dataclass(frozen=True, kw_only=True)
class ProbeFleetRequest:
    """`dbtier probe --hosts`: `profile`'s tests (those of `tests`) on every host of `hosts` at once, each
    against its target in `paths` (host name -> path), each random sweep stopped past `max_lat_ms` at p99;
    direct I/O unless `direct` is False; `margin_pct` and `size` as for the local probe; a raw device written
    only with `destroy_data` (and only on a host of this machine); `hosts_step`: the 4 KiB random read at the
    peak also on 1, 2, 4, ... N hosts; `hosts_remote`: none of the local checks, even on loopback; `trust`:
    the networks (as given) whose hosts may be sent fio jobs without a warning."""
    hosts: tuple[Host, ...]
    paths: Mapping[str, str]
    profile: Profile
    tests: tuple[str, ...]
    max_lat_ms: float = 50.0
    margin_pct: float = 10.0
    size: int | None = None
    direct: bool = True
    destroy_data: bool = False
    hosts_step: bool = False
    hosts_remote: bool = False
    trust: tuple[str, ...] = ()

    @classmethod
    def checked(cls, *, hosts: str, targets: Sequence[str], trust: Sequence[str] = (), fill: bool = False,
                devices: Sequence[str] = (), profile: Profile, tests: tuple[str, ...], max_lat_ms: float = 50.0,
                margin_pct: float = 10.0, size: int | None = None, direct: bool = True, destroy_data: bool = False,
                hosts_step: bool = False, hosts_remote: bool = False) -> ProbeFleetRequest:
        """The request from the options' text: HOSTS (a comma list or a file of them, `parse_hosts`), the
        TARGET items (`target_paths`) and --trust's networks; what the local probe takes and a fleet cannot
        (`fill`, raw `devices` given apart from the targets) refused, and fio required, before any of it."""
        if fill:
            raise DbtierError("--fill with --hosts: filling needs each host's free space, which fio cannot report",
                              "run `dbtier probe --fill` on the host itself")
        if devices:
            raise DbtierError("--device with --hosts: give the device as the target (e.g. db1=/dev/nvme1n1)",
                              "with --destroy-data; only on a host of this machine, where it can be checked blank")
        executor.require("fio")
        parsed = parse_hosts(hosts)
        trust_networks(trust)
        paths = target_paths(parsed, targets)
        return cls(hosts=tuple(parsed), paths=paths, profile=profile, tests=tests, max_lat_ms=max_lat_ms,
                   margin_pct=margin_pct, size=size, direct=direct, destroy_data=destroy_data,
                   hosts_step=hosts_step, hosts_remote=hosts_remote, trust=tuple(trust))


@dataclass(frozen=True, kw_only=True)
class ProbeFleet(Result):
    """`run`'s answer: the document's section (`hosts`, each with its target entry; `aggregate`, the hosts'
    points together; `targets`, the aggregate alone; `fleet`: the warnings, the files left behind and the
    scaling steps), how the run ended (`status`: ok, or failed when the plan failed or a host was dropped)
    and the document's errors ({message, hint}, with `host` for a host dropped). `warnings`: the hosts off
    loopback and the trusted networks."""
    kind: str = "probe.fleet"
    status: str = "ok"
    errors: tuple[Mapping[str, Any], ...] = ()


# what the caller shows while the fleet runs: a context given the aggregate entry (its `hosts`, its `points`
# so far), in which each aggregate point measured is given as it comes
PointShow = Callable[[dict[str, Any]], None]
FleetShow = Callable[[dict[str, Any]], ContextManager[PointShow]]


def run(req: ProbeFleetRequest, start: Callable[[dict[str, Any], list[str]], RunDir],
        save: Callable[[dict[str, Any], list[dict[str, Any]]], None], show: FleetShow,
        warn: Callable[[str], None] = lambda _w: None, note: Callable[[str], None] = lambda _n: None,
        on_error: Callable[[DbtierError], None] = lambda _exc: None) -> ProbeFleet:
    """The request's plan on all its hosts at once. Before anything is made: `warn` told of each host off
    loopback and the trusted networks, the hosts whose fio server does not answer refused, the test files a
    dead dbtier left on these hosts removed (`note` told), each host's target checked where it can be and its
    files made. `start(params, local_paths)` then makes the run's directory (the fio job files and outputs go
    there; `local_paths`: the targets on this machine, for the machine's facts); `save(section, errors)` after
    every point and at the end, with the section so far; a failure of the plan is recorded (`on_error` told)
    and returned; Ctrl-C marks the aggregate interrupted and stops. What dbtier made on the hosts is removed
    whatever happens; what could not be is named in the section."""
    executor.require("fio")
    nets = trust_networks(req.trust)
    hosts = list(req.hosts)
    warnings = [w for w in (untrusted(h, nets) for h in hosts) if w]
    for w in warnings:
        warn(w)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="dbtier-fleet-") as scratch:
        reachable(hosts, scratch)
    swept = remove_dead_remote(hosts)       # what a dbtier that died left on these hosts
    if swept:
        note(f"removed the test files an earlier fleet probe left (its dbtier died): {', '.join(swept)}")
    paths = dict(req.paths)
    profile, direct = req.profile, req.direct
    members = make_members(hosts, paths, profile, req.margin_pct, req.size, not direct, req.destroy_data,
                           req.hosts_remote)
    cpus = os.cpu_count() or 1
    params = {"hosts": [h.name for h in hosts], "paths": paths, "profile": profile.name, "tests": list(req.tests),
              "point_s": profile.point_s, "ramp_s": profile.ramp_s, "max_lat_ms": req.max_lat_ms,
              "margin_pct": req.margin_pct, "direct_io": direct, "fill": False,
              "hosts_step": req.hosts_step, "trust": list(req.trust), "hosts_remote": req.hosts_remote,
              "load_levels": [list(x) for x in load_levels(profile.max_outstanding, cpus)],
              "engine": "fio client/server", "latency": "fio lat_ns: submission to completion; the aggregate's "
              "percentiles from the hosts' latency bins merged (json+)",
              "commit_pattern": "8 KiB buffered write + fdatasync per write, psync engine, preallocated file"}
    try:
        run_dir = start(params, [m.target.path for m in members if m.local])
    except BaseException:
        cleanup(members, None)
        raise
    agg: dict[str, Any] = {"path": f"{len(members)} hosts at once", "kind": "fleet", "index": 0,
                           "status": "running", "direct_io": direct,
                           "file_bytes": members[0].target.file_bytes, "filesystem": None, "points": [],
                           "summary": None, "steady_state": None, "fill": None, "fsync_honesty": None,
                           "hosts": len(members), "complete": True}
    for m in members:
        m.entry["targets"].append({"path": m.target.path, "kind": m.target.kind, "index": 0, "status": "running",
                                   "direct_io": direct, "file_bytes": m.target.file_bytes,
                                   "filesystem": m.target.filesystem, "points": [], "summary": None,
                                   "steady_state": None, "fill": None, "fsync_honesty": None})
    fl: dict[str, Any] = {"warnings": warnings, "left_behind": [], "scaling": None}
    # `targets`: what show, report and `plan value` read of a probe: the aggregate
    section: dict[str, Any] = {"hosts": [m.entry for m in members], "aggregate": agg, "targets": [agg], "fleet": fl}
    errors: list[dict[str, Any]] = []
    status = "ok"
    try:
        with show(agg) as on_point:
            freq = FleetRequest(profile, req.tests, req.max_lat_ms, direct, req.hosts_step, cpus)
            fl["scaling"] = probe(freq, members, agg, run_dir, lambda: save(section, errors), on_point, errors)
        agg["status"] = "ok" if agg["complete"] else "incomplete"
        if not agg["complete"]:
            status = "failed"
    except DbtierError as exc:
        agg["status"] = "failed"
        errors.append({"message": exc.message, "hint": exc.hint})
        status = "failed"
        on_error(exc)
    except BaseException as exc:
        agg["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        raise
    finally:
        fl["left_behind"] = cleanup(members, run_dir)
        save(section, errors)
    return ProbeFleet(section=Frozen(section), status=status, errors=tuple(Frozen(e) for e in errors),
                      warnings=tuple(warnings))
