"""`dbtier bench`: oltp (command.py, with the group), dss, backup, and the OLTP run's checks of its
settings (oltp_checks.py). They parse, call workloads/ and measure/, store and print; they may import cli/'s
shared modules and the layers below, never another command's package."""
