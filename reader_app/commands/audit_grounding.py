"""``readerstudy audit-grounding STUDY --endpoint URL --model NAME``: the causal grounding audit.

Runs the five arms of SCORING.md section 9 (original, occlude_relevant,
occlude_irrelevant, swap, text_only) as resumable model runs on the cases with
a reference region, grades them the normal way, and prints the audit. A second
call with the same settings asks nothing again. See docs/grounding.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from reader_app.commands.common import (
    CommandError,
    cli_session,
    fail,
    require_study,
    settings_or_exit,
)
from reader_app.commands.progress_bar import RunProgressBar
from reader_app.commands.run_model import add_request_options, client_from, run_spec, summary_line
from reader_app.grounding.hits import grounding_tolerance
from reader_app.grounding_audit.arms import AuditSettings
from reader_app.grounding_audit.figures import audit_figures, audits
from reader_app.grounding_audit.images import FILLS
from reader_app.grounding_audit.run import AuditConflict, run_audit
from reader_app.llm import endpoint_host
from reader_app.llm.prompts import load_prompt
from reader_app.runs.autograde_hook import autograde_after_run
from reader_app.runs.prompt import default_prompt
from reader_app.runs.record import RunConflict
from reader_app.runs.runner import RunAborted
from reader_app.study.config import study_settings
from scoring import AUDIT_ARMS as ARMS
from scoring import AuditParams, to_jsonable


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit-grounding",
        help="does a model's right answer depend on the image? (SCORING.md section 9)",
        description=(
            "Run a model on the cases with a reference region five times: the stored images, "
            "the region occluded, another region of its size occluded, a same-diagnosis case's "
            "images, and no image; grade, and print the audit. Resumable. See docs/grounding.md."
        ),
    )
    add_request_options(p)
    p.add_argument("--fill", choices=FILLS, default="median", help="occluded pixels' value")
    p.add_argument(
        "--intervention-seed",
        type=int,
        default=0,
        help="draws the irrelevant region and the swap partner (default 0)",
    )
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(
        func=run, no_images=False, strip_mode="slices", report_prompt=None, images_per_request=None
    )


def _num(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _ci(ci: list[float]) -> str:
    return f"[{_num(ci[0])}, {_num(ci[1])}]"


def audit_table(report: dict[str, Any]) -> str:
    """The audit as a few readable lines."""
    lines = [f"audit {report['name']} (model {report['model']}): {report['cases']} cases"]
    lines.append(f"{'arm':<20} {'n':>4} {'correct':>8} {'accuracy':>9}  95% CI       keep")
    for arm in ARMS:
        a = report["arms"][arm]
        keep = report["keep"].get(arm)
        keep_text = f"{_num(keep['value'])} of {keep['n']}" if keep else ""
        lines.append(
            f"{arm:<20} {a['n']:>4} {a['correct']:>8} {_num(a['accuracy']):>9}  "
            f"{_ci(a['ci']):<12} {keep_text}"
        )
    e, s, t = report["occlusion_effect"], report["stability"], report["text_gap"]
    lines.append(f"occlusion effect {_num(e['value'])} {_ci(e['ci'])}")
    lines.append(f"stability {_num(s['value'])} {_ci(s['ci'])}")
    lines.append(f"text gap {_num(t['value'])} {_ci(t['ci'])}")
    lines.append(f"category: {report['category']}")
    for arm, ids in report.get("left_out", {}).items():
        lines.append(f"left out of {arm}: {', '.join(ids)}")
    for arm, n in report.get("ungraded", {}).items():
        lines.append(f"WARNING: {n} answer(s) of {arm} await a verdict (counted not correct)")
    return "\n".join(line.rstrip() for line in lines)


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit()
    try:
        base = run_spec(args)
        prompt = load_prompt(args.prompt) if args.prompt else None
        client = client_from(args)
        params = AuditParams(n_boot=args.n_boot)
    except (ValueError, OSError) as exc:
        return fail(str(exc))
    name = args.name or args.model
    quiet = args.quiet or args.format == "json"
    try:
        with client, cli_session(settings) as session:
            study = require_study(session, args.study)
            assert study.id is not None
            if prompt is None:
                prompt = load_prompt(default_prompt(grounding=study_settings(study).grounding))
            audit_settings = AuditSettings(
                fill=args.fill, seed=args.intervention_seed, tolerance=grounding_tolerance(study)
            )
            results = run_audit(
                session=session,
                study=study,
                name=name,
                base=base,
                prompt=prompt,
                client=client,
                asset_dir=settings.asset_dir,
                host=endpoint_host(args.endpoint),
                settings=audit_settings,
                concurrency=args.concurrency,
                retry_failures=args.retry_failures,
                lease_s=args.lease,
                progress=lambda _arm: None if quiet else RunProgressBar(),
            )
            graded = None
            if not args.no_autograde:
                graded = autograde_after_run(
                    session=session, study_id=study.id, actor="cli:audit-grounding"
                )
            audit = next(a for a in audits(session=session, study_id=study.id) if a.name == name)
            report = audit_figures(session=session, study_id=study.id, audit=audit, params=params)
    except RunAborted as exc:
        return fail(f"audit stopped: {exc} (check --endpoint, --model and ${args.api_key_env})")
    except (CommandError, RunConflict, AuditConflict, ValueError) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot read the study's images: {exc}")
    except KeyboardInterrupt:
        print("\ninterrupted: answers so far are saved; rerun to resume", file=sys.stderr)
        return 130
    for result in results:
        print(f"{result.arm}: {summary_line(result.summary)}", file=sys.stderr)
    if graded:
        print(graded, file=sys.stderr)
    if args.format == "json":
        report["asked"] = {r.arm: r.summary.asked for r in results}
        print(json.dumps(to_jsonable(report), sort_keys=True))
    else:
        print(audit_table(report))
    return 0
