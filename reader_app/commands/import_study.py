"""``readerstudy import MANIFEST [--study SLUG]``: validate, then import a study, all or nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reader_app.commands.common import fail, settings_or_exit
from reader_app.commands.progress_bar import StepProgress
from reader_app.core.db import migrate


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import",
        help="import a study from a manifest (CSV or YAML); all or nothing",
        description="Validate every case of MANIFEST (and study.toml beside it), then import "
        "the whole study in one transaction. On any problem nothing is written. A run that "
        "was killed or interrupted leaves the cases it rendered: the next run of the same "
        "manifest and study takes them (unless --fresh) and renders only the rest.",
    )
    p.add_argument("manifest", metavar="MANIFEST", help="manifest.csv or manifest.yaml")
    p.add_argument("--study", metavar="SLUG", help="study slug (default: the manifest's folder)")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no report")
    p.add_argument(
        "--fresh",
        action="store_true",
        help="render every case anew, not taking those a stopped run of this manifest staged",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reader_app.ingest.errors import ImportFailed  # heavy imports only when used
    from reader_app.ingest.importer import import_manifest

    settings = settings_or_exit()
    manifest = Path(args.manifest)
    migrate(settings.database_url)
    try:
        result = import_manifest(
            manifest,
            settings=settings,
            slug=args.study,
            progress=None if args.quiet else StepProgress(),
            resume=not args.fresh,
        )
    except ImportFailed as exc:
        if exc.report_text and not args.quiet:
            print(exc.report_text, file=sys.stderr)
        return fail(str(exc))
    if not args.quiet:
        print(result.report.text())
    print(f"imported study {result.slug!r}: {result.cases} case(s), {result.images} image(s)")
    return 0
