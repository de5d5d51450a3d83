"""The one base class of every error a person using readerstudy is meant to read.

A ``ReaderStudyError`` carries a message that names the problem and where it is
(a file and line, a setting, a case), written for the person at the keyboard:
``readerstudy`` prints it as one line on stderr and exits with code 2 (a
traceback only with ``--debug``); pages show it as an error message.

Each module keeps its own subclass (``AuthError``, ``IngestError``, ...), and
most also derive from the builtin they always were (``ValueError``,
``PermissionError``, ``RuntimeError``), so existing ``except`` clauses keep
working. ``scoring`` cannot import the app: its ``FrameError`` stays a
``ValueError`` and the commands that score catch it themselves.
"""

from __future__ import annotations


class ReaderStudyError(Exception):
    """A user-facing failure: its message is for the person, not for a developer."""
