"""``readerstudy import-run FILE [--format jsonl/csv/radle/openai-batch]``: outputs into a study.

Model outputs (JSONL or CSV, parsed leniently) become a model run; a RadLE
long-master CSV brings its human readers, its model runs and its verdicts.
Cases are matched by the manifest's case id, so import the study first.
``openai-batch`` is a provider's batch output for the run(s) that ``run-model
--batch-out`` wrote (runs/batch.py): their custom_ids name the run and the case.
"""

from __future__ import annotations

import argparse

from sqlmodel import Session, select

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    roster_names,
    settings_or_exit,
)
from reader_app.commands.run_model import add_price_options, price_of
from reader_app.models import Study
from reader_app.runs.autograde_hook import autograde_after_run
from reader_app.runs.batch import BATCH_FORMAT, import_batch_output
from reader_app.runs.import_writer import RunImportError
from reader_app.runs.importers import FORMATS, import_run_file
from reader_app.runs.usage import Price, PriceError, price_from_options


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import-run",
        help="import model outputs (JSONL/CSV) or a RadLE long-master CSV into a study",
        description=(
            "Model outputs become a model run; a RadLE long-master CSV brings its human "
            "readers, model runs and verdicts. Cases are matched by the manifest's case id. "
            "See docs/model-runs.md."
        ),
    )
    p.add_argument("file", help="the file to import")
    p.add_argument(
        "--format",
        choices=(*FORMATS, BATCH_FORMAT),
        help="default: from the file name and header; openai-batch (never guessed): the "
        "batch output for a `run-model --batch-out` file",
    )
    p.add_argument("--study", help="study slug (may be left out when there is one study)")
    p.add_argument("--name", help="run name, when the file has no responder/model column")
    p.add_argument("--model", help="model name to record (default: the file's or the run name)")
    p.add_argument("--group", help="group for analysis, e.g. the provider")
    p.add_argument(
        "--cohort",
        help="the runs' cohort for the leaderboard, e.g. frontier, open-weight, medical "
        "(JSONL/CSV; over a cohort column; a RadLE file gives access/domain)",
    )
    p.add_argument("--prompt-version", help="the prompt the outputs answered, for the record")
    p.add_argument(
        "--include-excluded", action="store_true", help="radle: keep access == excluded rows"
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="NAME",
        help="radle: leave out this model (its candidate name), e.g. one taken off the board; "
        "repeat for more",
    )
    p.add_argument(
        "--exclude-file",
        metavar="FILE",
        help="radle: a roster of models to leave out, one name a line (# comments)",
    )
    p.add_argument(
        "--verdict-conflicts",
        choices=["error", "majority"],
        default="error",
        help="when the file grades one answer both ways (default: error)",
    )
    p.add_argument(
        "--replace", action="store_true", help="overwrite rows already imported for a case"
    )
    p.add_argument("--no-autograde", action="store_true", help="do not grade after the import")
    add_price_options(p)
    p.set_defaults(func=run)


def _study(session: Session, slug: str | None) -> Study:
    if slug:
        return require_study(session, slug)
    studies = session.exec(select(Study)).all()
    if len(studies) != 1:
        raise CommandError(f"there are {len(studies)} studies: name one with --study")
    return studies[0]


def run(args: argparse.Namespace) -> int:
    if args.format == BATCH_FORMAT:
        return _run_batch(args)
    settings = settings_or_exit()
    try:
        with cli_session(settings) as session:
            study = _study(session, args.study)
            summary = import_run_file(
                session=session,
                study=study,
                source=args.file,
                fmt=args.format,
                name=args.name,
                model=args.model,
                group=args.group,
                prompt_version=args.prompt_version,
                include_excluded=args.include_excluded,
                exclude=roster_names(args.exclude, args.exclude_file),
                replace=args.replace,
                verdict_conflicts=args.verdict_conflicts,
                cohort=args.cohort,
            )
            graded = None
            if not args.no_autograde:
                assert study.id is not None
                graded = autograde_after_run(
                    session=session, study_id=study.id, actor="cli:import-run"
                )
    except (CommandError, RunImportError, OSError) as exc:
        return fail(str(exc))
    if graded:
        print(graded)
    who = [f"run {r}" for r in summary.runs] + [f"reader {r}" for r in summary.readers]
    print(
        f"imported {summary.format} into {study.slug}: {', '.join(who)}; "
        f"{summary.added} added, {summary.updated} replaced, {summary.skipped} already present; "
        f"{summary.verdicts_added} verdicts added to grade memory"
        + (
            f", {summary.row_verdicts} kept on answers without text (scored by their verdict)"
            if summary.row_verdicts
            else ""
        )
    )
    return 0


def _run_batch(args: argparse.Namespace) -> int:
    """A provider's batch output into the run(s) its custom_ids name; resumable and
    idempotent (runs/batch.py)."""
    settings = settings_or_exit()
    try:
        with cli_session(settings) as session:
            study = _study(session, args.study)
            summary = import_batch_output(
                session=session,
                study=study,
                source=args.file,
                actor="cli:import-run",
                price=price_of(args, args.model) if args.model else price_of_any(args),
            )
            graded = None
            if not args.no_autograde:
                assert study.id is not None
                graded = autograde_after_run(
                    session=session, study_id=study.id, actor="cli:import-run"
                )
    except (CommandError, RunImportError, PriceError, OSError) as exc:
        return fail(str(exc))
    if graded:
        print(graded)
    print(
        f"imported openai-batch into {study.slug}: run {', '.join(summary.runs)}; "
        f"{summary.added} added, {summary.failed} failed (error lines), "
        f"{summary.skipped} already present"
    )
    return 0


def price_of_any(args: argparse.Namespace) -> Price | None:
    """--price-in/--price-out without --model (a prices file needs --model)."""
    if args.prices:
        raise PriceError("--prices needs --model, the model whose price to use")
    return price_from_options(args.price_in, args.price_out)
