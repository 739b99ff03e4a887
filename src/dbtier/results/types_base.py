"""The result types every document shares: the schema helpers (Def, S), the envelope and its parts
(dbtier.results.types re-exports them; see its docstring)."""

from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict

from dbtier.results import kinds


class Def:
    """Annotated metadata: give a plain type a name in `$defs`."""

    def __init__(self, name: str):
        self.name = name


class S:
    """Annotated metadata: JSON Schema keywords added to the type's (a class: hashable, as Annotated needs)."""

    def __init__(self, **keywords: Any):
        self.keywords = keywords


Timestamp = Annotated[str, S(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"), Def("timestamp")]
NumOrNull = Annotated[float | None, Def("num_or_null")]
Status = Literal["running", "ok", "failed", "interrupted", "abandoned"]
Obj = dict[str, Any]


def doc(text: str) -> S:
    return S(description=text)


# -- the envelope (results/document.py) ----------------------------------------------------------------------

class Error(TypedDict):
    message: str
    hint: NotRequired[str | None]
    bug: NotRequired[Annotated[bool, doc("true when the run ended on an unexpected exception (a dbtier bug)")]]
    traceback: NotRequired[Annotated[str, doc("where the bug's traceback was saved, relative to the run "
                                              "directory (raw/traceback.txt)")]]


class BlockDevice(TypedDict):
    name: str
    disk: str
    model: str | None
    driver: NotRequired[str | None]
    virtual: NotRequired[bool]
    rotational: Annotated[bool | None, doc("null when unknown: a virtual disk's kernel flag is its driver's default")]
    rotational_flag: NotRequired[Annotated[bool | None, doc("the kernel's queue/rotational flag as read")]]
    rotational_note: NotRequired[Annotated[str, doc("why `rotational` is null though the kernel gave a flag")]]
    scheduler: str | None
    write_cache: NotRequired[str | None]
    logical_block_bytes: NotRequired[int | None]
    physical_block_bytes: NotRequired[int | None]
    size_bytes: NotRequired[int | None]


class TargetInfo(TypedDict):
    path: str
    mount_point: NotRequired[str]
    filesystem: NotRequired[str | None]
    mount_options: NotRequired[str | None]
    source: NotRequired[str]
    block_device: NotRequired[BlockDevice | None]


class Versions(TypedDict):
    dbtier: str | None
    fio: str | None
    postgresql: str | None
    duckdb: str | None


class Machine(TypedDict):
    hostname: str
    os: NotRequired[str | None]
    kernel: str
    arch: NotRequired[str]
    cpu_model: str | None
    cpu_count: int | None
    memory_bytes: int | None
    targets: list[TargetInfo]
    versions: Versions


class Guard(TypedDict):
    """the cache guard (dbtier.model.guards): whether the run's reads reached the storage"""
    kind: Literal["reads-from-memory", "too-few-reads", "remote"]
    message: str


class Params(TypedDict, total=False):
    """the command's options as given (each command its own; `action`: the subcommand, where it has one)"""
    action: str


class RunOwner(TypedDict):
    """the dbtier process that made the run (dbtier.core.owner): while its status is `running`, a reader
    whose machine has no process of this pid, start time and boot id calls the run `abandoned`"""
    pid: int
    boot_id: str
    start_ticks: int
    host: str
    run_id: str | None


class Abandoned(TypedDict):
    """a run whose dbtier process died without finishing (SIGKILL, the OOM killer): when it was last written"""
    last_written_at: Timestamp
    pid: int
    message: str


class Envelope(TypedDict):
    """Every dbtier command writes one of these as result.json in its run directory. Shared keys are defined
    here; each command adds its own section (dbtier.results.types.SECTIONS)."""
    schema_version: Literal[1]
    command: Required[str]        # Required: the shape check refuses null here too (readers index by it)
    result_kind: NotRequired[Annotated[Literal[kinds.NAMES], doc(  # type: ignore[valid-type]
        "what the document is (dbtier.results.kinds): the command, then what of it ran (bench.oltp, plan.size, "
        "history.import, simulate.mrc); a document written before the key existed gets it when it is read")]]
    name: NotRequired[Annotated[str, S(pattern=r"^[A-Za-z0-9._-]{1,64}$"),
                                doc("the run's name (--name; a plan, advise or history step is named after what "
                                    "it did when not given one): the end of its run directory's name")]]
    dbtier_version: str
    started_at: Timestamp
    finished_at: Timestamp | None
    status: Status
    machine: Machine
    params: Required[Params]
    errors: Required[list[Error]]
    guards: NotRequired[list[Guard]]
    notes: NotRequired[list[str]]
    owner: NotRequired[RunOwner]
    abandoned: NotRequired[Abandoned]
