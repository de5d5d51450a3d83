"""Bench 2 report answers: reference reports, reader drafts, the rubric judge's records."""
