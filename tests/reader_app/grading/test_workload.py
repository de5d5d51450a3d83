"""The grading-workload figures quoted in docs/grading.md, recomputed.

Synthetic sample: tests/reader_app/grading/synthetic_sample.py (method in its
docstring). RadLE sample: the nine real rows of the RadLE 2.0 long master.
The app's own autograde reproduces the pure computation on a real database.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from sqlmodel import Session

from reader_app.core.settings import Settings
from reader_app.grading.autograde import autograde_study
from reader_app.grading.key import make_entry, study_key
from reader_app.grading.workload import Workload, grading_workload
from reader_app.models import Response
from tests.reader_app.grading.helpers import make_key_study, model_run, reader
from tests.reader_app.grading.synthetic_sample import ENTITIES, key_rows, sample_rows

ROOT = Path(__file__).resolve().parents[3]
RADLE = Path(__file__).with_name("data") / "radle_long_master_sample.csv"
IDK = {"i don't know", "idon't know", "i dont know", "idk"}


def _key(with_synonyms: bool = True) -> dict[str, object]:
    return {
        k["case_id"]: make_entry(k["case_id"], k["diagnosis"], k["synonyms"])
        for k in key_rows(with_synonyms)
    }


def _synthetic(kind: str | None = None, with_synonyms: bool = True) -> Workload:
    rows = [r for r in sample_rows() if kind is None or r["kind"] == kind]
    return grading_workload(
        [(r["case_id"], r["diagnosis"], r["status"] == "answered") for r in rows],
        _key(with_synonyms),  # type: ignore[arg-type]
    )


def _radle(reference: str, synonyms: str) -> Workload:
    rows = list(csv.DictReader(RADLE.open(encoding="utf-8")))
    key = {"1": make_entry("1", reference, synonyms)}
    return grading_workload(
        [(r["Master_Case_ID"], r["diagnosis"], r["diagnosis"].lower() not in IDK) for r in rows],
        key,
    )


def _line(w: Workload) -> str:
    """The figures as docs/grading.md prints them."""
    return (
        f"| {w.answered} | {w.by_key} ({w.share(w.by_key):.1f} %) "
        f"| {w.by_memory} ({w.share(w.by_memory):.1f} %) "
        f"| {w.to_human} ({w.share(w.to_human):.1f} %) |"
    )


def test_figures_in_the_docs_are_current() -> None:
    docs = ROOT.joinpath("docs", "grading.md").read_text(encoding="utf-8")
    expected = {
        "synthetic, key with synonyms": _synthetic(),
        "synthetic, reference only": _synthetic(with_synonyms=False),
        "synthetic, readers only": _synthetic("human"),
        "synthetic, model runs only": _synthetic("model"),
        "RadLE sample, key `CCF`": _radle("CCF", ""),
        "RadLE sample, key `Carotid-cavernous fistula` + `CCF`": _radle(
            "Carotid-cavernous fistula", "CCF"
        ),
    }
    for label, workload in expected.items():
        assert f"| {label} {_line(workload)}" in docs, f"docs/grading.md: update the {label} row"


def test_synthetic_sample_shape_and_the_shared_memory_effect() -> None:
    rows = sample_rows()
    assert len(rows) == len(ENTITIES) * 20 == 480
    assert sample_rows() == rows  # seeded
    pooled, humans, models = _synthetic(), _synthetic("human"), _synthetic("model")
    # one memory for readers and models: fewer human decisions than grading them apart
    assert pooled.to_human < humans.to_human + models.to_human
    assert pooled.by_key == humans.by_key + models.by_key


def test_the_app_autograde_matches_the_computation(session: Session, settings: Settings) -> None:
    key = [(e.case_id, e.reference, list(e.synonyms)) for e in ENTITIES]
    study = make_key_study(session, settings.asset_dir, key=key)
    case_ids = {
        e.case_id: cid for cid, e in study_key(session=session, study_id=study.id or 0).items()
    }
    who: dict[str, object] = {}
    for row in sample_rows():
        name = row["responder"]
        if name not in who:
            who[name] = (
                reader(session, study, name)
                if row["kind"] == "human"
                else model_run(session, study, name)
            )
        by = who[name]
        idk = row["status"] == "idk"
        session.add(
            Response(
                study_id=study.id or 0,
                case_id=case_ids[row["case_id"]],
                reader_id=by.id if row["kind"] == "human" else None,  # type: ignore[attr-defined]
                model_run_id=by.id if row["kind"] == "model" else None,  # type: ignore[attr-defined]
                diagnosis=None if idk else row["diagnosis"],
                likert=None if idk else int(row["likert"]),
                idk=idk,
                status=row["status"],
            )
        )
    session.commit()
    report = autograde_study(session=session, study_id=study.id or 0)
    expected = _synthetic()
    assert (report.by_key, report.pending, report.pending_items) == (
        expected.by_key,
        expected.by_memory + expected.to_human,
        expected.to_human,
    )


@pytest.mark.parametrize("kind", [None, "human", "model"])
def test_shares_add_up(kind: str | None) -> None:
    w = _synthetic(kind)
    assert w.by_key + w.by_memory + w.to_human == w.answered
