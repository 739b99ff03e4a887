"""The result document: what every command writes (document.py), how it is stored and read back (store.py),
what kind of result it is and what each part of dbtier makes of that kind (kinds.py, resolved by registry.py),
its types and the JSON Schema made from them (types*.py, schema/), the shape check of a document read back
(shape.py), a command's typed, immutable result as its library call returns it (result.py), and the
probe's facts shared by its writer and readers (probe.py, cache_suspect.py).

May import dbtier.core only; never model/, measure/, report/, export/, runsdb/ or cli/ (registry.py names
their modules as text and imports them when asked).
"""
