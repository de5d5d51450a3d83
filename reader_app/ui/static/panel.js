// readerstudy case panel: the viewer and the answer form as ONE st.components.v2
// element (ui/components/case_panel.py). Appended after viewer.js (mountViewer).
//
// One answer, one message: whatever submits the form (a click or a tap on "Submit
// answer", Enter or Space on the focused button, Enter in the diagnosis box,
// Ctrl+Enter anywhere on the page) ends in the form's own submit event, which sends
// ONE value built from this panel's state at that moment: the case token, the
// fields, the marker, the viewer record and the active time. Nothing is written
// into Streamlit's widgets and nothing on the page is polled.
//
// The value goes to the exam door (web/exam_door.py, data.door) as a POST, answered
// only once the answer is committed; the panel then shows at once the case that
// follows, which it already holds (data.following, its images decoded), and asks
// Streamlit for a page run ("advanced") for the header and the case after that. Where
// the door cannot be reached the same value goes as the trigger "submit" instead.
//
// Stable names (DESIGN.md section 4): each field has its accessible name
// (Diagnosis, Findings, Impression, "N · label", I don't know, No focal finding,
// the submit's label) and carries data-field="<key>"; the panel carries
// data-case="<public id>".
//
// Drafts are kept by the server (reader_app/exam/drafts.py): the panel reports its
// draft (the submit's shape plus edited_at, the browser's clock at the last edit) to
// the exam door (or as the state value "draft" without one) about a second after the
// last change, at once when the focus leaves the panel, when the tab is hidden and, in
// a keepalive request, as the page goes away; the server hands the case's draft back
// in data.draft, so another workstation, a closed tab or a server restart find it.
// The tab keeps its own copy per case in memory and in sessionStorage as the fields
// change, for the second between a change and its report (a reload that beats the
// report): when a case is drawn the newer of the two (by edited_at) is shown, and the
// viewer record and the active time continue from both. The tab's copy belongs to one
// signed-in reader: it is filed by reader and case (`rs.<owner>.draft.<case id>`,
// `rs.<owner>.active.<case id>`, `rs.<owner>.viewer.<case id>`; <owner> is the opaque
// per-reader key the page gives the panel as data.owner, never a name or a token);
// a panel drawn for another owner first drops everything the tab kept (claimTab),
// and Sign out drops it all (the sign-in page's forget_tab element, the event
// "readerstudy:forget-tab"). The tab's copy is dropped as soon as the answer is
// stored (the exam door's reply; without the door, when the next case is drawn);
// the server's goes with the answer's store. See the "drafts kept by the server"
// functions below.
// Active time: visible milliseconds per case, counted from visibility changes
// (kept in sessionStorage across reloads and in the server's draft), sent with the
// answer.

const DRAFTS = new Map(); // case id -> {diagnosis, findings, impression, likert, idk, no_focal_finding, marker}
const ACTIVE = new Map(); // case id -> visible ms counted so far
const PANELS = new WeakMap(); // parentElement -> the live panel
const PREFETCHED = []; // decoded next-case images, held so the browser keeps them
let owner = ""; // the tab's owner (data.owner of the last panel drawn), "" for nobody
const DRAFT_KEY = (c) => `rs.${owner}.draft.${c}`;
const ACTIVE_KEY = (c) => `rs.${owner}.active.${c}`;

// The panel of another reader than the last (or the first since the page loaded): what
// this page holds of anyone else goes, in memory here and in the viewer, and in the
// tab's storage (claimTab keeps only the keys filed under the new owner).
function claim(next) {
  const key = typeof next === "string" ? next : "";
  if (!claimTab(key) && key === owner) return;
  forgetMemory();
  owner = key;
}

function forgetMemory() {
  DRAFTS.clear();
  ACTIVE.clear();
  ACKED.clear();
  lastSubmitted = null;
}

// Sign out (the sign-in page's forget_tab element says so): nothing stays for whoever
// signs in next in this tab.
window.addEventListener("readerstudy:forget-tab", () => {
  forgetTab();
  forgetMemory();
  owner = "";
});

function storeGet(key) {
  if (!owner) return null; // nobody claimed the tab: memory only
  try {
    return JSON.parse(window.sessionStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

function storeSet(key, value) {
  if (!owner) return;
  try {
    if (value === null) window.sessionStorage.removeItem(key);
    else window.sessionStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or off: memory keeps it for this page
  }
}

function node(tag, attrs = {}, text = "") {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) n.setAttribute(k, v);
  if (text) n.textContent = text;
  return n;
}

function draftOf(caseId) {
  if (!DRAFTS.has(caseId)) {
    const kept = storeGet(DRAFT_KEY(caseId));
    DRAFTS.set(caseId, kept && typeof kept === "object" ? kept : {});
  }
  return DRAFTS.get(caseId);
}

function forgetCase(caseId) {
  DRAFTS.delete(caseId);
  ACTIVE.delete(caseId);
  storeSet(DRAFT_KEY(caseId), null);
  storeSet(ACTIVE_KEY(caseId), null);
  forgetRecord(caseId);
}

let lastSubmitted = null; // the case whose answer was last sent

// --- drafts kept by the server (exam/drafts.py) ---------------------------------
const DRAFT_FIELDS = ["diagnosis", "findings", "impression", "likert", "idk", "no_focal_finding", "marker"];
const DRAFT_DEBOUNCE_MS = 1000;
const NOT_SENT =
  "Not saved yet: the server could not be reached. Your answer is kept here and sent again once the page is back.";

// The server's draft of the case (data.draft) against this tab's copy: the newer by
// the browser's clock at the last edit wins (a tab's copy not yet reported is newer
// than what the server holds); the viewer record is folded in whichever wins.
// Returns true when the tab's copy is the newer: it has not reached the server yet.
function restoreDraft(caseId, draft, kept) {
  const mine = Number(draft.edited_at);
  if (!kept || typeof kept !== "object") return Number.isFinite(mine);
  mergeRecord(caseId, kept.record);
  if (mine >= Number(kept.edited_at ?? 0)) return mine > Number(kept.edited_at ?? 0);
  for (const k of DRAFT_FIELDS) draft[k] = kept[k] ?? null;
  draft.edited_at = kept.edited_at ?? null;
  draft.touched = true;
  storeSet(DRAFT_KEY(caseId), draft);
  return false;
}

// Active time so far: the larger of this tab's count and the server's (another
// workstation's count continued there).
function continueActive(caseId, kept) {
  const server = kept && Number.isFinite(kept.active_ms) ? kept.active_ms : 0;
  ACTIVE.set(caseId, Math.max(ACTIVE.get(caseId) || 0, server));
}

// Reports the panel's draft: soon() after a change (debounced), now() when the focus
// leaves the panel or the tab is hidden. A report that says nothing new (the active
// time aside) is not sent, so a blur after nothing changed costs no script run; a
// hidden tab always reports (the active time and the viewer record go with it).
// stop() once the answer is sent.
function draftReporter(snapshot, report) {
  let timer = null;
  let last = null;
  let stopped = false;
  function now(always = false) {
    clearTimeout(timer);
    timer = null;
    if (stopped) return;
    const value = snapshot();
    const { active_ms: _active, ...said } = value;
    const key = JSON.stringify(said);
    if (!always && key === last) return;
    last = key;
    report(value);
  }
  return {
    now,
    soon() {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(now, DRAFT_DEBOUNCE_MS);
    },
    pending: () => timer !== null,
    stop() {
      clearTimeout(timer);
      timer = null;
      stopped = true;
    },
    resume() {
      stopped = false;
    },
  };
}

// The panel after an answer the exam door acknowledged: a page run that read the page
// before that commit may still draw the answered case; it is not drawn again.
const ACKED = new Set();

export default function (component) {
  const { data, parentElement, setTriggerValue, setStateValue } = component;
  const live = PANELS.get(parentElement);
  // Streamlit calls what a render returns when the element goes: whichever panel is
  // live then (the door may have put the next case up since this render)
  const cleanup = () => PANELS.get(parentElement)?.cleanup();
  if (live && ACKED.has(data.case) && data.form_key !== "review") return cleanup;
  if (live && live.caseId === data.case && live.key === data.form_key) {
    live.update(data); // the same case drawn again (a refusal, an outage): keep the screen
    return cleanup;
  }
  live?.cleanup();
  mountCase(parentElement, data, { setTriggerValue, setStateValue });
  return cleanup;
}

// One case on screen: the viewer, the form and their state, from the panel's data for it
// (a page run's, or the one the panel held as the following case).
function mountCase(parentElement, data, hooks) {
  const { setTriggerValue, setStateValue } = hooks;
  claim(data.owner);
  if (lastSubmitted !== null && lastSubmitted !== data.case) {
    forgetCase(lastSubmitted); // its answer was stored: the next case is drawn
    lastSubmitted = null;
  }
  const caseId = data.case;
  const form = data.form || {};
  const draft = draftOf(caseId);
  if (form.values && !draft.touched) Object.assign(draft, form.values); // changing an answer
  const reporting = data.form_key !== "review"; // a stored answer being changed has no draft
  const unreported = reporting && restoreDraft(caseId, draft, data.draft);

  const root = node("div", { class: "rp", "data-case": caseId, "data-theme": data.theme || "dark" });
  const left = node("div", { class: "rp-view" });
  const side = node("div", { class: "rp-side" });
  root.append(left, side);
  parentElement.append(root);

  // --- the side: what the last submit did, practice note, clinical history, the form
  // the last submit's notice ("Saved your answer to case 3."): a toast of the panel's
  // own, at the top of the answer column, never over Pause or Submit; it fades out
  if (data.notice) side.append(node("p", { class: "rp-notice", role: "status" }, data.notice));
  if (data.note) side.append(node("p", { class: "rp-note", role: "note" }, data.note));
  if (data.history) {
    side.append(node("h2", { class: "rp-h" }, "Clinical history"));
    // focusable: a long history scrolls in its own box, by keyboard too
    side.append(node("p", { class: "rp-history", tabindex: "0" }, data.history));
  }
  const el = node("form", { class: "rp-form", novalidate: "", "aria-label": "Answer" });
  side.append(el);
  const fields = {};
  // "12 / 300" under a text box; a screen reader hears it only near the cap (50 and 20
  // left, the cap reached), politely, not on every key
  const counter = (input, max, id) => {
    const box = node("div", { class: "rp-count" });
    const seen = node("span", { id, "aria-hidden": "true" });
    const said = node("span", { class: "rp-sr", "aria-live": "polite" });
    box.append(seen, said);
    input.setAttribute("aria-describedby", id);
    let band = null;
    const count = () => {
      const n = input.value.length;
      seen.textContent = `${n} / ${max}`;
      box.classList.toggle("rp-near", max - n <= 20);
      const now = n >= max ? 0 : max - n <= 20 ? 20 : max - n <= 50 ? 50 : null;
      if (now !== band && now !== null) {
        said.textContent = now === 0 ? `Limit reached: ${max} characters` : `${max - n} characters left`;
      }
      band = now;
    };
    input.addEventListener("input", count);
    count();
    said.textContent = ""; // nothing said on opening a case
    return box;
  };
  const textField = (key, label, multi, max, placeholder, rows) => {
    const id = `rp-${key}`;
    const wrap = node("div", { class: "rp-field", "data-wrap": key });
    wrap.append(node("label", { for: id }, label));
    const input = multi
      ? node("textarea", { id, rows: String(rows), maxlength: String(max), placeholder, "data-field": key })
      : node("input", {
          id, type: "text", maxlength: String(max), placeholder, autocomplete: "off", "data-field": key,
        });
    input.value = typeof draft[key] === "string" ? draft[key] : "";
    wrap.append(input, counter(input, max, `rp-${key}-count`));
    el.append(wrap);
    fields[key] = input;
  };
  if (form.mode === "report") {
    textField("findings", "Findings", true, form.max_chars, "What you see, organ by organ", 7);
    textField("impression", "Impression", true, form.max_chars, "The conclusion: the most important finding first", 4);
  } else {
    textField("diagnosis", "Diagnosis", false, form.max_chars, "Your single most specific diagnosis");
  }
  const likert = node("fieldset", { class: "rp-likert", "data-field": "likert", "data-wrap": "likert" });
  likert.append(node("legend", {}, "Confidence"));
  const radios = (form.likert_labels || []).map((text, i) => {
    const id = `rp-likert-${i}`;
    const r = node("input", { type: "radio", name: "likert", id, value: String(i) });
    r.checked = draft.likert === i;
    const lab = node("label", { for: id, class: "rp-choice" });
    lab.append(r, document.createTextNode(`${i} · ${text}`));
    likert.append(lab);
    return r;
  });
  el.append(likert);
  const box = (key, label) => {
    const id = `rp-${key}`;
    const lab = node("label", { for: id, class: "rp-check", "data-wrap": key });
    const c = node("input", { type: "checkbox", id, "data-field": key });
    c.checked = draft[key] === true;
    lab.append(c, document.createTextNode(label));
    el.append(lab);
    fields[key] = c;
    return c;
  };
  const idk = box("idk", "I don't know");
  const grounding = Boolean(data.viewer && data.viewer.grounding);
  let noFocal = null;
  // "No focal finding" and the marker exclude each other: placing a marker unticks it,
  // ticking it clears the marker; this line says which one gave way
  const either = node("p", { class: "rp-either", role: "status", "aria-live": "polite" });
  if (grounding) {
    noFocal = box("no_focal_finding", "No focal finding");
    el.append(either);
    noFocal.addEventListener("change", () => {
      if (!noFocal.checked || !viewer.marker()) return;
      viewer.setMarker(null); // the form's change handler then keeps it as the draft's
      draft.marker = null;
      either.textContent = "Marker cleared: No focal finding is ticked.";
    });
    el.append(
      node(
        "p",
        { class: "rp-hint" },
        "Click the image where the finding is (one marker; on a strip, on its slice), " +
          (form.grounding_required ? "or tick No focal finding." : "if you can (optional)."),
      ),
    );
  }
  const error = node("div", { class: "rp-error", role: "alert" });
  const button = node("button", { type: "submit", class: "rp-submit", "data-field": "submit" }, form.submit_label || "Submit answer");
  const hint = node(
    "p",
    { class: "rp-hint" },
    form.mode === "report"
      ? "Ctrl+Enter anywhere on the page submits."
      : "Enter in the diagnosis box, or Ctrl+Enter anywhere on the page, submits.",
  );
  // Submit and its hint stay on screen together at the column's foot (the hint below a
  // sticky Submit was cut off at 1024x768)
  const foot = node("div", { class: "rp-foot" });
  foot.append(button, hint);
  el.append(error, foot);

  // --- the viewer --------------------------------------------------------------
  const viewer = mountViewer(
    { data: data.viewer },
    {
      host: left,
      marker: draft.no_focal_finding === true ? null : draft.marker || null,
      onMarker: (m) => {
        if (m && noFocal && noFocal.checked) {
          noFocal.checked = false;
          either.textContent = "No focal finding unticked: a marker is placed.";
        }
        changed({ marker: m });
      },
    },
  );

  // --- state: what is on screen ------------------------------------------------
  function values() {
    const r = radios.findIndex((x) => x.checked);
    const v = { likert: r < 0 ? null : r, idk: idk.checked };
    for (const k of ["diagnosis", "findings", "impression"]) if (fields[k]) v[k] = fields[k].value;
    if (noFocal) v.no_focal_finding = noFocal.checked;
    return v;
  }

  let errorField = null;
  // the exam door's last refusal, and the submit's attempt: a page run drawn before that
  // submit (asked for when this case went up, arriving after the reply) has no word of
  // it and must not wipe it; a run at least as new says the server's own word
  let doorRefusal = null;
  // the door could not be reached (a server restarted, a lost connection): said above
  // Submit, and kept through the page runs of a reconnect, until the next submit
  let unsent = "";
  let pending = null; // that answer, and the session it was sent to
  let nudge = null; // while it is kept: asks for page runs, so a reconnect shows itself
  function keep(value, session) {
    pending = value ? { value, session } : null;
    clearInterval(nudge);
    nudge = null;
    // a restarted server runs nothing until asked: a page run there names the new session
    if (pending) nudge = setInterval(() => setTriggerValue("advanced", { case: caseId, shown: null }), RESEND_MS);
  }
  function refusal(message, field) {
    error.textContent = message || "";
    errorField = message ? field || null : null;
    showError();
  }
  function showError() {
    const v = values();
    const m = grounding ? viewer.marker() : null;
    const answered =
      v.idk ||
      (errorField === "likert" && v.likert !== null) ||
      (errorField === "diagnosis" && (v.diagnosis || "").trim() !== "") ||
      (errorField === "impression" && (v.impression || "").trim() !== "") ||
      (errorField === "location" && (m !== null || v.no_focal_finding));
    error.hidden = !error.textContent || Boolean(errorField && answered);
    root.classList.toggle("rp-idk", v.idk);
  }

  function changed(extra = {}) {
    if (pending) keep(null); // an unsent answer is sent again only as it was
    const marker = grounding ? { marker: viewer.marker() } : {}; // what the screen shows
    Object.assign(draft, values(), marker, extra, { touched: true, edited_at: Date.now() });
    storeSet(DRAFT_KEY(caseId), draft);
    showError();
    reporter.soon();
  }
  el.addEventListener("input", () => changed());
  // the answer column scrolls on its own so Submit (sticky at its foot) is always on
  // screen, whatever the history's length or the window's height
  function fitSide() {
    const top = side.getBoundingClientRect().top;
    const wide = root.clientWidth > 760; // one column below: the page scrolls
    side.style.maxHeight = wide ? `${Math.max(window.innerHeight - Math.max(top, 0) - 8, 240)}px` : "";
  }
  window.addEventListener("resize", fitSide);
  // the page above the panel settles after it is drawn (the last run's leftovers go)
  const sideObserver = new ResizeObserver(() => requestAnimationFrame(fitSide));
  sideObserver.observe(root);
  sideObserver.observe(document.body); // the document's height, not Streamlit's own nodes
  const sideSettle = setTimeout(fitSide, 400);
  requestAnimationFrame(fitSide);
  el.addEventListener("change", () => changed());

  // visible time on this case (sessionStorage keeps it across a reload)
  if (!ACTIVE.has(caseId)) ACTIVE.set(caseId, Number(storeGet(ACTIVE_KEY(caseId))) || 0);
  if (reporting) continueActive(caseId, data.draft);
  let since = document.visibilityState === "visible" ? performance.now() : null;
  function activeNow() {
    return (ACTIVE.get(caseId) || 0) + (since === null ? 0 : performance.now() - since);
  }
  function onVisibility() {
    if (document.visibilityState === "visible") {
      if (since === null) since = performance.now();
    } else if (since !== null) {
      ACTIVE.set(caseId, activeNow());
      since = null;
      keepAll();
      reporter.now(true);
    }
  }
  function keepAll() {
    if (ACKED.has(caseId) && reporting) return; // stored: its copy was dropped
    storeSet(ACTIVE_KEY(caseId), Math.round(activeNow()));
    storeSet(DRAFT_KEY(caseId), draft);
    keepRecord(caseId);
  }

  // what the latest page run said around this case: the exam door, the case after it
  const current = { door: data.door || null, following: data.following || null, prefetch: data.prefetch || [] };
  function post(path, value, keepalive = false) {
    const door = current.door;
    return fetch(`${door.url}/${path}`, {
      method: "POST",
      keepalive,
      credentials: "same-origin",
      cache: "no-store",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session: door.session, value }),
    }).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`exam door: ${r.status}`))));
  }
  // a draft goes through the exam door (no page run); where the door cannot be reached,
  // as the panel's state value (a page run keeps it)
  function reportDraft(value) {
    if (!current.door) {
      setStateValue("draft", value);
      return;
    }
    post("draft", value).catch((err) => {
      console.warn(`readerstudy: exam door not reached (${err}); the draft goes over Streamlit`);
      setStateValue("draft", value);
    });
  }

  // the draft, as the server keeps it: what is on screen, the viewer record, active time
  const snapshot = () => ({
      case: caseId,
      form_key: data.form_key,
      ...values(),
      marker: grounding ? viewer.marker() : null,
      record: viewer.summary(),
      active_ms: Math.round(activeNow()),
      edited_at: Number.isFinite(draft.edited_at) ? draft.edited_at : null,
    });
  const reporter = draftReporter(snapshot, reportDraft);
  if (!reporting) reporter.stop();
  if (unreported) reporter.soon(); // e.g. typed just before a reload: the server catches up
  // the focus leaving the panel (Pause, the rest of the page, another window) reports at
  // once; a move within the panel (to the next field, to Submit) leaves it to the
  // debounce, so Tab-Tab-Enter costs no script run racing the submit
  el.addEventListener("focusout", (event) => {
    if (!(event.relatedTarget instanceof Node && root.contains(event.relatedTarget))) reporter.now();
  });
  // As the page goes away (a reload, a closed tab, another address) the draft goes to the
  // exam door in a keepalive request, which outlives the page: a report over Streamlit's
  // websocket does not get out in time. The tab's copy covers a reload besides.
  function onPagehide() {
    keepAll();
    if (current.door && reporting && lastSubmitted !== caseId) {
      reporter.stop();
      post("draft", snapshot(), true).catch(() => {});
    }
  }
  // back from the browser's back-forward cache: the page did not go after all
  function onPageshow(event) {
    if (event.persisted && reporting && lastSubmitted !== caseId && !sending) reporter.resume();
  }

  // --- submit: one value, from this panel's state at this moment ----------------
  // One submit at a time (a double click's second click is ignored), but never a
  // form that stays dead: if no answer from the server arrives (a lost connection, a
  // server restarted mid-submit), Submit works again after a few seconds. A repeat of
  // a submit that was stored after all is said and never stored twice (the value names
  // its case).
  const RESEND_MS = 4000;
  let sending = false;
  let awaiting = false; // the exam door's reply to this panel's answer
  let resend = null;
  function ready() {
    sending = false;
    clearTimeout(resend);
    root.removeAttribute("aria-busy");
    if (reporting) reporter.resume();
  }
  function send(event) {
    if (event) event.preventDefault();
    if (sending) return;
    sending = true;
    clearTimeout(resend);
    resend = setTimeout(() => {
      sending = false;
      root.removeAttribute("aria-busy");
    }, RESEND_MS);
    root.setAttribute("aria-busy", "true");
    changed();
    keepAll();
    reporter.stop(); // the answer carries everything; its store deletes the draft
    const m = grounding ? viewer.marker() : null;
    lastSubmitted = caseId;
    const value = {
      case: caseId,
      form_key: data.form_key,
      ...values(),
      marker: m ? { x: m.x, y: m.y, slice: m.slice } : null,
      record: viewer.summary(),
      active_ms: Math.round(activeNow()),
    };
    if (!current.door) {
      setTriggerValue("submit", value);
      return;
    }
    if (unsent) refusal("", null); // a new try: a second failure is said anew
    unsent = "";
    deliver(value);
  }
  // The exam door: the answer is committed before its reply. Where the door cannot be
  // reached, the same value goes as the submit trigger (a repeat is never stored twice),
  // and it is kept: a reconnect to a restarted server (a page run naming a new session)
  // sends it again, unless the reader changed the form meanwhile.
  function deliver(value) {
    awaiting = true;
    keep(null);
    const session = current.door.session;
    post("answer", value).then(answered, (err) => {
      // never silent: said in the console here, logged and counted by the server
      // (ui/components/case_panel.streamlit_path_taken) when the trigger arrives
      console.warn(`readerstudy: exam door not reached (${err}); the answer goes over Streamlit`);
      awaiting = false;
      unsent = NOT_SENT;
      keep(value, session);
      setTriggerValue("submit", value);
      // said once no page run took the trigger either (one that does moves on, or names
      // its refusal; with the connection gone, the trigger is lost with it)
      setTimeout(() => {
        if (unsent && PANELS.get(parentElement) === panel) refusal(unsent, null);
      }, RESEND_MS);
    });
  }
  // The door's reply. Stored: the case after this one goes up at once when the panel
  // holds it (the reply names it), and a page run follows for the page around it.
  // Refused (a rule, an outage, access ended): said above Submit, the form as it was.
  function answered(reply) {
    awaiting = false;
    if (reply.stored) {
      ACKED.add(caseId);
      forgetCase(caseId); // stored: the tab keeps no copy of it (the last case's too)
      const next = current.following;
      if (next && reply.shown === next.case) {
        cleanup();
        mountCase(
          parentElement,
          // the same reader's: the owner goes with it
          { ...next, owner, notice: reply.notice || "", door: current.door, following: null, prefetch: [] },
          hooks,
        );
      }
      setTriggerValue("advanced", { case: caseId, shown: reply.shown });
      return;
    }
    if (reply.error) {
      lastSubmitted = null;
      doorRefusal = Number.isFinite(reply.attempt)
        ? { message: reply.error, field: reply.field, attempt: reply.attempt }
        : null;
      refusal(reply.error, reply.field);
      ready();
      error.scrollIntoView?.({ block: "nearest" });
      return;
    }
    setTriggerValue("advanced", { case: caseId, shown: null }); // a stale tab: redraw
  }
  el.addEventListener("submit", send);
  function onKey(event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.repeat) {
      event.preventDefault();
      event.stopPropagation();
      el.requestSubmit(button);
    }
  }
  document.addEventListener("keydown", onKey, true);
  document.addEventListener("visibilitychange", onVisibility);
  window.addEventListener("pagehide", onPagehide);
  window.addEventListener("pageshow", onPageshow);

  // The same case drawn again: after a submit was handled (a refusal, an outage: the
  // attempt moved on) Submit works again; a run for a draft's report changes nothing.
  let attempt = null;
  function update(next) {
    const f = next.form || {};
    current.door = next.door || null;
    current.following = next.following || null;
    if (JSON.stringify(next.prefetch || []) !== JSON.stringify(current.prefetch)) {
      current.prefetch = next.prefetch || [];
      if (viewer.image.complete) prefetch();
    }
    if (f.error) unsent = "";
    if (pending && !awaiting) {
      if (current.door && current.door.session !== pending.session) {
        deliver(pending.value); // the server is back with a new session: send it there
      } else if (f.attempt !== attempt) {
        keep(null); // the same session took the trigger and answered it: its word stands
      }
    }
    if (doorRefusal && !(f.attempt < doorRefusal.attempt)) doorRefusal = null;
    if (doorRefusal) refusal(doorRefusal.message, doorRefusal.field);
    else refusal(f.error ? f.error.message : unsent, f.error ? f.error.field : null);
    if (f.attempt === attempt) return;
    attempt = f.attempt;
    if (awaiting) return; // the door's reply decides
    if (lastSubmitted === caseId) lastSubmitted = null;
    ready();
    if (f.error) error.scrollIntoView?.({ block: "nearest" });
  }

  // the first field has the focus on each new case (the viewer's keys work once the
  // reader clicks the image or leaves the box)
  const first = fields.diagnosis || fields.findings;
  if (first && !form.error) first.focus({ preventScroll: true });

  // the next case's images, fetched and decoded once this case's image is in
  function prefetch() {
    PREFETCHED.length = 0;
    for (const url of current.prefetch) {
      const im = new Image();
      im.src = url;
      im.decode?.().catch(() => {});
      PREFETCHED.push(im);
    }
  }
  update(data);
  if (viewer.image.complete) setTimeout(prefetch, 0);
  else viewer.image.addEventListener("load", prefetch, { once: true });

  function cleanup() {
    clearTimeout(resend);
    clearInterval(nudge);
    if (PANELS.get(parentElement) === panel) PANELS.delete(parentElement);
    if (since !== null && lastSubmitted !== caseId) ACTIVE.set(caseId, activeNow());
    since = null;
    if (lastSubmitted !== caseId) keepAll();
    if (reporter.pending()) reporter.now(); // a change not yet reported (Pause, a page switch)
    reporter.stop();
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("visibilitychange", onVisibility);
    window.removeEventListener("pagehide", onPagehide);
    window.removeEventListener("pageshow", onPageshow);
    window.removeEventListener("resize", fitSide);
    sideObserver.disconnect();
    clearTimeout(sideSettle);
    viewer.cleanup();
    root.remove();
  }
  const panel = { caseId, key: data.form_key, update, cleanup };
  PANELS.set(parentElement, panel);
  return panel;
}
