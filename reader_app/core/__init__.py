"""Shared infrastructure every layer may use: settings, the database, errors, logs, the
audit trail, roles and sign-in, text rules, CSV safety, backups, and the ASGI doors in
front of Streamlit (security headers, origin check, upload gate, browser proof, served
address). Nothing here knows about studies, exams or grading beyond the tables."""
