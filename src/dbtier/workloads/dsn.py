"""A user's PostgreSQL connection string (--dsn): checked before anything starts, never echoed with
its password.

libpq raises ProgrammingError (not OperationalError) for a string it cannot parse (`host=`, `foo`,
`dbname='unterminated`); both become one DbtierError naming --dsn. A password may sit in the DSN
(the docs say to use PGPASSWORD or ~/.pgpass, but users paste what they have), so every message
and the result document show the DSN with it masked.
"""

from __future__ import annotations

import re
from dbtier.core.errors import DbtierError
from dbtier.workloads.parsers.oltp import redact

HINT = ("a libpq connection string, e.g. 'host=db1 port=5432 user=bench dbname=postgres' or "
        "postgresql://bench@db1/postgres; the password goes in PGPASSWORD or ~/.pgpass")
_URI_USERINFO = re.compile(r"(postgres(?:ql)?://)([^/@?#]*?):[^@/?#]*@", re.I)


def shown_dsn(dsn: str) -> str:
    """A malformed DSN fit to print: its end may belong to a password (`password=my secret` fails to
    parse at 'secret'), so everything from a password keyword on, and a URI's password, is cut."""
    i = dsn.lower().find("password")
    if i >= 0:
        return dsn[:i] + "password=***" + (" ..." if dsn[i + len("password"):].strip(" =") else "")
    return _URI_USERINFO.sub(r"\1\2:***@", dsn)


def redact_dsn(dsn: str) -> str:
    """A DSN fit to print: the password (key=value or URI) replaced by ***. The masked string is parsed
    again: unless libpq then reads the password as '***' (an escaped or oddly quoted one the pattern
    missed), everything from the password on is cut, as for a malformed DSN."""
    import psycopg
    try:
        pw = psycopg.conninfo.conninfo_to_dict(dsn).get("password")
    except psycopg.Error:
        return shown_dsn(dsn)
    out = _URI_USERINFO.sub(r"\1\2:***@", redact(dsn))
    if pw is None:
        return out
    try:
        masked = psycopg.conninfo.conninfo_to_dict(out).get("password")
    except psycopg.Error:
        masked = None
    return out if masked == "***" else shown_dsn(dsn)


def dsn_problem(dsn: str) -> str | None:
    """None for a connection string libpq can parse; else why not, in words fit to print (quoted
    fragments of libpq's message that the shown DSN hides are masked too)."""
    if not dsn.strip():
        return "an empty connection string (leave --dsn out to use the managed cluster)"
    import psycopg
    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        shown = shown_dsn(dsn)
        first = (str(exc).strip().splitlines() or ["not a connection string"])[0]
        # a fragment is kept when the shown DSN has it anyway, or when it is bare punctuation ("=")
        return re.sub(r'"([^"]*)"', lambda m: m.group(0) if m.group(1) in shown or not re.search(r"\w", m.group(1))
                      else '"***"', first)
    return None


def check_dsn(dsn: str, option: str = "--dsn") -> str:
    """`dsn` if libpq can parse it; otherwise a DbtierError naming the option (password masked)."""
    problem = dsn_problem(dsn)
    if problem:
        raise DbtierError(f"{option} {shown_dsn(dsn)!r}: not a valid connection string: {problem}", HINT)
    return dsn
