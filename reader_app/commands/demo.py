"""``readerstudy demo``: build the bundled demo study if absent, invite a reader, serve.

``--scale radle`` builds the synthetic benchmark-scale study instead
(reader_app/runs/synthetic.py: 200 cases, 12 readers, 16 model runs, graded)
and invites an analyst, so the analyst's views can be seen at full size.
"""

from __future__ import annotations

import argparse

from reader_app.commands.common import cli_session, require_study, settings_or_exit
from reader_app.commands.serve import serve
from reader_app.core.auth import invite_reader, sign_in_link
from reader_app.core.served_address import link_base, served_url

DEMO_READER = "demo-reader"
DEMO_ANALYST = "demo-analyst"
# a real reader group (reader_app/exam/profile.py), so pools read "Pool: board-certified"
DEMO_GROUP = "board-certified"
SCALES = ("small", "radle")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="build the demo study (if absent) and serve the app")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--no-serve", action="store_true", help="build and invite only")
    p.add_argument(
        "--scale",
        choices=SCALES,
        default="small",
        help="small: the 6-case demo study with a reader link (default); radle: a synthetic "
        "200-case study with 12 readers and 16 model runs, graded, with an analyst link",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    if getattr(args, "scale", "small") == "radle":
        from reader_app.runs.synthetic import build_radle_scale_study

        with cli_session(settings) as session:
            slug = build_radle_scale_study(session, settings.asset_dir)
            study = require_study(session, slug)
            invite = invite_reader(session=session, study=study, code=DEMO_ANALYST, role="analyst")
        who = f"the analyst {DEMO_ANALYST}"
    else:
        from reader_app.commands.progress_bar import StepProgress
        from reader_app.ingest.demo import ensure_demo_study  # heavy: pydicom, nibabel

        slug = ensure_demo_study(settings, progress=StepProgress(label="demo"))
        with cli_session(settings) as session:
            study = require_study(session, slug)
            invite = invite_reader(session=session, study=study, code=DEMO_READER, group=DEMO_GROUP)
        who = f"{DEMO_READER}, taking the exam"
    base = link_base(settings, served=served_url("127.0.0.1", args.port))
    print(f"Demo study '{slug}' is ready. Open this link to sign in as {who}:")
    print(sign_in_link(base, invite.token), flush=True)
    if args.no_serve:
        return 0
    return serve(args.port, "127.0.0.1")
