"""`dbtier plan`: the actions (command.py), the cloud sizing (cloud.py), their terminal output
(render.py, cloud_render.py) and the options plan shares with advise (options.py). They may import cli/'s
shared modules and model/, results/, report/, history/ and core/, never another command's package (advise
imports options.py)."""
