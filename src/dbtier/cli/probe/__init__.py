"""`dbtier probe`: the command (command.py) and the fleet probe over SSH (fleet.py). They parse, call
measure/probe and measure/fleet, store and print; they may import cli/'s shared modules, measure/, model/,
results/, report/ and core/, never another command's package."""
