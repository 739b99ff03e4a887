"""Cloud storage as the providers sell it, and `plan size --cloud PROVIDER` (advise's cloud options).

volumes.py    volume types' limits and prices as formulas, striped sets, instance caps, burst credit
              buckets (the shipped catalog/cloud_volumes.toml and instances.toml)
instances.py  instances from `aws ec2 describe-instance-types` output
cluster.py    whether a clustered database may use a provider's shared volumes (catalog/cloud_clusters.toml)
sizing.py     per volume type the cheapest stripe that meets the requirement, within an instance's caps
roles.py      one volume set per role of the database (data, log, temp, archive) under one instance
design.py     one provider's designs for a CloudRequest: the sizing, the roles, the history's burst replay
              (advise calls it; the history's rates come in as data), and `plan size --cloud` as a library
              call: cloud_plan(CloudPlanRequest) -> PlanCloud

Pure. They may import model/plan/ (the requirement), dbtier.core and dbtier.results.result (the typed
result of cloud_plan); model/plan/ never imports them.
"""
