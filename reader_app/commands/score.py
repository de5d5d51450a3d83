"""`readerstudy score RESPONSES.csv`: the metrics of SCORING.md for every
responder and the human pool, as JSON, CSV or a text table.

With a ``hit`` column (the responses export has one) grounding joins them
(SCORING.md section 8): the JSON gains a ``grounding`` section, the CSV and
the table the columns G, GA and U. The cases with a reference region are those
with a ``hit`` on some row, or the ones ``--grounded-cases`` lists (needed only
when nobody answered such a case: a blank file cannot say it has a region).

With ``run_group`` and ``repeat`` columns (the responses export has them when the
study has repeat runs, ``run-model --repeats N``) the JSON gains ``repeat_groups``:
per group each repeat's scores, their mean and SD and run-to-run agreement
(scoring/repeats.py); the table a line per group.

A file of report rows (``export --what reports``: a ``rubric`` column, no
``diagnosis``) gets the rubric summary of SCORING.md section 6 instead
(commands/score_reports.py). An empty file, or one with no rows, is refused."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from reader_app.commands.common import CommandError, fail, roster_names
from reader_app.commands.score_reports import (
    graded_rows,
    is_report_file,
    rubric_json,
    rubric_report,
    rubric_table,
)
from scoring import (
    H_AGGREGATES,
    HANDOVER_VARIANTS,
    WEIGHTS,
    FrameError,
    ScoringParams,
    UngradedRowsError,
    format_table,
    grounded_cases_of,
    grounding_report,
    repeat_groups,
    report_frame,
    report_json,
    score_with_aid,
    split_arms,
)
from scoring.io import read_radle_csv, read_responses_csv

_DEFAULTS = ScoringParams()
# the commands that grade what ``score`` refuses to guess
UNGRADED_HINT = (
    "Grade them in the study with `readerstudy grade STUDY` (the key, grade memory, the "
    "judges) and export again (`readerstudy export STUDY --what responses --raw`); for a "
    "file from elsewhere, `readerstudy grade --key KEY.csv RESPONSES.csv` adds a verdict "
    "column (`readerstudy export STUDY --what key` writes a study's key)"
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``score`` subcommand on the dispatcher's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "score",
        help="score responses: RadLE C/A/R/S/H, calibration, the human pool, bootstrap CIs",
        description=(
            "Score a responses CSV (the tidy frame of SCORING.md section 1: responder, kind, "
            "group, case_id, status, diagnosis, likert, correct; a `verdict` column with "
            "correct/incorrect/pending may stand in for `correct`; an optional `cohort` column "
            "gives each model run's cohort and a pooled row per cohort). Answered rows without "
            "a verdict are an error: grade them first with `readerstudy grade STUDY`."
        ),
    )
    parser.add_argument("responses", metavar="RESPONSES.csv", help="responses CSV to score")
    parser.add_argument(
        "--format",
        choices=("json", "csv", "table"),
        default="table",
        help="output format (default: table)",
    )
    parser.add_argument(
        "--input-format",
        choices=("tidy", "radle"),
        default="tidy",
        help="tidy responses CSV (default) or a RadLE long-master CSV",
    )
    parser.add_argument(
        "--include-excluded",
        action="store_true",
        help="RadLE input: keep rows with access == excluded (left out by default)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="NAME",
        help="RadLE input: leave out this model (its candidate name), e.g. one taken off the "
        "board; repeat for more",
    )
    parser.add_argument(
        "--exclude-file",
        metavar="FILE",
        help="RadLE input: a roster of models to leave out, one name a line (# comments)",
    )
    parser.add_argument(
        "--cases",
        metavar="FILE",
        help="fix the scored case set: one case_id per line (default: every case in the input)",
    )
    parser.add_argument(
        "--grounded-cases",
        metavar="FILE",
        help="the cases with a reference region, one case_id per line (default: the cases "
        "with a 0/1 `hit` on some row; grounding needs a `hit` column)",
    )
    parser.add_argument(
        "--idk-score",
        type=float,
        default=_DEFAULTS.idk_score,
        help="points for an 'I don't know' (default: 0)",
    )
    parser.add_argument(
        "--weight",
        choices=WEIGHTS,
        default=_DEFAULTS.weight,
        help="points of an answer at Likert L: L+1 (SCORING.md, default) or L (RadLE's "
        "long-master weighted_score); C and S divide by 5 or 4 accordingly",
    )
    parser.add_argument(
        "--tau-high",
        type=int,
        default=_DEFAULTS.tau_high,
        help="Likert threshold of autonomous answers for R and H (default: 3)",
    )
    parser.add_argument(
        "--h-variant",
        choices=sorted(HANDOVER_VARIANTS),
        default=_DEFAULTS.h_variant,
        help="RadLE-H definition (SCORING.md section 3): v2 (default; D = share of the wrong "
        "answers handed over) or v1 (the earlier one; 1.0 is its old name)",
    )
    parser.add_argument(
        "--h-aggregate",
        choices=H_AGGREGATES,
        default=None,
        help="how H combines R, Cov and D (default: the variant's own, harmonic for v2, "
        "geometric for v1)",
    )
    parser.add_argument(
        "--min-completion",
        type=float,
        default=_DEFAULTS.min_completion,
        help="readers need this share of cases to enter the pool (default: 1.0)",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=_DEFAULTS.n_boot,
        metavar="B",
        help=(
            "bootstrap replicates, also the number of sign-flip permutations; "
            "0 turns CIs and p-values off (default: 2000)"
        ),
    )
    parser.add_argument(
        "--two-way",
        action="store_true",
        help="resample readers as well as cases for the pool's CIs",
    )
    parser.add_argument("--seed", type=int, default=_DEFAULTS.seed, help="random seed (default: 0)")
    parser.set_defaults(func=run)
    return parser


def _read_cases(path: str) -> list[str]:
    lines = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()]
    cases = [line for line in lines if line]
    return cases[1:] if cases and cases[0] == "case_id" else cases


def _header(path: str) -> list[str] | None:
    """The file's columns; None for a file with nothing in it."""
    try:
        return list(pd.read_csv(path, nrows=0, dtype=str).columns)
    except pd.errors.EmptyDataError:
        return None


def run(args: argparse.Namespace) -> int:
    """Score the file and print it; exit 2 with a message on bad input."""
    if args.input_format == "tidy":
        try:
            columns = _header(args.responses)
        except (OSError, ValueError):
            columns = []  # unreadable: the scoring path below reports it as before
        if columns is None:
            return fail(f"{args.responses} is empty: nothing to score")
        if is_report_file(columns):
            return _run_reports(args)
    try:
        params = ScoringParams(
            idk_score=args.idk_score,
            tau_high=args.tau_high,
            h_aggregate=args.h_aggregate,
            h_variant=args.h_variant,
            min_completion=args.min_completion,
            n_boot=args.bootstrap,
            seed=args.seed,
            bootstrap_mode="two-way" if args.two_way else "case",
            weight=args.weight,
        )
        if args.input_format == "radle":
            frame = read_radle_csv(
                args.responses,
                include_excluded=args.include_excluded,
                exclude=roster_names(args.exclude, args.exclude_file),
            )
        else:
            frame = read_responses_csv(args.responses)
        if len(frame) == 0:
            return fail(f"{args.responses} has no rows: nothing to score")
        cases = _read_cases(args.cases) if args.cases else None
        report = score_with_aid(frame, params, case_ids=cases)
        grounded = (
            _read_cases(args.grounded_cases) if args.grounded_cases else grounded_cases_of(frame)
        )
        if grounded:
            # grounding is the unaided answers' (an aided arm's rows are scored in ``aid``)
            unaided = split_arms(frame)[0]
            report["grounding"] = grounding_report(unaided, grounded, params, case_ids=cases)
        repeats = repeat_groups(frame, report["responders"], case_ids=cases)
        if repeats:  # runs of `run-model --repeats N` (run_group and repeat columns)
            report["repeat_groups"] = repeats
    except UngradedRowsError as exc:
        print(f"readerstudy score: error: {exc}\n{UNGRADED_HINT}.", file=sys.stderr)
        return 2
    except (FrameError, ValueError, OSError, CommandError) as exc:
        print(f"readerstudy score: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        sys.stdout.write(report_json(report) + "\n")
    elif args.format == "csv":
        report_frame(report).to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(format_table(report) + "\n")
        for group in report.get("repeat_groups", []):
            sys.stdout.write(repeat_line(group) + "\n")
    return 0


def repeat_line(group: dict[str, Any]) -> str:
    """One line per run group for the text table: mean (SD) and agreement."""
    return (
        f"repeats of {group['run_group']} (n={group['n_repeats']}): "
        f"RadLE-A {group['radle_a_mean']:.3f} (SD {group['radle_a_sd']:.3f}), "
        f"RadLE-C {group['radle_c_mean']:.3f} (SD {group['radle_c_sd']:.3f}); "
        f"Fleiss kappa {group['outcome_kappa']:.3f}, identical verdicts "
        f"{group['identical_share']:.3f}, identical Likert {group['likert_identical_share']:.3f}"
    )


def _run_reports(args: argparse.Namespace) -> int:
    """Report rows: the rubric summary (reader_app/commands/score_reports.py)."""
    try:
        graded, ungraded = graded_rows(read_responses_csv(args.responses))
        if graded.empty:
            what = (
                f"{ungraded} answered report(s), none with a score yet" if ungraded else "no rows"
            )
            return fail(
                f"{args.responses} has {what}: nothing to score "
                "(judge-reports or the adjudicators' Reports queue give the scores)"
            )
        board = rubric_report(graded, n_boot=args.bootstrap, seed=args.seed, pending=ungraded)
    except (FrameError, ValueError, OSError) as exc:
        return fail(f"cannot score {args.responses}: {exc}")
    if args.format == "json":
        sys.stdout.write(
            rubric_json(board, n_boot=args.bootstrap, seed=args.seed, ungraded=ungraded) + "\n"
        )
    elif args.format == "csv":
        board.scores.responders.to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(rubric_table(board, n_boot=args.bootstrap, ungraded=ungraded) + "\n")
    return 0
