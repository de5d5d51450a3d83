// readerstudy grading form: the adjudicator's grade and note fields and the decision
// buttons, with their keys (Y, N, A, S, G, ...) handled here, in our own DOM.
//
// Streamlit's button shortcuts are ignored while a text field has the focus, and a
// Streamlit field only hands its value over when it loses the focus, so "type 32, press
// G" needed a click in between. Here the fields are ours: the grade field takes digits
// only, so a letter typed in it is a key (G saves, S skips); in the note, Enter or
// Escape leaves the field and the next key decides. Each decision goes to Python as
// ONE trigger value, "action", carrying the fields as they are at that moment.

// host element -> { item, grade, note }: what was typed, kept across redraws of one item
const TYPED = new WeakMap();
// host element -> the live form's end. Streamlit may call the component again with new
// data (the next report) without running the previous call's cleanup: each call ends
// the one before it here, so the page never holds two forms (two Save buttons, two key
// listeners, the first one's stale item answering the keys).
const LIVE = new WeakMap();

function typingElsewhere(path, root) {
  if (path.includes(root)) return false;
  return path.some(
    (n) => n instanceof Element && n.matches("input, textarea, select, [contenteditable], [contenteditable=true]"),
  );
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  LIVE.get(parentElement)?.();
  const kept = TYPED.get(parentElement);
  // the same item drawn again (a refusal, another widget's rerun): keep what was typed
  // (``saved`` counts the decisions made: after one, the fields start empty)
  const same = kept && kept.item === data.item && kept.saved === data.saved;
  const typed = same ? kept : { grade: "", note: "" };

  const root = el("div", { class: "gk", "data-item": data.item });
  // one labelled text field with its hint; ``attrs`` add to the input's own
  function field(id, spec, value, attrs) {
    const wrap = el("div", { class: "gk-field" });
    const input = el("input", {
      id,
      type: "text",
      autocomplete: "off",
      "data-field": spec.field,
      "aria-describedby": `${id}-help`,
      ...attrs,
    });
    input.value = value;
    wrap.append(el("label", { for: id }, spec.label), input);
    wrap.append(el("p", { class: "gk-hint", id: `${id}-help` }, spec.help));
    root.append(wrap);
    return input;
  }
  const grade = data.grade
    ? field("gk-grade", data.grade, typed.grade, { inputmode: "numeric", maxlength: "2" })
    : null;
  const note = field("gk-note", data.note, typed.note, { maxlength: String(data.note.max_chars) });

  const buttons = el("div", { class: "gk-buttons" });
  const byKey = new Map();
  let busy = false;
  function fire(action) {
    if (busy) return;
    busy = true;
    root.setAttribute("aria-busy", "true");
    // the reply is a redraw (a new form); a refusal drawn with the same data may not
    // redraw it, so the form takes a key again after a moment (a repeat of a stored
    // decision names a decided item and is refused by the server, never stored twice)
    setTimeout(() => {
      busy = false;
      root.removeAttribute("aria-busy");
    }, 3000);
    setTriggerValue("action", {
      item: data.item,
      action: action.action,
      grade: grade ? grade.value.trim() : null,
      note: note.value,
    });
  }
  for (const action of data.actions) {
    const b = el("button", {
      type: "button",
      class: [action.primary ? "gk-primary" : "", action.wide ? "gk-wide" : ""].join(" ").trim(),
      "data-field": action.field,
      "aria-keyshortcuts": action.key,
    });
    b.append(document.createTextNode(action.label), el("kbd", { "aria-hidden": "true" }, action.key));
    b.addEventListener("click", () => fire(action));
    buttons.append(b);
    byKey.set(action.key.toLowerCase(), action);
  }
  root.append(buttons);

  function onKey(event) {
    if (!root.isConnected) return;
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const path = event.composedPath();
    if (typingElsewhere(path, root)) return; // another field of the page has the focus
    const k = event.key;
    const target = path[0];
    if (target === note) {
      if (k === "Enter" || k === "Escape") {
        note.blur(); // the note is kept; the next key decides
        event.preventDefault();
      }
      return;
    }
    const action = k.length === 1 ? byKey.get(k.toLowerCase()) : undefined;
    if (target === grade) {
      if (k === "Enter" && data.grade.save) {
        event.preventDefault();
        fire(byKey.get(data.grade.save.toLowerCase()));
      } else if (action) {
        event.preventDefault();
        fire(action);
      } else if (k.length === 1 && !/[0-9]/.test(k)) {
        event.preventDefault(); // a grade is a whole number
      }
      return;
    }
    if (target instanceof Element && target.closest("button") && (k === "Enter" || k === " ")) return;
    if (action) {
      event.preventDefault();
      fire(action);
    }
  }
  document.addEventListener("keydown", onKey);
  parentElement.append(root); // beside the style sheet Streamlit put there

  // Streamlit calls this when the element goes (and may, before it draws it again);
  // the next call runs it too: whichever comes first ends this form, once
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    if (LIVE.get(parentElement) === end) LIVE.delete(parentElement);
    const values = { grade: grade ? grade.value : "", note: note.value };
    TYPED.set(parentElement, { item: data.item, saved: data.saved, ...values });
    document.removeEventListener("keydown", onKey);
    root.remove();
  };
  LIVE.set(parentElement, end);
  return end;
}
