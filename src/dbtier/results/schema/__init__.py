"""The published JSON Schema of result.json (schema_version 1)."""

import json
from importlib import resources
from typing import Any


def result_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(resources.files(__name__).joinpath("result.schema.json").read_text())
    return schema
