"""Where each placed part of an OLTP or DSS run went, as show, compare, the report and the verdict say it:
its directory, device, filesystem and mount (the document's `placement_where`; an older document's from
`placement` and the machine's record of the directories), and which parts a run (or a comparison of two)
separates yet leaves on one device -- there the figures cannot show what separating them does."""

from __future__ import annotations

import os
from typing import Any

from dbtier.report.figures.core import dicts, get, machine_target
from dbtier.core.parts import dict_at

# The words for each role, in the order they are listed.
ROLE_WORDS = {"data": "data", "index": "indexes", "wal": "WAL", "redo": "redo", "undo": "undo", "binlog": "binlog",
              "temp": "temp"}


def role_word(role: str) -> str:
    return ROLE_WORDS.get(role, role)


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _resolved(doc: dict[str, Any], path: str) -> str:
    """An older DSS document's placement is relative to where dbtier ran: resolved against the machine
    target whose last component it starts with."""
    if os.path.isabs(path):
        return path
    head = path.split("/", 1)[0]
    for t in dicts(get(doc, "machine", "targets")):
        p = t.get("path")
        if isinstance(p, str) and os.path.basename(p.rstrip("/")) == head:
            return os.path.join(os.path.dirname(p.rstrip("/")), path)
    return path


def where(doc: dict[str, Any], step: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """{role: {dir, device, fs, mount}} of a run (or of one placement-matrix step), in ROLE_WORDS' order;
    {} when nothing was placed (a failed run)."""
    src = step if isinstance(step, dict) else doc
    rec = src.get("placement_where")
    pl = src.get("placement")
    if isinstance(rec, dict) and rec:
        out = {r: dict(v) for r, v in rec.items() if isinstance(v, dict)}
    elif isinstance(pl, dict):
        emu = dict_at(doc, "emulated")
        out = {}
        for role, d in pl.items():
            if not isinstance(d, str):
                continue
            path = _resolved(doc, d)
            mount = emu.get("mount")
            if isinstance(mount, str) and mount and (path == mount or path.startswith(mount.rstrip("/") + "/")):
                out[role] = {"dir": path, "device": emu.get("device"), "fs": None, "mount": mount}
                continue
            t = machine_target(doc, path)
            bd = get(t, "block_device") or {}
            dev = (bd.get("disk") or bd.get("name")) if isinstance(bd, dict) else None
            out[role] = {"dir": path, "device": dev, "fs": get(t, "filesystem"), "mount": get(t, "mount_point")}
    else:
        return {}
    order = list(ROLE_WORDS)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def _inside(a: str, b: str) -> bool:
    a, b = os.path.normpath(a), os.path.normpath(b)
    return a == b or a.startswith(b.rstrip("/") + "/")


def separated(a: Any, b: Any) -> bool:
    """Two parts are separated when neither's directory holds the other's (PostgreSQL's default pg_wal
    inside the data directory is not; --place wal=DIR elsewhere is)."""
    return isinstance(a, str) and isinstance(b, str) and not _inside(a, b) and not _inside(b, a)


def _dir_of(part: dict[str, Any]) -> str | None:
    """The directory a part was given: the path up to the first directory dbtier made in it ("dbtier-..."),
    so that --place wal=DIR with DIR also --dir keeps WAL with the data (one directory given), and a DSS
    data file stands for its directory."""
    d = part.get("dir")
    if not isinstance(d, str):
        return None
    comps = d.split("/")
    cut = next((k for k, c in enumerate(comps) if c.startswith("dbtier-")), None)
    if cut is not None:
        return "/".join(comps[:cut]) or "/"
    return os.path.dirname(d) if os.path.splitext(d)[1] in (".duckdb", ".db") else d


def shared_devices(w: dict[str, dict[str, Any]]) -> list[tuple[list[str], str]]:
    """([roles], device) for each device holding two or more parts the run keeps apart (directories
    neither of which holds the other). Parts in one directory tree (indexes and temp inside PostgreSQL's
    data directory) count as one, named by its first role in ROLE_WORDS' order (data before indexes)."""
    by: dict[str, list[str]] = {}
    for role, part in w.items():
        if isinstance(part.get("device"), str) and part["device"]:
            by.setdefault(part["device"], []).append(role)
    out = []
    for dev, roles in by.items():
        groups: list[list[str]] = []
        for r in roles:
            near = [g for g in groups if any(not separated(_dir_of(w[r]), _dir_of(w[o])) for o in g)]
            merged = [r] + [x for g in near for x in g]
            groups = [g for g in groups if g not in near] + [merged]
        if len(groups) >= 2:
            out.append((sorted((min(g, key=_rank) for g in groups), key=_rank), dev))
    return out


def _rank(role: str) -> int:
    order = list(ROLE_WORDS)
    return order.index(role) if role in order else len(order)


def sharing_sentences(w: dict[str, dict[str, Any]], what: str = "this run") -> list[str]:
    """'WAL and data are both on vda: this run cannot show the effect of separating them.' for each device
    that holds parts the run separates (data named last)."""
    out = []
    for roles, dev in shared_devices(w):
        names = [role_word(r) for r in sorted(roles, key=lambda r: (r == "data", _rank(r)))]
        both = "both" if len(names) == 2 else "all"
        out.append(f"{_join(names)} are {both} on {dev}: {what} cannot show the effect of separating them.")
    return out


def part_text(part: dict[str, Any]) -> str:
    """'vda, ext4 on /' (what is known of it)."""
    fs, mount = part.get("fs"), part.get("mount")
    on = " on ".join(str(x) for x in (fs, mount) if x)
    return ", ".join(str(x) for x in (part.get("device"), on) if x) or "device unknown"


def lines(w: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(role in words, directory, 'vda, ext4 on /') for each part."""
    return [(role_word(r), str(p.get("dir")), part_text(p)) for r, p in w.items()]


def comparison_sentences(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> list[str]:
    """What two runs' placements let a comparison say: the parts one run moves to another device than the
    other's, and, where it moves a part away from the others only in its directory (the same device), that
    the comparison cannot show the effect of separating them."""
    wa, wb = where(a), where(b)
    out = []
    moved = [r for r in wa if r in wb and wa[r].get("dir") != wb[r].get("dir")]
    for r in moved:
        da, db = wa[r].get("device"), wb[r].get("device")
        if da and db and da == db:
            out.append(f"{role_word(r)} is on {da} in both runs ({names[0]}: {wa[r].get('dir')}; {names[1]}: "
                       f"{wb[r].get('dir')}): this comparison cannot show the effect of moving it.")
    for name, w in zip(names, (wa, wb)):
        for s in sharing_sentences(w, "this comparison"):
            out.append(f"In {name}, {s[0].lower() + s[1:] if not s[:3].isupper() else s}")
    return [s[0].upper() + s[1:] for s in out]
