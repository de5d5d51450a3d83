"""New study (coordinators): choose the source, see every problem, review flagged images, import.

The page reads widgets and calls reader_app.study_setup.service; the import
itself runs in a server-side job whose progress lives in the database, so a
reload shows where it is (the job panel polls the row once a second).
"""

from __future__ import annotations

from datetime import timedelta

import streamlit as st

from reader_app.core.auth import AuthError, sign_in_link
from reader_app.ingest.errors import FIRST_PROBLEMS
from reader_app.ingest.manifest import COLUMNS
from reader_app.ingest.manifest_template import STUDY_TOML_TEMPLATE, manifest_template_csv
from reader_app.ingest.report import problems_csv
from reader_app.models import utcnow
from reader_app.study_setup.jobs import (
    ADD,
    NEW,
    get_job,
    latest_job,
    mark_interrupted,
    screen,
    stalled,
    sweep,
)
from reader_app.study_setup.service import (
    SetupError,
    Source,
    begin_import,
    check,
    choose_folder,
    coordinator_link_for,
    discard,
    receive_zip,
)
from reader_app.study_setup.validation import CLEAR, EXCLUDE, Scan
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.components.safe_text import escape_markdown
from reader_app.ui.components.uploads import stored_upload
from reader_app.ui.context import (
    app_settings,
    db_session,
    hold_staff_link,
    load_reader,
    staff_user,
)
from reader_app.ui.navigation import CASE_BANK


@st.cache_resource(show_spinner=False)
def _sweep_once() -> int:
    """Once per server process: jobs a killed server left running marked interrupted,
    abandoned staging folders and workspaces removed."""
    return sweep(app_settings())


user = staff_user("coordinator")
state = st.session_state
PAGE = "study_setup"  # its flash messages
settings = app_settings()
RECENT = timedelta(hours=1)  # a finished import still shows after a reload
UPLOAD, FOLDER = "Upload a ZIP", "A folder on the server"


def _zip_key() -> str:
    """The ZIP uploader's key: a new one after "Start over", which empties the widget
    (Streamlit lets no code clear a file uploader's value)."""
    return f"setup_zip_{state.get('_setup_zip_round', 0)}"


def _size_text(size: int) -> str:
    """``33.8 KB``, ``2.1 MB``: a small file is not shown as 0.0 MB."""
    if size < 1_000_000:
        return f"{size / 1000:.1f} KB"
    return f"{size / 1_000_000:.1f} MB"


def _reset() -> None:
    discard(settings, state.pop("_setup_source", None))
    for key in ("_setup_scan", "_setup_target"):
        state.pop(key, None)
    for key in [k for k in state if str(k).startswith("setup_decision_")]:
        del state[key]


def _start_over() -> None:
    """Forget the check and the chosen ZIP: the page is as on arrival."""
    _reset()
    state["_setup_zip_round"] = state.get("_setup_zip_round", 0) + 1


def _check() -> None:
    _reset()
    mode = NEW if state.get("setup_mode", "new").startswith("A new") else ADD
    slug = (state.get("setup_slug") or "").strip()
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            if state.get("setup_source") == FOLDER:
                source = choose_folder(
                    session=session,
                    settings=settings,
                    actor=actor,
                    raw=state.get("setup_folder") or "",
                )
            else:
                upload = state.get(_zip_key())
                if upload is None:
                    flash(PAGE, "error", "Choose a ZIP file first.")
                    return
                with stored_upload(upload).path.open("rb") as zip_on_disk:  # read in chunks
                    source = receive_zip(
                        session=session,
                        settings=settings,
                        actor=actor,
                        upload=zip_on_disk,
                        name=upload.name,
                    )
            state["_setup_source"] = source
            state["_setup_target"] = (mode, slug)
            state["_setup_scan"] = check(
                session=session, settings=settings, actor=actor, source=source, mode=mode, slug=slug
            )
        except (SetupError, AuthError) as exc:
            flash(PAGE, "error", f"Refused: {exc}")
        except FileNotFoundError as exc:  # the uploaded file left with an ended session
            flash(PAGE, "error", str(exc))


def _import() -> None:
    source: Source | None = state.get("_setup_source")
    result: Scan | None = state.get("_setup_scan")
    if source is None or result is None:
        return
    mode, slug = state["_setup_target"]
    decisions = {}
    for i, flagged in enumerate(result.flagged):
        choice = state.get(f"setup_decision_{i}")
        if choice is not None:
            decisions[flagged.case_id] = EXCLUDE if choice.startswith("Exclude") else CLEAR
    with db_session() as session:
        actor, _ = load_reader(session, user)
        try:
            job_id = begin_import(
                session=session,
                settings=settings,
                actor=actor,
                source=source,
                result=result,
                mode=mode,
                slug=slug,
                decisions=decisions,
            )
        except (SetupError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state.pop("_setup_source", None)  # the job owns (and removes) the workspace now
    state.pop("_setup_scan", None)
    state["_setup_job"] = job_id


def _dismiss(job_id: int) -> None:
    state["_setup_dismissed"] = job_id
    state.pop("_setup_job", None)
    state.pop("_setup_link", None)


def _coordinator_link(job_id: int) -> None:
    with db_session() as session:
        actor, _ = load_reader(session, user)
        job = get_job(session, job_id)
        try:
            assert job is not None
            invite = coordinator_link_for(session=session, actor=actor, job=job)
        except (SetupError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    state["_setup_link"] = sign_in_link(settings.base_url, invite.token)
    hold_staff_link(invite.token)  # the sidebar's switcher offers the new study at once


@st.fragment(run_every=1.0)
def _job_panel(job_id: int) -> None:
    """The job as the database has it, read again every second (one primary-key read)."""
    with db_session() as session:
        job = get_job(session, job_id)
        if job is not None and stalled(job, utcnow()):
            mark_interrupted(settings, session)
            job = get_job(session, job_id)
    if job is None:
        return
    shown = screen(job_id)  # names and the report: in this process's memory only
    with st.container(key="setup_job", border=True):
        target = "new study" if job.mode == NEW else "cases added to"
        st.subheader(f"Import: {target} {escape_markdown(job.target_slug)}")
        source = shown.source if shown is not None else job.source_name
        st.caption(f"From {escape_markdown(source)}, started by {escape_markdown(job.actor)}")
        text = (
            f"{job.cases_done} of {job.cases_total} cases · {job.images_done} images · "
            f"{job.strips_done} strips"
        )
        if job.state == "running":
            done = min(job.cases_done / max(job.cases_total, 1), 1.0)
            st.progress(done, text=f"{text} · {job.message}")
            return
        if job.state == "interrupted":
            st.warning(
                f"Interrupted: the server stopped during the import (last heard from at "
                f"{job.updated_at:%Y-%m-%d %H:%M} UTC). Nothing of it was saved; set it up again."
            )
            return
        report = shown.report if shown is not None else ""
        kept = "The report was shown while the import ran; only its counts are kept."
        if job.state == "done":
            st.progress(1.0, text=text)
            st.success(
                f"Import finished: {job.cases_done} case(s) in study "
                f"{escape_markdown(job.target_slug)}."
            )
            if report:
                st.code(report, language=None, wrap_lines=True)
            else:
                st.caption(kept)
            if job.mode == NEW:
                st.button(
                    "Get my coordinator link for the new study",
                    key="setup_coordinator_link",
                    on_click=_coordinator_link,
                    args=(job_id,),
                )
                if link := state.get("_setup_link"):
                    st.caption("Open this link to coordinate the new study (shown once):")
                    st.code(link, language=None)
            else:
                st.page_link(f"ui/pages/{CASE_BANK.file}", label="Open the case bank")
        else:
            st.error(f"Import failed ({job.message}); nothing was written.")
            if report:
                st.code(report, language=None, wrap_lines=True)
            else:
                st.caption(kept)


st.title("New study")
show_flash(PAGE)
_sweep_once()

with db_session() as session:
    coordinator, study = load_reader(session, user)
    last = latest_job(session, actor_study_id=study.id or 0)

job_id = state.get("_setup_job")
if job_id is None and last is not None and last.id != state.get("_setup_dismissed"):
    recent = last.finished_at is not None and utcnow() - last.finished_at < RECENT
    job_id = last.id if last.state == "running" or recent else None
if job_id is not None:
    _job_panel(job_id)
    st.button("Set up another", key="setup_again", on_click=_dismiss, args=(job_id,))
    st.stop()

st.subheader("1. Choose the source")
with st.container(key="setup_templates"):
    st.caption(
        "Starting from scratch? The ZIP holds manifest.csv (one row per case: "
        + ", ".join(COLUMNS)
        + "), an optional study.toml and the image files the manifest names."
    )
    left, right, _ = st.columns([1, 1, 2])
    left.download_button(
        "Manifest template (CSV)",
        manifest_template_csv(),
        file_name="manifest.csv",
        mime="text/csv",
        key="setup_manifest_template",
        on_click="ignore",
    )
    right.download_button(
        "study.toml example",
        STUDY_TOML_TEMPLATE,
        file_name="study.toml",
        mime="application/toml",
        key="setup_toml_template",
        on_click="ignore",
    )
st.radio(
    "Import into",
    ["A new study", f"This study ({escape_markdown(study.slug)}): add cases"],
    key="setup_mode",
    horizontal=True,
)
adding = not str(state.get("setup_mode", "A new")).startswith("A new")
if adding:
    if study.state != "open":
        st.warning(f"This study is {study.state}: cases can be added only to an open study.")
    st.caption(
        "The study keeps its own settings (study.toml is not read). Readers who have "
        "already started keep their case order; new cases reach readers who start later."
    )
else:
    st.text_input("Study name (letters, digits, '.', '_' or '-')", key="setup_slug")
if settings.import_root is not None:
    st.radio("Where are the files?", [UPLOAD, FOLDER], key="setup_source", horizontal=True)
if state.get("setup_source", UPLOAD) == FOLDER:
    st.text_input(f"Folder under {settings.import_root}", key="setup_folder")
else:
    with st.container(key="setup_zip"):  # its widget key changes on "Start over"
        st.file_uploader(
            "Study ZIP: manifest.csv, study.toml and the image files "
            f"(up to {settings.max_upload_mb} MB)",
            type=["zip"],
            key=_zip_key(),
            max_upload_size=settings.max_upload_mb,  # the widget's own "... per file" text
        )
    if (chosen := state.get(_zip_key())) is not None:
        with st.container(key="setup_chosen"):
            try:
                chosen_size = _size_text(stored_upload(chosen).size)
            except FileNotFoundError:
                chosen_size = "gone; choose it again"
            st.text(f"Chosen: {chosen.name} ({chosen_size})")
    if settings.import_root is None:
        st.caption("Importing from a server folder is off (READERSTUDY_IMPORT_ROOT is not set).")
st.button("Check the study", key="setup_check", type="primary", on_click=_check)

result: Scan | None = state.get("_setup_scan")
if result is None:
    st.stop()
assert result is not None

st.subheader("2. Problems")
if result.problems:
    with st.container(key="setup_problems"):
        st.error(
            f"{len(result.problems):,} problem(s) found. "
            "Nothing was written; fix them and check again."
        )
        for problem in result.problems[:FIRST_PROBLEMS]:  # st.text: names stay plain text
            st.text(problem.text)
        if len(result.problems) > FIRST_PROBLEMS:
            st.caption(
                f"The first {FIRST_PROBLEMS} are shown; "
                f"{len(result.problems) - FIRST_PROBLEMS:,} more are in the full list."
            )
    st.download_button(
        "Download every problem (CSV)",
        problems_csv(result.problems),
        file_name="problems.csv",
        mime="text/csv",
        key="setup_problems_csv",
    )
    st.button("Start over", key="setup_reset", on_click=_start_over)
    st.stop()
st.success(
    f"No problems: {result.cases} case(s), {result.strips} of them strip(s); "
    f"{len(result.flagged)} image(s) to review."
)

st.subheader("3. Burned-in review")
if not result.flagged:
    st.caption("The burned-in guard flagged no image.")
for i, flagged in enumerate(result.flagged):
    with st.container(key=f"setup_flag_{i}", border=True):
        pixels, decide = st.columns([3, 2], gap="large")  # the decision sits beside the image
        for image in flagged.images:
            window = f"window: {image.window}" if image.window else "as stored"
            pixels.image(image.png, caption=f"{image.label} {window}".strip(), width="stretch")
        decide.markdown(
            f"**Case {escape_markdown(flagged.case_id)}** · {escape_markdown(flagged.file)}"
        )
        decide.caption(escape_markdown(flagged.reason))
        if flagged.manifest_reviewed_by:
            decide.caption(
                "The manifest names a reviewer ("
                + escape_markdown(flagged.manifest_reviewed_by)
                + "); the decision made here is the one recorded."
            )
        decide.radio(
            "Decision",
            [f"No burned-in text: cleared by {coordinator.code}", "Exclude this case"],
            index=None,
            key=f"setup_decision_{i}",
        )

st.subheader("4. Import")
undecided = sum(state.get(f"setup_decision_{i}") is None for i in range(len(result.flagged)))
if undecided:
    st.caption(f"Decide the {undecided} flagged image(s) above to import.")
cols = st.columns([1, 1, 4])
cols[0].button(
    "Import", key="setup_import", type="primary", on_click=_import, disabled=bool(undecided)
)
cols[1].button("Start over", key="setup_reset", on_click=_start_over)
