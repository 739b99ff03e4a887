"""`python -m dbtier.results.schema`: write result.schema.json from the result types (--check: exit 1 when the
committed file differs from what the types give)."""

import sys
from pathlib import Path

from dbtier.results.schema.generate import text

PATH = Path(__file__).with_name("result.schema.json")

if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        same = PATH.read_text() == text()
        print(f"{PATH}: {'up to date' if same else 'differs from the types: run python -m dbtier.results.schema'}")
        sys.exit(0 if same else 1)
    PATH.write_text(text())
    print(f"wrote {PATH}")
