"""The coordinator's answer key: view, edit one case, or apply a key CSV.

Every change is audited, keeps the previous key and re-grades the case
(reader_app.grading.key_admin); this page only reads widgets and calls it.
"""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from reader_app.core.auth import AuthError
from reader_app.core.upload_limits import KEY_UPLOAD_MB
from reader_app.grading.key import AnswerKeyError, KeyEntry, parse_key_csv, write_key_csv
from reader_app.grading.key_admin import import_key, key_history, list_key, update_key
from reader_app.ui.components.flash import flash, show_flash
from reader_app.ui.components.safe_text import labelled
from reader_app.ui.components.uploads import stored_upload
from reader_app.ui.context import current_user, db_session, load_reader

user = current_user()
state = st.session_state
PAGE = "answer_key"  # its flash messages


def _save(case_id: int) -> None:
    synonyms = [s for s in (state.get(f"key_syn_{case_id}") or "").splitlines() if s.strip()]
    with db_session() as session:
        coordinator, _ = load_reader(session, user)
        try:
            change = update_key(
                session=session,
                actor=coordinator,
                case_id=case_id,
                diagnosis=state.get(f"key_dx_{case_id}") or "",
                synonyms=synonyms,
                reason=(state.get(f"key_reason_{case_id}") or "").strip() or None,
            )
        except (AnswerKeyError, AuthError) as exc:
            flash(PAGE, "error", str(exc))
            return
    if not change.changed:
        flash(PAGE, "info", "Nothing changed.")
    else:
        n = change.regrade.responses_affected if change.regrade else 0
        flash(PAGE, "success", f"Key saved; {n} answer(s) re-graded.")


def _apply_file() -> None:
    upload = state.get("key_upload")
    if upload is None:
        flash(PAGE, "error", "Choose a key CSV first.")
        return
    try:  # on disk (reader_app/web/disk_uploads.py); the upload gate held it to 4 MB
        entries = parse_key_csv(stored_upload(upload).path.read_bytes().decode("utf-8-sig"))
    except (AnswerKeyError, UnicodeDecodeError, FileNotFoundError) as exc:
        flash(PAGE, "error", f"Key file refused: {exc}")
        return
    with db_session() as session:
        coordinator, _ = load_reader(session, user)
        try:
            result = import_key(session=session, actor=coordinator, entries=entries)
        except (AnswerKeyError, AuthError) as exc:
            flash(PAGE, "error", f"Key file refused: {exc}")
            return
    flash(
        PAGE,
        "success",
        f"{result.changed} case(s) changed, {result.unchanged} unchanged, "
        f"{result.not_in_file} not in the file; {result.responses_affected} answer(s) re-graded.",
    )


with db_session() as session:
    coordinator, study = load_reader(session, user)
    rows = list_key(session=session, actor=coordinator)
    chosen = state.get("key_case")
    history = key_history(session=session, actor=coordinator, case_id=chosen) if chosen else []

st.title("Answer key")
show_flash(PAGE)

table = pd.DataFrame(
    {
        "case": [r.source_id for r in rows],
        "diagnosis": [r.diagnosis for r in rows],
        "synonyms": [" | ".join(r.synonyms) for r in rows],
    }
)
if any(r.reference for r in rows):  # grounding truth (stored-image pixels), set at import
    table["reference region"] = [r.reference for r in rows]
st.dataframe(
    table,
    hide_index=True,
    column_config=labelled(table, text=table.columns),
    key="key_table",
)
buffer = io.StringIO()
write_key_csv((KeyEntry(r.source_id, r.diagnosis, r.synonyms) for r in rows), buffer)
st.download_button(
    "Download key CSV", buffer.getvalue(), file_name=f"{study.slug}-key.csv", key="key_download"
)

st.subheader("Edit one case")
by_id = {r.case_id: r for r in rows}
st.selectbox(
    "Case",
    options=list(by_id),
    format_func=lambda cid: by_id[cid].source_id,
    index=None,
    key="key_case",
)
if chosen in by_id:
    row = by_id[chosen]
    state.setdefault(f"key_dx_{chosen}", row.diagnosis)
    state.setdefault(f"key_syn_{chosen}", "\n".join(row.synonyms))
    st.text_input("Reference diagnosis", key=f"key_dx_{chosen}")
    st.text_area("Accepted synonyms, one per line", key=f"key_syn_{chosen}")
    st.text_input("Reason for the change (kept in the history)", key=f"key_reason_{chosen}")
    st.button("Save key", key="key_save", type="primary", on_click=_save, args=(chosen,))
    if history:
        st.caption("Earlier keys of this case")
        for version in reversed(history):
            st.text(
                f"{version.replaced_at:%Y-%m-%d %H:%M} UTC, replaced by {version.replaced_by}: "
                f"{version.diagnosis} | {version.synonyms}"
                + (f"  ({version.reason})" if version.reason else "")
            )

st.subheader("Apply a key file")
st.file_uploader(
    "Key CSV: case_id,diagnosis,synonyms",
    type=["csv"],
    key="key_upload",
    max_upload_size=KEY_UPLOAD_MB,  # the widget then says the real cap, not Streamlit's 500MB
)
st.button("Apply file", key="key_import", on_click=_apply_file)
