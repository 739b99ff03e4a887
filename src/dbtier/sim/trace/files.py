"""Opening a text trace: plain, gzip, bz2 or xz read transparently; a FIFO, device, directory, binary
file or another compression refused naming what it is; damaged compressed data and over-long lines turned
into messages naming the file and the line reached."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import Any, Iterator

from dbtier.core.errors import DbtierError
from dbtier.core.files import regular_file
from dbtier.sim.trace.limits import MAX_LINE_CHARS

_READ_CHUNK = 1 << 20

DECOMPRESS_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)
_UNSUPPORTED_MAGIC = ((b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d {name}"),
                      (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d {name}"),
                      (b"PK\x03\x04", "a zip archive", "unzip {name}"),
                      (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive", "7z x {name}"))


def open_text(path: Path) -> tuple[io.TextIOWrapper, Any, int, str | None]:
    """(text stream, raw file for progress, raw size, compression or None). gzip/bz2/xz are read
    transparently; a FIFO, device, socket or directory is refused before it is opened."""
    if not path.exists():
        raise DbtierError(f"trace file {path} not found",
                          "check the path (relative paths start at the current directory)")
    if path.is_dir():
        raise DbtierError(f"{path} is a directory, not a trace file",
                          "pass the trace file itself (or a `dbtier simulate capture` run directory)")
    regular_file(path, "trace file", "pass a regular file: copy the trace into one first")
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise DbtierError(f"cannot read trace file {path}: {exc.strerror}", "check its permissions") from exc
    size = os.fstat(raw.fileno()).st_size
    try:
        magic = raw.read(6)
        raw.seek(0)
    except OSError as exc:
        raw.close()
        raise DbtierError(f"cannot read trace file {path}: {exc.strerror or exc}", "check the file and its disk") \
            from exc
    for sig, what, cmd in _UNSUPPORTED_MAGIC:
        if magic.startswith(sig):
            raw.close()
            raise DbtierError(f"{path}: {what}; the trace readers take plain text, gzip, bz2 or xz",
                              f"unpack it first (`{cmd.format(name=path.name)}`) and pass the text file")
    compression = "gzip" if magic[:2] == b"\x1f\x8b" else "bz2" if magic[:3] == b"BZh" else \
        "xz" if magic[:6] == b"\xfd7zXZ\x00" else None
    stream = decompressed(raw, compression)
    try:
        head = stream.peek(4096)[:4096] if hasattr(stream, "peek") else b""
    except DECOMPRESS_ERRORS as exc:
        raw.close()
        raise damaged(path, exc, 0, 0, size, compression) from None
    if b"\x00" in head:
        raw.close()
        hint = ("blktrace writes binary files: turn them into text with `blkparse -i NAME -o trace.txt` first"
                if ".blktrace." in path.name else "pass a text trace (CSV, blkparse text or a fio iolog)")
        raise DbtierError(f"{path}: binary data, not a text trace", hint)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline=None)   # -sig: drop a BOM
    return text, raw, size, compression


def decompressed(raw: Any, compression: str | None) -> Any:
    """The text's bytes from the raw file: itself, or a gzip, bz2 or xz stream over it."""
    if compression is None:
        return raw
    return {"gzip": lambda: gzip.GzipFile(fileobj=raw), "bz2": lambda: bz2.BZ2File(raw),
            "xz": lambda: lzma.LZMAFile(raw)}[compression]()


def damaged(path: Path, exc: BaseException, lines_ok: int, pos: int, size: int,
             compression: str | None) -> DbtierError:
    """A read that failed part-way: where, why, and that nothing of the file was used."""
    reason = (str(exc) or type(exc).__name__) if not isinstance(exc, OSError) or not exc.strerror else exc.strerror
    if isinstance(exc, EOFError):
        reason = "the compressed data ends early (truncated file)"
    where = f"after line {lines_ok}" if lines_ok else "before the first line"
    if compression:
        cat = {"gzip": "zcat", "bz2": "bzcat", "xz": "xzcat"}[compression]
        return DbtierError(
            f"{path}: {compression} data damaged {where} (at about byte {pos:,} of {size:,}): {reason}; "
            "no request of this trace was used",
            f"copy the file again; or keep the readable part (`{cat} {path.name} > part.txt` stops at the "
            "damage) and pass that")
    return DbtierError(f"{path}: read failed {where} (at about byte {pos:,} of {size:,}): {reason}; "
                       "no request of this trace was used", "check the file and the disk it is on")


def text_lines(text: io.TextIOWrapper) -> Iterator[str]:
    """The lines of `text` without their ends, read in 1 MiB pieces; LineTooLong instead of a line longer
    than MAX_LINE_CHARS (so a file without newlines is never held whole)."""
    buf = ""
    while True:
        data = text.read(_READ_CHUNK)
        if not data:
            break
        parts = (buf + data).split("\n") if buf else data.split("\n")
        buf = parts.pop()
        if parts and max(map(len, parts)) > MAX_LINE_CHARS:
            i = next(i for i, x in enumerate(parts) if len(x) > MAX_LINE_CHARS)
            yield from parts[:i]
            raise LineTooLong(len(parts[i]))
        yield from parts
        if len(buf) > MAX_LINE_CHARS:
            raise LineTooLong(len(buf))
    if buf:
        yield buf


class LineTooLong(Exception):
    def __init__(self, chars: int):
        self.chars = chars
        self.lineno = 0


def tell(raw: Any) -> int:
    """The raw file's position (for progress), 0 when it cannot say."""
    try:
        return int(raw.tell())
    except (OSError, ValueError):
        return 0
