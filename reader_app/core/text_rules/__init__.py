"""What text may be stored, the same on SQLite and PostgreSQL: the one home of text rules.

``imported``: text a coordinator imports (manifest fields, study.toml), refused with a
message naming the field. ``answers``: answers from people (refused) and models (cleaned,
raw replies stored losslessly).
"""
