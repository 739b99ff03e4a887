"""`dbtier report RUN_DIR...`: a self-contained HTML report (placeholder until the report module lands)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of one or more runs")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.set_defaults(func=lambda a: 0)
