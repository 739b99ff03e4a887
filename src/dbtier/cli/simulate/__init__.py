"""`dbtier simulate`: run (command.py), mrc, capture, convert and their terminal output (render.py).
They parse, call sim/, store and print; they may import cli/'s shared modules and sim/, model/, results/,
report/ and core/, never another command's package."""
