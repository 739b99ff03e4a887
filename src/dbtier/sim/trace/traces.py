"""Block I/O trace readers: one file in, numpy arrays out.

Pure parsing: every reader turns lines into requests (time, op, offset,
length, volume) and nothing else. A request is what the host asked of the
block device; splitting it into cache blocks happens later (sim/cache/).

Invariants of a returned Trace:
- arrays have one entry per read or write request, in file order (or sorted
  by time with `sort=True`); other lines (headers, flushes, trims, blkparse
  events other than the one chosen, fio open/close) are counted in `ignored`;
- `time_s` starts at 0 (the first request) and never decreases; an untimed
  trace (fio v2 without `wait`, a `--columns` map without time) has all zeros
  and `timed=False`;
- `op` is 0 for a read, 1 for a write; `offset_bytes` >= 0, `length_bytes` > 0;
- `volume` indexes `volumes` (disk, device, file or volume id of the trace);
  the same offset on two volumes is two different places.

A malformed line is a DbtierError naming file and line, unless `skip_bad`,
which counts it (and keeps the first few line numbers) instead. A line is
malformed too when its numbers are absurd for a block request (the caps below
keep every later sum inside int64 and every per-block expansion bounded):
a length above MAX_REQUEST_BYTES (1 GiB), an end beyond MAX_ADDRESS_BYTES
(2^55 bytes, 32 PiB), a negative offset or length, a time that is not finite
or beyond +-2^62 ticks. A zero-length request is ignored and noted with its
line. Trace-wide limits (a span over MAX_SPAN_S, more than MAX_VOLUMES
volumes, a line over MAX_LINE_CHARS, damaged compressed data) stop the read
with file and line even under `skip_bad`.

Only regular files are opened (a FIFO would block, /dev/zero never ends).

The CSV-like formats go through fastread.py first (pyarrow, a block at a time); it hands any file it
cannot vouch for back to the line reader, whose answers and messages are the reference.
read_chunks() yields the same requests as chunks.Chunk in bounded memory.

This module is the readers' public face; the work is done in
- reader.py: `Trace`, `read_trace` (the vectorised path, the line reader, the trace-wide checks),
  `from_arrays`;
- chunked.py: `read_chunks`, the same requests a chunk at a time;
- formats.py: the per-format line parsers and `detect_format`;
- columns.py: the --columns maps (block and object CSVs);
- files.py: opening a text trace (compression, refusals, damaged data, long lines);
- limits.py: the request codes and the caps above.
"""

from __future__ import annotations

from dbtier.sim.names import COLUMNS_HELP, FORMATS, OBJECT_COLUMNS_HELP, TraceFormat, known_formats_text
from dbtier.sim.trace.chunked import TraceChunks, read_chunks
from dbtier.sim.trace.columns import (Columns, ObjectColumns, csv_index, header_first, parse_columns,
                                      parse_object_columns)
from dbtier.sim.trace.formats import detect_format
from dbtier.sim.trace.limits import (FILETIME_S, MAX_ADDRESS_BYTES, MAX_COLUMN, MAX_LINE_CHARS, MAX_REQUEST_BYTES,
                                     MAX_SPAN_S, MAX_VOLUMES, READ, SECTOR, WRITE)
from dbtier.sim.trace.reader import Trace, from_arrays, read_trace

__all__ = [
    "COLUMNS_HELP", "FORMATS", "OBJECT_COLUMNS_HELP", "TraceFormat", "known_formats_text",
    "TraceChunks", "read_chunks",
    "Columns", "ObjectColumns", "csv_index", "header_first", "parse_columns", "parse_object_columns",
    "detect_format",
    "FILETIME_S", "MAX_ADDRESS_BYTES", "MAX_COLUMN", "MAX_LINE_CHARS", "MAX_REQUEST_BYTES", "MAX_SPAN_S",
    "MAX_VOLUMES", "READ", "SECTOR", "WRITE",
    "Trace", "from_arrays", "read_trace",
]
