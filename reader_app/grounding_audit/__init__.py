"""The image-reliance audit, a.k.a. the causal grounding audit (SCORING.md section 9): does a
model use the image? Not lesion localisation (``reader_app.grounding``). Five runs of one
model on the cases with a reference region, the image changed and nothing else; figures
in ``scoring.audit``."""
