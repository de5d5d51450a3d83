"""A synthetic study at RadLE 2.0's size, to look at the analyst's views at full scale.

``readerstudy demo --scale radle`` builds it: 200 cases (ids ``1`` .. ``200``,
as in RadLE's ``Master_Case_ID``) with small generated PNGs, and 28 responders
(12 human readers in three seniority groups and 16 model runs from 5
providers), every answer graded. The responses go in as a RadLE long-master
CSV through the ordinary importer (``import-run --format radle``), so the
readers are imported readers (no sign-in) and the verdicts are the file's.

The answers are drawn from a fixed seed: each responder has a skill, each
case a difficulty; a responder is right with probability
``sigmoid(skill - difficulty)``, states a Likert level that leans towards 4
when right, and now and then says "I don't know". Nothing here is real data.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
from PIL import Image
from sqlmodel import Session

from reader_app.runs.importers import import_run_file
from reader_app.study.casebank import RenderedImage, add_case, create_study, get_study

RADLE_SLUG: Final = "radle-scale"
# raw seniorities (RadLE's rater_seniority); the importer maps them to RadLE's two
# comparison groups: PGY2 and PGY3 are trainees, everyone else board-certified
GROUPS: Final = ("post-MD 6y", "PGY3", "PGY2")
PROVIDERS: Final = ("OpenAI", "Anthropic", "Google", "xAI", "Meta")
COLUMNS: Final = (
    "run_id",
    "Master_Case_ID",
    "candidate",
    "provider",
    "access",
    "domain",
    "Ground_Truth_Diagnosis",
    "diagnosis",
    "likert",
    "response_valid",
    "abstained",
    "technical_failure",
    "final_score_authoritative",
    "rater_seniority",
)


@dataclass(frozen=True)
class Scale:
    cases: int = 200
    readers: int = 12
    models: int = 16
    seed: int = 0

    @property
    def responders(self) -> int:
        return self.readers + self.models


RADLE_SCALE: Final = Scale()


def reader_codes(scale: Scale) -> list[str]:
    return [f"R{r + 1:02d}" for r in range(scale.readers)]


def model_names(scale: Scale) -> list[str]:
    return [f"model-{m + 1:02d}" for m in range(scale.models)]


def _png(i: int) -> bytes:
    """A 96 x 96 grey gradient that differs per case (distinct content, distinct sha256)."""
    ramp = (np.add.outer(np.arange(96), np.arange(96)) * (1 + i % 5) + i * 7) % 256
    buf = io.BytesIO()
    Image.fromarray(ramp.astype(np.uint8), mode="L").save(buf, format="PNG")
    return buf.getvalue()


def _diagnosis(i: int) -> str:
    return f"Synthetic finding {i}"


def radle_csv(scale: Scale = RADLE_SCALE) -> str:
    """The long-master CSV of the synthetic answers (one row per responder and case)."""
    rng = np.random.default_rng(scale.seed)
    difficulty = rng.normal(0.0, 1.4, scale.cases)
    people = [
        (code, "human", GROUPS[r % len(GROUPS)], 1.6 - 0.5 * (r % len(GROUPS)) + rng.normal(0, 0.3))
        for r, code in enumerate(reader_codes(scale))
    ]
    models = [
        (name, "general", PROVIDERS[m % len(PROVIDERS)], rng.normal(0.3, 0.9))
        for m, name in enumerate(model_names(scale))
    ]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for case in range(scale.cases):
        truth = _diagnosis(case + 1)
        for name, domain, group, skill in [*people, *models]:
            p = 1.0 / (1.0 + math.exp(-(skill - difficulty[case])))
            right = rng.random() < p
            idk = not right and rng.random() < (0.25 if domain == "human" else 0.08)
            failed = domain != "human" and rng.random() < 0.01
            lean = 3.2 if right else 1.8
            likert = int(np.clip(round(rng.normal(lean, 1.0)), 0, 4))
            if failed:
                answer, level, verdict = "PARSE_FAILED", "", "0"
            elif idk:
                answer, level, verdict = "I don't know", "", "0"
            else:
                answer = truth if right else f"Not {truth.lower()}"
                level, verdict = str(likert), "1" if right else "0"
            writer.writerow(
                [
                    "synthetic_radle_scale",
                    case + 1,
                    # RadLE's shape: a reader's role in candidate, their code in provider
                    ("Trainee" if group.startswith("PGY") else "Radiologist")
                    if domain == "human"
                    else name,
                    name if domain == "human" else group,
                    "human" if domain == "human" else "closed",
                    domain,
                    truth,
                    answer,
                    level,
                    "True",
                    "True" if idk else "False",
                    "True" if failed else "False",
                    verdict,
                    group if domain == "human" else "",
                ]
            )
    return out.getvalue()


def build_radle_scale_study(
    session: Session,
    asset_dir: Path,
    *,
    scale: Scale = RADLE_SCALE,
    slug: str = RADLE_SLUG,
) -> str:
    """Create the synthetic study (cases, images, answer key) and import its answers.

    Idempotent: a study already named ``slug`` is left as it is. Commits.
    """
    if get_study(session=session, slug=slug) is not None:
        return slug
    study = create_study(
        session=session,
        slug=slug,
        title=f"Synthetic RadLE-scale study ({scale.cases} cases, {scale.responders} responders)",
    )
    for i in range(scale.cases):
        add_case(
            session=session,
            asset_dir=asset_dir,
            study=study,
            source_id=str(i + 1),
            kind="spot",
            images=[RenderedImage(png=_png(i), width=96, height=96, label="", window=None)],
            diagnosis=_diagnosis(i + 1),
            position=i,
        )
    import_run_file(
        session=session,
        study=study,
        source=radle_csv(scale).encode("utf-8"),
        fmt="radle",
        filename="synthetic-radle-scale.csv",
        actor="demo",
        commit=False,
    )
    session.commit()
    return slug
