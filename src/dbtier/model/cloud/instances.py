"""Instances from `aws ec2 describe-instance-types --output json`, so a user can bring current EBS caps
instead of the shipped table's (catalog/instances.toml), and the instance-store option of an instance.

Pure: the text of the file in, `Instance`s out. What is read, per instance type:
  EbsInfo.EbsOptimizedInfo.BaselineIops / MaximumIops                      -> baseline_iops / max_iops
  EbsInfo.EbsOptimizedInfo.BaselineThroughputInMBps / MaximumThroughputInMBps -> MB/s (10^6 B/s)
  VCpuInfo.DefaultVCpus, MemoryInfo.SizeInMiB                               -> vcpus, memory_gib
  InstanceStorageInfo.TotalSizeInGB                                        -> local_nvme_gb
A maximum above the baseline is AWS's "30 minutes at least once every 24 hours" burst. An instance type
without EbsOptimizedInfo (t2, older families) has no published EBS caps: left out and named. The API
gives no price and no instance-store IOPS: those stay unknown (said in each entry's `source`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import Instance
from dbtier.core.parts import dict_at

_SHAPE = ("the JSON that `aws ec2 describe-instance-types --output json` prints: {\"InstanceTypes\": [{\"InstanceType\": "
          "..., \"EbsInfo\": {\"EbsOptimizedInfo\": {...}}}, ...]}")


def _number(v: Any) -> float | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    return float(v) if ok else None


def parse_describe_instance_types(text: str, origin: str, as_of: str) -> tuple[dict[str, Instance], list[str]]:
    """({name: Instance}, notes on what was left out). `as_of`: when the figures were fetched (the file's
    date: the API does not say)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DbtierError(f"{origin}: not JSON ({str(exc)[:80]})", f"give {_SHAPE}") from None
    items = data.get("InstanceTypes") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        raise DbtierError(f"{origin}: no InstanceTypes list in it", f"give {_SHAPE}")
    out: dict[str, Instance] = {}
    skipped: list[str] = []
    for n, it in enumerate(items, 1):
        name = it.get("InstanceType")
        if not isinstance(name, str) or not name.strip():
            raise DbtierError(f"{origin}: entry #{n} has no InstanceType", f"give {_SHAPE}")
        ebs = ((it.get("EbsInfo") or {}).get("EbsOptimizedInfo") or {}) if isinstance(it.get("EbsInfo"), dict) else {}
        figs = {k: _number(ebs.get(k)) for k in ("BaselineIops", "MaximumIops", "BaselineThroughputInMBps",
                                                 "MaximumThroughputInMBps")}
        if any(v is None for v in figs.values()):
            skipped.append(name)
            continue
        b_io, m_io = figs["BaselineIops"], figs["MaximumIops"]
        b_tp, m_tp = figs["BaselineThroughputInMBps"], figs["MaximumThroughputInMBps"]
        if m_io < b_io or m_tp < b_tp:       # type: ignore[operator]
            raise DbtierError(f"{origin}: {name}: its maximum EBS figures are below its baseline ones",
                              "export the file again; the API never gives that")
        store = dict_at(it, "InstanceStorageInfo")
        mem = _number((it.get("MemoryInfo") or {}).get("SizeInMiB")) if isinstance(it.get("MemoryInfo"), dict) else None
        vcpus = _number((it.get("VCpuInfo") or {}).get("DefaultVCpus")) if isinstance(it.get("VCpuInfo"), dict) else None
        local = _number(store.get("TotalSizeInGB"))
        out[name] = Instance(
            provider="aws", name=name, family=name.split(".")[0], baseline_iops=b_io, max_iops=m_io,   # type: ignore[arg-type]
            baseline_throughput=b_tp, max_throughput=m_tp, throughput_unit="MB/s",                      # type: ignore[arg-type]
            burst="aws-instance-30min" if (m_io > b_io or m_tp > b_tp) else "none",                     # type: ignore[operator]
            vcpus=int(vcpus) if vcpus else None, memory_gib=mem / 1024 if mem else None, local_nvme_gb=local,
            source=f"{origin}: `aws ec2 describe-instance-types` EbsOptimizedInfo (IOPS measured by AWS with 16 KiB "
                   "I/O, MB/s with 128 KiB); no price and no instance-store IOPS in the API",
            as_of=as_of)
    if not out:
        raise DbtierError(f"{origin}: none of its {len(items)} instance types has EBS-optimized caps "
                          f"({', '.join(skipped[:5])})", "export instance types that are EBS-optimized (m6i, r6i, ...)")
    notes = [f"{len(skipped)} instance type(s) without EbsOptimizedInfo left out: {', '.join(skipped[:10])}"] if skipped \
        else []
    return out, notes
