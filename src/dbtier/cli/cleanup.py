"""`dbtier cleanup [--dry-run]`: list or remove what dead dbtier processes left on this machine.

Thin: the registry (dbtier.core.debris) says what each dbtier process made; `dbtier.measure.reap` undoes
the entries whose process is gone (`cleanup`, the command's library call). Nothing without a registry entry
(and, for a directory, a marker naming the same owner) is touched, nor anything of a dbtier process still
running.
"""

from __future__ import annotations

import argparse

from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.measure.reap import cleanup


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cleanup", help="remove what dbtier processes that died left behind",
                       description="List (--dry-run) or remove every test file, throw-away server, cgroup, loop "
                                   "device, mount, throttle line and working directory that a dbtier process made "
                                   "and did not remove because it died (SIGKILL, the OOM killer); mark its runs "
                                   "abandoned. Things of dbtier processes still running are never touched.")
    p.add_argument("--dry-run", action="store_true", help="list what would be removed; change nothing")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    res = cleanup(dry_run=args.dry_run)
    r = Run("cleanup", args, {"dry_run": args.dry_run})
    r.doc.update(res.to_json())
    r.finish()

    def render() -> None:
        con = console(args)
        if not res.removed and not res.damaged:
            con.print(f"nothing left behind by a dead dbtier process ({res.live} entries of running ones; "
                      f"registry {esc(res.registry)})")
        for e in res.removed:
            con.print(f"[bold]{esc(str(e['kind']))}[/bold] of pid {e['owner']['pid']} (dead):", highlight=False)
            for line in e["removed"]:
                con.print(f"  {esc(line)}", highlight=False)
            for line in e["left"]:
                con.print(f"  [yellow]left: {esc(line)}[/yellow]", highlight=False)
        for d in res.damaged:
            con.print(f"[yellow]damaged registry entry {'(kept)' if args.dry_run else 'removed'}: {esc(d)}[/yellow]")
        if res.live:
            con.print(f"[dim]{res.live} entries belong to dbtier processes still running: left alone[/dim]")
        con.print(f"[dim]Run: {esc(str(r.dir.path)) if r.dir else '-'}[/dim]")
    emit(r.doc, args, render)
    return 0
