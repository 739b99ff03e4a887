"""On-prem storage and the planner: what a configuration of catalog devices delivers and costs, and the
cheapest that meets a requirement (`dbtier plan`, and advise's on-prem options).

In import order, each importing only modules before it (and dbtier.core; calls.py and catalog_calls.py
also dbtier.results.result, the typed results they return):
catalog.py          the device catalog: devices, overheads, the user's catalog files checked
catalog_template.py a commented [[device]] entry (`dbtier catalog template`)
array.py            a configuration's figures by layout and what limits each
prices.py           the user's quotes (--prices) and the grade of drive offered (--grade)
endurance.py        flash endurance and HDD workload ratings over the service life
power_loss.py       durable writes: power-loss protection, and the flush-bound rate of devices without it
shared_array.py     shared arrays: a controller pair, shelves and the drives behind it
requirement.py      the requirement, where it comes from, and whether a configuration meets it
tco.py              the cost over the service life
search.py           every design and its smallest count
service.py          the service life's terms applied to a design
sizing.py           `plan size`: the ranked candidates
planner.py          `plan equivalent`, `plan budget`, price/performance
plandoc.py          the plan document
calls.py            `plan size`, `equivalent`, `budget`, `value` as library calls, typed and immutable results
catalog_calls.py    `catalog list`, `show`, `template` as library calls
"""
