"""`dbtier` entry point: one module per subcommand, each with register() and run()."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import threading
import sys
import tempfile
import traceback
from typing import Any

from dbtier import __version__
from dbtier.cli.options import Parser
from dbtier.core.errors import DbtierError

# Each subcommand, in help order: its module (command_module: register() and run()) and its line in
# `dbtier --help`, the same words as its register() gives (tests/unit/test_cli_lazy_parser.py compares them).
SUBCOMMANDS = {
    "advise": "from a database's history to where it should live and what it costs, on-prem and on each cloud",
    "lab": "the whole study: probe, OLTP, DSS, backup, plan, report",
    "probe": "characterise storage: IOPS/latency vs load, MB/s, commit latency, fsync honesty",
    "bench": "run database workloads on chosen storage",
    "report": "write a self-contained HTML report of one or more runs",
    "show": "print a run's summary as tables",
    "compare": "two runs of the same command side by side, with differences and ratios",
    "catalog": "list and show the device catalog (figures, prices and their sources)",
    "plan": "device arrays from the catalog: equal performance, equal budget, the cheapest configuration for a "
            "requirement, price/performance of a run",
    "history": "IOPS and MB/s requirements from databases' own I/O history",
    "simulate": "replay block I/O traces through tier designs (flash cache, mirror)",
    "export": "runs out to Prometheus: metrics, a Pushgateway, a textfile, a backfill",
    "cleanup": "remove what dbtier processes that died left behind",
    "runs": "every run as one table; sql, trend and check over them",
}


# The subcommands with a package of their own under dbtier.cli: register() and run() are in its command.py.
FAMILIES = frozenset({"probe", "bench", "plan", "history", "runs", "simulate"})


def command_module(name: str) -> str:
    """The module of subcommand `name`: register() and run()."""
    return f"dbtier.cli.{name}.command" if name in FAMILIES else f"dbtier.cli.{name}"


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given the command line, only what it needs: its subcommand's parser, or where it
    names none (--version, --help, a mistyped name) each subcommand's name and help line alone. A
    subcommand's module loads what it runs on (DuckDB, numpy, numba, rich): importing them all cost
    0.4 s and 110 MiB before `dbtier --version` could answer. The parse and its messages are the same."""
    parser = Parser(  # dbtier's error format for option errors too
        prog="dbtier",
        description="Where should this database live, and what will that cost?",
    )
    parser.add_argument("--version", action="version", version=f"dbtier {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if argv is None:
        for name in SUBCOMMANDS:
            importlib.import_module(command_module(name)).register(sub)
        return parser
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in SUBCOMMANDS:
        importlib.import_module(command_module(first)).register(sub)
    else:
        for name, summary in SUBCOMMANDS.items():
            sub.add_parser(name, help=summary)
    return parser


# Signals received during this command. An exception raised by a handler while C code runs a Python
# callback is printed and dropped by ctypes, and the command would go on to a normal end: main() raises
# it again then.
_received: list[int] = []

# Numba compiling a kernel or writing it to its cache (a first run) is not interrupted: an exception raised
# there is dropped by llvmlite's ctypes callback and leaves the kernel half-built (numba's "no compiled
# object yet", or a crash at exit). The signal is delivered again once that code has returned.
_COMPILER = ("numba", "llvmlite")
REDELIVER_S = 0.05
_redeliveries: list[threading.Timer] = []
_settled = [False]      # the command has ended: a late redelivery is only recorded


def _in_compiler(frame) -> bool:
    while frame is not None:
        if frame.f_globals.get("__name__", "").partition(".")[0] in _COMPILER:
            return True
        frame = frame.f_back
    return False


def _interrupt(signum: int, frame, exc: type[BaseException]) -> None:
    _received.append(signum)
    if _settled[0]:
        return
    if _in_compiler(frame):
        again = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), signum))
        again.daemon = True
        _redeliveries.append(again)
        again.start()
        return
    raise exc


def _sigterm(signum, frame):  # SIGTERM cleans up like Ctrl-C
    from dbtier.cli.common import Terminated
    _interrupt(signum, frame, Terminated)


def _sigint(signum, frame):
    _interrupt(signum, frame, KeyboardInterrupt)


def _settle() -> None:
    """The command has ended: no more redeliveries, and one already sent is not raised."""
    _settled[0] = True
    for t in _redeliveries:
        t.cancel()
    _redeliveries.clear()


def _unraisable(u: "sys.UnraisableHookArgs") -> None:
    """Quiet about the interrupt a C callback swallowed (main() raises it again); anything else as Python would."""
    if isinstance(u.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(u)


def _swallowed_interrupt() -> None:
    """Raise the interrupt a C callback swallowed, if one did."""
    from dbtier.cli.common import Terminated
    if _received:
        raise Terminated if _received[-1] == signal.SIGTERM else KeyboardInterrupt


# Exit codes: a DbtierError its own (2 by default), an interrupt 130, a bug 70 (EX_SOFTWARE), a closed pipe 141.
EXIT_BUG = 70


def _report_bug(exc: BaseException) -> None:
    """One line naming the error and where its traceback is (DBTIER_DEBUG=1: the traceback too)."""
    from dbtier.cli.common import describe_bug
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    path = getattr(exc, "dbtier_traceback", None)
    if path is None:
        try:
            fd, name = tempfile.mkstemp(prefix="dbtier-traceback-", suffix=".txt")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            path = name
        except OSError:
            path = None
    where = f"the traceback is in {path}" if path else "the traceback could not be saved"
    print(f"dbtier: error: {describe_bug(exc)} — this is a bug; {where}", file=sys.stderr)
    if os.environ.get("DBTIER_DEBUG", "") not in ("", "0"):
        sys.stderr.write(text)


def main(argv: list[str] | None = None) -> int:
    saved = {signal.SIGTERM: signal.signal(signal.SIGTERM, _sigterm)}
    # Ctrl-C always interrupts cleanly, even when started from a shell that ignores SIGINT for
    # background jobs (Python then would not raise KeyboardInterrupt, and the cleanup would not run).
    if threading.current_thread() is threading.main_thread():
        saved[signal.SIGINT] = signal.signal(signal.SIGINT, _sigint)
    sys.unraisablehook = _unraisable
    try:
        return _main(argv)
    finally:                    # the handlers are the command's: a caller in the same process gets its own back
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _reap_before(args: Any) -> None:
    """What an earlier dbtier left when it died (a SIGKILL, the OOM killer) is removed before this command
    makes anything, and said; `dbtier cleanup` does it on its own. The watchdog is wired in here."""
    from dbtier.core import debris
    from dbtier.measure import watchdog
    debris.on_claim = watchdog.ensure
    if getattr(args, "command", None) == "cleanup":
        return
    from dbtier.measure.reap import reap
    try:
        done = reap()
    except OSError:
        return
    lines = [x for e in done["removed"] for x in e["removed"] + e["left"]]
    if lines:
        pids = sorted({e["owner"]["pid"] for e in done["removed"]})
        print(f"dbtier: removed what an earlier dbtier left when it died (pid {', '.join(map(str, pids))}): "
              + "; ".join(lines), file=sys.stderr)


def _main(argv: list[str] | None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if argv is None:    # the process's own command: the modules' objects, frozen, are no longer walked by the
        gc.freeze()     # collector (0.3 s of a short run); a caller's objects in the same process are not frozen
        gc.enable()     # off while they loaded (cli/entry.py)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from dbtier.cli.common import check_out_early, lifecycle
    _settled[0] = False
    try:
        try:
            with lifecycle() as runs:
                check_out_early(args)
                _reap_before(args)
                _received.clear()
                code = int(args.func(args) or 0)
                if code == 0:
                    _swallowed_interrupt()
                runs.failed = code != 0
            return code
        finally:
            _settle()
    except DbtierError as exc:
        print(f"dbtier: error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  next: {exc.hint}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("dbtier: interrupted; finished steps are kept in the run directory", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 141
    except Exception as exc:  # noqa: BLE001 - anything else is a bug: one line, the traceback saved
        from dbtier.core.files import full_error, full_path, is_full
        if isinstance(exc, OSError) and is_full(exc):   # a full filesystem is the machine's state, not a bug
            err = full_error(full_path(exc), None, "its results")
            print(f"dbtier: error: {err.message}\n  next: {err.hint}", file=sys.stderr)
            return err.exit_code
        _report_bug(exc)
        return EXIT_BUG
