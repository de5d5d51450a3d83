"""readerstudy application: everything that touches the database, files and UI."""
