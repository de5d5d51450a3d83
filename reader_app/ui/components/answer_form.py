"""The answer form: one ``st.form``, so what is stored is what is on screen.

Keys (DESIGN.md): ``diagnosis`` (text), ``likert`` (0-4, nothing pre-selected),
``idk`` (the "I don't know" checkbox: ticking it greys the other two, and the
answer is "I don't know"), ``submit``. The form sits in the container keyed ``answer_form``.

Why a form: the browser sends every field of a form together with the click
that submits it, in one message. Nothing depends on the order of typing,
clicking, editing or leaving the text box (Streamlit commits a text box on
submit even when it still has the cursor), and no field reruns the page while
the reader answers. Submitting: the button, Enter in the text box, or
Ctrl+Enter anywhere on the page (:data:`EXAM_SCRIPT`).

Each drawing of the form gets new widgets. Every visible field sits in a
container keyed with the field's stable name (the page's ``st-key-diagnosis``
and so on); the widget inside, like each hidden field, is keyed
``<name>__<drawing>`` (:func:`field_key`), and the
drawing changes whenever the form is emptied or filled for a case. Why: the
browser applies a server-side reset of a widget a render or two after drawing
it, so a reader who answers the instant a case appears (or a slow PC) would
send the previous case's values and case with the click. New widgets hold
nothing in the browser but what the reader enters. The submit button's
callback is bound to the case and the drawing it was drawn for, so a submit is
read from, and stored for, exactly the form the reader saw.

Hidden fields ride along in the same message: ``case_token`` (the case the form
was drawn for; the page script keys drafts and active time with it), ``active_ms`` (visible time,
counted by the browser), ``viewer_interaction`` and, for the location step
(study option ``grounding``), ``location``: the viewer's marker as JSON, checked
by ``reader_app.exam.location``. The step's visible field is the checkbox
``no_focal_finding`` (:func:`location_fields`).

Drafts: every field inside the form is mirrored, per case, into the tab's
``sessionStorage`` (:data:`EXAM_SCRIPT`), and put back when the form is drawn
empty for a case that has a draft: after Pause/Resume, a reload or a failed
submit that a reload followed. The viewer's marker is part of the same draft
(``marker``): the viewer announces a reader's change with a ``readerstudy:marker``
event, and a restore puts the marker back into a viewer that has none. The
mirror is generic (every keyed text box, text area, radio and checkbox in the
form), so another form type put inside :func:`answer_form_container` gets
drafts for free. On the server side the fields themselves are the draft:
Streamlit keeps their values across a refused or failed submit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import streamlit as st

from reader_app.exam.config import DEFAULT_LIKERT_LABELS
from reader_app.exam.submit import MAX_DIAGNOSIS_CHARS
from reader_app.ui.components.safe_text import escape_markdown

FORM_KEY = "answer_form"
DRAWING_KEY = "_form_drawing"  # which drawing of the form the fields belong to
TOKEN_KEY = "_form_token"  # the case the form being drawn is for
SUBMIT_SHORTCUT = "Ctrl+Enter"
HIDDEN = ("case_token", "active_ms", "viewer_interaction", "location")

FORM_CSS = """
<style>
/* the hidden fields (widgets keyed NAME__DRAWING, with no container around them) */
[class*="st-key-case_token__"], [class*="st-key-active_ms__"],
[class*="st-key-viewer_interaction__"], [class*="st-key-location__"] {
  display: none;
}
/* Streamlit's "Press Enter to submit form" sits over the right end of a narrow text
   box and takes its clicks; the caption under the button says how to submit */
.st-key-answer_form [data-testid=InputInstructions] { display: none; }
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-diagnosis,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-findings,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-impression,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-likert,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-no_focal_finding {
  opacity: 0.35; text-decoration: line-through;
}
body[data-rs-marked] .st-key-answer_form .st-key-form_error_location,
.st-key-answer_form:has(.st-key-no_focal_finding input:checked) .st-key-form_error_location,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-form_error_location {
  display: none;
}
.st-key-answer_form:has(.st-key-likert input:checked) .st-key-form_error_likert,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-form_error_likert,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-form_error_diagnosis,
.st-key-answer_form:has(.st-key-idk input:checked) .st-key-form_error_impression,
.st-key-answer_form:has(.st-key-impression textarea:not(:placeholder-shown))
  .st-key-form_error_impression,
.st-key-answer_form:has(.st-key-diagnosis input:not(:placeholder-shown))
  .st-key-form_error_diagnosis {
  display: none;
}
body:not([data-rs-prefetch]) .st-key-prefetch { display: none !important; }
.st-key-prefetch [data-testid=stElementToolbar], .st-key-prefetch button {
  display: none !important;
}
</style>
"""

# Installed once per page. Plain DOM work on Streamlit's stable st-key-* classes:
# - drafts: mirror the form's fields into sessionStorage per case, restore into an
#   empty form (React's value setter + an input event, or a click for choices);
# - active time: count visible ms per case while the form is on the page and
#   the tab is visible, write it into the hidden active_ms field before a submit;
# - Ctrl+Enter anywhere submits; the prefetched next-case images are inert.
EXAM_SCRIPT = """
<script>
(() => {
  if (window.__readerstudyExam) return;
  window.__readerstudyExam = true;
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const store = window.sessionStorage;
  const FORM = '.st-key-answer_form';
  const HIDDEN = ['st-key-case_token', 'st-key-active_ms', 'st-key-viewer_interaction',
    'st-key-location'];
  const form = () => doc.querySelector(FORM);
  // a hidden field's input (its widget is keyed NAME__DRAWING)
  const hidden = (name) => doc.querySelector(FORM + ' [class*="st-key-' + name + '__"] input');
  const token = () => {
    const el = hidden('case_token');
    return el && el.value ? el.value : null;
  };
  // a field's widget is keyed NAME__DRAWING; its draft is kept under NAME
  const keyOf = (box) => {
    const k = [...box.classList].find((c) => c.startsWith('st-key-'));
    return k ? k.replace(/__[0-9]+$/, '') : k;
  };
  const boxes = (f) => [...f.querySelectorAll('[class*="st-key-"]')].filter((b) => {
    const k = keyOf(b);
    return k && !HIDDEN.includes(k) && b.querySelector('input, textarea')
      && !b.querySelector('[class*="st-key-"] [class*="st-key-"]');
  });
  const setText = (el, value) => {
    const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement : HTMLInputElement;
    Object.getOwnPropertyDescriptor(proto.prototype, 'value').set.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const read = (f) => {
    const out = {};
    for (const box of boxes(f)) {
      const radios = [...box.querySelectorAll('input[type=radio]')];
      const check = box.querySelector('input[type=checkbox]');
      const text = box.querySelector('textarea, input[type=text], input:not([type])');
      if (radios.length) out[keyOf(box)] = radios.findIndex((r) => r.checked);
      else if (check) out[keyOf(box)] = check.checked;
      else if (text) out[keyOf(box)] = text.value;
    }
    return out;
  };
  const empty = (d) => Object.values(d).every((v) => v === '' || v === -1 || v === false);
  // the case viewer (ui/static/viewer.js) of case t, when it takes a marker
  const viewerOf = (t) => {
    const v = (window.parent || window).readerstudyViewer || window.readerstudyViewer;
    return v && v.caseId === t && v.grounding ? v : null;
  };
  const save = () => {
    const f = form(); const t = token();
    if (!f || !t || f.dataset.restoring) return;
    // a form whose case just changed and is not yet taken over by tick(): its fields
    // may still hold the previous case's values, which are no draft of this one
    if (f.dataset.token !== t) return;
    const d = read(f);
    // the marker lives in the viewer; with no viewer on the page, keep the draft's own
    const v = viewerOf(t);
    const old = JSON.parse(store.getItem('rs.draft.' + t) || '{}');
    const m = v ? v.marker() : old.marker;
    if (m) d.marker = m;
    if (empty(d)) store.removeItem('rs.draft.' + t);
    else store.setItem('rs.draft.' + t, JSON.stringify(d));
  };
  // Put the draft back field by field: only into a field that is empty on screen, so a
  // field drawn a moment later, or reset by a run still arriving, is filled in turn.
  const restore = (f, t) => {
    const raw = store.getItem('rs.draft.' + t);
    if (!raw) return;
    const d = JSON.parse(raw);
    const typed = [];
    f.dataset.restoring = '1';
    for (const box of boxes(f)) {
      const v = d[keyOf(box)];
      if (v === undefined) continue;
      const radios = [...box.querySelectorAll('input[type=radio]')];
      const check = box.querySelector('input[type=checkbox]');
      const text = box.querySelector('textarea, input[type=text], input:not([type])');
      if (radios.length) {
        if (v >= 0 && radios[v] && !radios.some((r) => r.checked)) radios[v].click();
      } else if (check) {
        if (v === true && !check.checked) check.click();
      } else if (text && typeof v === 'string' && v && text.value === '') {
        setText(text, v); typed.push(text);
      }
    }
    // the marker, into a viewer that has none (the viewer may be drawn a moment later)
    const v = viewerOf(t);
    if (d.marker && v && !v.marker()) v.setMarker(d.marker);
    // commit restored texts as leaving the box would (after the choices are clicked): an
    // uncommitted text stays on screen over the next case when Streamlit clears the field
    const had = doc.activeElement;
    for (const el of typed) { el.focus(); el.blur(); }
    if (typed.length && had && had.focus && !typed.includes(had)) had.focus();
    delete f.dataset.restoring;
  };
  const activeKey = (t) => 'rs.active.' + t;
  const writeActive = () => {
    const t = token();
    const el = hidden('active_ms');
    if (!t || !el) return;
    const ms = String(Math.round(Number(store.getItem(activeKey(t)) || 0)));
    if (el.value !== ms) setText(el, ms);
  };
  let last = performance.now();
  let seen = null;
  // the reader has acted on this form since it was drawn: from then on the screen is
  // theirs and no draft is put back (a restore must never undo a change they just made)
  let touched = false;
  // The next case's images (st-key-prefetch) stay display:none until this case's own
  // images are all loaded and a moment has passed: fetched ahead, but never decoded
  // while the reader's case is still being drawn.
  let readyAt = null;
  let readyToken = null;
  const holdPrefetch = () => { doc.body.removeAttribute('data-rs-prefetch'); readyAt = null; };
  const releasePrefetch = (now, t) => {
    if (readyToken !== t) { readyToken = t; holdPrefetch(); }
    const shown = [...doc.querySelectorAll('[data-testid=stMain] img')]
      .filter((i) => !i.closest('.st-key-prefetch'));
    const stale = doc.querySelector('[data-stale="true"]');
    if (!shown.length || stale || !shown.every((i) => i.complete)) { readyAt = null; return; }
    if (readyAt === null) readyAt = now;
    if (now - readyAt >= 0) doc.body.setAttribute('data-rs-prefetch', '1');
  };
  // a marker on this case's image answers a "mark the finding" error: hide the error
  // (FORM_CSS) until the next submit says otherwise
  const showMarked = (t) => {
    const v = viewerOf(t);
    const marked = !!(v && v.marker());
    if (marked !== doc.body.hasAttribute('data-rs-marked')) {
      doc.body.toggleAttribute('data-rs-marked', marked);
    }
  };
  const tick = () => {
    const now = performance.now();
    const dt = Math.min(now - last, 1000);
    last = now;
    const f = form(); const t = token();
    for (const box of doc.querySelectorAll('.st-key-prefetch')) {
      if (!box.inert) box.inert = true;
    }
    if (!f || !t) { holdPrefetch(); return; }
    releasePrefetch(now, t);
    showMarked(t);
    if (doc.visibilityState === 'visible') {
      store.setItem(activeKey(t), String(Number(store.getItem(activeKey(t)) || 0) + dt));
    }
    // drafts stay per case for the tab's life (a few hundred bytes each): going back to
    // revise an earlier answer must not lose the current case's draft
    if (f !== seen || f.dataset.token !== t) {
      seen = f; f.dataset.token = t;
      touched = false;
    }
    // Until the reader acts, the draft is what this form should show: put it back into
    // any empty field, however late that field is drawn or reset (each widget's code
    // loads lazily, and a run may still be arriving seconds after a reload on a busy
    // machine). A run in progress is waited out: its fields are about to be replaced.
    if (!touched && !doc.querySelector('[data-stale="true"]')) restore(f, t);
  };
  setInterval(tick, 100);
  tick();
  // Only the reader's own gestures (trusted events) write the draft: a restore's clicks
  // and the hidden fields' updates are the script's, and must not overwrite it. A
  // restore's click on a choice fires trusted input and change events in Chromium: they
  // come while the form is marked restoring, and are the script's too.
  const fromReader = (e) => {
    const f = e.isTrusted && e.target.closest ? e.target.closest(FORM) : null;
    return !!f && !f.dataset.restoring && !e.target.closest(FORM + ' .st-key-submit');
  };
  // Saved at once, from the field as the event leaves it: a text box's change comes on
  // its blur, which may be the page replacing it (a new drawing after a submit), and a
  // save a moment later would read the replacement. A click on a choice is saved just
  // after it: the widget sets the choice in its own click handler, after this one.
  const onField = (e) => { if (fromReader(e)) { touched = true; save(); } };
  doc.addEventListener('input', onField, true);
  doc.addEventListener('change', onField, true);
  doc.addEventListener('click', (e) => {
    if (fromReader(e)) { touched = true; setTimeout(save, 0); }
  }, true);
  // the reader placed, moved or cleared the marker in the viewer: a gesture on this form
  doc.addEventListener('readerstudy:marker', (e) => {
    if (e.detail && e.detail.case === token()) { touched = true; save(); showMarked(token()); }
  });
  // the marker, sent with the form (reader_app.exam.location checks it)
  const writeLocation = () => {
    const t = token();
    const el = hidden('location');
    if (!t || !el) return;
    const v = viewerOf(t);
    const m = v ? v.marker() : null;
    const json = m ? JSON.stringify({ case: t, x: m.x, y: m.y, slice: m.slice }) : '';
    if (el.value !== json) setText(el, json);
  };
  // what the reader did in the case viewer (ui/static/viewer.js), sent with the form
  const writeInteraction = () => {
    const t = token();
    const el = hidden('viewer_interaction');
    const viewer = (window.parent || window).readerstudyViewer || window.readerstudyViewer;
    if (!t || !el || !viewer || viewer.caseId !== t) return;
    const json = JSON.stringify(viewer.summary());
    if (el.value !== json) setText(el, json);
  };
  // once submitted, the form's fields are the server's to clear: a restore while the next
  // case is drawn would put this case's draft into it
  const beforeSubmit = () => {
    save(); writeActive(); writeInteraction(); writeLocation(); holdPrefetch();
    touched = true;
  };
  doc.addEventListener('pointerdown', (e) => {
    if (e.target.closest(FORM + ' .st-key-submit')) beforeSubmit();
  }, true);
  doc.addEventListener('keydown', (e) => {
    const f = form();
    if (!f || e.key !== 'Enter') return;
    if (e.ctrlKey || e.metaKey) {
      // one submit whatever has the focus: the text box's own Enter handling and
      // Streamlit's shortcut would each submit, so neither sees this key
      e.preventDefault();
      e.stopImmediatePropagation();
      beforeSubmit();
      const button = f.querySelector('.st-key-submit button');
      // leave the text box first, as a click on the button would: Streamlit commits a
      // text area on blur, and one still being edited keeps its text over the next case
      const active = doc.activeElement;
      if (active && f.contains(active) && active.blur) active.blur();
      if (button && !button.disabled) button.click();
    } else if (e.target.closest(FORM + ' .st-key-diagnosis')) {
      beforeSubmit();
    }
  }, true);
})();
</script>
"""


@dataclass(frozen=True)
class FormValues:
    """What the browser sent with the submit: the values on screen at that moment."""

    case_token: str  # the case the submitted form was drawn for
    diagnosis: str | None
    likert: int | None
    idk: bool
    active_ms: str
    interaction: str  # the viewer's record of this case, as JSON (see case_viewer.py)
    location: str = ""  # the viewer's marker, as JSON (see exam/location.py)
    no_focal_finding: bool = False
    findings: str = ""  # a report case's two texts (components/report_form.py)
    impression: str = ""


def current_drawing() -> int:
    return int(st.session_state.get(DRAWING_KEY, 0))


def field_key(name: str, drawing: int | None = None) -> str:
    """The widget key of form field ``name`` in ``drawing`` (by default the current one)."""
    return f"{name}__{current_drawing() if drawing is None else drawing}"


@contextmanager
def form_field(name: str) -> Iterator[str]:
    """The stable ``st-key-<name>`` container around the field's widget; yields its key."""
    with st.container(key=name):
        yield field_key(name)


def read_form(case_token: str, drawing: int) -> FormValues:
    """The fields of ``drawing`` as the submit sent them."""
    state = st.session_state

    def value(name: str) -> object:
        return state.get(field_key(name, drawing))

    likert = value("likert")
    return FormValues(
        case_token=case_token,
        diagnosis=value("diagnosis"),  # type: ignore[arg-type]
        likert=likert if isinstance(likert, int) else None,
        idk=bool(value("idk")),
        active_ms=str(value("active_ms") or ""),
        interaction=str(value("viewer_interaction") or ""),
        location=str(value("location") or ""),
        no_focal_finding=bool(value("no_focal_finding")),
        findings=str(value("findings") or ""),
        impression=str(value("impression") or ""),
    )


def clear_form() -> None:
    """A new, empty drawing of the form (callbacks and the start of a run only): its
    widgets start at their defaults, so nothing is written for them."""
    st.session_state[DRAWING_KEY] = current_drawing() + 1
    form_error(None)


def fill_form(
    diagnosis: str | None, likert: int | None, idk: bool, *, no_focal_finding: bool = False
) -> None:
    """A new drawing of the form holding these values (changing an earlier answer). Only
    values other than a field's default are written: a value for a widget never drawn
    (no location step) would stay in the session for good."""
    clear_form()
    drawing = current_drawing()
    for name, value in (
        ("diagnosis", diagnosis or ""),
        ("likert", likert),
        ("idk", idk),
        ("no_focal_finding", no_focal_finding),
    ):
        if value is not None and value is not False and value != "":  # confidence 0 counts
            st.session_state[field_key(name, drawing)] = value


def form_error(message: str | None, field: str | None = None) -> None:
    """Show ``message`` above the submit button (about ``field``, hidden once it is filled)."""
    state = st.session_state
    if message is None:
        state.pop("_form_error", None)
        state.pop("_form_error_field", None)
    else:
        state["_form_error"] = message
        state["_form_error_field"] = field


def install_exam_script() -> None:
    """Drafts, active time, Ctrl+Enter and the inert prefetch (once per page)."""
    st.html(FORM_CSS + EXAM_SCRIPT, unsafe_allow_javascript=True)


@contextmanager
def answer_form_container(case_public_id: str) -> Iterator[None]:
    """The form, with the hidden fields first; put the visible fields inside."""
    st.session_state[TOKEN_KEY] = case_public_id
    # st.form gets no st-key-* class: the keyed container around it gives the page one
    with st.container(key=FORM_KEY), st.form("answer", border=False, enter_to_submit=True):
        # hidden, and read by the page script only: no stable-name container (fewer
        # elements to send and lay out per case)
        st.text_input(
            "case", value=case_public_id, key=field_key("case_token"), label_visibility="collapsed"
        )
        for name, label in (
            ("active_ms", "active"),
            ("viewer_interaction", "viewer"),
            ("location", "location"),
        ):
            st.text_input(label, key=field_key(name), label_visibility="collapsed")
        yield


def location_fields(*, required: bool) -> None:
    """The location step's field in the form: "No focal finding" (the marker is the
    viewer's). Shown only when the study asks for grounding."""
    with form_field("no_focal_finding") as key:
        st.checkbox("No focal finding", key=key)
    st.caption(
        "Click the image where the finding is (one marker; on a strip, on its slice), "
        + ("or tick No focal finding." if required else "if you can (optional).")
    )


def answer_fields(*, likert_labels: Sequence[str] | None = None) -> None:
    """Diagnosis, confidence, "I don't know" (inside :func:`answer_form_container`)."""
    with form_field("diagnosis") as key:
        st.text_input(
            "Diagnosis",
            key=key,
            max_chars=MAX_DIAGNOSIS_CHARS,
            placeholder="Your single most specific diagnosis",
        )
    confidence_fields(likert_labels=likert_labels)


def confidence_fields(*, likert_labels: Sequence[str] | None = None) -> None:
    """The 0-4 confidence (nothing pre-selected) and "I don't know": every answer form's."""
    labels = list(likert_labels or DEFAULT_LIKERT_LABELS)
    with form_field("likert") as key:
        st.radio(
            "Confidence",
            options=[0, 1, 2, 3, 4],
            index=None,
            format_func=lambda v: f"{v} · {escape_markdown(labels[v])}",
            key=key,
        )
    with form_field("idk") as key:
        st.checkbox("I don't know", key=key)


def _submitted(on_submit: Callable[[FormValues], None], case_token: str, drawing: int) -> None:
    on_submit(read_form(case_token, drawing))


def submit_button(
    on_submit: Callable[[FormValues], None],
    *,
    submit_label: str = "Submit answer",
    enter_submits: bool = True,
) -> None:
    """The form's submit button, with the last error message just above it.

    ``on_submit`` gets the values of this drawing of the form and the case it was drawn
    for, whatever the page has drawn since (a double click's second submit)."""
    if err := st.session_state.get("_form_error"):
        field = st.session_state.get("_form_error_field") or "other"
        with st.container(key=f"form_error_{field}"):
            st.error(err)
    state = st.session_state
    with form_field("submit") as key:
        st.form_submit_button(
            submit_label,
            key=key,
            type="primary",
            on_click=_submitted,
            args=(on_submit, str(state.get(TOKEN_KEY, "")), current_drawing()),
            shortcut=SUBMIT_SHORTCUT,
            width="stretch",
        )
    st.caption(
        f"Enter in the diagnosis box, or {SUBMIT_SHORTCUT} anywhere on the page, submits."
        if enter_submits  # a report's text areas take Enter as a new line
        else f"{SUBMIT_SHORTCUT} anywhere on the page submits."
    )


def answer_form(
    on_submit: Callable[[FormValues], None],
    *,
    case_public_id: str,
    likert_labels: Sequence[str] | None = None,
    submit_label: str = "Submit answer",
) -> None:
    """The whole form; ``on_submit`` runs as the submit's callback, before the next run."""
    with answer_form_container(case_public_id):
        answer_fields(likert_labels=likert_labels)
        submit_button(on_submit, submit_label=submit_label)
