"""Shared infrastructure every layer may use: settings, the database, errors, logs, the
audit trail, roles and sign-in, text rules, CSV safety, backups and the served address
(the ASGI doors in front of Streamlit are in ``reader_app/web/``). Nothing here knows
about studies, exams or grading beyond the tables."""
