"""``readerstudy judge-reports STUDY``: the rubric judges score the study's reports.

Every report (a reader's or a model's Findings + Impression) without a human
grade and without a judgement under the judge prompt's version is put to the
judges with the case's reference report. One judge: its score stands. Two:
scores within ``--gap`` points agree (the report's score is their mean, rounded
half up); a wider gap sends the report to the adjudicators' blinded "Reports"
queue. Replies are cached: the
same report text costs one call per judge. See docs/bench2.md.
"""

from __future__ import annotations

import argparse

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.commands.judge_options import add_judge_options, judge_configs
from reader_app.grading.config import GradingConfigError
from reader_app.grading.rubric_judge import (
    DEFAULT_GAP,
    RUBRIC_JUDGE_PROMPT,
    judge_study_reports,
    load_judge_prompt,
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "judge-reports",
        help="score a study's reports 0-40 with one or two LLM rubric judges (Bench 2)",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("study", help="study slug")
    add_judge_options(
        p,
        judge_help="an OpenAI-compatible judge (once or twice); default: the study's "
        "[[grading.judges]], as the server defines them (READERSTUDY_JUDGES)",
        timeout_s=60.0,
    )
    p.add_argument(
        "--gap",
        type=int,
        default=None,
        help=f"judges further apart than this go to the human queue (default: the study's "
        f"grading.rubric_gap, else {DEFAULT_GAP})",
    )
    p.add_argument(
        "--prompt",
        default=RUBRIC_JUDGE_PROMPT,
        help=f"judge prompt version (default {RUBRIC_JUDGE_PROMPT}); a new one re-judges",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    try:
        prompt = load_judge_prompt(args.prompt)
        if args.judge is not None and len(args.judge) > 2:
            raise CommandError("--judge: give one or two judges")
        judges = judge_configs(args)
        with cli_session(settings) as session:
            study = require_study(session, args.study)
            report = judge_study_reports(
                session=session, study=study, judges=judges, prompt=prompt, gap=args.gap
            )
    except (CommandError, GradingConfigError, FileNotFoundError) as exc:
        return fail(str(exc))
    print(
        f"judged {report.asked} report(s) with prompt {report.prompt_version}: "
        f"{report.agreed} agreed, {report.disagreements} sent to the Reports queue "
        f"(gap over the limit), {report.errors} error(s) (asked again next run), "
        f"{report.no_reference} without a reference report"
    )
    return 0
