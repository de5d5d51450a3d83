"""Grounding as lesion localisation: where a responder says the finding is, against the
reference region (not the image-reliance audit, ``reader_app.grounding_audit``).

``store``: how a location and a reference mask are stored; ``hits``: a study's markers
tested against its reference regions (the pure test is ``scoring``'s). Each stage's own
use lives with the stage (``runs.grounded``, ``analysis.case_grounding``); the causal
grounding audit is ``reader_app.grounding_audit`` (its arms are model runs, a layer up).
"""
