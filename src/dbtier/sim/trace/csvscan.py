"""The byte-level path of fastread.batches(): a numba kernel parses the CSV-like trace layouts 4 MiB of
text at a time and hands each block it does not vouch for, the same bytes, to fastread's pyarrow reader.

Its answer is the pyarrow reader's: the same Batch arrays (values, dtypes, volumes numbered in order of
first appearance under the `max_volumes` cap), the same State, a Reject wherever that reader rejects. The
kernel accepts only what pyarrow (with fastread's options) reads one way: every line ends in \\n or \\r\\n
and has exactly `ncols` fields; time, offset and length are plain ASCII digits, at most 18 (no sign, space,
quote or point; so below 2^62 and inside the time bounds); the op field is one of the layout's spellings
(`Layout.tokens`, each kept only if the layout's own op_of maps it); every other field is printable ASCII.
Anything else goes to pyarrow a block at a time, cut after a newline, which pyarrow reads as it would
inside the whole file (bytes from mid-file get a row to skip put first: pyarrow drops a UTF-8 BOM that
starts its input). batch.Scan's hex check runs on every byte read, and fastread._convert's checks
(offset, length and address caps, zero length, scaling) run in the kernel: a violation rejects, as there.

Covered: msr, cloudphysics, alibaba, tencent, and csv --columns with integer times. Left to pyarrow alone:
csv with fractional times (float_time), a delimiter that is a letter, a digit or a control character
other than tab, a layout whose roles share a column, op spellings over 8 bytes, a header ended by a bare
\\r, a file with no newline in its first MiB (an empty file included).

One deliberate difference: a line (a pyarrow row, its end aside) of LINE_CAP = 1 MiB or more rejects.
pyarrow's own answer then depends on where its 1 MiB blocks fall in the file; the line reader, the
reference, reads the file instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from dbtier.sim.trace.batch import MAX_ADDRESS_BYTES, MAX_REQUEST_BYTES, Batch, Layout, Reject, Scan, State

BLOCK = 4 << 20            # text per kernel call: a few MiB keeps the per-block overhead negligible
LINE_CAP = 1 << 20         # fastread.BLOCK_BYTES and limits.MAX_LINE_CHARS
MAX_KEYS = 4096            # distinct volume keys per block (more: the block goes to pyarrow)
_SLOTS = 2 * MAX_KEYS      # open-addressing table of the kernel's volume keys

# column roles
UNUSED, TIME, OP, OFFSET, LENGTH, VOLUME = 0, 1, 2, 3, 4, 5
# kernel results below zero
FAIL, ABSURD, LONG = -1, -2, -3


@dataclass
class Plan:
    roles: np.ndarray          # int8 per column
    delim: int
    tok_word: np.ndarray       # op tokens (at most 8 bytes) as little-endian uint64 words
    tok_len: np.ndarray        # their lengths
    tok_val: np.ndarray        # their ops (READ, WRITE)
    vcols: int                 # volume columns (0, 1 or 2), in the layout's order
    cols: tuple[int, ...]      # the columns of time (-1: none), op, offset, length, volume parts (-1: none)
    min_line: int              # the shortest line the kernel can accept, for the output arrays' size
    max_off: int
    max_len: int
    oscale: int
    lscale: int


def plan(lay: Layout) -> Plan | None:
    """How the kernel reads `lay`, or None: the layout stays on pyarrow alone."""
    d = lay.delimiter
    if lay.float_time or len(d) != 1 or not (d in "\t " or (d.isascii() and d.isprintable() and not d.isalnum())):
        return None
    used = [c for c in (lay.time, lay.op, lay.offset, lay.length, *lay.volume) if c is not None]
    if len(set(used)) != len(used) or max(used) >= lay.ncols or min(used) < 0 or len(lay.volume) > 2:
        return None
    roles = np.zeros(lay.ncols, dtype=np.int8)
    if lay.time is not None:
        roles[lay.time] = TIME
    roles[lay.op], roles[lay.offset], roles[lay.length] = OP, OFFSET, LENGTH
    for c in lay.volume:
        roles[c] = VOLUME
    words = []
    for w in dict.fromkeys(lay.tokens):
        v = lay.op_of(w)
        if v is not None and 0 < len(w) <= 8 and w.isascii() and w.isprintable() and w == w.strip() and d not in w:
            words.append((int.from_bytes(w.encode(), "little"), len(w), v))
    if not words:
        return None
    ints = int(lay.time is not None) + 2
    vol = (*lay.volume, -1, -1)[:2]
    return Plan(roles, ord(d), np.array([w for w, _, _ in words], dtype=np.uint64),
                np.array([k for _, k, _ in words], dtype=np.int64), np.array([v for _, _, v in words], dtype=np.uint8),
                len(lay.volume), (-1 if lay.time is None else lay.time, lay.op, lay.offset, lay.length, *vol),
                lay.ncols + ints + min(k for _, k, _ in words), MAX_ADDRESS_BYTES // lay.offset_scale,
                MAX_REQUEST_BYTES // lay.length_scale, lay.offset_scale, lay.length_scale)


# The kernel reads 8 bytes at a time (SWAR): a byte's high bit in a mask flags it, and the lowest flag is
# exact (the borrows and carries that make false flags only run upwards from a flagged byte).
_U = np.uint64
_LO, _HI = _U(0x0101010101010101), _U(0x8080808080808080)
_ZERO, _SPACE, _OVER9 = _U(0x3030303030303030), _U(0x2020202020202020), _U(0x4646464646464646)
_POW10 = np.array([10 ** k for k in range(9)], dtype=np.uint64)


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _word(buf, p):     # pragma: no cover (compiled)
    """buf[p:p + 8] as a little-endian word: one unaligned load once LLVM merges the bytes, which unsigned
    indices let it do (a signed one is checked for wrapping around, byte by byte)."""
    q = _U(p)
    return (_U(buf[q]) | (_U(buf[q + _U(1)]) << _U(8)) | (_U(buf[q + _U(2)]) << _U(16))
            | (_U(buf[q + _U(3)]) << _U(24)) | (_U(buf[q + _U(4)]) << _U(32)) | (_U(buf[q + _U(5)]) << _U(40))
            | (_U(buf[q + _U(6)]) << _U(48)) | (_U(buf[q + _U(7)]) << _U(56)))


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _at(buf, p):     # pragma: no cover (compiled)
    return buf[_U(p)]


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _digits8(d):     # pragma: no cover (compiled)
    """The value of 8 decimal digits, one per byte, the first in the lowest byte."""
    d = (d * _U(10) + (d >> _U(8))) & _U(0x00FF00FF00FF00FF)
    d = (d * _U(100) + (d >> _U(16))) & _U(0x0000FFFF0000FFFF)
    return (d * _U(10000) + (d >> _U(32))) & _U(0xFFFFFFFF)


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _low(k):     # pragma: no cover (compiled)
    """The low k bytes of a word (all of it from 8 on)."""
    return ~_U(0) if k >= 8 else (_U(1) << _U(8 * k)) - _U(1)


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _same(buf, a0, a1, b0, b1):     # pragma: no cover (compiled)
    """buf[a0:a1] == buf[b0:b1], a word at a time."""
    k = a1 - a0
    if k != b1 - b0:
        return False
    while k > 0:
        if (_word(buf, a0) ^ _word(buf, b0)) & _low(k):
            return False
        a0 += 8
        b0 += 8
        k -= 8
    return True


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _int(buf, pos):     # pragma: no cover (compiled)
    """(value, end) of the decimal digits at pos; end == pos when there are none or more than 18."""
    v = _U(0)
    p = pos
    while True:
        x = _word(buf, p)
        m = ((x + _OVER9) | (x - _ZERO) | x) & _HI      # bytes > '9', < '0', >= 0x80
        if m == 0:
            v = v * _U(100000000) + _digits8(x - _ZERO)
            p += 8
            if p - pos > 16:
                return 0, pos
            continue
        k = np.int64(trailing_zeros(m) >> _U(3))
        if k:
            v = v * _POW10[k] + _digits8((x - _ZERO) << _U(64 - 8 * k))
            p += k
        if p - pos > 18:
            return 0, pos
        return np.int64(v), p


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _text(buf, pos, dl):     # pragma: no cover (compiled)
    """Where the printable ASCII at pos stops: at the delimiter (dl: it in every byte), \\n, \\r or any
    other byte outside 0x20-0x7e."""
    while True:
        x = _word(buf, pos)
        y = x ^ dl
        m = (((y - _LO) & ~y) | (x - _SPACE) | x | (x + _LO)) & _HI
        if m:
            return pos + np.int64(trailing_zeros(m) >> _U(3))
        pos += 8


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _field(buf, pos, r, last, delim, dl, tok_word, tok_len, tok_val):     # pragma: no cover (compiled)
    """The field of role r at pos: (where the next field starts, its value: the integer, the op, or for
    text where it ends), or (FAIL, 0)."""
    if r == TIME or r == OFFSET or r == LENGTH:
        v, end = _int(buf, pos)
        if end == pos:
            return FAIL, 0
    else:
        end = _text(buf, pos, dl)
        v = end
        if r == OP:
            k = end - pos
            w = _word(buf, pos) & _low(k)
            v = -1
            for j in range(tok_val.shape[0]):
                if tok_len[j] == k and tok_word[j] == w:
                    v = np.int64(tok_val[j])
                    break
            if v < 0:
                return FAIL, 0
    b = _at(buf, end)
    if not last:
        if b != delim:
            return FAIL, 0
    else:
        if b == 13:
            end += 1
            b = _at(buf, end)
        if b != 10:
            return FAIL, 0
    return end + 1, v


@numba.njit(nogil=True, cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]  # _nrt: numba-private
def _put(buf, s, row, f, tc, oc, fc, lc, v0, v1, nv, lim, out, keys, slots, pk, nkeys):  # pragma: no cover
    """Check and store the line parsed into f at `row`: (0 | ABSURD | FAIL, its volume key, keys so far)."""
    max_off, max_len, oscale, lscale, max_end = lim
    t, op, off, ln, vol = out
    tv = f[tc, 1] if tc >= 0 else 0
    opv = f[oc, 1]
    ov = f[fc, 1]
    lv = f[lc, 1]
    # fastread._convert's checks (times of at most 18 digits are inside its bounds)
    if ov > max_off or lv == 0 or lv > max_len:
        return ABSURD, pk, nkeys
    ov *= oscale
    lv *= lscale
    if ov + lv > max_end:
        return ABSURD, pk, nkeys
    t[row] = tv
    op[row] = opv
    off[row] = ov
    ln[row] = lv
    k = 0
    if nv:
        vs0 = f[v0, 0]
        ve0 = f[v0, 1]
        vs1 = f[v1, 0] if v1 >= 0 else 0
        ve1 = f[v1, 1] if v1 >= 0 else 0
        # most lines name the volume of the line before: compare with it before hashing
        if pk >= 0 and _same(buf, s + keys[pk, 0], s + keys[pk, 1], vs0, ve0) and \
                _same(buf, s + keys[pk, 2], s + keys[pk, 3], vs1, ve1):
            k = pk
        else:
            h = -3750763034362895579        # FNV-1a over the parts (int64, wrapping)
            for i in range(vs0, ve0):
                h = (h ^ _at(buf, i)) * 1099511628211
            h = (h ^ 31) * 1099511628211    # parts "ab","c" and "a","bc" apart
            for i in range(vs1, ve1):
                h = (h ^ _at(buf, i)) * 1099511628211
            mask = slots.shape[0] - 1
            j = h & mask
            while True:
                k = slots[j]
                if k < 0:
                    if nkeys == keys.shape[0]:
                        return FAIL, pk, nkeys
                    keys[nkeys, 0] = vs0 - s
                    keys[nkeys, 1] = ve0 - s
                    keys[nkeys, 2] = vs1 - s
                    keys[nkeys, 3] = ve1 - s
                    slots[j] = nkeys
                    k = nkeys
                    nkeys += 1
                    break
                if _same(buf, s + keys[k, 0], s + keys[k, 1], vs0, ve0) and \
                        _same(buf, s + keys[k, 2], s + keys[k, 3], vs1, ve1):
                    if vs0 - s < keys[k, 0]:    # met first in the second half: keep the first line in the file
                        keys[k, 0] = vs0 - s
                        keys[k, 1] = ve0 - s
                        keys[k, 2] = vs1 - s
                        keys[k, 3] = ve1 - s
                    break
                j = (j + 1) & mask
    vol[row] = k
    return 0, k, nkeys


@numba.njit(nogil=True, cache=True, _nrt=False)  # type: ignore[call-overload]  # _nrt: numba-private
def _kernel(buf, s, mid, e, roles, cols, delim, tok_word, tok_len, tok_val, lim, out, b_row, keys, slots,
            fa, fb):     # pragma: no cover (compiled)
    """Parse buf[s:e] (whole lines, buf[e - 1] is \\n, 8 readable bytes follow) into the arrays `out`
    (t, op, off, ln, vol): the lines of [s, mid) from row 0, those of [mid, e) from row b_row. A line of each
    half is read field by field in step, so that the CPU overlaps their chains of dependent loads (a
    field's is ~14 cycles). cols: the columns of time (-1: none), op, offset, length and two volume parts
    (-1: none). lim: fastread's caps, as arguments (a global from another module would be frozen into the
    cached kernel, which is stamped with this module's content only). fa, fb: scratch, (start, value) by
    column. (rows of each half, volume keys) or (FAIL | ABSURD | LONG, 0, 0). keys[k]: the (start, end) from
    s of each volume part on the first line of key k in the file (keys are numbered as met, not in file
    order); slots: all -1."""
    dl = _U(delim) * _LO
    ncols = roles.shape[0]
    tc, oc, fc, lc, v0, v1 = cols
    nv = int(v0 >= 0) + int(v1 >= 0)
    pa = s
    pb = mid
    ra = 0
    rb = b_row
    nkeys = 0
    ka = -1                                    # the volume key of each half's previous line
    kb = -1
    while pa < mid or pb < e:
        da = pa < mid
        db = pb < e
        a0 = pa
        b0 = pb
        for c in range(ncols):
            r = roles[c]
            last = c + 1 == ncols
            if da:
                fa[c, 0] = pa
                pa, fa[c, 1] = _field(buf, pa, r, last, delim, dl, tok_word, tok_len, tok_val)
            if db:
                fb[c, 0] = pb
                pb, fb[c, 1] = _field(buf, pb, r, last, delim, dl, tok_word, tok_len, tok_val)
            if pa < 0 or pb < 0:
                return FAIL, 0, 0
        if (pa - a0 > LINE_CAP and pa - a0 - 1 - (_at(buf, pa - 2) == 13) >= LINE_CAP) or \
                (pb - b0 > LINE_CAP and pb - b0 - 1 - (_at(buf, pb - 2) == 13) >= LINE_CAP):
            return LONG, 0, 0                   # a line of LINE_CAP bytes or more, its end aside
        if da:
            st, ka, nkeys = _put(buf, s, ra, fa, tc, oc, fc, lc, v0, v1, nv, lim, out, keys, slots, ka, nkeys)
            if st:
                return st, 0, 0
            ra += 1
        if db:
            st, kb, nkeys = _put(buf, s, rb, fb, tc, oc, fc, lc, v0, v1, nv, lim, out, keys, slots, kb, nkeys)
            if st:
                return st, 0, 0
            rb += 1
    return ra, rb - b_row, nkeys


# A row pyarrow skips, put before bytes from the middle of the stream: pyarrow drops a UTF-8 BOM that starts
# its input, which only the file's own start may do.
_MID = b"x\n"


def _hexlike(buf: bytearray, s: int, e: int, tail: bytes) -> bool:
    """batch.Scan's test on buf[s:e], the stream's bytes after `tail` (its previous byte)."""
    if buf.find(b"x", s, e) < 0 and buf.find(b"X", s, e) < 0:
        return False
    return buf.find(b"0x", s, e) >= 0 or buf.find(b"0X", s, e) >= 0 or tail + bytes(buf[s:s + 1]) in (b"0x", b"0X")


def _fill(stream: Any, mv: memoryview) -> int:
    """Read into all of mv unless the stream ends first; the bytes read."""
    got = 0
    readinto = getattr(stream, "readinto", None)
    while got < len(mv):
        if readinto is not None:
            k = readinto(mv[got:])
        else:
            data = stream.read(len(mv) - got)
            k = len(data)
            mv[got:got + k] = data
        if not k:
            break
        got += k
    return got


class _Replay:
    """`head`, then the rest of `stream`: the pyarrow reader picks up a stream the kernel began."""

    def __init__(self, head: bytes, stream: Any):
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = (self.head, b"") if n < 0 or n >= len(self.head) else (self.head[:n], self.head[n:])
            return out
        return self.stream.read(n)


def _too_long(piece: bytes) -> bool:
    """A row (ended by \\r or \\n, as pyarrow ends them) of LINE_CAP bytes or more."""
    if len(piece) < LINE_CAP:
        return False
    a = np.frombuffer(piece, dtype=np.uint8)
    ends = np.flatnonzero((a == 10) | (a == 13))
    return bool(np.diff(np.concatenate(([-1], ends, [len(a)]))).max() > LINE_CAP)


def batches(stream: Any, lay: Layout, p: Plan, header_lines: int, state: State,
            arrow: Callable[[Any, int], Iterator[Batch]]) -> Iterator[Batch]:
    """fastread.batches' answer through the kernel; `arrow(source, skip_rows)` is its pyarrow reader (a
    pyarrow source or a Python stream), which reads what the kernel does not vouch for."""
    cap = BLOCK + LINE_CAP
    buf = bytearray(cap + 16)       # room for the \n a last line without one is given, and the kernel's 8-byte reads
    mv = memoryview(buf)
    arr = np.frombuffer(buf, dtype=np.uint8)
    rows = (cap + 1) // p.min_line + 2       # each half may round up by one row
    out = (np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.uint8), np.empty(rows, dtype=np.int64),
           np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.int32))
    keys = np.zeros((MAX_KEYS, 4), dtype=np.int64)
    slots = np.empty(_SLOTS, dtype=np.int32)
    scratch = (np.empty((len(p.roles), 2), dtype=np.int64), np.empty((len(p.roles), 2), dtype=np.int64))
    have, tail, first, first_cut = 0, b"", True, True
    while True:
        got = _fill(stream, mv[have:have + BLOCK])
        if got and _hexlike(buf, have, have + got, tail):
            raise Reject("hex-looking number")
        if got:
            tail = bytes(buf[have + got - 1:have + got])
        end = have + got
        eof = got < BLOCK
        start = 0
        if first:
            nl = buf.find(b"\n", 0, end)
            if nl < 0 and not eof and end < LINE_CAP:
                have = end                      # the first line goes on: read on
                continue
            first = False
            cr = buf.find(b"\r", 0, nl) if header_lines and nl >= 0 else -1
            if nl < 0 or header_lines > 1 or 0 <= cr < nl - 1:
                # no newline (an empty file, a 1 MiB line), or a header pyarrow may end elsewhere: pyarrow
                # reads it all
                import pyarrow as pa
                yield from arrow(pa.PythonFile(Scan(_Replay(bytes(buf[:end]), stream)), mode="r"), header_lines)
                return
            start = nl + 1 if header_lines else 0
        cut = end if eof else max(buf.rfind(b"\n", start, end) + 1, start)
        if cut > start:
            at0 = first_cut and not start
            yield from _block(buf, arr, start, cut, at0, p, state, arrow, out, keys, slots, scratch)
        first_cut = False
        if eof:
            return
        if end - cut >= LINE_CAP:
            rest = bytes(buf[cut:end])
            if _too_long(rest):
                raise Reject("a line of 1 MiB or more")
            state.arrow_blocks += 1             # rows ended by a bare \r alone: pyarrow reads on
            import pyarrow as pa
            yield from arrow(pa.PythonFile(Scan(_Replay(_MID + rest, stream)), mode="r"), 1)
            return
        buf[:end - cut] = buf[cut:end]          # the line begun goes on in the next block
        have = end - cut


def _block(buf: bytearray, arr: np.ndarray, s: int, e: int, at0: bool, p: Plan, state: State,
           arrow: Callable[[Any, int], Iterator[Batch]], out: tuple[np.ndarray, ...], keys: np.ndarray,
           slots: np.ndarray, scratch: tuple[np.ndarray, np.ndarray]) -> Iterator[Batch]:
    """The batch of buf[s:e] (whole lines; the file's last may lack its \\n; at0: the stream's first bytes),
    by the kernel or by pyarrow."""
    n = e - s
    if buf[e - 1] != 10:
        buf[e] = 10                              # the last line of the file without its \n
        n += 1
    mid = buf.rfind(b"\n", s, s + n // 2) + 1 or s
    b_row = (mid - s) // p.min_line + 1
    slots.fill(-1)
    ra, rb, nk = _kernel(arr, s, mid, s + n, p.roles, p.cols, p.delim, p.tok_word, p.tok_len, p.tok_val,
                         (p.max_off, p.max_len, p.oscale, p.lscale, MAX_ADDRESS_BYTES), out, b_row, keys, slots,
                         *scratch)
    if ra == ABSURD:
        raise Reject("an absurd or zero-length request")
    if ra == LONG:
        raise Reject("a line of 1 MiB or more")
    if ra == FAIL:
        piece = bytes(buf[s:e])
        if _too_long(piece):
            raise Reject("a line of 1 MiB or more")
        state.arrow_blocks += 1
        import pyarrow as pa
        yield from arrow(pa.BufferReader(piece if at0 else _MID + piece), 0 if at0 else 1)
        return
    state.kernel_blocks += 1
    rows = ra + rb
    if not rows:
        return
    # global volume numbers in order of first appearance: a key's first line is where its field starts
    order = np.argsort(keys[:nk, 0], kind="stable") if nk > 1 else range(max(nk, 1))
    glob = np.empty(max(nk, 1), dtype=np.int32)
    for k in order:
        if p.vcols:
            name = "_".join(buf[s + keys[k, 2 * j]:s + keys[k, 2 * j + 1]].decode("ascii").strip()
                            for j in range(p.vcols))
        else:
            name = "0"
        glob[k] = state.number(name)
    state.rows += rows
    t, op, off, ln, vol = (np.concatenate((a[:ra], a[b_row:b_row + rb])) for a in out)
    yield Batch(t, op, off, ln, glob[vol])
