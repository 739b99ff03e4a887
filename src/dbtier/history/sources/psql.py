"""What psql prints, read back: the results of a query in each of psql's output formats, and the times psql
and the server print. No knowledge of any view here (postgres.py says which columns make one).

Formats, told apart from the first lines that are not blank or a `\\watch` header:

| psql | looks like | read |
|---|---|---|
| default (aligned), `\\pset border 0/1/2`, `linestyle unicode` | header, a `---+---` line, rows, `(N rows)` | cells between the column separators (border 0: the dashes' spans) |
| `-A` (unaligned), any one-character `-F` | `name|name`, rows, `(N rows)` | fields split on the separator |
| `--csv` | `name,name`, rows (no footer, no title) | CSV, quoted fields unquoted |
| `\\x` (expanded) of each | `-[ RECORD 1 ]-+--`, `name | value` lines; `name|value` (-A), `name,value` (--csv) | one record a row |

- A result is a header and its rows. The footer psql prints after one (`(3 rows)`, `(1 row)`, or in psql's
  language: `(3 lignes)`, `(3 Zeilen)`, `(3 行)`) must count the rows read above it: a file cut or edited in
  the middle of a result is refused at that footer, not read short.
- Blank values are NULL (what psql prints for NULL unless `\\pset null` says otherwise; NULL_MARKERS are read
  as NULL too).
- `\\watch` heads each result with a line `TIME (every Ns)`, in psql's language (`(chaque 10s)`, `(alle 10s)`)
  and its client's locale's `%c` time (`Sat Nov 28 15:27:23 2026`, `Sat 28 Nov 2026 03:27:23 PM EST`, `sam. 28
  nov. 2026 16:27:23`, `2026年11月28日 15時27分23秒`; centred over an aligned table). psql prints no such line in
  CSV. A `\\pset title` goes before the time, with a tab.
- Psql chatter before the first result (`Expanded display is on.`, `SET`, `Timing is on.`) is passed over;
  between results, `Time: 1.234 ms` lines too.

Times (parse_time): ISO 8601 with the offsets PostgreSQL prints (`+00`, `+05:30`, `-03`); DateStyle SQL
(`28/11/2026 15:27:23.7 CET`, day or month first: `slash_order` finds which from the values), German
(`28.11.2026 ...`) and Postgres (`Sat Nov 28 15:27:23.7 2026 UTC`); and `%c` in the languages glibc prints
(month names of MONTHS). A zone abbreviation is kept for the caller to check against `--tz` (they are
ambiguous: IST is India and Ireland); numeric offsets are applied.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dbtier.core.errors import DbtierError
from dbtier.history.sources import csvio

# psql's output is read line by line in Python: a few hundred MiB is weeks of \watch 60 of pg_stat_io.
MAX_BYTES = 512 * 2**20
# `\pset null` markers read as NULL besides the blank psql prints by default.
NULL_MARKERS = frozenset({"", "(null)", "null", "<null>", "[null]", "∅", "¤"})

_FOOTER = re.compile(r"\((\d+)\s*[^()\d]+\)")
_WATCH = re.compile(r"(?P<time>.*?\S)\s+\((?P<pre>[^()\d]*?)(?P<n>\d+(?:[.,]\d+)?(?:e[+-]?\d+)?)\s*[^()\d]*\)")
_RECORD = re.compile(r"[\s+|\-─═━┌├╔╠]*\[ RECORD (\d+) \][\s+|\-─═━┬┼┐┤╤╪╗╣]*")
_RULE = re.compile(r"[\s+\-─━═┼┌┐└┘├┤┬┴╪╞╡╤╧╔╗╚╝╠╣╦╩╬]*[-─━═][\s+\-─━═┼┌┐└┘├┤┬┴╪╞╡╤╧╔╗╚╝╠╣╦╩╬]*")
_CROSS = set("+┼╪╬┬┴├┤")
_BARS = ("|", "│", "║")
_TIMING = re.compile(r"\S[^:]{0,20}:\s*[\d.,]+\s*ms\b.*")
# what else a script run with `psql -a` (or -e) prints between results: its statements and meta-commands
# echoed, and the command tags of statements that return no rows (SET, CREATE TABLE, INSERT 0 1)
_ECHO = re.compile(r"\\\S.*|(select|with|table|values|set|reset|show|begin|commit|create|insert|do)\b.*;", re.I)
_TAG = re.compile(r"[A-Z]+( [A-Z]+)*( \d+)*")
_DELIMS = ("|", ",", "\t", ";")


@dataclass
class Result:
    """One query result: its header's names (lower case), its rows, and the \\watch header above it."""
    header_line: int
    columns: tuple[str, ...]
    rows: list[tuple[int, list[str | None]]] = field(default_factory=list)
    title: str | None = None             # the time part of a \watch header, as printed
    title_line: int | None = None
    every_s: float | None = None         # \watch's interval


@dataclass
class Parsed:
    path: str
    form: str                            # "aligned", "unaligned", "CSV" (+ " expanded")
    results: list[Result]


def _is_null(v: str) -> bool:
    return v.strip().lower() in NULL_MARKERS


def _val(v: str) -> str | None:
    v = v.strip()
    return None if _is_null(v) else v


def watch_title(line: str) -> tuple[str, float | None] | None:
    """(the time text, the interval) of a \\watch header line, or None."""
    s = line.strip()
    if not s.endswith(")") or len(s) > 300:
        return None
    m = _WATCH.fullmatch(s)
    if not m or not re.search(r"\d", m.group("time")):
        return None
    text = m.group("time").rsplit("\t", 1)[-1].strip()       # after a \pset title
    try:
        every = float(m.group("n").replace(",", "."))
    except ValueError:
        every = None
    return text, every


def footer(line: str) -> int | None:
    m = _FOOTER.fullmatch(line.strip())
    return int(m.group(1)) if m else None


def names_in(lines: Iterable[str]) -> set[str]:
    """Every name a line of psql output could be a header or an expanded record of (for detect.py): the
    fields of each line split on psql's separators (spaces above a rule of dashes), and each line's first
    field."""
    out: set[str] = set()
    lines = list(lines)
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1]):      # border 0: names apart by spaces
            out.update(w.lower() for w in s.split())
        for d in _BARS + _DELIMS:
            parts = [p.strip().strip('"').lower() for p in s.strip("|│║").split(d)]
            if len(parts) > 1:
                out.update(parts)
        first = re.split(r"\s*[|│║,;\t]\s*|\s{2,}", s, maxsplit=1)[0].strip().lower()
        if first:
            out.add(first)
    return {n for n in out if re.fullmatch(r"[a-z_][a-z0-9_]*", n)}


# -- the formats ------------------------------------------------------------------------------------------

def parse(path: str, is_header: Callable[[tuple[str, ...]], bool]) -> Parsed | None:
    """The file's results, or None when no line of its beginning is a header `is_header` accepts (not psql
    output of anything the caller reads). Malformed output is a DbtierError naming the line."""
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise DbtierError(f"{path}: {size / 2**20:,.0f} MiB of psql output; dbtier reads psql's output up to "
                          f"{MAX_BYTES / 2**20:,.0f} MiB", "split it, or collect long histories with "
                          "collectors/postgres_stats.sql (CSV, read without a Python loop)")
    with csvio.text_io(path) as f:
        lines = [l.rstrip("\r\n") for l in csvio.bounded(f, path)]
    got = _parse(path, lines, is_header)
    if got is None or not any(is_header(r.columns) for r in got.results):
        return None
    return got


def _parse(path: str, lines: list[str], is_header: Callable[[tuple[str, ...]], bool]) -> Parsed | None:
    start = _first_content(lines)
    if start is None:
        return None
    for i in range(start, min(len(lines), start + 60)):
        s = lines[i]
        if not s.strip() or watch_title(s):
            continue
        if _RECORD.fullmatch(s.strip()):
            return Parsed(path, "aligned expanded", _expanded_aligned(path, lines))
        if i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1]) and is_header(_aligned_names(s, lines[i + 1])):
            return Parsed(path, "aligned", _aligned(path, lines, is_header))
        for d in _delims(s):
            if is_header(_split(s, d)):
                return Parsed(path, "CSV" if d == "," else "unaligned", _delimited(path, lines, d, is_header))
        got = _expanded_delim(path, lines, i, is_header)
        if got is not None:
            return got
    return None


def _first_content(lines: list[str]) -> int | None:
    return next((i for i, l in enumerate(lines) if l.strip()), None)


def _delims(line: str) -> list[str]:
    extra = sorted({c for c in line if not (c.isalnum() or c in '_ "\'') and c not in _DELIMS})
    return [d for d in _DELIMS if d in line] + extra


def _split(line: str, d: str) -> tuple[str, ...]:
    if d == ",":
        try:
            fields = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            fields = line.split(",")
    else:
        fields = line.split(d)
    return tuple(x.strip().lower() for x in fields)


def _raw_split(line: str, d: str) -> list[str]:
    if d == ",":
        try:
            return next(csv.reader([line]))
        except (csv.Error, StopIteration):
            return line.split(",")
    return line.split(d)


class _Titles:
    """The \\watch header waiting for the next result."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.line: int | None = None
        self.every: float | None = None

    def take(self, res: Result) -> Result:
        res.title, res.title_line, res.every_s = self.text, self.line, self.every
        self.text = self.line = self.every = None
        return res

    def see(self, line: str, n: int) -> bool:
        w = watch_title(line)
        if w is None:
            return False
        self.text, self.every = w
        self.line = n
        return True


def _check_footer(path: str, n: int, count: int, res: Result | None) -> None:
    got = len(res.rows) if res else 0
    if res is None or count != got:
        raise DbtierError(f"{path}: line {n}: psql's footer says {count} row(s), {got} read above it",
                          "pass psql's output whole, as it printed it (a result was cut or edited)")


def _noise(s: str) -> bool:
    """psql's own lines between results: `Time: 1.2 ms` (\\timing, in any language), and what `psql -a`
    echoes (statements ending in `;`, meta-commands) and command tags (`SET`, `INSERT 0 1`)."""
    t = s.strip()
    return bool(_TIMING.fullmatch(t) or _ECHO.fullmatch(t) or _TAG.fullmatch(t))


# -- aligned ----------------------------------------------------------------------------------------------

@dataclass
class _Cells:
    bar: str | None                       # the column separator; None: border 0, cut by the rule's spans
    outer: bool                           # border 2: a bar at each end
    spans: list[tuple[int, int]]          # border 0: display columns of each field

    def split(self, line: str) -> list[str]:
        if self.bar is None:
            return _cut(line, self.spans)
        s = line.rstrip()
        if self.outer:
            s = s.strip()
            s = s[1:] if s[:1] == self.bar else s
            s = s[:-1] if s[-1:] == self.bar else s
        return s.split(self.bar)


def _cells(header: str, rule: str) -> _Cells:
    r = rule.rstrip()
    bar = next((b for b in _BARS if b in header), None)
    if bar is not None and any(c in _CROSS for c in r.strip()):
        return _Cells(bar, r.lstrip()[:1] in _CROSS or r.lstrip()[:1] in "╔╠┌├", [])
    spans = [(m.start(), m.end()) for m in re.finditer(r"[-─━═]+", r)]
    return _Cells(None, False, spans)


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 0 if unicodedata.combining(ch) else 1


def _cut(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Border 0: each field is the text under its run of dashes (psql pads by display width)."""
    cols: list[int] = []
    w = 0
    for ch in line:
        cols.append(w)
        w += _width(ch)
    out = []
    for k, (a, _end) in enumerate(spans):
        end = spans[k + 1][0] if k + 1 < len(spans) else 1 << 30
        out.append("".join(ch for ch, c in zip(line, cols) if (a if k else 0) <= c < end))
    return out


def _aligned_names(header: str, rule: str) -> tuple[str, ...]:
    return tuple(x.strip().lower() for x in _cells(header, rule).split(header))


def _aligned(path: str, lines: list[str], is_header: Callable[[tuple[str, ...]], bool]) -> list[Result]:
    out: list[Result] = []
    titles = _Titles()
    cur: Result | None = None
    cells = _Cells(None, False, [])
    i = 0
    while i < len(lines):
        s, n = lines[i], i + 1
        i += 1
        if cur is not None:
            if not s.strip():
                cur = None
            elif (cnt := footer(s)) is not None:
                _check_footer(path, n, cnt, cur)
                cur = None
            elif _RULE.fullmatch(s):            # border 2's line under the rows (the footer follows)
                continue
            elif len(vals := cells.split(s)) == len(cur.columns):
                cur.rows.append((n, [_val(v) for v in vals]))
            elif titles.see(s, n):
                cur = None
            else:
                raise DbtierError(f"{path}: line {n}: {len(vals)} field(s), the header on line {cur.header_line} "
                                  f"has {len(cur.columns)}", "pass psql's output as it printed it (no line wrapped "
                                  "or cut)")
            continue
        if s.strip() and i < len(lines) and _RULE.fullmatch(lines[i]) and not _RULE.fullmatch(s):
            names = _aligned_names(s, lines[i])
            if is_header(names):
                cells = _cells(s, lines[i])
                cur = titles.take(Result(n, names))
                out.append(cur)
                i += 1
                continue
        if not s.strip() or titles.see(s, n) or _RULE.fullmatch(s) or _noise(s) or not out:
            continue
        raise DbtierError(f"{path}: line {n}: not part of a psql table: {s.strip()[:60]!r}",
                          "pass psql's output as it printed it")
    return out


def _expanded_aligned(path: str, lines: list[str]) -> list[Result]:
    """`\\x`: `-[ RECORD n ]---` then `name | value` lines; RECORD 1 (or a \\watch header) starts a result."""
    records: list[tuple[int, int, list[tuple[int, str, str | None]], _Titles]] = []
    titles = _Titles()
    cur: list[tuple[int, str, str | None]] | None = None
    for i, s in enumerate(lines):
        n = i + 1
        m = _RECORD.fullmatch(s.strip())
        if m:
            cur = []
            held = _Titles()
            held.text, held.line, held.every = titles.text, titles.line, titles.every
            titles.text = titles.line = titles.every = None
            records.append((n, int(m.group(1)), cur, held))
            continue
        if not s.strip():
            cur = None
            continue
        if cur is None:
            if titles.see(s, n) or _noise(s) or _RULE.fullmatch(s):
                continue
            if footer(s) is not None:
                continue
            if records:
                raise DbtierError(f"{path}: line {n}: not part of a psql record: {s.strip()[:60]!r}",
                                  "pass psql's output as it printed it")
            continue
        if _RULE.fullmatch(s):
            continue
        t = s.strip()
        bar = next((c for c in t if c in _BARS), None)
        if bar is not None:
            if t.startswith(bar):                 # border 2: | name | value |
                t = t[1:-1] if t.endswith(bar) and len(t) > 1 else t[1:]
            name, sep, value = t.partition(bar)
        else:                                     # border 0: name  value
            name, sep, value = t.partition(" ")
        if not sep:
            if titles.see(s, n):
                cur = None
                continue
            raise DbtierError(f"{path}: line {n}: not a `name | value` line of a psql record: {s.strip()[:60]!r}",
                              "pass psql's output as it printed it")
        cur.append((n, name.strip().lower(), _val(value)))
    return _records_to_results(path, [(n, k == 1, fields, t) for n, k, fields, t in records])


def _records_to_results(path: str, records) -> list[Result]:
    """Records (line, starts a result, [(line, name, value)], the \\watch header above) into results: the
    first record's names are the header; every other record of the result must have the same."""
    out: list[Result] = []
    cur: Result | None = None
    for n, first, fields, t in records:
        names = tuple(name for _, name, _ in fields)
        if not fields:
            raise DbtierError(f"{path}: line {n}: a record without fields", "pass psql's output as it printed it")
        if cur is None or first or t.text is not None:
            cur = Result(n, names)
            cur.title, cur.title_line, cur.every_s = t.text, t.line, t.every
            out.append(cur)
        elif names != cur.columns:
            missing = [c for c in cur.columns if c not in names]
            extra = [c for c in names if c not in cur.columns]
            what = (f"lacks {', '.join(missing)}" if missing else f"has {', '.join(extra)} too" if extra
                    else "has its fields in another order")
            raise DbtierError(f"{path}: line {n}: this record {what} (against the record on line {cur.header_line})",
                              "pass psql's output whole, as it printed it")
        cur.rows.append((fields[0][0], [v for _, _, v in fields]))
    return out


# -- unaligned and CSV ------------------------------------------------------------------------------------

def _delimited(path: str, lines: list[str], d: str, is_header: Callable[[tuple[str, ...]], bool]) -> list[Result]:
    out: list[Result] = []
    titles = _Titles()
    cur: Result | None = None
    for i, s in enumerate(lines):
        n = i + 1
        if not s.strip() or titles.see(s, n):
            cur = cur if not s.strip() else None
            continue
        fields = _raw_split(s, d)
        names = tuple(x.strip().lower() for x in fields)
        if cur is not None and len(fields) == len(cur.columns) and names != cur.columns:
            cur.rows.append((n, [_val(v) for v in fields]))
        elif is_header(names):                   # the first header, or the next result's
            cur = titles.take(Result(n, names))
            out.append(cur)
        elif (cnt := footer(s)) is not None:
            _check_footer(path, n, cnt, cur)
            cur = None
        elif not (_noise(s) or not out):
            want = f"the header on line {cur.header_line} has {len(cur.columns)}" if cur else "no header above it"
            raise DbtierError(f"{path}: line {n}: {len(fields)} field(s), {want}",
                              "pass psql's output as it printed it (one -F separator, no line wrapped or cut)")
    return out


def _expanded_delim(path: str, lines: list[str], start: int,
                    is_header: Callable[[tuple[str, ...]], bool]) -> Parsed | None:
    """`-A -x` (`name|value`, a blank line between records) or `--csv -x` (`name,value`, nothing between):
    recognised when the first names of the lines from `start` make a header `is_header` accepts."""
    for d in _delims(lines[start]):
        names: list[str] = []
        for s in lines[start:start + 200]:
            if not s.strip():
                if names:
                    break
                continue
            name = _raw_split(s, d)[0].strip().lower()
            if names and name == names[0]:
                break
            names.append(name)
        if len(names) > 1 and is_header(tuple(names)):
            form = "CSV expanded" if d == "," else "unaligned expanded"
            return Parsed(path, form, _expanded_delimited(path, lines, d, names[0]))
    return None


def _expanded_delimited(path: str, lines: list[str], d: str, first: str) -> list[Result]:
    records: list[tuple[int, bool, list[tuple[int, str, str | None]], _Titles]] = []
    titles = _Titles()
    cur: list[tuple[int, str, str | None]] | None = None
    new_result = True
    for i, s in enumerate(lines):
        n = i + 1
        if not s.strip():
            cur = None
            continue
        if titles.see(s, n):
            cur, new_result = None, True
            continue
        fields = _raw_split(s, d)
        if len(fields) < 2:
            if (footer(s) is not None or _noise(s)) and cur is None:
                continue
            if not records:
                continue
            raise DbtierError(f"{path}: line {n}: not a `name{d}value` line of a psql record: {s.strip()[:60]!r}",
                              "pass psql's output as it printed it")
        name = fields[0].strip().lower()
        value = d.join(fields[1:]) if d != "," else ",".join(fields[1:])
        if cur is None or name == first:
            cur = []
            held = _Titles()
            held.text, held.line, held.every = titles.text, titles.line, titles.every
            titles.text = titles.line = titles.every = None
            records.append((n, new_result, cur, held))
            new_result = False
        cur.append((n, name, _val(value)))
    return _records_to_results(path, records)


# -- times ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stamp:
    """A printed time: the wall-clock time it says, and its zone when it says one."""
    local: dt.datetime                   # naive
    offset_s: int | None = None          # a numeric offset printed (+05:30, -03, -0500)
    zone: str | None = None              # an abbreviation printed (UTC, CET, EST)


def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s.casefold()) if not unicodedata.combining(c))


# Month names and abbreviations as glibc's %c and PostgreSQL print them, folded (lower case, no accents):
# English, French, German, Spanish, Italian, Portuguese, Dutch, Nordic, Polish, Czech, Finnish, Hungarian,
# Turkish, Russian, Ukrainian, Greek. The longest prefix of a word wins (Czech cervna June, cervence July).
MONTHS: dict[str, int] = {}
for _m, _names in enumerate((
        "jan janv janeiro januar ene gen sty led tammi oca янв січ ιαν",
        "feb fev fevr febr unor uno lut helmi sub фев лют φεβ",
        "mar mars marz mrt maart marc brez maalis мар бер μαρ",
        "apr avr abr kwi dub huhti nis апр кві απρ",
        "may mai mag maj mei kvet touko мая май тра μαι",
        "jun juin giu cze cervn cerven kesa haz июн чер ιουν",
        "jul juil lug lip cervenc cervence hein tem июл лип ιουλ",
        "aug aout ago sie srp elo agu авг сер αυγ",
        "sep sept set wrz zari syys eyl szept сен вер σεπ",
        "oct okt ott out paz rij loka eki окт жов οκτ",
        "nov lis list marras kas ноя ноя лис νοε",
        "dec dez dic gru pros joulu ara des дек гру δεκ"), 1):
    for _n in _names.split():
        MONTHS[_fold(_n)] = _m

_AM = {_fold(w) for w in ("am", "a.m", "πμ", "오전", "午前", "上午")}
_PM = {_fold(w) for w in ("pm", "p.m", "μμ", "오후", "午後", "下午")}
_UTC = {"utc", "gmt", "ut", "z", "zulu"}
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?\s*(Z|[+-]\d\d(?::?\d\d){0,2})?")
_TIME = re.compile(r"(?<![\d.:])(\d{1,2})\s*[:.時时시]\s*(\d{2})\s*(?:[:.分분]\s*(\d{2})(?:[.,](\d{1,9}))?)?\s*[秒초]?"
                   r"(?![\d:])")
_NUMDATE = re.compile(r"(?<!\d)(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?!\d)")
_CJKDATE = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]?")
_OFFSET = re.compile(r"(?:^|\s)([+-])(\d\d)(?::?(\d\d))?$")
_ABBR = re.compile(r"(?:^|\s)([A-Z][A-Za-z]{1,5})$")


def _offset(sign: str, hh: str, mm: str | None, ss: str | None = None) -> int:
    v = int(hh) * 3600 + int(mm or 0) * 60 + int(ss or 0)
    return -v if sign == "-" else v


def slash_order(texts: Iterable[str]) -> str | None:
    """'DMY' or 'MDY' for DateStyle SQL's `nn/nn/yyyy` dates, from a value that can be read one way only;
    None when every value reads both ways (or none has such a date)."""
    dmy = mdy = False
    for t in texts:
        m = _NUMDATE.search(t or "")
        if not m or m.group(2) != "/":
            continue
        a, b = int(m.group(1)), int(m.group(3))
        dmy |= a > 12
        mdy |= b > 12
    if dmy != mdy:
        return "DMY" if dmy else "MDY"
    return None


def parse_time(text: str, order: str | None = None) -> Stamp:
    """A time as PostgreSQL (any DateStyle) or psql's \\watch (`%c` of its locale) prints it; ValueError
    saying why not. `order`: 'DMY' or 'MDY' for `nn/nn/yyyy` dates (slash_order)."""
    s = " ".join(text.split())
    if not s or len(s) > 120:
        raise ValueError("not a time")
    m = _ISO.fullmatch(s)
    if m:
        y, mo, d, h, mi, sec, frac, off = m.groups()
        local = _make(int(y), int(mo), int(d), int(h), int(mi), int(sec), frac)
        if off is None:
            return Stamp(local)
        if off == "Z":
            return Stamp(local, 0)
        parts = off[1:].replace(":", "")
        return Stamp(local, _offset(off[0], parts[0:2], parts[2:4] or None, parts[4:6] or None))
    offset_s = zone = None
    mo_ = _OFFSET.search(s)
    if mo_:
        offset_s = _offset(mo_.group(1), mo_.group(2), mo_.group(3))
        s = s[:mo_.start()].strip()
    else:
        ma = _ABBR.search(s)
        if ma and _fold(ma.group(1)) not in _AM | _PM and _fold(ma.group(1)) not in MONTHS:
            zone = ma.group(1)
            s = s[:ma.start()].strip()
            if _fold(zone) in _UTC:
                zone, offset_s = None, 0
    year = month = day = None
    md = _CJKDATE.search(s)
    if md:
        year, month, day = int(md.group(1)), int(md.group(2)), int(md.group(3))
        s = s[:md.start()] + " " + s[md.end():]
    else:
        mn = _NUMDATE.search(s)
        if mn:
            a, sep, b, year = int(mn.group(1)), mn.group(2), int(mn.group(3)), int(mn.group(4))
            if sep == "/" and order is None:
                if a <= 12 and b <= 12 and a != b:
                    raise ValueError(f"{mn.group(0)} reads as day/month and as month/day (DateStyle SQL)")
                order = "DMY" if a > 12 else "MDY"
            day, month = (a, b) if sep != "/" or order == "DMY" else (b, a)
            s = s[:mn.start()] + " " + s[mn.end():]
    mt = _TIME.search(s)
    if not mt:
        raise ValueError("no time of day (hh:mm:ss) in it")
    if mt.group(3) is None:
        raise ValueError("no seconds in its time of day")
    hour, minute, second, frac = int(mt.group(1)), int(mt.group(2)), int(mt.group(3)), mt.group(4)
    s = s[:mt.start()] + " " + s[mt.end():]
    words = [w for w in re.split(r"[\s,()/-]+", s) if w]
    folded = [_fold(w).strip(".") for w in words]
    if any(w in _PM for w in folded) and hour < 12:
        hour += 12
    elif any(w in _AM for w in folded) and hour == 12:
        hour = 0
    if year is None:
        ys = [i for i, w in enumerate(folded) if re.fullmatch(r"\d{4}\.?", w)]
        if len(ys) != 1:
            raise ValueError("no year in it")
        year = int(folded[ys[0]].strip("."))
        folded[ys[0]] = ""
    if month is None:
        found: list[tuple[int, int]] = [(i, mm) for i, w in enumerate(folded) if (mm := _month(w))]
        if len(found) > 1:            # a weekday that is also a month's abbreviation (French mar. = mardi)
            found = found[1:]
        if len(found) != 1:
            raise ValueError("no month name dbtier knows in it" if not found else "two month names in it")
        month = found[0][1]
        folded[found[0][0]] = ""
    if day is None:
        days = [int(w.strip(".-")) for w in folded if re.fullmatch(r"\d{1,2}\.?-?", w)]
        if len(days) != 1:
            raise ValueError("no day of the month in it")
        day = days[0]
    return Stamp(_make(year, month, day, hour, minute, second, frac), offset_s, zone)


def _month(word: str) -> int | None:
    w = "".join(ch for ch in word if ch.isalpha())
    if len(w) < 3 or w.isdigit():
        return None
    best = None
    for k in range(len(w), 2, -1):
        if w[:k] in MONTHS:
            best = MONTHS[w[:k]]
            break
    return best


def _make(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str | None) -> dt.datetime:
    us = int((frac or "0")[:6].ljust(6, "0"))
    try:
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError as exc:
        raise ValueError(f"not a date and time ({exc})") from None
