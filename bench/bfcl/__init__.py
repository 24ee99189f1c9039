"""BFCL v4 ``multi_turn_base`` on PlanBoard: plan and execution quality on work nobody here wrote.

``python -m bench.bfcl`` (see its ``__main__``) runs the entries' turns through PlanBoard (a
run, then follow-ups on the same backend state) or through a plain tool-calling loop, writes
the calls in BFCL's result format and scores them with BFCL's own checker. The modules:
``data`` (entries, ground truth, function docs), ``backend`` (an entry's backends as a
toolset, every call logged), ``score`` (the checker; the turns right in a row), ``loop`` and
``planboard`` (the two ways of running), ``replay`` (the endpoint that answers with the
ground truth), ``records`` (result lines) and ``report`` (the table).
"""
