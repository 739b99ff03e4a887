"""What a block request is made of in the trace readers, and the caps on what one trace line may say
(docs/commands/simulate.md; traces.py says what each cap stops). fastread.py keeps its own copy of these values
(tests/parsers/test_traces_fast.py checks they agree)."""

from __future__ import annotations

READ, WRITE = 0, 1
SECTOR = 512
FILETIME_S = 1e-7          # Windows filetime ticks (100 ns)

# A request above 1 GiB is no block I/O a host issues (Linux caps a request far lower) and would cut into
# 131,072+ cache blocks; 2^55 bytes is beyond any volume and keeps offset + length, volume << 42 | block and
# every sum in int64.
MAX_REQUEST_BYTES = 1 << 30
MAX_ADDRESS_BYTES = 1 << 55
T_LIM = 1 << 62                    # raw time ticks: t - t0 stays inside int64
MAX_SPAN_S = 10 * 365.25 * 86400   # ten years from the first request: beyond that the time column is wrong
MAX_VOLUMES = 1 << 16              # volume ids index int32 arrays and the cache's key (volume << 42)
MAX_LINE_CHARS = 1 << 20           # a longer line is not a trace line (and is not held in memory whole)
MAX_COLUMN = 4096                  # --columns numbers
