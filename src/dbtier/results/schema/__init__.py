"""The published JSON Schema of result.json (schema_version 1)."""

import json
from importlib import resources


def result_schema() -> dict:
    return json.loads(resources.files(__name__).joinpath("result.schema.json").read_text())
