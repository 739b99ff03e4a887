"""The result document as JSON: what orjson makes of values Python's json would write as invalid JSON."""

from __future__ import annotations

import json
import math

from dbtier.results.store import dumps, write_json_atomic


def test_dumps_is_indented_json_with_nan_as_null_and_numbers_as_keys(tmp_path):
    doc = {"a": math.nan, "b": [1, 2.5, math.inf], 3: "x", "t": (1, 2), "ü": "é"}
    text = dumps(doc).decode()
    assert json.loads(text) == {"a": None, "b": [1, 2.5, None], "3": "x", "t": [1, 2], "ü": "é"}
    assert text.startswith('{\n  "a": null') and text.endswith("}\n")
    write_json_atomic(tmp_path / "r.json", doc)
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(text)
