"""``readerstudy invite STUDY CODE``: print a fresh sign-in link (last line of stdout)."""

from __future__ import annotations

import argparse

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.core.auth import invite_reader, sign_in_link
from reader_app.core.served_address import link_base
from reader_app.models import ROLES


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("invite", help="print a sign-in link for a reader (rotates any old link)")
    p.add_argument("study", help="study slug")
    p.add_argument("reader_code", help="the reader's pseudonymous code, e.g. R01")
    p.add_argument("--role", choices=ROLES, default="reader")
    p.add_argument("--group", default=None, help="group for analysis, e.g. PGY2 or board-certified")
    p.add_argument("--email", default=None, help="email, to match an OIDC sign-in")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    try:
        with cli_session(settings) as session:
            study = require_study(session, args.study)
            invite = invite_reader(
                session=session,
                study=study,
                code=args.reader_code,
                role=args.role,
                group=args.group,
                email=args.email,
            )
    except (CommandError, ValueError) as exc:
        return fail(str(exc))
    print(f"Invited {args.reader_code} ({args.role}) to {args.study}. Sign-in link:")
    print(sign_in_link(link_base(settings), invite.token))
    return 0
