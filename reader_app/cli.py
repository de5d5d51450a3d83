"""The ``readerstudy`` command: a thin dispatcher over reader_app.commands.*.

Every user-facing error (``reader_app.core.errors.ReaderStudyError``) is caught here,
once: its message goes to stderr as ``readerstudy: <message>`` and the exit code
is 2; the traceback is printed only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from reader_app.core.errors import ReaderStudyError
from reader_app.core.logs import configure_logging

# Each module registers one subcommand with add_parser(subparsers) and
# set_defaults(func=run); run(args) returns the exit code.
COMMAND_MODULES = (
    "demo",
    "serve",
    "import_study",
    "invite",
    "export",
    "grade",
    "score",
    "import_run",
    "run_model",
    "audit_grounding",
    "judge_reports",
    "backup",
    "restore",
)

USER_ERROR = 2  # the exit code of every user-facing error


# ``readerstudy serve`` starts every served app (and each of the test suite's servers):
# it builds its own subcommand alone, so the other commands' libraries (pandas, pydicom,
# nibabel) are not imported at each start (about a second of CPU; docs/performance.md).
FAST_COMMANDS = ("serve",)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or just the subcommand of module ``only``."""
    parser = argparse.ArgumentParser(
        prog="readerstudy",
        description="Radiology reader studies: humans and AI models, same exam, same scoring.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an error, not just its message"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else (only,):
        importlib.import_module(f"reader_app.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=given[0] if given[:1] and given[0] in FAST_COMMANDS else None)
    args = parser.parse_args(given)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        configure_logging()
        code: int = args.func(args)
    except ReaderStudyError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"readerstudy: {exc}", file=sys.stderr)
        return USER_ERROR
    return code


if __name__ == "__main__":
    sys.exit(main())
