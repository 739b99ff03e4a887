"""The user's own prices (`--prices FILE`) and the grade of drive a plan may offer (`--grade`).

Prices: a quote file replaces the catalog's `price_usd` of the devices it names, so a plan is priced on
what the buyer was quoted rather than on the catalog's street price. Two formats, told by the file's
suffix (.csv, .toml; any other: TOML when it holds a `[[price]]` table, else CSV):

    id,price_usd,currency,date,source
    nvme-enterprise-3.84tb,399,USD,2026-10-02,reseller quote Q-1182

    [[price]]
    id = "nvme-enterprise-3.84tb"
    price_usd = 399
    currency = "USD"
    date = "2026-10-02"          # or 2026-10 (the month); a bare TOML date works too
    source = "reseller quote Q-1182"

`id`, `price_usd`, `currency` and `date` are required, `source` is optional (default: the file and line).
Only USD is read (every figure of a plan is in US dollars): convert a quote first. A price is a positive
number of dollars (no currency sign, no thousands separator); a date is YYYY-MM or YYYY-MM-DD and not
after today. A quote older than a year (STALE_AFTER_YEARS; a month-only date counts from its last day,
so only a quote certainly that old is flagged) is applied and flagged `stale`: prices of storage move
that much in a year. Every bad line is one DbtierError naming the file, the line and the id.

Grade: `production` (the default) offers devices whose `grade` is "datacenter"; `lab` adds "client"
drives (a test box, a developer's machine: no power-loss protection, a PC warranty). Entries without a
grade: study devices (`device_class` "study", the 2009-2011 studies' hardware) are not today's market
and are offered under neither grade unless `--devices` names them; cloud volumes and shared arrays are
services or whole arrays with no drive grade and stay as they are; any other entry without a grade (a
user catalog written before grades) is offered and listed as `unstated`. A client drive named with
`--devices` under production is refused (use --grade lab).

Pure apart from `load_prices`, which reads the one file.
"""

from __future__ import annotations

import calendar
import copy
import csv
import datetime as dt
import io
import math
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.files import read_small_text
from dbtier.model.plan.catalog import Catalog, Device

COLUMNS = ("id", "price_usd", "currency", "date", "source")
REQUIRED = ("id", "price_usd", "currency", "date")
MAX_PRICE_USD = 1e9                     # the catalog's own bound on price_usd
MAX_FILE_BYTES = 4 * 1024 * 1024        # a quote file is a few lines; anything far larger is not one
STALE_AFTER_YEARS = 1
GRADES = ("production", "lab")
# kinds that carry no drive grade: a provider's volume, a whole array bought by usable TB
UNGRADED_KINDS = ("cloud-volume", "shared-array")

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_TOML_HEADER_RE = re.compile(r"^\s*\[\[\s*price\s*\]\]")
_HINT_FORMAT = ("one quote a line: id,price_usd,currency,date,source (CSV with that header) or [[price]] tables "
                "(TOML); see `dbtier plan size --help`")


@dataclass(frozen=True)
class Quote:
    id: str
    price_usd: float
    date: str           # YYYY-MM or YYYY-MM-DD, as written
    source: str | None  # None: the file did not say
    line: int           # where it is in its file (1-based)


# -- reading -------------------------------------------------------------------------------------------------

def load_prices(path: str | Path, catalog: Catalog, today: dt.date | None = None
                ) -> tuple[Catalog, dict[str, Any]]:
    """Read, check and apply one quote file: (the catalog with the quoted prices, the document's `prices`)."""
    text = _read(Path(path))
    quotes = parse_prices(text, str(path), _format(Path(path), text), today)
    return apply_prices(catalog, quotes, str(path), today)


def _read(path: Path) -> str:
    hint = "pass a .csv or .toml file of quotes to --prices (relative paths start at the current directory)"
    return read_small_text(path, "prices file", hint, MAX_FILE_BYTES, "not a quote file", "utf-8-sig")


def _format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".toml"):
        return suffix[1:]
    return "toml" if any(_TOML_HEADER_RE.match(line) for line in text.splitlines()) else "csv"


def parse_prices(text: str, origin: str, fmt: str = "csv", today: dt.date | None = None) -> list[Quote]:
    """Every quote of one file's text, checked (`fmt`: "csv" or "toml"); `origin` names the file in messages."""
    if "\x00" in text:
        raise DbtierError(f"{origin}: it contains a NUL character (a binary file?)", _HINT_FORMAT)
    rows = _toml_rows(text, origin) if fmt == "toml" else _csv_rows(text, origin)
    if not rows:
        raise DbtierError(f"{origin}: no quotes in it", _HINT_FORMAT)
    today = today or dt.date.today()
    quotes: list[Quote] = []
    first: dict[str, int] = {}
    for line, row in rows:
        q = _quote(row, line, origin, today)
        if q.id in first:
            raise DbtierError(f"{origin} line {line}: id '{q.id}' is quoted again (first on line {first[q.id]})",
                              "keep one quote a device: the one the plan should use")
        first[q.id] = line
        quotes.append(q)
    return quotes


def _csv_rows(text: str, origin: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip().lower() for c in cells]
                unknown = [c for c in header if c not in COLUMNS]
                missing = [c for c in REQUIRED if c not in header]
                if unknown or missing:
                    what = (f"unknown column '{unknown[0]}'" if unknown else
                            f"no '{missing[0]}' column")
                    raise DbtierError(f"{origin} line {line}: {what} (the header is "
                                      f"{','.join(COLUMNS)}; source is optional)", _HINT_FORMAT)
                dup = [c for c in header if header.count(c) > 1]
                if dup:
                    raise DbtierError(f"{origin} line {line}: column '{dup[0]}' appears twice in the header",
                                      _HINT_FORMAT)
                continue
            if len(cells) > len(header):
                raise DbtierError(f"{origin} line {line}: {len(cells)} fields, the header has {len(header)}",
                                  "quote a field holding a comma: \"reseller, Q-1\"")
            out.append((line, {k: v.strip() for k, v in zip(header, cells) if v.strip()}))
    except csv.Error as exc:
        raise DbtierError(f"{origin} line {reader.line_num}: not valid CSV: {exc}", _HINT_FORMAT) from None
    if header is None:
        raise DbtierError(f"{origin}: empty: no header and no quotes", _HINT_FORMAT)
    return out


def _toml_rows(text: str, origin: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DbtierError(f"{origin}: not valid TOML: {exc}", "fix the syntax at that line; " + _HINT_FORMAT) from exc
    except (RecursionError, ValueError) as exc:
        raise DbtierError(f"{origin}: not valid TOML for quotes: {exc}", _HINT_FORMAT) from None
    unknown = [k for k in data if k != "price"]
    if unknown:
        raise DbtierError(f"{origin}: unknown top-level key '{unknown[0]}' (only [[price]] tables)", _HINT_FORMAT)
    entries = data.get("price", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise DbtierError(f"{origin}: 'price' must be an array of tables written [[price]]", _HINT_FORMAT)
    lines = [i for i, line in enumerate(text.splitlines(), 1) if _TOML_HEADER_RE.match(line)]
    out = []
    for n, e in enumerate(entries):
        line = lines[n] if n < len(lines) else 0
        bad = [k for k in e if k not in COLUMNS]
        if bad:
            raise DbtierError(f"{origin} line {line}: [[price]] #{n + 1}: unknown field '{bad[0]}' "
                              f"(allowed: {', '.join(COLUMNS)})", "fix the field name")
        row = {}
        for k, v in e.items():
            if isinstance(v, dt.date) and not isinstance(v, dt.datetime) and k == "date":
                v = v.isoformat()
            elif isinstance(v, str):
                v = v.strip()
            row[k] = v
        out.append((line, row))
    return out


def _quote(row: dict[str, Any], line: int, origin: str, today: dt.date) -> Quote:
    id_ = row.get("id")
    where = f"{origin} line {line}"
    if not isinstance(id_, str) or not id_:
        raise DbtierError(f"{where}: no device id", "give the catalog id of the device quoted "
                          "(`dbtier catalog list` lists them)")
    where += f" (id '{id_}')"
    for key in REQUIRED[1:]:
        if row.get(key) in (None, ""):
            raise DbtierError(f"{where}: no {key}", {"price_usd": "give the quoted price in US dollars, e.g. 399",
                                                      "currency": "write USD (convert other currencies first)",
                                                      "date": "give the quote's date, YYYY-MM-DD or YYYY-MM"}[key])
    for key in ("currency", "date", "source"):
        if key in row and not isinstance(row[key], str):
            raise DbtierError(f"{where}: {key} must be text, got {row[key]!r}", f'quote it: {key} = "..."')
    currency = row["currency"]
    if currency.upper() != "USD":
        raise DbtierError(f"{where}: currency '{currency}': only USD is read (the catalog and every plan are in "
                          "US dollars)", "convert the price to US dollars first and write USD")
    price = _price(row["price_usd"], where)
    date = _date(row["date"], where, today)
    return Quote(id_, price, date, row.get("source") or None, line)


def _price(value: Any, where: str) -> float:
    hint = "write the price in US dollars as a bare positive number, e.g. 399 or 1249.50"
    if isinstance(value, bool):
        raise DbtierError(f"{where}: price_usd {value} is not a positive number", hint)
    if isinstance(value, str):
        try:
            x = float(value)
        except ValueError:
            raise DbtierError(f"{where}: price_usd '{value}' is not a positive number (no currency sign or "
                              "thousands separator)", hint) from None
    elif isinstance(value, (int, float)):
        x = float(value)
    else:
        raise DbtierError(f"{where}: price_usd {value!r} is not a positive number", hint)
    if not math.isfinite(x) or x <= 0:
        raise DbtierError(f"{where}: price_usd {value} is not a positive number", hint)
    if x > MAX_PRICE_USD:
        raise DbtierError(f"{where}: price_usd {value} is above {MAX_PRICE_USD:,.0f} US dollars", hint)
    return x


def _date(text: str, where: str, today: dt.date) -> str:
    hint = "write the quote's date as YYYY-MM-DD or YYYY-MM, e.g. 2026-10-02"
    m = _DATE_RE.match(text)
    try:
        if m is None:
            raise ValueError
        first = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError:
        raise DbtierError(f"{where}: date '{text}' is not a date written YYYY-MM-DD or YYYY-MM", hint) from None
    if first > today:
        raise DbtierError(f"{where}: date '{text}' is after today ({today.isoformat()})",
                          "give the date the price was quoted")
    return text


def last_day(date: str) -> dt.date:
    """The last day a YYYY-MM or YYYY-MM-DD date can mean (a month: its last day)."""
    m = _DATE_RE.match(date)
    if m is None:
        raise ValueError(date)
    y, mo = int(m.group(1)), int(m.group(2))
    return dt.date(y, mo, int(m.group(3)) if m.group(3) else calendar.monthrange(y, mo)[1])


def is_stale(date: str, today: dt.date) -> bool:
    """Older than STALE_AFTER_YEARS before `today`, even taken at the latest day it can mean."""
    try:
        year_ago = today.replace(year=today.year - STALE_AFTER_YEARS)
    except ValueError:                  # 29 February
        year_ago = today.replace(year=today.year - STALE_AFTER_YEARS, day=28)
    return last_day(date) < year_ago


# -- applying ------------------------------------------------------------------------------------------------

def apply_prices(catalog: Catalog, quotes: Sequence[Quote], origin: str, today: dt.date | None = None
                 ) -> tuple[Catalog, dict[str, Any]]:
    """A new catalog whose quoted devices carry the quote's price_usd, price_date and price_source, and the
    document's `prices`: {file, applied: [{id, price_usd, date, source, stale, line, catalog_price_usd,
    catalog_price_date, catalog_price_source}], notes}. Each replaced price is recorded in the catalog's
    `overridden` as "price:<id>" -> the origin of the entry whose price it replaced."""
    today = today or dt.date.today()
    devices = dict(catalog.devices)
    overridden = dict(catalog.overridden)
    applied, notes = [], []
    for q in quotes:
        if q.id not in devices:
            if q.id in catalog.overheads:
                raise DbtierError(f"{origin} line {q.line}: '{q.id}' is an overhead (a controller, enclosure or "
                                  "bus): --prices quotes devices", "price an overhead in a --catalog file "
                                  "([[overhead]] with the same id)")
            try:
                catalog.device(q.id)
            except DbtierError as exc:
                raise DbtierError(f"{origin} line {q.line}: {exc.message}", exc.hint) from None
        d = devices[q.id]
        if d.kind == "cloud-volume":
            raise DbtierError(f"{origin} line {q.line}: '{q.id}' is a cloud volume, priced by the provider's list "
                              "price a month", "quote owned devices only; cloud plans (--cloud) use the "
                              "providers' prices")
        stale = is_stale(q.date, today)
        source = q.source or f"{origin} line {q.line}"
        devices[q.id] = replace(d, price_usd=q.price_usd, price_date=q.date, price_source=source)
        overridden[f"price:{q.id}"] = d.origin
        applied.append({"id": q.id, "price_usd": q.price_usd, "date": q.date, "source": source, "stale": stale,
                        "line": q.line, "catalog_price_usd": d.price_usd, "catalog_price_date": d.price_date,
                        "catalog_price_source": d.price_source})
        if stale:
            notes.append(f"{q.id}: the quote of {q.date} (${q.price_usd:,.2f}, {source}) is more than a year "
                         f"old on {today.isoformat()}: storage prices move that much in a year; get a fresh quote")
    priced = _with(catalog, devices, overridden)
    return priced, {"file": origin, "applied": applied, "notes": notes}


def _with(catalog: Catalog, devices: dict[str, Device], overridden: dict[str, str]) -> Catalog:
    """A copy of `catalog` (its overheads, files, server and every other table as they are) holding
    `devices` and `overridden`: the original is never changed."""
    out = copy.copy(catalog)
    out.devices = dict(devices)
    out.overridden = dict(overridden)
    return out


def price_basis(d: Device, prices: dict[str, Any] | None = None) -> dict[str, Any]:
    """Which price a figure of `d` uses: {price_usd, from: "quote"|"catalog", date, source, stale, text} (with
    `prices`, the document's `prices` of the quote file applied)."""
    hit = next((a for a in (prices or {}).get("applied") or [] if a.get("id") == d.id), None)
    if hit is not None and prices is not None:
        was = (f"; the catalog's: ${hit['catalog_price_usd']:,.2f}"
               + (f" of {hit['catalog_price_date']}" if hit.get("catalog_price_date") else ""))
        where = hit["source"] if prices["file"] in hit["source"] else f"{hit['source']}, {prices['file']}"
        text = (f"quoted: ${hit['price_usd']:,.2f} of {hit['date']} ({where})"
                + (", more than a year old" if hit["stale"] else "") + was)
        return {"price_usd": hit["price_usd"], "from": "quote", "date": hit["date"], "source": hit["source"],
                "stale": hit["stale"], "text": text}
    text = (f"the catalog's: ${d.price_usd:,.2f}" + (f" of {d.price_date}" if d.price_date else ", undated")
            + f" ({d.price_source or d.source})")
    return {"price_usd": d.price_usd, "from": "catalog", "date": d.price_date,
            "source": d.price_source or d.source, "stale": None, "text": text}


# -- the grade -----------------------------------------------------------------------------------------------

def grade_text(grade: str) -> str:
    if grade == "lab":
        return ("lab: datacenter and client drives (a test box, a developer's machine); client drives have no "
                "power-loss protection and a PC warranty: not for production data")
    return "production: datacenter drives only (--grade lab also offers client drives)"


def grade_filter(catalog: Catalog, grade: str, named: Sequence[str] | None = None
                 ) -> tuple[Catalog, dict[str, Any]]:
    """The catalog a plan of `grade` may search, and the document's `grade`: {grade, allows, text, left_out:
    [{device, reason, detail}] (reason "grade" or "study"), unstated: [ids offered without a grade]}.

    `named` (--devices): those are the devices searched, so nothing is left out (a study device named is
    sized) and the catalog is returned whole; a client drive named under production is refused."""
    if grade not in GRADES:
        raise DbtierError(f"--grade {grade}: not a grade", f"give one of {', '.join(GRADES)}")
    allows = ["datacenter", "client"] if grade == "lab" else ["datacenter"]
    names = list(dict.fromkeys(named or []))
    if names:
        # named: the search takes those alone, so the catalog stays whole (an id it lacks, a shipped array's
        # or a typo, is the planner's to answer, with the closest ids named)
        for n in names:
            d = catalog.devices.get(n)
            if d is not None and d.grade == "client" and grade == "production":
                raise DbtierError(f"--devices {n}: a client drive ({d.device_class or d.kind}; no datacenter "
                                  "warranty or power-loss protection), and the plan is for production",
                                  "add --grade lab to size a test box or a developer's machine on it")
        return _with(catalog, catalog.devices, catalog.overridden), {
            "grade": grade, "allows": allows, "text": grade_text(grade), "left_out": [], "unstated": []}
    kept: dict[str, Device] = {}
    left_out: list[dict[str, Any]] = []
    unstated: list[str] = []
    for d in catalog.devices.values():
        if d.grade in allows:
            kept[d.id] = d
        elif d.grade == "client":
            left_out.append({"device": d.id, "reason": "grade",
                             "detail": f"{d.id}: a client drive ({d.device_class or d.kind}); --grade lab offers it"})
        elif d.grade is None and d.device_class == "study":
            left_out.append({"device": d.id, "reason": "study",
                             "detail": f"{d.id}: a device of the 2009-2011 studies, not on today's market; "
                                       "--devices names it"})
        elif d.grade is None and d.kind in UNGRADED_KINDS:
            kept[d.id] = d
        else:
            kept[d.id] = d
            if d.grade is None:
                unstated.append(d.id)
    graded = _with(catalog, kept, catalog.overridden)
    return graded, {"grade": grade, "allows": allows, "text": grade_text(grade), "left_out": left_out,
                    "unstated": unstated}


def grade_line(doc: dict[str, Any]) -> str:
    """The document's `grade` in one line for a terminal (what was offered and what was left out)."""
    out = f"grade {doc['text']}"
    by: dict[str, list[str]] = {}
    for x in doc.get("left_out") or []:
        by.setdefault(x["reason"], []).append(x["device"])
    if by.get("grade"):
        out += f"; left out {len(by['grade'])} client drive(s) ({', '.join(by['grade'])})"
    if by.get("study"):
        out += f"; left out {len(by['study'])} study device(s) (--devices names one)"
    if doc.get("unstated"):
        out += f"; offered without a stated grade: {', '.join(doc['unstated'])} (add grade = ... to the entry)"
    return out
