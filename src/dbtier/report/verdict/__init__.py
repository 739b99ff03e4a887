"""The verdict: a few plain sentences, each derived from the documents' figures and citing them, and the
caveats that say what every other sentence means. topics.py puts it together (with the probe and DSS
sentences); rules.py the evidence a sentence needs; oltp.py, backup.py, plan.py, sim.py each kind's sentences;
caveats.py the caveats.

May import report/figures/, dbtier.model, dbtier.results and dbtier.core; never sections/, svg/ or the page.
"""
