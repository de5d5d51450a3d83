"""``readerstudy export STUDY --what responses|audit|mrmc|key --format csv|parquet``.

``responses`` is the tidy frame of SCORING.md section 1, ``audit`` the
study's audit log, ``mrmc`` the long format for iMRMC and MRMCaov
(docs/analysis.md). Every export ends with ``param_*`` columns: the scoring
parameters and spec version it was made under (Parquet also carries them as
file metadata). ``key`` is the answer-key CSV (``case_id,diagnosis,synonyms``)
that ``readerstudy grade --key`` reads; it has no ``param_*`` columns.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reader_app.analysis.exports import FORMATS, MRMC_TASKS, WHAT, ExportError, export_bytes
from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from scoring import WEIGHTS, FrameError, ScoringParams, UngradedRowsError

_DEFAULTS = ScoringParams()
# what to do about answers without a verdict (score and export say it)
GRADE_HINT = (
    "Grade them in the study with `readerstudy grade {study}` (the key, grade memory and "
    "the judges given with --judge or in study.toml; the rest goes to the adjudicators)"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="export a study's responses (tidy frame), audit log or MRMC long format",
        description=(
            "Write one export of a study. Every export ends with param_* columns holding the "
            "scoring parameters and spec version (Parquet files also carry them as metadata)."
        ),
    )
    p.add_argument("study", help="study slug")
    p.add_argument(
        "--what",
        choices=WHAT,
        default="responses",
        help="responses: the tidy frame; audit: the audit log; mrmc: reader/case/modality/"
        "score/truth long format; key: the answer key CSV (case_id,diagnosis,synonyms); "
        "runs: a row per model run (tokens, cost, cost per correct, latency p50/p95); "
        "run-replies: a row per model reply (usage, reasoning text, raw reply); repeats: "
        "a row per group of repeat runs (mean, SD, agreement) (default: responses)",
    )
    p.add_argument("--format", choices=FORMATS, default="csv", help="file format (default: csv)")
    p.add_argument(
        "--output",
        "-o",
        default="-",
        help="file to write (default: stdout; Parquet needs a file)",
    )
    p.add_argument(
        "--idk-score",
        type=float,
        default=_DEFAULTS.idk_score,
        help="points of an 'I don't know' in the mrmc points column, recorded in "
        "param_idk_score (default: 0)",
    )
    p.add_argument(
        "--weight",
        choices=WEIGHTS,
        default=_DEFAULTS.weight,
        help="points of an answer at Likert L in the mrmc points column: L+1 (SCORING.md) or "
        "L (RadLE's weighted_score); recorded in param_weight (default: L+1)",
    )
    p.add_argument(
        "--task",
        choices=MRMC_TASKS,
        default="diagnosis",
        help="mrmc only: diagnosis rows (score 0/1, the default), report rows (score = the "
        "0-40 rubric score) or all (both kinds in one file: analyse them apart)",
    )
    p.add_argument(
        "--raw",
        action="store_true",
        help="exact text in CSV cells, for scripts; by default a text cell starting with "
        "=, +, -, @, tab or CR gets a leading apostrophe so a spreadsheet cannot run it",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.format == "parquet" and args.output == "-":
        return fail("Parquet is binary: write it to a file with --output FILE")
    settings = settings_or_exit()
    try:
        params = ScoringParams(idk_score=args.idk_score, weight=args.weight)
        with cli_session(settings) as session:
            study = require_study(session, args.study)
            data = export_bytes(
                args.what,
                args.format,
                session=session,
                study=study,
                params=params,
                raw=args.raw,
                task=args.task,
            )
    except (CommandError, ExportError, ValueError) as exc:
        if isinstance(exc, UngradedRowsError):
            return fail(f"cannot export {args.what}: {exc}. {GRADE_HINT.format(study=args.study)}")
        if isinstance(exc, FrameError):
            return fail(f"cannot export {args.what}: {exc}")
        return fail(str(exc))
    if args.output == "-":
        sys.stdout.write(data.decode("utf-8"))
    else:
        Path(args.output).write_bytes(data)
    return 0
