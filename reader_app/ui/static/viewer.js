// readerstudy case viewer: one viewer for spot images and CT strips (st.components.v2).
//
// Everything a reader does here (wheel/pinch zoom, drag pan, reset, 1:1, window
// presets, slice steps, thumbnails, fullscreen) happens in the browser: no
// script rerun. The images are the stored PNGs served by Streamlit's media
// endpoint, byte for byte; zoom and pan are a CSS transform (Panzoom) on them.
//
// What the reader did (slices visited, windows used, zoom, pan, fullscreen time, the
// slice on screen) is kept per case in this module and in the tab's sessionStorage
// (so a reload continues it), filed by reader: `rs.<owner>.viewer.<case id>`, where
// <owner> is the opaque per-reader key the case panel claims the tab with
// (claimTab). Another owner's claim, or Sign out (forgetTab), drops everything the
// tab kept, in memory and in storage; a viewer nobody claimed (practice feedback,
// adjudication) keeps nothing in storage. The case panel (panel.js) puts
// api.summary() into the one value it sends with the answer and into its draft, and
// folds the server draft's record back in (mergeRecord), so another workstation
// continues it too.
//
// Image coordinates live in one place: clientToImage / imageToClient below
// (stored-image pixels <-> viewport CSS pixels), exposed as
// window.readerstudyViewer for markers and tests.
//
// The location step (data.grounding, study option grounding = true): one marker
// per case, in stored-image pixels, on the slice it was placed on. Keys that mean one
// thing: a click (not a drag) on the image places or moves it once the viewer has the
// focus; the click that only gives the viewer the focus (a mouse or pen press while
// the focus is outside the viewer, e.g. in the answer's first field) places nothing
// and says so (a touch tap, which has no keys to give, marks at once). M places it at
// the pointer (over the image) or at the centre of the view, Shift+arrows move it by
// one image pixel, Delete or Backspace clears it; the arrows without Shift always
// step slices, marker or not (none of these while typing in a field).
// The marker is drawn over the image (never scaled with it) at imageToClient of
// its point after every zoom, pan, resize and slice change. A reader's change is
// given to hooks.onMarker: the case panel keeps it in the case's draft and sends it
// with the answer (panel.js).
//
// Window/level by drag (right-drag, or a left drag in W/L mode: W key or the W/L
// button), as PACS do. It re-windows the DISPLAYED 8-bit image: the stored PNG
// (already rendered with the case's window preset) is drawn into a canvas and its
// grey levels 0-255 are mapped through a linear window of width W and centre C in
// those same grey levels. It cannot bring back detail the 8-bit rendering clipped;
// the presets (keys 1-9) are the full-depth windows ingest rendered. The stored PNG
// and the <img> showing it never change. Horizontal drag: width; vertical: centre.
// R (or the reset button) and any preset go back to the image as stored.
//
// On a window that is a named HU preset (data.windows[i].hu: ingest mapped exactly that
// HU window to grey levels 0-255), the W/L readout and the pixel value under the pointer
// are in Hounsfield units: HU = C + (grey - 127.5) * W / 255, to within one grey step
// (W / 255 HU). Elsewhere (the file's own window, the full range, a photo) they are grey
// levels, and say so.
//
// The study option original_values (data.originalValues): every frame also has the URL
// of its original values (ingest's render.encode_values: an RGB PNG, value + 32768 in
// red * 256 + green). On an HU preset the W/L then works in HU on those values, so a
// reader can bring back what the preset's 8-bit render clipped; the preset itself still
// shows the stored PNG (what a model sees) until the reader changes its W/L, and the
// pixel value under the pointer is the original one. The record says original_values.
//
// Invert (I key or button) shows the image in negative (a CSS filter on the picture;
// the stored PNG never changes). The distance tool (D key or button, then two clicks)
// measures in millimetres from the frame's pixel spacing (data.windows[i].images[j].mm,
// mm per stored pixel across and down) or, without one, in stored pixels; every
// measurement goes into the record. Wheel zoom moves x1.1 a mouse notch.
//
// Two entry points: mountViewer(component, hooks) for the case panel, and the
// viewer-only component (case_viewer.py appends its default export) for pages that
// show images without an answer (practice feedback, adjudication).
/* global Panzoom */

const SUMMARIES = new Map(); // case id -> interaction record (survives remounts)
const MARKERS = new Map(); // case id -> {x, y, slice} in stored pixels (survives remounts)
const CLICK_SLOP_PX = 4; // a press that moves further than this is a pan, not a mark
const MARKER_STEP = 1; // image pixels per Shift+arrow press
// Streamlit calls the component again with new data (the next case) without
// running the previous call's cleanup: each call ends the one before it here.
const INSTANCES = new WeakMap(); // parentElement -> cleanup of the live instance
let lastCase = null; // a new case starts at the top of the page (phones, tablets)

// The elements around ours, nearest first, out of our shadow tree and up to <html>:
// found by walking up from our own node, never by the host page's names for them.
function ancestors(node) {
  const found = [];
  for (let n = node; n; ) {
    n = n.parentElement || (n.parentNode instanceof ShadowRoot ? n.parentNode.host : null);
    if (n) found.push(n);
  }
  return found;
}

function scrollToTop(node) {
  for (const around of ancestors(node)) {
    if (around.scrollTop > 0) around.scrollTo({ top: 0 });
  }
}
const MAX_SCALE = 40;
const MIN_SCALE = 0.5;
const WHEEL_STEP_PX = 50;
// pinch and touchpads (small deltas): zoom factor per wheel pixel, as an exponent
const WHEEL_ZOOM = 0.0015;
// a mouse notch (one event of 50 px or more: Chromium on Linux sends 240) zooms this much;
// at 0.002 per pixel three notches had zoomed x4.2
const NOTCH_ZOOM = 1.1;
const MAX_MEASURES = 50; // measurements kept in a case's record

// The tab's owner: the opaque per-reader key of the signed-in reader (never a name or
// a token), "" while nobody claimed it; every key this tab stores begins `rs.<owner>.`
let OWNER = "";
const RECORD_KEY = (caseId) => `rs.${OWNER}.viewer.${caseId}`;

// Every sessionStorage key of ours ("rs." ...) but those filed under `keep`.
function wipeStorage(keep) {
  try {
    const store = window.sessionStorage;
    const mine = keep ? `rs.${keep}.` : null;
    for (let i = store.length - 1; i >= 0; i--) {
      const k = store.key(i);
      if (k && k.startsWith("rs.") && !(mine && k.startsWith(mine))) store.removeItem(k);
    }
  } catch {
    // storage off: nothing kept
  }
}

// The case panel of a signed-in reader claims the tab. A claim by another owner than
// the last drops what this module holds in memory and every key filed under another
// reader; returns true when the owner changed (the panel then drops its own memory).
export function claimTab(owner) {
  const key = typeof owner === "string" ? owner : "";
  if (key === OWNER) return false;
  SUMMARIES.clear();
  MARKERS.clear();
  wipeStorage(key);
  OWNER = key;
  return true;
}

// Sign out (or nobody signed in): the tab forgets every reader's copies.
export function forgetTab() {
  SUMMARIES.clear();
  MARKERS.clear();
  wipeStorage(null);
  OWNER = "";
}
// W/L in grey levels of the displayed 8-bit image; this one shows it as stored
const WL_STORED = { width: 255, center: 127.5 };
const WL_WIDTH = [1, 510];
const WL_CENTER = [-128, 383];
const WL_PER_PX = 1; // grey levels per CSS pixel of drag

// The record of a case: from memory, else from the tab's sessionStorage (a reload),
// else new. Only plain values are kept, so a stored record is read as data.
function record(caseId) {
  if (!SUMMARIES.has(caseId)) {
    let old = null;
    try {
      if (OWNER) old = JSON.parse(window.sessionStorage.getItem(RECORD_KEY(caseId)) || "null");
    } catch {
      old = null;
    }
    const o = old && typeof old === "object" ? old : {};
    const num = (v, d) => (Number.isFinite(v) ? v : d);
    SUMMARIES.set(caseId, {
      slices: new Set(Array.isArray(o.slices) ? o.slices.filter(Number.isInteger) : []),
      windows: Array.isArray(o.windows) ? o.windows.filter((w) => typeof w === "string" && w) : [],
      zoom: o.zoom === true,
      pan: o.pan === true,
      one: o.one === true,
      maxZoom: num(o.maxZoom, 1),
      fsMs: num(o.fsMs, 0),
      fsSince: null,
      thumbs: num(o.thumbs, 0),
      wlUsed: o.wlUsed === true,
      wl: { ...WL_STORED },
      at: Number.isInteger(o.at) && o.at >= 0 ? o.at : null, // the slice on screen (0-based)
      invertUsed: o.invertUsed === true,
      inverted: o.inverted === true,
      measures: Array.isArray(o.measures) ? o.measures.filter(plainMeasure).slice(-MAX_MEASURES) : [],
    });
  }
  return SUMMARIES.get(caseId);
}

// Keep the record in the tab (pagehide, a hidden tab, a submit): a reload continues it.
export function keepRecord(caseId) {
  const r = SUMMARIES.get(caseId);
  if (!r) return;
  const fs = r.fsMs + (r.fsSince === null ? 0 : performance.now() - r.fsSince);
  const plain = {
    slices: [...r.slices], windows: r.windows, zoom: r.zoom, pan: r.pan, one: r.one,
    maxZoom: r.maxZoom, fsMs: fs, thumbs: r.thumbs, wlUsed: r.wlUsed, at: r.at,
    invertUsed: r.invertUsed, inverted: r.inverted, measures: r.measures,
  };
  if (!OWNER) return; // nobody claimed the tab: memory only
  try {
    window.sessionStorage.setItem(RECORD_KEY(caseId), JSON.stringify(plain));
  } catch {
    // storage full or off: the record lives on in memory
  }
}

export function forgetRecord(caseId) {
  SUMMARIES.delete(caseId);
  MARKERS.delete(caseId);
  if (!OWNER) return;
  try {
    window.sessionStorage.removeItem(RECORD_KEY(caseId));
  } catch {
    // nothing kept
  }
}

// Fold a record kept elsewhere (the server's draft, summary() form) into this tab's
// record of the case: what was used stays used, counts keep the larger figure, so
// folding the same record twice changes nothing.
export function mergeRecord(caseId, kept) {
  if (!kept || typeof kept !== "object") return;
  const r = record(caseId);
  const num = (v) => (Number.isFinite(v) ? v : 0);
  for (const s of Array.isArray(kept.slices_visited) ? kept.slices_visited : []) {
    if (Number.isInteger(s)) r.slices.add(s);
  }
  for (const w of Array.isArray(kept.windows_used) ? kept.windows_used : []) {
    if (typeof w === "string" && w && !r.windows.includes(w)) r.windows.push(w);
  }
  r.zoom ||= kept.zoom_used === true;
  r.pan ||= kept.pan_used === true;
  r.one ||= kept.one_to_one_used === true;
  r.maxZoom = Math.max(r.maxZoom, num(kept.max_zoom));
  r.thumbs = Math.max(r.thumbs, num(kept.thumbnail_clicks));
  r.fsMs = Math.max(r.fsMs, num(kept.fullscreen_s) * 1000);
  r.invertUsed ||= kept.invert_used === true;
  for (const m of Array.isArray(kept.measurements) ? kept.measurements : []) {
    const same = (n) => ["slice", "x1", "y1", "x2", "y2"].every((k) => n[k] === m[k]);
    if (plainMeasure(m) && !r.measures.some(same)) r.measures.push(m);
  }
  r.measures = r.measures.slice(-MAX_MEASURES);
}

// A measurement as the record keeps it: {slice, x1, y1, x2, y2 (stored pixels), px, mm
// (null without a pixel spacing)}; anything else read back from storage is dropped.
function plainMeasure(m) {
  if (!m || typeof m !== "object") return false;
  const nums = ["x1", "y1", "x2", "y2", "px"].every((k) => Number.isFinite(m[k]));
  return nums && (m.mm === null || Number.isFinite(m.mm)) && (m.slice === null || Number.isInteger(m.slice));
}

function summary(caseId) {
  const r = record(caseId);
  const fs = r.fsMs + (r.fsSince === null ? 0 : performance.now() - r.fsSince);
  return {
    case: caseId,
    slices_visited: [...r.slices].sort((a, b) => a - b),
    windows_used: [...r.windows],
    zoom_used: r.zoom,
    pan_used: r.pan,
    one_to_one_used: r.one,
    max_zoom: Math.round(r.maxZoom * 100) / 100,
    thumbnail_clicks: r.thumbs,
    fullscreen_s: Math.round(fs / 100) / 10,
    // the W/L on screen at this moment (grey levels of the displayed 8-bit image)
    wl_used: r.wlUsed,
    wl_width: Math.round(r.wl.width * 2) / 2,
    wl_center: Math.round(r.wl.center * 2) / 2,
    // the same W/L in HU when the window on screen is an HU preset (else null)
    wl_hu: r.wlHu ? { width: Math.round(r.wlHu.width), center: Math.round(r.wlHu.center) } : null,
    invert_used: r.invertUsed,
    inverted: r.inverted,
    measurements: r.measures.map((m) => ({ ...m })),
    original_values: r.originalValues === true,
  };
}

// Grey level g of an image rendered with the HU window `hu` -> HU (to within W / 255).
export function greyToHu(hu, g) {
  return hu.center + ((g - 127.5) * hu.width) / 255;
}

// The distance between two stored-image points: pixels, and mm when the spacing is known.
export function distance(a, b, mm) {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const px = Math.hypot(dx, dy);
  const ok = Array.isArray(mm) && mm.length === 2 && mm.every((v) => Number.isFinite(v) && v > 0);
  return { px, mm: ok ? Math.hypot(dx * mm[0], dy * mm[1]) : null };
}

// --- the image coordinate transform (the only place that knows it) ----------
export function clientToImage(img, clientX, clientY) {
  const box = img.getBoundingClientRect();
  return {
    x: ((clientX - box.left) * img.naturalWidth) / box.width,
    y: ((clientY - box.top) * img.naturalHeight) / box.height,
  };
}

export function imageToClient(img, x, y) {
  const box = img.getBoundingClientRect();
  return {
    x: box.left + (x * box.width) / img.naturalWidth,
    y: box.top + (y * box.height) / img.naturalHeight,
  };
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

function typing(event) {
  const t = event.composedPath ? event.composedPath()[0] : event.target;
  if (!(t instanceof Element)) return false;
  return Boolean(t.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));
}

export function mountViewer(component, hooks = {}) {
  const { data } = component;
  const parentElement = hooks.host || component.parentElement;
  INSTANCES.get(parentElement)?.();
  const caseId = data.case;
  const windows = data.windows;
  const stack = windows[0].images.length > 1;
  const rec = record(caseId);
  const root = el("div", { class: "rv", "data-theme": data.theme || "dark" });
  let win = Math.min(Math.max(data.window || 0, 0), windows.length - 1);
  let idx = 0;
  let hint = null; // the marker corner's line for what a gesture did not do (null: the marker's)
  let pointer = null; // the pointer's last client point over the stage (M marks there)
  let fit = 1; // CSS px per image px at scale 1
  let wheelAcc = 0;
  let measureMode = false; // the distance tool: clicks place its two points
  let measureStart = null; // the first point of a measurement being made (stored pixels)
  let shownMeasure = null; // the last measurement, drawn while its slice is on screen
  let keyCursor = null; // the distance tool's point moved by the keys (stored pixels)
  let keyMoved = false; // the keys moved it since the last point was set

  // toolbar: window presets, zoom, fit, 1:1, fullscreen
  const bar = el("div", { class: "rv-bar", role: "toolbar", "aria-label": "Viewer controls" });
  const presets = el("div", { class: "rv-presets", role: "group", "aria-label": "Window" });
  const presetButtons = windows.map((w, i) => {
    const b = el("button", { type: "button", "data-window": w.name, "aria-pressed": "false" });
    b.append(el("span", { class: "rv-key", "aria-hidden": "true" }, String(i + 1)), w.label);
    const hu = w.hu ? `, W ${Math.round(w.hu.width)} C ${Math.round(w.hu.center)} HU` : "";
    b.title = `${w.label} window${hu} (key ${i + 1})`;
    b.addEventListener("click", () => setWindow(i));
    presets.append(b);
    return b;
  });
  if (windows.length < 2) presets.hidden = true;
  const tools = el("div", { class: "rv-tools", role: "group", "aria-label": "Zoom" });
  const tool = (act, text, label) => {
    const b = el("button", { type: "button", "data-act": act, "aria-label": label, title: label }, text);
    tools.append(b);
    return b;
  };
  const zoomOut = tool("zoom-out", "−", "Zoom out (−)");
  const zoomIn = tool("zoom-in", "+", "Zoom in (+)");
  const fitBtn = tool("fit", "Fit", "Fit to the viewer (0 or double-click)");
  const oneBtn = tool("one", "1:1", "1:1, one image pixel per screen pixel (O)");
  const fullBtn = tool("full", "", "Full screen (F; Esc leaves)");
  // four corners (an icon font may lack the glyph): drawn, and hidden from readers
  fullBtn.innerHTML =
    '<svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14" fill="none" ' +
    'stroke="currentColor" stroke-width="2"><path d="M1 5V1h4M11 1h4v4M15 11v4h-4M5 15H1v-4"/></svg>';
  const zoomText = el("span", { class: "rv-zoomtext", "aria-live": "off" }, "Fit");
  const wlTools = el("div", { class: "rv-wltools", role: "group", "aria-label": "Window/level" });
  const wlBtn = el(
    "button",
    { type: "button", "data-act": "wl", "aria-pressed": "false", title: "Window/level drag mode (W; right-drag works always)" },
    "W/L",
  );
  const wlReset = el(
    "button",
    { type: "button", "data-act": "wl-reset", "aria-label": "Reset window/level (R)", title: "Reset window/level (R)" },
    "↺",
  );
  const icon = (path) =>
    '<svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14" fill="none" ' +
    `stroke="currentColor" stroke-width="1.6">${path}</svg>`;
  const invertBtn = el("button", {
    type: "button", "data-act": "invert", "aria-pressed": "false", "aria-label": "Invert (I)", title: "Invert (I)",
  });
  invertBtn.innerHTML = icon('<circle cx="8" cy="8" r="6.2"/><path d="M8 1.8a6.2 6.2 0 0 1 0 12.4z" fill="currentColor"/>');
  const measureBtn = el("button", {
    type: "button",
    "data-act": "measure",
    "aria-pressed": "false",
    "aria-label": "Measure distance (D)",
    title: "Measure distance (D), then click two points; Esc ends",
  });
  measureBtn.innerHTML = icon('<path d="M1.5 11.5l10-10 3 3-10 10z"/><path d="M4.5 8.5l1.5 1.5M7 6l1.5 1.5M9.5 3.5L11 5"/>');
  wlTools.append(wlBtn, wlReset, invertBtn, measureBtn);
  const helpBtn = el(
    "button",
    { type: "button", "data-act": "help", "aria-expanded": "false", "aria-label": "Keys and gestures (?)", title: "Keys and gestures (?)" },
    "?",
  );
  const grounding = Boolean(data.grounding);
  const marking = el("div", { class: "rv-marking", role: "group", "aria-label": "Marker" });
  const markText = el("span", { class: "rv-marktext", "aria-live": "polite" });
  const clearBtn = el(
    "button",
    { type: "button", "data-act": "clear-marker", title: "Clear the marker (Delete)" },
    "Clear marker",
  );
  marking.append(clearBtn);
  marking.hidden = !grounding;
  markText.hidden = !grounding;
  bar.append(presets, marking, el("span", { class: "rv-spacer" }), wlTools, tools, helpBtn);

  // main area: thumbnails (strips) beside the stage
  const main = el("div", { class: "rv-main" });
  const thumbs = el("div", { class: "rv-thumbs", role: "group", "aria-label": "Slices" });
  const stage = el("div", {
    class: "rv-stage",
    tabindex: "0",
    role: "group",
    "aria-roledescription": "image viewer",
    "aria-label": "Case image. " + data.help,
  });
  const pz = el("div", { class: "rv-pz" });
  const frame = el("div", { class: "rv-frame" });
  const img = el("img", { class: "rv-img", draggable: "false" });
  // the re-windowed picture, drawn over the stored one only while W/L differs from it
  const canvas = el("canvas", { class: "rv-wl", "aria-hidden": "true" });
  canvas.hidden = true;
  frame.append(img, canvas);
  pz.append(frame);
  const label = el("div", { class: "rv-label", "aria-live": "polite", "aria-atomic": "true" });
  const pin = el("div", { class: "rv-marker", "aria-hidden": "true" });
  pin.hidden = true;
  // the AI model's point (the aided step, data.modelMarker): drawn, never moved
  const modelPin = el("div", { class: "rv-model-marker", role: "img", "aria-label": "AI model's marker" });
  modelPin.hidden = true;
  const corner = el("div", { class: "rv-corner" });
  const wlText = el("span", { class: "rv-wltext", "aria-live": "off" });
  corner.append(wlText, zoomText);
  // bottom right: the pixel value under the pointer, and the last distance measured
  const readout = el("div", { class: "rv-readout" });
  const probeText = el("span", { class: "rv-probe", "aria-live": "off" });
  const measureText = el("span", { class: "rv-measuretext", "aria-live": "polite" });
  probeText.hidden = true;
  measureText.hidden = true;
  readout.append(probeText, measureText);
  const SVG = "http://www.w3.org/2000/svg";
  const overlay = document.createElementNS(SVG, "svg");
  overlay.setAttribute("class", "rv-overlay");
  overlay.setAttribute("aria-hidden", "true");
  const ruler = document.createElementNS(SVG, "line");
  const rulerBack = document.createElementNS(SVG, "line");
  rulerBack.setAttribute("class", "rv-ruler-back");
  ruler.setAttribute("class", "rv-ruler");
  const ends = [0, 1].map(() => {
    const c = document.createElementNS(SVG, "circle");
    c.setAttribute("r", "3.5");
    c.setAttribute("class", "rv-ruler-end");
    return c;
  });
  overlay.append(rulerBack, ruler, ...ends);
  stage.append(pz, overlay, pin, modelPin, label, corner, readout, markText);
  if (stack) main.append(thumbs);
  main.append(stage);
  const help = el("div", { class: "rv-help", id: `rv-help-${caseId}`, role: "note" });
  help.append(
    el(
      "p",
      {},
      data.help +
        " · W: W/L drag mode (right-drag always) · R: reset W/L · I: invert · " +
        "D: measure a distance (two clicks, or Shift+arrows and Enter; Esc ends) · ?: this help",
    ),
  );
  help.hidden = true;
  helpBtn.setAttribute("aria-controls", help.id);
  main.append(help);
  root.append(bar, main);
  parentElement.append(root);

  const panzoom = Panzoom(pz, {
    canvas: true,
    maxScale: MAX_SCALE,
    minScale: MIN_SCALE,
    step: 0.25,
    cursor: "grab",
    animate: false,
  });

  // in a shadow tree, document.fullscreenElement is the host: ask the element itself
  function isFull() {
    return root.matches(":fullscreen");
  }

  function images() {
    return windows[win].images;
  }

  function layout() {
    const full = isFull();
    const rect = stage.getBoundingClientRect();
    const first = images()[0];
    const width = Math.max(stage.clientWidth, 1);
    let height;
    if (full) {
      height = Math.max(window.innerHeight - bar.offsetHeight - 16, 100);
    } else {
      const below = 8; // the help is a popover now ("?"), nothing sits under the image
      const avail = window.innerHeight - (rect.top + window.scrollY) - below;
      const natural = (width * first.h) / first.w; // no letterbox taller than the image
      height = Math.max(Math.min(avail, natural), 240);
    }
    stage.style.height = `${Math.floor(height)}px`;
    fit = Math.min(width / first.w, Math.floor(height) / first.h);
    img.style.width = `${first.w * fit}px`;
    img.style.height = `${first.h * fit}px`;
    if (stack) thumbs.style.height = full ? "" : `${Math.floor(height)}px`;
    showZoom();
    drawMarker();
  }

  function showZoom() {
    const s = panzoom.getScale();
    const perDevicePx = (fit * s * window.devicePixelRatio).toFixed(2);
    zoomText.textContent = Math.abs(s - 1) < 0.005 ? "Fit" : `×${s.toFixed(1)} (${perDevicePx} px/px)`;
  }

  function altText(image) {
    const w = windows[win];
    const where = stack ? `${data.kind === "strip" ? "slice" : ""} ${image.label}`.trim() : "";
    return [data.alt, where, `${w.label} window`, `${image.w} × ${image.h} pixels`]
      .filter(Boolean)
      .join("; ");
  }

  function show(i) {
    const list = images();
    const was = idx;
    idx = Math.min(Math.max(i, 0), list.length - 1);
    if (idx !== was) hint = null; // another slice: the marker's line again
    const image = list[idx];
    img.src = image.url;
    img.alt = altText(image);
    img.dataset.sha256 = image.sha256;
    const own = image.label && image.label !== windows[win].name ? image.label : "";
    label.textContent = [own, windows[win].label].filter(Boolean).join(" · ");
    rec.slices.add(idx + 1);
    rec.at = idx; // a reload comes back to this slice
    thumbs.querySelectorAll("button").forEach((b, j) => {
      b.setAttribute("aria-current", j === idx ? "true" : "false");
    });
    const current = thumbs.children[idx];
    if (current && current.scrollIntoView && thumbs.scrollHeight > thumbs.clientHeight) {
      current.scrollIntoView({ block: "nearest" });
    }
    showValues(image);
    paintWL();
    // decode the neighbours ahead so stepping stays at display rate
    for (const j of [idx - 1, idx + 1]) if (list[j]) new Image().src = list[j].url;
    drawMarker();
  }

  // --- the marker (location step) ---------------------------------------------
  const stripMarks = data.kind === "strip";
  // A new page (a reload) starts with no marker in memory: take the one the case
  // panel keeps in this case's draft (hooks.marker), or the stored answer's when an
  // earlier answer is being changed.
  if (grounding && !MARKERS.has(caseId)) {
    const m = data.marker || hooks.marker || null;
    if (m && Number.isFinite(m.x) && Number.isFinite(m.y)) {
      MARKERS.set(caseId, { x: m.x, y: m.y, slice: stripMarks ? m.slice : null });
    }
  }

  function currentSlice() {
    return stripMarks ? idx + 1 : null;
  }

  function frameSize() {
    const image = images()[idx];
    return { w: image.w, h: image.h };
  }

  function marker() {
    return MARKERS.get(caseId) || null;
  }

  function onThisSlice(m) {
    return Boolean(m) && (!stripMarks || m.slice === currentSlice());
  }

  function drawModelMarker() {
    const m = data.modelMarker;
    const here = Boolean(m) && Number.isFinite(m.x) && Number.isFinite(m.y) && (!stripMarks || m.slice === currentSlice());
    if (here && img.naturalWidth > 0) {
      const at = imageToClient(img, m.x, m.y);
      const box = stage.getBoundingClientRect();
      modelPin.style.left = `${at.x - box.left}px`;
      modelPin.style.top = `${at.y - box.top}px`;
      modelPin.hidden = false;
    } else {
      modelPin.hidden = true;
    }
  }

  function drawMarker() {
    drawModelMarker();
    drawMeasure();
    const m = marker();
    if (!grounding) return;
    if (onThisSlice(m) && img.naturalWidth > 0) {
      const at = imageToClient(img, m.x, m.y);
      const box = stage.getBoundingClientRect();
      pin.style.left = `${at.x - box.left}px`;
      pin.style.top = `${at.y - box.top}px`;
      pin.hidden = false;
    } else {
      pin.hidden = true;
    }
    const where = (p) => `x ${Math.round(p.x)}, y ${Math.round(p.y)}`;
    if (hint) markText.textContent = hint;
    else if (!m) markText.textContent = "No marker: click the finding";
    else if (stripMarks) markText.textContent = `Marker on slice ${m.slice}: ${where(m)}`;
    else markText.textContent = `Marker at ${where(m)}`;
    clearBtn.disabled = !m;
  }

  // Set (or clear, with null) the marker. `reader`: the reader's own gesture, which
  // the exam page's script keeps as the case's draft; a restore passes false.
  function setMarker(m, reader) {
    if (m) {
      const { w, h } = frameSize();
      const x = Math.min(Math.max(Number(m.x), 0), w);
      const y = Math.min(Math.max(Number(m.y), 0), h);
      if (!Number.isFinite(x) || !Number.isFinite(y)) return;
      const slice = stripMarks ? Math.min(Math.max(Number(m.slice) || 1, 1), images().length) : null;
      MARKERS.set(caseId, { x: Math.round(x * 100) / 100, y: Math.round(y * 100) / 100, slice });
    } else {
      MARKERS.delete(caseId);
    }
    drawMarker();
    if (reader && hooks.onMarker) hooks.onMarker(marker());
  }

  function markAt(clientX, clientY) {
    const p = clientToImage(img, clientX, clientY);
    const { w, h } = frameSize();
    if (p.x < 0 || p.y < 0 || p.x > w || p.y > h) return; // the letterbox is not the image
    setMarker({ x: p.x, y: p.y, slice: currentSlice() }, true);
  }

  // M: at the pointer when it is over the image, else at the centre of the view
  function markHere() {
    const box = stage.getBoundingClientRect();
    const p = pointer || { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    const q = clientToImage(img, p.x, p.y);
    const { w, h } = frameSize();
    const on = q.x >= 0 && q.y >= 0 && q.x <= w && q.y <= h;
    const at = on ? q : clientToImage(img, box.left + box.width / 2, box.top + box.height / 2);
    say(null);
    setMarker({ x: at.x, y: at.y, slice: currentSlice() }, true);
  }

  function nudge(dx, dy) {
    const m = marker();
    if (!onThisSlice(m)) {
      say(m ? `The marker is on slice ${m.slice}: M places it here` : "No marker: M places one");
      return;
    }
    say(null);
    setMarker({ x: m.x + dx, y: m.y + dy, slice: m.slice }, true);
  }

  function say(text) {
    hint = text;
    drawMarker();
  }

  // Does the viewer have the focus (the stage or one of its controls)?
  function focused() {
    const rootNode = root.getRootNode();
    const active = rootNode.activeElement || document.activeElement;
    return Boolean(active) && root.contains(active);
  }

  let press = null;
  stage.addEventListener(
    "pointerdown",
    (event) => {
      press =
        event.isPrimary && event.button === 0
          ? { x: event.clientX, y: event.clientY, focused: focused(), touch: event.pointerType === "touch" }
          : null;
      // a press on the image gives the viewer the keys (a new case opens with the focus
      // in the answer's first field)
      if (event.isPrimary) stage.focus({ preventScroll: true });
    },
    true,
  );
  stage.addEventListener("pointermove", (event) => {
    pointer = event.pointerType === "touch" ? null : { x: event.clientX, y: event.clientY };
  });
  stage.addEventListener("pointerleave", () => {
    pointer = null;
  });
  stage.addEventListener(
    "pointerup",
    (event) => {
      const start = press;
      press = null;
      if (!grounding || wlMode || measureMode || !start || !event.isPrimary || event.button !== 0) return;
      if (Math.hypot(event.clientX - start.x, event.clientY - start.y) > CLICK_SLOP_PX) return;
      if (!start.focused && !start.touch) {
        // this click gave the viewer the focus: it places nothing
        say(
          marker()
            ? "The viewer has the keys: click to move the marker, or press M"
            : "The viewer has the keys: click the finding to mark it, or press M",
        );
        return;
      }
      say(null);
      markAt(event.clientX, event.clientY);
      stage.focus({ preventScroll: true });
    },
    true,
  );
  // the focus left the viewer: its next click only focuses again, and the line says so
  root.addEventListener("focusout", () => {
    setTimeout(() => {
      if (hint && !focused()) say(null);
    }, 0);
  });
  clearBtn.addEventListener("click", () => setMarker(null, true));

  function buildThumbs() {
    thumbs.replaceChildren();
    images().forEach((image, j) => {
      const b = el("button", { type: "button", "aria-label": `Show ${image.label}`, title: image.label });
      const t = el("img", { src: image.url, alt: "", draggable: "false" });
      b.append(t, el("span", {}, String(j + 1)));
      b.addEventListener("click", () => {
        rec.thumbs += 1;
        show(j);
      });
      thumbs.append(b);
    });
  }

  function setWindow(i) {
    if (i < 0 || i >= windows.length) return;
    win = i;
    presetButtons.forEach((b, j) => b.setAttribute("aria-pressed", j === win ? "true" : "false"));
    const name = windows[win].name;
    if (name && !rec.windows.includes(name)) rec.windows.push(name);
    if (stack) buildThumbs();
    setWL(startWL()); // a preset is a new start
    show(idx); // the slice, zoom and pan carry over
  }

  // --- window/level on the displayed 8-bit image (see the notes at the top) --------
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  let wlMode = false;
  let stored = null; // ImageData of the frame as stored, and its URL
  let storedUrl = null;
  let wlFrame = 0;

  // --- the original values (study option; see the notes at the top) ----------------
  const valuesMode = Boolean(data.originalValues);
  rec.originalValues = valuesMode;
  const valueCache = new Map(); // URL -> Promise of {w, h, v: Int32Array}
  let shownValues = null; // the values of the frame on screen, once decoded
  let valuesUrl = null;

  // the values work on HU presets only: elsewhere W/L stays on the 8-bit render
  function valuesOn() {
    return valuesMode && huWindow() !== null;
  }

  function loadValues(url) {
    if (!valueCache.has(url)) {
      const done = new Promise((resolve, reject) => {
        const im = new Image();
        im.onload = () => {
          const c = document.createElement("canvas");
          c.width = im.naturalWidth;
          c.height = im.naturalHeight;
          const x = c.getContext("2d", { willReadFrequently: true });
          x.drawImage(im, 0, 0);
          const d = x.getImageData(0, 0, c.width, c.height).data;
          const v = new Int32Array(c.width * c.height);
          for (let i = 0; i < v.length; i++) v[i] = ((d[4 * i] << 8) | d[4 * i + 1]) - 32768;
          resolve({ w: c.width, h: c.height, v });
        };
        im.onerror = reject;
        im.src = url;
      });
      valueCache.set(url, done);
    }
    return valueCache.get(url);
  }

  function showValues(image) {
    if (!valuesMode || !image.values) return;
    const url = image.values;
    if (valuesUrl === url) return;
    valuesUrl = url;
    shownValues = null;
    loadValues(url).then(
      (vals) => {
        if (valuesUrl !== url) return;
        shownValues = vals;
        paintWL();
        probe();
      },
      () => {},
    );
  }

  // the W/L a preset starts at: the render as stored (grey levels), or on the original
  // values the preset's own HU window
  function startWL() {
    return valuesOn() ? { ...huWindow() } : { ...WL_STORED };
  }

  function currentWL() {
    return valuesOn() ? rec.wlv : rec.wl;
  }

  function wlAsStored() {
    const now = currentWL();
    const start = startWL();
    return now.width === start.width && now.center === start.center;
  }

  function paintWL() {
    cancelAnimationFrame(wlFrame);
    wlFrame = requestAnimationFrame(paintNow);
    showWL();
  }

  // the frame's stored grey levels (ImageData of the <img> as stored), read once a frame
  function storedPixels() {
    if (!img.complete || img.naturalWidth === 0) return null;
    if (storedUrl !== img.src) {
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      ctx.drawImage(img, 0, 0);
      stored = ctx.getImageData(0, 0, canvas.width, canvas.height);
      storedUrl = img.src;
    }
    return stored;
  }

  function paintNow() {
    if (wlAsStored()) {
      canvas.hidden = true;
      return;
    }
    if (valuesOn()) {
      paintValues();
      return;
    }
    if (!img.complete || img.naturalWidth === 0) return; // the load event paints
    const w = img.naturalWidth;
    const h = img.naturalHeight;
    storedPixels();
    const lut = new Uint8ClampedArray(256); // rounds and clamps
    const low = rec.wl.center - rec.wl.width / 2;
    for (let v = 0; v < 256; v++) lut[v] = ((v - low) / rec.wl.width) * 255;
    const out = ctx.createImageData(w, h);
    const src = stored.data;
    const dst = out.data;
    for (let i = 0; i < src.length; i += 4) {
      dst[i] = lut[src[i]];
      dst[i + 1] = lut[src[i + 1]];
      dst[i + 2] = lut[src[i + 2]];
      dst[i + 3] = src[i + 3];
    }
    ctx.putImageData(out, 0, 0);
    canvas.hidden = false;
  }

  // W/L on the original values: each value through a linear window in HU
  function paintValues() {
    const vals = shownValues;
    if (!vals) {
      // this frame's values are still decoding (showValues paints then): the stored
      // render meanwhile, never the last frame's values
      canvas.hidden = true;
      return;
    }
    storedUrl = null; // the canvas no longer holds the stored frame
    canvas.width = vals.w;
    canvas.height = vals.h;
    const { width, center } = rec.wlv;
    const low = center - width / 2;
    const k = 255 / width;
    const out = ctx.createImageData(vals.w, vals.h);
    const dst = out.data; // a Uint8ClampedArray: rounds and clamps
    for (let i = 0, j = 0; i < vals.v.length; i++, j += 4) {
      const g = (vals.v[i] - low) * k;
      dst[j] = g;
      dst[j + 1] = g;
      dst[j + 2] = g;
      dst[j + 3] = 255;
    }
    ctx.putImageData(out, 0, 0);
    canvas.hidden = false;
  }

  // the window preset on screen, in HU, when it is one (else null: grey levels)
  function huWindow() {
    const hu = windows[win].hu;
    return hu && Number.isFinite(hu.width) && Number.isFinite(hu.center) ? hu : null;
  }

  function showWL() {
    const { width, center } = rec.wl;
    const hu = huWindow();
    if (valuesOn()) {
      rec.wlHu = { ...rec.wlv };
      wlText.textContent = `W ${Math.round(rec.wlv.width)} · C ${Math.round(rec.wlv.center)} HU`;
      wlText.title = "Window width and centre in Hounsfield units, on the original values";
    } else if (hu) {
      // the grey-level window through the preset's mapping: HU of its centre, its width in HU
      const w = (width * hu.width) / 255;
      const c = greyToHu(hu, center);
      rec.wlHu = { width: w, center: c };
      wlText.textContent = `W ${Math.round(w)} · C ${Math.round(c)} HU`;
      wlText.title = `Window width and centre in Hounsfield units (within ${(hu.width / 255).toFixed(1)} HU)`;
    } else {
      rec.wlHu = null;
      wlText.textContent = `W ${Math.round(width)} · C ${Math.round(center)}`;
      wlText.title = "Window width and centre, in grey levels (0–255) of the displayed image";
    }
    wlReset.disabled = wlAsStored();
  }

  function setWL(next, reader = false) {
    const clamp = (v, [lo, hi]) => Math.min(Math.max(v, lo), hi);
    if (valuesOn()) {
      const width = clamp(Number(next.width), [1, 65536]);
      const center = clamp(Number(next.center), [-40000, 40000]);
      if (!Number.isFinite(width) || !Number.isFinite(center)) return;
      rec.wlv = { width, center };
      if (reader) rec.wlUsed = true;
      paintWL();
      return;
    }
    const width = clamp(Number(next.width), WL_WIDTH);
    const center = clamp(Number(next.center), WL_CENTER);
    if (!Number.isFinite(width) || !Number.isFinite(center)) return;
    rec.wl = { width, center };
    if (reader) rec.wlUsed = true;
    paintWL();
  }

  function setWLMode(on) {
    if (on && measureMode) setMeasureMode(false);
    wlMode = on;
    wlBtn.setAttribute("aria-pressed", on ? "true" : "false");
    stage.classList.toggle("rv-wlmode", on);
    panzoom.setOptions({ disablePan: on });
  }

  let wlDrag = null;
  stage.addEventListener(
    "pointerdown",
    (event) => {
      const byButton = event.button === 2;
      const byMode = wlMode && event.button === 0 && event.isPrimary;
      if (!byButton && !byMode) return;
      event.stopPropagation(); // not a pan (Panzoom listens on the stage, bubbling)
      event.preventDefault();
      wlDrag = { x: event.clientX, y: event.clientY, id: event.pointerId, from: { ...currentWL() } };
      stage.setPointerCapture?.(event.pointerId);
    },
    true,
  );
  stage.addEventListener(
    "pointermove",
    (event) => {
      if (!wlDrag || event.pointerId !== wlDrag.id) return;
      event.stopPropagation();
      const dx = event.clientX - wlDrag.x;
      const dy = event.clientY - wlDrag.y;
      // grey levels per CSS pixel, or on the original values the preset's HU per grey level
      const step = valuesOn() ? Math.max(huWindow().width / 255, 1) : WL_PER_PX;
      setWL({ width: wlDrag.from.width + dx * step, center: wlDrag.from.center + dy * step }, true);
    },
    true,
  );
  const endDrag = (event) => {
    if (!wlDrag || event.pointerId !== wlDrag.id) return;
    event.stopPropagation();
    wlDrag = null;
  };
  stage.addEventListener("pointerup", endDrag, true);
  stage.addEventListener("pointercancel", endDrag, true);
  stage.addEventListener("contextmenu", (event) => event.preventDefault());
  img.addEventListener("load", paintWL);
  wlBtn.addEventListener("click", () => setWLMode(!wlMode));

  // --- invert, pixel value, distance -----------------------------------------------
  function setInverted(on, reader = false) {
    rec.inverted = on;
    if (reader && on) rec.invertUsed = true;
    frame.classList.toggle("rv-inverted", on);
    invertBtn.setAttribute("aria-pressed", on ? "true" : "false");
  }
  invertBtn.addEventListener("click", () => setInverted(!rec.inverted, true));

  // the value of the stored pixel under the pointer (grey level, and HU on an HU preset)
  function probe() {
    if (!pointer) {
      probeText.hidden = true;
      return;
    }
    const p = clientToImage(img, pointer.x, pointer.y);
    const { w, h } = frameSize();
    const x = Math.floor(p.x);
    const y = Math.floor(p.y);
    const inside = x >= 0 && y >= 0 && x < w && y < h;
    if (valuesOn()) {
      // the original value itself (the canvas holds the windowed values: not read here)
      const ok = inside && shownValues && x < shownValues.w && y < shownValues.h;
      if (ok) probeText.textContent = `x ${x}, y ${y}: ${shownValues.v[y * shownValues.w + x]} HU`;
      probeText.hidden = !ok;
      return;
    }
    const pixels = inside ? storedPixels() : null;
    if (!pixels || x >= pixels.width || y >= pixels.height) {
      probeText.hidden = true;
      return;
    }
    const g = pixels.data[4 * (y * pixels.width + x)];
    const hu = huWindow();
    // grey 0 and 255 are what the render clipped: the value is at or beyond the window
    const edge = g === 0 ? "≤ " : g === 255 ? "≥ " : "";
    const value = hu ? `${edge}${Math.round(greyToHu(hu, g))} HU` : `grey ${g}`;
    probeText.textContent = `x ${x}, y ${y}: ${value}`;
    probeText.dataset.grey = String(g);
    probeText.hidden = false;
  }

  function setMeasureMode(on) {
    if (on && wlMode) setWLMode(false);
    measureMode = on;
    measureStart = null;
    keyCursor = null;
    measureBtn.setAttribute("aria-pressed", on ? "true" : "false");
    stage.classList.toggle("rv-measuremode", on);
    panzoom.setOptions({ disablePan: on || wlMode });
    if (on) showMeasure("Distance: click the first point");
    else if (shownMeasure) showMeasure(measureWords(shownMeasure));
    else measureText.hidden = true;
    drawMeasure();
  }
  measureBtn.addEventListener("click", () => setMeasureMode(!measureMode));

  function showMeasure(text) {
    measureText.textContent = text;
    measureText.hidden = false;
  }

  function measureWords(m) {
    return m.mm === null
      ? `Distance: ${m.px.toFixed(1)} px (no pixel spacing)`
      : `Distance: ${m.mm.toFixed(1)} mm`;
  }

  function measureClick(clientX, clientY) {
    keyCursor = null; // the mouse took over from the keys
    measureAt(clientToImage(img, clientX, clientY));
  }

  // A point of the distance, in stored pixels: the first, or the second (which measures).
  function measureAt(p) {
    const { w, h } = frameSize();
    if (p.x < 0 || p.y < 0 || p.x > w || p.y > h) return; // the letterbox is not the image
    const at = { x: Math.round(p.x * 100) / 100, y: Math.round(p.y * 100) / 100 };
    if (!measureStart) {
      measureStart = at;
      showMeasure("Distance: click the second point");
      drawMeasure();
      return;
    }
    const d = distance(measureStart, at, images()[idx].mm);
    const m = {
      slice: stack ? idx + 1 : null,
      x1: measureStart.x, y1: measureStart.y, x2: at.x, y2: at.y,
      px: Math.round(d.px * 100) / 100,
      mm: d.mm === null ? null : Math.round(d.mm * 100) / 100,
    };
    rec.measures = [...rec.measures, m].slice(-MAX_MEASURES);
    measureStart = null;
    shownMeasure = m;
    showMeasure(measureWords(m));
    drawMeasure();
  }

  function drawMeasure() {
    const m = shownMeasure;
    const here = m && (m.slice === null || m.slice === idx + 1);
    const loose = keyCursor || (pointer ? clientToImage(img, pointer.x, pointer.y) : null);
    // a measurement under way runs to the keys' point or the pointer; the keys' point
    // alone (moved, not yet set) is drawn as a dot; else the last measurement on this slice
    const a0 = measureStart || (measureMode && keyMoved ? keyCursor : null);
    const b = a0 ? loose || a0 : here ? { x: m.x2, y: m.y2 } : null;
    const a = a0 || (here ? { x: m.x1, y: m.y1 } : null);
    if (!a || !b || img.naturalWidth === 0) {
      overlay.style.display = "none";
      return;
    }
    const box = stage.getBoundingClientRect();
    const pa = imageToClient(img, a.x, a.y);
    const pb = imageToClient(img, b.x, b.y);
    for (const line of [ruler, rulerBack]) {
      line.setAttribute("x1", String(pa.x - box.left));
      line.setAttribute("y1", String(pa.y - box.top));
      line.setAttribute("x2", String(pb.x - box.left));
      line.setAttribute("y2", String(pb.y - box.top));
    }
    ends[0].setAttribute("cx", String(pa.x - box.left));
    ends[0].setAttribute("cy", String(pa.y - box.top));
    ends[1].setAttribute("cx", String(pb.x - box.left));
    ends[1].setAttribute("cy", String(pb.y - box.top));
    overlay.style.display = "";
  }

  stage.addEventListener("pointermove", () => {
    probe();
    if (measureStart) drawMeasure();
  });
  stage.addEventListener("pointerleave", () => {
    probeText.hidden = true;
  });
  let measurePress = null;
  stage.addEventListener(
    "pointerdown",
    (event) => {
      if (!measureMode || !event.isPrimary || event.button !== 0) return;
      event.stopPropagation(); // neither a pan nor a marker
      measurePress = { x: event.clientX, y: event.clientY };
    },
    true,
  );
  stage.addEventListener(
    "pointerup",
    (event) => {
      if (!measureMode || !measurePress || !event.isPrimary || event.button !== 0) return;
      event.stopPropagation();
      const start = measurePress;
      measurePress = null;
      if (Math.hypot(event.clientX - start.x, event.clientY - start.y) > CLICK_SLOP_PX) return;
      measureClick(event.clientX, event.clientY);
    },
    true,
  );
  wlReset.addEventListener("click", () => setWL(startWL()));

  function setHelp(open) {
    help.hidden = !open;
    helpBtn.setAttribute("aria-expanded", open ? "true" : "false");
  }
  helpBtn.addEventListener("click", () => setHelp(help.hidden));

  function step(delta) {
    if (stack) show(idx + delta);
  }

  function zoomBy(factor) {
    panzoom.zoom(panzoom.getScale() * factor, { animate: false });
  }

  function oneToOne() {
    rec.one = true;
    panzoom.zoom(1 / (fit * window.devicePixelRatio), { animate: false });
  }

  function reset() {
    panzoom.reset({ animate: false });
  }

  function toggleFullscreen() {
    if (isFull()) document.exitFullscreen().catch(() => {});
    else if (root.requestFullscreen) root.requestFullscreen().then(trackFullscreen, () => {});
  }

  let lastScale = 1;
  pz.addEventListener("panzoomchange", (event) => {
    const { scale } = event.detail;
    if (Math.abs(scale - lastScale) > 1e-6) {
      rec.zoom = rec.zoom || Math.abs(scale - 1) > 1e-6;
      rec.maxZoom = Math.max(rec.maxZoom, scale);
    } else if (event.detail.originalEvent) {
      rec.pan = true;
    }
    lastScale = scale;
    showZoom();
    drawMarker();
  });

  stage.addEventListener(
    "wheel",
    (event) => {
      event.preventDefault(); // the page never scrolls under the viewer
      if (stack && !event.ctrlKey && !event.metaKey) {
        // one slice per mouse notch; a touchpad's small deltas add up to one
        wheelAcc += event.deltaY;
        if (Math.abs(wheelAcc) >= WHEEL_STEP_PX) {
          step(Math.sign(wheelAcc));
          wheelAcc = 0;
        }
        return;
      }
      // a mouse notch (one event of 50 px or more, or in lines or pages) zooms x1.1;
      // pinch (ctrl + small deltas) and touchpads are smooth
      const notch = event.deltaMode !== 0 || Math.abs(event.deltaY) >= WHEEL_STEP_PX;
      const factor = notch
        ? NOTCH_ZOOM ** -Math.sign(event.deltaY)
        : Math.exp(-event.deltaY * WHEEL_ZOOM);
      const scale = Math.min(Math.max(panzoom.getScale() * factor, MIN_SCALE), MAX_SCALE);
      panzoom.zoomToPoint(scale, event, { animate: false });
    },
    { passive: false },
  );
  stage.addEventListener("dblclick", reset);
  zoomIn.addEventListener("click", () => zoomBy(1.25));
  zoomOut.addEventListener("click", () => zoomBy(0.8));
  fitBtn.addEventListener("click", reset);
  oneBtn.addEventListener("click", oneToOne);
  fullBtn.addEventListener("click", toggleFullscreen);

  function onKey(event) {
    trackFullscreen(); // a key read in fullscreen: the entry's event may not have come yet
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event)) return;
    const k = event.key;
    if (measureMode && measureKey(event)) {
      event.preventDefault();
      return;
    }
    if (grounding && markerKey(event)) {
      event.preventDefault();
      return;
    }
    let handled = true;
    // the arrows (Shift or not, off a grounding study) step slices, whatever the marker
    if (/^[1-9]$/.test(k) && Number(k) <= windows.length) setWindow(Number(k) - 1);
    else if (stack && (k === "ArrowRight" || k === "ArrowDown" || k === "PageDown")) step(1);
    else if (stack && (k === "ArrowLeft" || k === "ArrowUp" || k === "PageUp")) step(-1);
    else if (stack && k === "Home") show(0);
    else if (stack && k === "End") show(images().length - 1);
    else if (k === "+" || k === "=") zoomBy(1.25);
    else if (k === "-" || k === "_") zoomBy(0.8);
    else if (k === "0") reset();
    else if (k === "o" || k === "O") oneToOne();
    else if (k === "f" || k === "F") toggleFullscreen();
    else if (k === "w" || k === "W") setWLMode(!wlMode);
    else if (k === "r" || k === "R") setWL(startWL());
    else if (k === "i" || k === "I") setInverted(!rec.inverted, true);
    else if (k === "d" || k === "D") setMeasureMode(!measureMode);
    else if (k === "Escape" && measureMode) setMeasureMode(false);
    else if (k === "?") setHelp(help.hidden);
    else if (k === "Escape" && !help.hidden) setHelp(false);
    else if (k === "Escape" && isFull()) toggleFullscreen();
    else handled = false;
    if (handled) event.preventDefault();
  }

  // The distance tool from the keys: Shift+arrows move its point one image pixel (from
  // the pointer over the image, else the centre of the view), Enter on the image sets it
  // (the first, then the second, which measures).
  function measureKey(event) {
    const k = event.key;
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const onStage = (event.composedPath ? event.composedPath()[0] : event.target) === stage;
    if (!(moves[k] && event.shiftKey) && !(k === "Enter" && onStage)) return false;
    if (!keyCursor) {
      const box = stage.getBoundingClientRect();
      const q = pointer ? clientToImage(img, pointer.x, pointer.y) : null;
      const { w, h } = frameSize();
      const on = q && q.x >= 0 && q.y >= 0 && q.x <= w && q.y <= h;
      keyCursor = on ? q : clientToImage(img, box.left + box.width / 2, box.top + box.height / 2);
      keyCursor = { x: Math.round(keyCursor.x), y: Math.round(keyCursor.y) };
    }
    if (k === "Enter") {
      keyMoved = false;
      measureAt(keyCursor);
      return true;
    }
    keyMoved = true;
    const { w, h } = frameSize();
    const [dx, dy] = moves[k];
    keyCursor = {
      x: Math.min(Math.max(keyCursor.x + dx, 0), w),
      y: Math.min(Math.max(keyCursor.y + dy, 0), h),
    };
    drawMeasure();
    return true;
  }

  // The marker's own keys (never the plain arrows, which step slices): M places it
  // (at the pointer over the image, else the centre of the view), Shift+arrows move it
  // by one image pixel on its slice, Delete or Backspace clears it.
  function markerKey(event) {
    const k = event.key;
    const s = MARKER_STEP;
    const moves = { ArrowLeft: [-s, 0], ArrowRight: [s, 0], ArrowUp: [0, -s], ArrowDown: [0, s] };
    if ((k === "m" || k === "M") && !event.repeat) {
      markHere();
      return true;
    }
    if (k === "Delete" || k === "Backspace") {
      say(null);
      setMarker(null, true);
      return true;
    }
    if (moves[k] && event.shiftKey) {
      nudge(...moves[k]);
      return true;
    }
    return false;
  }

  // fullscreen time, from the state itself, wherever the viewer sees it (the event, a
  // key, a resize, a poll): Chromium fires fullscreenchange at an animation frame, and
  // on a starved page the entry's event can come after the exit
  function trackFullscreen() {
    const full = isFull();
    if (full && rec.fsSince === null) rec.fsSince = performance.now();
    if (!full && rec.fsSince !== null) {
      rec.fsMs += performance.now() - rec.fsSince;
      rec.fsSince = null;
    }
    return full;
  }
  const fsPoll = setInterval(trackFullscreen, 250);

  function onFullscreen() {
    const full = trackFullscreen();
    fullBtn.setAttribute("aria-pressed", full ? "true" : "false");
    requestAnimationFrame(layout);
  }

  // The record goes to Python in the case panel's one submit value (panel.js).
  const keep = () => keepRecord(caseId);

  document.addEventListener("keydown", onKey);
  document.addEventListener("fullscreenchange", onFullscreen);
  window.addEventListener("pagehide", keep);
  window.addEventListener("resize", layout);
  // the stage fills the viewport below its own top: lay out again whenever the page
  // around it changes size (content above it can move it without resizing it)
  const observer = new ResizeObserver(() => {
    trackFullscreen(); // entering fullscreen resizes the root, sometimes before its event
    requestAnimationFrame(layout);
  });
  observer.observe(root);
  for (const around of ancestors(root)) observer.observe(around);
  const settle = setTimeout(layout, 400); // after Streamlit has removed the last run's leftovers

  img.addEventListener("load", drawMarker);
  presetButtons.forEach((b, j) => b.setAttribute("aria-pressed", j === win ? "true" : "false"));
  // a window with no name (a PNG case's one rendering) is no window choice
  if (windows[win].name && !rec.windows.includes(windows[win].name)) rec.windows.push(windows[win].name);
  if (stack) buildThumbs();
  rec.wl = { ...WL_STORED }; // a (re)drawn case starts as stored
  rec.wlv = startWL();
  setInverted(rec.inverted); // a reload keeps the negative the reader chose
  if (lastCase !== null && lastCase !== caseId) scrollToTop(root);
  lastCase = caseId;
  // a reload (the tab's record) comes back to the slice the reader was on; else the
  // slice of the case's marker; else the first
  const markedSlice = grounding && stripMarks && marker() ? marker().slice - 1 : null;
  show(stack ? (rec.at ?? markedSlice ?? 0) : 0);
  layout();

  const api = {
    caseId,
    root,
    image: img,
    clientToImage: (x, y) => clientToImage(img, x, y),
    imageToClient: (x, y) => imageToClient(img, x, y),
    state: () => ({
      case: caseId,
      window: windows[win].name,
      slice: idx + 1,
      scale: panzoom.getScale(),
      pan: panzoom.getPan(),
      fit,
      fullscreen: isFull(),
      wl: { ...rec.wl },
      wlMode,
      inverted: rec.inverted,
      measureMode,
      originalValues: valuesOn(),
      wlHu: rec.wlHu ? { ...rec.wlHu } : null,
    }),
    canvas,
    summary: () => summary(caseId),
    // the location step: {x, y, slice} in stored pixels, or null; setMarker restores a
    // draft (not a reader gesture: no event)
    marker: () => (grounding ? marker() : null),
    setMarker: (m) => grounding && setMarker(m, false),
    grounding,
  };
  window.readerstudyViewer = api;

  function cleanup() {
    if (INSTANCES.get(parentElement) === cleanup) INSTANCES.delete(parentElement);
    document.removeEventListener("keydown", onKey);
    document.removeEventListener("fullscreenchange", onFullscreen);
    window.removeEventListener("pagehide", keep);
    window.removeEventListener("resize", layout);
    observer.disconnect();
    clearTimeout(settle);
    cancelAnimationFrame(wlFrame);
    clearInterval(fsPoll);
    if (rec.fsSince !== null) {
      rec.fsMs += performance.now() - rec.fsSince;
      rec.fsSince = null;
    }
    if (SUMMARIES.has(caseId)) keep();
    panzoom.destroy();
    if (window.readerstudyViewer === api) delete window.readerstudyViewer;
    root.remove();
  }
  INSTANCES.set(parentElement, cleanup);
  api.cleanup = cleanup;
  return api;
}
