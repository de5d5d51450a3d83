"""``readerstudy demo``: build the bundled demo study if absent, invite a reader, serve."""

from __future__ import annotations

import argparse

from reader_app.auth import invite_reader, sign_in_link
from reader_app.commands.common import cli_session, require_study, settings_or_exit
from reader_app.commands.serve import serve

DEMO_READER = "demo-reader"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="build the demo study (if absent) and serve the app")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--no-serve", action="store_true", help="build and invite only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reader_app.commands.import_study import TextProgress
    from reader_app.ingest.demo import ensure_demo_study  # heavy: pydicom, nibabel

    settings = settings_or_exit()
    slug = ensure_demo_study(settings, progress=TextProgress())
    with cli_session(settings) as session:
        study = require_study(session, slug)
        invite = invite_reader(session=session, study=study, code=DEMO_READER, group="demo")
    base = f"http://127.0.0.1:{args.port}"
    print(f"Demo study '{slug}' is ready. Open this link to take the exam as {DEMO_READER}:")
    print(sign_in_link(base, invite.token), flush=True)
    if args.no_serve:
        return 0
    return serve(args.port, "127.0.0.1")
