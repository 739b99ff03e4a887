"""Options and plumbing every subcommand shares (sqlite-utils style), and the run lifecycle.

Every command: `--json` prints the result document on stdout and keeps the
terminal quiet; `--out DIR` names the run directory (default
runs/<UTC timestamp>-<command>[-<name>]), never one that already holds a run unless
`--force` replaces it whole; `--name NAME` names the run (in its directory's
name and its document); a plan, advise and history step name themselves after
what they did when not told (`default_name`).

The lifecycle: `lifecycle()` (main.py wraps every command in it) owns each run
directory a command makes with `Run(...)`, from its creation to its final
status. Whatever ends the command (a return, a DbtierError, any other
exception, Ctrl-C, SIGTERM), the run is left `ok`, `failed` or `interrupted`
with the error in `errors`, its document saved and no temp file behind; an
unexpected exception's traceback goes to raw/traceback.txt. `with Run(...) as
run:` gives the same for code that makes a run outside main.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from rich.console import Console

from dbtier.core.debris import Claim
from dbtier.core.errors import DbtierError, expect
from dbtier.core.files import full_error, full_path, is_full
from dbtier.core import owner
from dbtier.core.owner import me
from dbtier.results import kinds
from dbtier.results.document import finish, new_document
from dbtier.results.store import RunDir, check_name, check_out, dumps


def add_output_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print the result document (JSON) on stdout")
    g.add_argument("--out", metavar="DIR", help="run directory to write (default runs/<UTC timestamp>-<command>"
                   "[-<name>]); refused if it already holds anything")
    add_name_option(g)
    g.add_argument("--force", action="store_true",
                   help="with --out: replace an existing run directory whole (its files are removed first)")
    g.add_argument("--runs-dir", metavar="DIR", default=None, help="where new run directories go (default ./runs)")


def add_name_option(g: argparse._ActionsContainer) -> None:
    g.add_argument("--name", metavar="NAME", help="name the run: it ends the run directory's name and is kept in "
                   "its document (`name`), shown by `dbtier runs` and reports; letters, digits, '.', '-', '_', at "
                   "most 64 (plan, advise and history runs are named after what they did unless given one)")


def _safe(part: str) -> str:
    return "".join(c if c.isalnum() and c.isascii() or c in "._-" else "-" for c in part)


def default_name(command: str, params: dict[str, Any]) -> str | None:
    """The name a run gets when --name is not given: what a plan sized (`plan-aws-r6i.4xlarge`,
    `plan-onprem`), `advise`, a history step (`history-import-awr`, `history-consolidate`,
    `history-requirement`); None for other commands."""
    action = params.get("action")
    name: str | None = None
    if command == "plan":
        cloud, inst = params.get("cloud"), params.get("instance")
        if isinstance(cloud, str) and cloud:
            name = f"plan-{cloud}" + (f"-{inst}" if isinstance(inst, str) and inst and inst != "auto" else "")
        else:
            name = "plan-onprem"
    elif command == "advise":
        name = "advise"
    elif command == "history" and isinstance(action, str):
        source = params.get("source")
        name = f"history-{action}" + (f"-{source}" if action == "import" and isinstance(source, str) and source
                                      else "")
    if name is None:
        return None
    name = _safe(name)[:64].rstrip(".")
    return name or None


def run_name(args: argparse.Namespace, command: str, params: dict[str, Any],
             default: str | None = None) -> str | None:
    """The run's name: --name when given (checked), else `default`, else default_name()."""
    given = getattr(args, "name", None)
    if given is not None:
        return check_name(given)
    return default if default is not None else default_name(command, params)


def console(args: argparse.Namespace) -> Console:
    """Terminal output goes to stderr under --json, so stdout carries only the document."""
    quiet = getattr(args, "json", False)
    return Console(stderr=True, quiet=quiet) if quiet else Console(stderr=False)


def _named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """The document with `name` right after the command it names."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        out[k] = v
        if k == "command":
            out["name"] = name
    out.setdefault("name", name)
    return out


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is (main.py installs the handler): cleans up like Ctrl-C."""


# The runs made under each active lifecycle (a stack: main.py's, or a test's own).
_FRAMES: list[list["Run"]] = []  # Frame objects (defined below)


class Run:
    """A run directory plus its document; `save()` after each step.

    `read_only` commands (show, compare, catalog list|show) keep their document in memory and
    make no directory (nor ask engines for versions) unless --out or --runs-dir is given.
    `kind`: the kind of result the command writes (dbtier.results.kinds: `probe`, `bench.oltp`,
    `plan.size`), its first word the command; it goes in the document's envelope as `result_kind`.
    `inputs`: paths the command reads, which --force must never remove. `default_name`: the run's name
    when --name is not given (else default_name() from the command and its params)."""

    def __init__(self, kind: str, args: argparse.Namespace, params: dict[str, Any],
                 paths: list[str] | None = None, devices: list[str] | None = None,
                 inputs: Iterable[str | os.PathLike] = (), read_only: bool = False,
                 default_name: str | None = None):
        command = kinds.check(kind).command
        name = run_name(args, command, params, default_name)
        out = getattr(args, "out", None)
        runs_dir = getattr(args, "runs_dir", None)
        force = bool(getattr(args, "force", False))
        self.persist = not read_only or out is not None or runs_dir is not None
        self._kind = kind
        self._dir: RunDir | None = None
        self.traceback_path: Path | None = None
        self.ended = False
        if self.persist:
            check_out(out, force)          # refused before engines are asked anything
            from dbtier.measure.machine import machine_info
            machine = machine_info(paths, devices)
        else:
            from dbtier.measure.machine import light_machine_info
            machine = light_machine_info()
        doc = new_document(kind, params, machine)
        self.doc = _named(doc, name) if name is not None else doc
        self.claim: Claim | None = None
        if self.persist:
            self._dir = RunDir.create(command, out, runs_dir or "runs", force=force, inputs=inputs, name=name)
            # who runs it: a reader told it `running` sees `abandoned` once this process is gone
            owner.current_run = self._dir.path.name
            self.doc["owner"] = me().to_dict()
            self.claim = Claim("run", {"run": str(self._dir.path.resolve())}, watch=False)
        if _FRAMES:
            _FRAMES[-1].append(self)
        self.save()

    @property
    def dir(self) -> RunDir:
        """The run's directory. Every run that `persist`s has one, made in __init__; a read-only run given
        neither --out nor --runs-dir has none, so a command that may run read-only asks `persist` first."""
        return expect(self._dir, f"{self._kind}: a read-only run without --out or --runs-dir has no directory")

    def save(self) -> None:
        if self._dir is not None:
            self._dir.write(self.doc)

    def finish(self, status: str = "ok") -> None:
        finish(self.doc, status)
        self.save()

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, et: Any, exc: BaseException | None, tb: Any) -> None:
        self.end(exc)

    def end(self, exc: BaseException | None, failed: bool = False) -> None:
        """The final status: from the exception that ended the command (None: it returned; `failed`:
        with a non-zero exit). Saved, temp files swept; never raises over `exc`."""
        if self.ended:
            return
        self.ended = True
        doc = self.doc
        if exc is None or (isinstance(exc, SystemExit) and not exc.code):
            if doc["status"] == "running":
                self.finish("failed" if failed else "ok")
            if self._dir is not None:
                self._dir.sweep_temp_files()
                self._dir.release_reserve()
            self._release()
            return
        if self._dir is not None:
            self._dir.release_reserve()      # the room kept for this final write (a full filesystem)
        with _signals_held():
            status, error = _classify(exc)
            if status is None:          # the output pipe closed: the run itself stands as it is
                if doc["status"] == "running":
                    finish(doc, "failed")
                    doc["errors"].append(error)
            else:
                if error is not None and not any(e.get("message") == error["message"] for e in doc["errors"]
                                                 if isinstance(e, dict)):
                    doc["errors"].append(error)
                if doc["status"] in ("running", "ok"):
                    finish(doc, status)
                if error is not None and error.get("bug"):
                    self._save_traceback(exc, error)
            try:
                self.save()
            except Exception:   # noqa: BLE001 - a full disk must not hide the error that ended the run
                pass
            if self._dir is not None:
                self._dir.sweep_temp_files()
            self._release()

    def _release(self) -> None:
        if self._dir is not None and owner.current_run == self._dir.path.name:
            owner.current_run = None
        if self.claim is not None:
            self.claim.release()

    def _save_traceback(self, exc: BaseException, error: dict[str, Any]) -> None:
        if self._dir is None:
            return
        try:
            path = self._dir.raw_path("traceback.txt")
            path.write_text("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        except OSError:
            return
        self.traceback_path = path
        error["traceback"] = str(path.relative_to(self._dir.path))
        try:
            exc.dbtier_traceback = path  # type: ignore[attr-defined]  # main.py names it
        except AttributeError:
            pass


def _classify(exc: BaseException) -> tuple[str | None, dict[str, Any] | None]:
    if isinstance(exc, BrokenPipeError):
        return None, {"message": "the output pipe was closed"}
    if isinstance(exc, KeyboardInterrupt):
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C (SIGINT)"
        return "interrupted", {"message": f"interrupted by {how}"}
    if isinstance(exc, DbtierError):
        return ("interrupted" if exc.exit_code == 130 else "failed"), {"message": exc.message, "hint": exc.hint}
    if isinstance(exc, OSError) and is_full(exc):
        e = full_error(full_path(exc), None, "its results")
        return "failed", {"message": e.message, "hint": e.hint}
    if isinstance(exc, SystemExit):
        return "failed", {"message": f"exited with status {exc.code}"}
    if isinstance(exc, Exception):
        return "failed", {"message": describe_bug(exc), "hint": "this is a bug in dbtier", "bug": True}
    return "failed", {"message": f"stopped by {type(exc).__name__}"}


def describe_bug(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """A second Ctrl-C or SIGTERM while the final status is written must not cut that write short."""
    saved = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            saved[sig] = signal.signal(sig, signal.SIG_IGN)
    except ValueError:      # not the main thread: signals go to the main thread anyway
        pass
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


class Sink:
    """Where a measuring library call's run goes: the call asks `start(params)` for its directory once what
    can be refused has been (the Run is made then, its params the call's), and hands its section to `save`
    after every point; `run` is that Run afterwards."""

    def __init__(self, kind: str, args: argparse.Namespace, paths: list[str] | None = None,
                 devices: list[str] | None = None, inputs: Iterable[str | os.PathLike] = ()):
        self._kind, self._args, self._paths, self._devices = kind, args, paths, devices
        self._inputs = list(inputs)
        self._run: Run | None = None

    @property
    def run(self) -> Run:
        return expect(self._run, f"{self._kind}: the library call never started its run")

    def start(self, params: dict[str, Any], paths: list[str] | None = None) -> RunDir:
        """The run made with `params` (on `paths` when the call knows them only then): its directory."""
        self._run = Run(self._kind, self._args, params, paths=self._paths if paths is None else paths,
                        devices=self._devices, inputs=self._inputs)
        return self._run.dir

    def start_reading(self, params: dict[str, Any], inputs: list[str]) -> Path:
        """For a call that names what it read only once it has read it (report, export): the run made with
        those `inputs` (never removed by --force), its directory's path."""
        self._inputs = list(inputs)
        return self.start(params).path

    def save(self, section: dict[str, Any], errors: list[dict[str, Any]] | None = None) -> None:
        """The section (and the errors, when the call keeps them) into the run's document, stored."""
        run = self.run
        run.doc.update(section)
        if errors is not None:
            run.doc["errors"] = errors
        run.save()

    def save_params(self, params: dict[str, Any], section: dict[str, Any]) -> None:
        """As `save`, for a call whose params change as it runs (a server's own settings, read once open)."""
        self.run.doc["params"] = params
        self.save(section)


class Frame(list):
    """The runs made under one lifecycle; `failed` is set when the command returned a non-zero exit."""
    failed = False


@contextlib.contextmanager
def lifecycle() -> Iterator[Frame]:
    """Own every run made inside: each ends ok / failed / interrupted, whatever ends the block."""
    frame = Frame()
    _FRAMES.append(frame)
    try:
        yield frame
    except BaseException as exc:
        for run in frame:
            run.end(exc)
        raise
    else:
        for run in frame:
            run.end(None, failed=frame.failed)
    finally:
        _FRAMES.remove(frame)


def check_out_early(args: argparse.Namespace) -> None:
    """--out refused before a command does any work (the run directory is checked again when made)."""
    if hasattr(args, "out"):
        check_out(args.out, bool(getattr(args, "force", False)))
    check_name(getattr(args, "name", None))
    rd = getattr(args, "runs_dir", None)
    if rd is not None and str(rd).strip() == "":
        raise DbtierError("--runs-dir '': an empty directory name", "e.g. --runs-dir runs")


def usage(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """The action of a command group called without a subcommand: its help, exit 2."""
    def show(_args: argparse.Namespace) -> int:
        p.print_help()
        return 2
    return show


def emit(doc: dict[str, Any], args: argparse.Namespace, render: Callable[[], None] | None = None) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(dumps(doc).decode())
        sys.stdout.flush()
    elif render is not None:
        render()
