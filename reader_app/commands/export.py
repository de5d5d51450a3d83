"""``readerstudy export STUDY --what responses --format csv``: the tidy frame."""

from __future__ import annotations

import argparse
import sys

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.results import tidy_responses


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="export a study's responses as the tidy frame")
    p.add_argument("study", help="study slug")
    p.add_argument("--what", choices=["responses"], default="responses")
    p.add_argument("--format", choices=["csv"], default="csv")
    p.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    try:
        with cli_session(settings) as session:
            study = require_study(session, args.study)
            assert study.id is not None
            frame = tidy_responses(session=session, study_id=study.id)
    except CommandError as exc:
        return fail(str(exc))
    if args.output == "-":
        frame.to_csv(sys.stdout, index=False)
    else:
        frame.to_csv(args.output, index=False)
    return 0
