"""Durable writes: which devices keep an acknowledged write through a power loss, and what the others cost.

Pure: catalog devices, the policy and (optionally) a probe's commit figures in, judgements out.

A durable database (PostgreSQL with fsync on, InnoDB with innodb_flush_log_at_trx_commit=1, Oracle)
makes every commit wait until the storage says the data is durable. A device with power-loss
protection (capacitors or NVRAM behind its write cache; a protected HDD cache) says so as soon as
the write is in its cache. One without it says so only after a cache flush, so its random writes
run at the flush-bound rate (`flush_write_iops`: every write waits for a flush), far below its
datasheet figure. Cloud volumes acknowledge a write once the provider has stored it redundantly.

Policy `required` (the default whenever the requirement has writes) keeps protected devices at their
figures; an unprotected one is sized on its flush-bound write rate (the catalog's, or this machine's
probe: one writer's write + fdatasync rate, when the probe found fsync honest), or dropped when
neither is known. A device whose entry does not say is kept and named unchecked. Policy `no` is
for a temp or scratch tier whose contents are rebuilt after a crash (DSS temp, tempdb).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbtier.core.errors import DbtierError

from dbtier.model.plan.catalog import Device

POLICIES = ("required", "no")


@dataclass(frozen=True)
class ProbeFlush:
    """This machine's measured commit rate (one writer, 8 KiB write + fdatasync) and the fsync verdict."""
    run_dir: str
    commits_per_s: float | None
    commit_lat_us_p50: float | None
    honest: bool | None               # None: the probe did not judge it
    reason: str

    @property
    def usable(self) -> bool:
        return bool(self.honest) and bool(self.commits_per_s)

    def to_dict(self) -> dict[str, Any]:
        return {"run_dir": self.run_dir, "commits_per_s": self.commits_per_s,
                "commit_lat_us_p50": self.commit_lat_us_p50, "fsync_honest": self.honest, "reason": self.reason,
                "used": self.usable}


def probe_flush(doc: dict[str, Any], run_dir: str) -> ProbeFlush:
    """The commit figures of a `dbtier probe` run's first target."""
    targets = doc.get("targets")
    if doc.get("command") not in ("probe", None) or not isinstance(targets, list) or not targets \
            or not isinstance(targets[0], dict) or not isinstance(targets[0].get("summary"), dict):
        raise DbtierError(f"--probe {run_dir}: not a `dbtier probe` run (no targets[0].summary)",
                          "pass a run directory written by `dbtier probe` (with its commit test)")
    s = targets[0]["summary"]
    verdict = s.get("fsync_honesty")
    rate = s.get("commits_per_s")
    lat = s.get("commit_lat_us_p50")

    def ok_num(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0

    if not ok_num(rate):
        raise DbtierError(f"--probe {run_dir}: the probe measured no commit rate (summary.commits_per_s)",
                          "run `dbtier probe PATH --only commit` and pass that run")
    honest = None if verdict is None else verdict == "ok"
    reason = s.get("fsync_honesty_reason") or ("fsync honesty was not judged" if verdict is None else verdict)
    return ProbeFlush(run_dir, float(rate), float(lat) if ok_num(lat) else None, honest, str(reason))


def check_policy(policy: str | None) -> None:
    if policy is not None and policy not in POLICIES:
        raise DbtierError(f"--durable-writes must be 'required' or 'no', got '{policy}'",
                          "required keeps writes safe at power loss; no is for a temp or scratch tier")


def policy_for(policy: str | None, has_writes: bool) -> tuple[bool, str]:
    """(durable writes required?, why) for `--durable-writes` (None: the default)."""
    check_policy(policy)
    if policy == "no":
        return False, ("--durable-writes no: a temp or scratch tier whose contents are rebuilt after a crash; "
                       "devices without power-loss protection are taken at their figures")
    if policy == "required":
        return True, "--durable-writes required"
    if has_writes:
        return True, "the requirement has writes, so they must survive a power loss (the default)"
    return False, "the requirement has no writes: nothing to protect"


def protection(d: Device) -> tuple[bool | None, str]:
    """(protected?, why): does an acknowledged write on `d` survive a power loss without a flush?"""
    if d.kind == "cloud-volume":
        return True, "the provider acknowledges a write once it is stored redundantly"
    if d.power_loss_protection is None:
        return None, f"{d.id}: the catalog does not say whether its write cache is protected (power_loss_protection)"
    if d.power_loss_protection:
        what = {"hdd": "a protected write cache", "shared-array": "an NVRAM-protected write cache"}.get(
            d.kind, "power-loss protection")
        return True, f"{d.id} has {what}"
    return False, f"{d.id} has no power-loss protection: a durable write waits for a cache flush"


@dataclass(frozen=True)
class Durable:
    """One device under the policy: kept (with the write IOPS it is sized on) or dropped."""
    device: Device
    protected: bool | None
    reason: str
    kept: bool
    flush_write_iops: float | None = None    # the flush-bound write rate it is sized on (unprotected, required)
    flush_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"protected": self.protected, "reason": self.reason,
                **({"flush_write_iops": self.flush_write_iops, "flush_source": self.flush_source}
                   if self.flush_write_iops is not None else {})}


def judge(d: Device, required: bool, probe: ProbeFlush | None = None) -> Durable:
    prot, why = protection(d)
    if not required or prot:
        return Durable(d, prot, why if required else f"{why}; durable writes not required", True)
    if prot is None:
        return Durable(d, None, why + ": unchecked for durable writes", True)
    if d.flush_write_iops is not None:
        return Durable(d, False, f"{why}: sized on its flush-bound {d.flush_write_iops:,.0f} write IOPS (catalog)",
                       True, d.flush_write_iops, "catalog flush_write_iops")
    if probe is not None and probe.usable:
        assert probe.commits_per_s is not None
        return Durable(d, False, f"{why}: sized on this machine's measured {probe.commits_per_s:,.0f} durable "
                                 f"commits/s (probe {probe.run_dir}, one writer, fsync honest)",
                       True, probe.commits_per_s, f"probe {probe.run_dir}")
    return Durable(d, False, f"{why}, and its flush-bound write rate is unknown (no flush_write_iops"
                             + (", and the probe's fsync was not found honest" if probe is not None else "")
                             + "): dropped", False)
