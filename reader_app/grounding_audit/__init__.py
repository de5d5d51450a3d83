"""The causal grounding audit (SCORING.md section 9): five runs of one model on the cases
with a reference region, the image changed and nothing else; figures in ``scoring.audit``."""
