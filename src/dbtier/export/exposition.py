"""Metric families out: as text (prometheus_client's own writers, never formatted here), into a
node_exporter textfile directory (atomically), to a Pushgateway (a PUT that replaces its group).

Everything that can be refused is checked before anything is written (`check_textfile_dir`,
`check_push_url`, `grouping_key`), so that a refused export leaves nothing half done.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.error
import urllib.parse
from pathlib import Path
from typing import Any, Iterable

from prometheus_client import CollectorRegistry, generate_latest, push_to_gateway
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from dbtier.core.errors import DbtierError
from dbtier.core.files import write_bytes_atomic

FORMATS = ("prometheus", "openmetrics")
TEXTFILE_NAME = "dbtier.prom"
PUSH_TIMEOUT_S = 10.0
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class _Fixed:
    """A collector that yields the families it was given."""

    def __init__(self, fams: list):
        self.fams = fams

    def collect(self) -> Iterable:
        return iter(self.fams)


def registry(fams: list) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Fixed(fams))
    return reg


def text(fams: list, fmt: str = "prometheus") -> bytes:
    """The Prometheus text format (0.0.4) or OpenMetrics 1.0 (with its `# EOF`)."""
    reg = registry(fams)
    return generate_openmetrics(reg) if fmt == "openmetrics" else generate_latest(reg)


def file_name(fmt: str) -> str:
    return "metrics.om" if fmt == "openmetrics" else "metrics.prom"


# -- the textfile collector -----------------------------------------------------------------------------

def check_textfile_dir(d: str) -> Path:
    """A directory this process can write a file into, or one DbtierError naming it."""
    p = Path(d)
    hint = ("pass node_exporter's --collector.textfile.directory (create it first, writable by this user; "
            "Debian's is /var/lib/prometheus/node-exporter)")
    if not p.exists():
        raise DbtierError(f"--textfile {p}: no such directory", hint)
    if not p.is_dir():
        raise DbtierError(f"--textfile {p}: not a directory", hint)
    if not os.access(p, os.W_OK | os.X_OK):
        raise DbtierError(f"--textfile {p}: not writable by this user", hint)
    return p


def write_textfile(d: Path, data: bytes) -> Path:
    """DIR/dbtier.prom through a temp file in DIR renamed over it: node_exporter reads the old file or the new,
    never part of one (it reads only *.prom, so the temp file is never read)."""
    path = d / TEXTFILE_NAME
    try:
        write_bytes_atomic(path, data, d / f".{TEXTFILE_NAME}.{os.getpid()}.tmp")
    except OSError as exc:
        raise DbtierError(f"--textfile {d}: cannot write {path.name}: {exc.strerror or exc}",
                          "free space there or check its permissions; the old file, if any, is unchanged") from None
    return path


# -- the Pushgateway ------------------------------------------------------------------------------------------

def check_push_url(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise DbtierError(f"--push {url!r}: not an http:// or https:// URL",
                          "pass the Pushgateway's base URL, e.g. --push http://pushgateway:9091")
    try:
        _ = u.port          # reading it checks it
    except ValueError:
        raise DbtierError(f"--push {url!r}: a bad port", "e.g. --push http://pushgateway:9091") from None
    if u.path.rstrip("/").endswith("/metrics") or "/metrics/job" in u.path:
        raise DbtierError(f"--push {url!r}: give the Pushgateway's base URL, without /metrics/job/...",
                          "the group is --group KEY=VALUE (job=dbtier and instance=<this host> by default)")
    return url.rstrip("/")


def grouping_key(groups: list[str], used_labels: set[str]) -> dict[str, str]:
    """{job: dbtier, instance: this host} overridden and extended by --group KEY=VALUE. Never the run id:
    every run would leave a group behind for ever; a re-run replaces its group instead."""
    key = {"job": "dbtier", "instance": socket.gethostname()}
    for g in groups:
        name, eq, value = g.partition("=")
        if not eq or not LABEL_NAME.match(name) or name.startswith("__"):
            raise DbtierError(f"--group {g!r}: not KEY=VALUE with a label name as KEY",
                              "e.g. --group job=dbtier --group scenario=oltp")
        if not value:
            raise DbtierError(f"--group {g!r}: an empty value", "give the label a value, or leave the --group out")
        if name in used_labels:
            raise DbtierError(f"--group {name}: the exported metrics already carry the label {name!r}; the "
                              "Pushgateway would overwrite it", "choose another label name for the group")
        key[name] = value
    return key


def push(url: str, key: dict[str, str], fams: list, kept: str | None = None) -> None:
    """PUT the families to the group `key` (job plus the other labels): the group's earlier metrics go.
    `kept`: where the same text is saved, for the hint (push it again by hand)."""
    rest = {k: v for k, v in key.items() if k != "job"}
    where = url + "/metrics/job/" + key["job"] + "".join(f"/{k}/{v}" for k, v in rest.items())
    again = f"; it is kept in {kept}: `curl -X PUT --data-binary @{kept} {where}` sends it again" if kept else ""
    try:
        push_to_gateway(url, job=key["job"], registry=registry(fams), grouping_key=rest, timeout=PUSH_TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        body = _body(exc)
        raise DbtierError(f"the Pushgateway at {url} refused the push to {where}: HTTP {exc.code} {exc.reason}"
                          + (f": {body}" if body else ""),
                          "check that the URL is a Pushgateway's (and its log)" + again) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        raise DbtierError(f"cannot push to the Pushgateway at {url}: {reason}",
                          f"check that it runs and listens there (curl {url}/-/ready)" + again) from None


def _body(exc: Any) -> str:
    try:
        return exc.read(500).decode("utf-8", "replace").strip().replace("\n", " ")
    except Exception:   # noqa: BLE001 - the status line is enough
        return ""
