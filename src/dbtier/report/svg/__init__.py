"""The charts: pure functions from numbers to self-contained SVG strings. charts.py the line, bar, stacked and
heat-map charts and the pieces they share; sim.py the simulate report's CDF and timeline, on those pieces.

May import report/base.py (escaping) only.
"""
