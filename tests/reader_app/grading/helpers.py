"""Build grading scenarios: cases with real benchmark keys, reader and model answers."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session, select

from reader_app.models import Case, ModelRun, Reader, Response, Study
from reader_app.study.casebank import RenderedImage, add_case, create_study
from tests.factories import make_reader, png_bytes

# (case id, reference, synonyms): real spot-diagnosis benchmark entities
BENCHMARK_KEY = [
    ("bone-01", "Osteopoikilosis", ["Osteopathia condensans disseminata"]),
    ("chest-02", "Pectus excavatum", ["Funnel chest"]),
    ("neuro-03", "Pericallosal lipoma with agenesis of the corpus callosum", []),
    ("vasc-04", "Carotid-cavernous fistula", ["CCF", "Caroticocavernous fistula"]),
]


def make_key_study(
    session: Session,
    asset_dir: Path,
    *,
    slug: str = "grading",
    config: dict[str, object] | None = None,
    key: list[tuple[str, str, list[str]]] | None = None,
    kind: str = "spot",
) -> Study:
    study = create_study(session=session, slug=slug, title="Grading study", config=config)
    for i, (source_id, diagnosis, synonyms) in enumerate(key or BENCHMARK_KEY):
        add_case(
            session=session,
            asset_dir=asset_dir,
            study=study,
            source_id=source_id,
            kind=kind,
            images=[RenderedImage(png=png_bytes(shade=40 + 30 * i), width=64, height=48)],
            diagnosis=diagnosis,
            synonyms=synonyms,
            position=i,
            history="Adult patient",
        )
    session.commit()
    return study


def case_by_source(session: Session, study: Study, source_id: str) -> Case:
    case = session.exec(
        select(Case).where(Case.study_id == study.id, Case.source_id == source_id)
    ).one()
    return case


def reader(session: Session, study: Study, code: str, role: str = "reader", **kw: object) -> Reader:
    return make_reader(session, study, code=code, role=role, **kw).reader


def model_run(session: Session, study: Study, name: str, model: str = "vendor-model-x") -> ModelRun:
    run = ModelRun(study_id=study.id or 0, name=name, model=model, group_name="OpenAI")
    session.add(run)
    session.commit()
    return run


def answer(
    session: Session,
    study: Study,
    case: Case,
    text: str | None,
    *,
    by: Reader | ModelRun,
    likert: int | None = 3,
    status: str = "answered",
    findings: str | None = None,
    impression: str | None = None,
) -> Response:
    """Store one response directly (the exam and runner services are tested elsewhere)."""
    who = {"reader_id": by.id} if isinstance(by, Reader) else {"model_run_id": by.id}
    idk = status == "idk"
    response = Response(
        study_id=study.id or 0,
        case_id=case.id or 0,
        diagnosis=None if idk else text,
        likert=None if idk else likert,
        idk=idk,
        status=status,
        findings=findings,
        impression=impression,
        **who,  # type: ignore[arg-type]
    )
    session.add(response)
    session.commit()
    return response
