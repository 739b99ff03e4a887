"""The command line, thin: parse, call the library, store the run, print. main.py builds the parser and
finds each subcommand's module (register() and run()); entry.py sets up the process first.

A package per command family (probe/, bench/, plan/, history/, runs/, simulate/), a module per single
command (show, compare, report, export, lab with lab_calls.py — its steps as their commands' library
calls —, advise, catalog, cleanup), and what they share: common.py
(options and the run's life), options.py (the option types), fit.py (tables that fit the terminal),
markup.py (input names shown literally), own_checkout.py (the default output directory).

cli/ may import every other package; none imports cli/ but __main__.py (an exception still waiting to
move is named in tests/unit/test_layout.py).
"""
