"""Data, no code: the shipped device catalog (current.toml, legacy.toml, overhead.toml), shared arrays
(arrays.toml), cloud volumes, instances and clustered databases (cloud_volumes.toml, instances.toml,
cloud_clusters.toml; CLOUD.md), every entry with its source. Read through importlib.resources by
model/plan/ (catalog.py, shared_array.py) and model/cloud/."""
