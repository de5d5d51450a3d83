"""Study set-up from the browser: safe ZIP extraction, a server import root, validation,
the burned-in review, and an import job that runs outside the page's script run.

No Streamlit here (DESIGN section 2): ``reader_app/ui/pages/study_setup.py`` is the page.
Everything that runs the importer goes through ``validation`` (one adapter module).
"""
