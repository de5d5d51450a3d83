// readerstudy per-case matrix: responders x cases, one cell an answer, drawn on a canvas.
//
// Vega drew the same matrix in 100-120 ms of the browser's main thread on every visit
// of the page (2,800 marks at 50 cases x 28 responders, each encoded through Vega's
// expression interpreter); a canvas of ours draws it in a few. The figure for a paper
// (PNG, SVG) is still Vega's, from the same cells (reader_app.charts.case_matrix_chart).
// Hover names a cell's responder, case, outcome and confidence, or a bar's case, pool
// accuracy and split; a click on a cell sends its case id ("open", a trigger value).
// The legend, the titles and the tooltip are HTML, so the page's contrast checks and
// screen readers see them; the canvas has an accessible name.

const FONT = "11px 'Source Sans Pro', 'Source Sans 3', sans-serif";
const BAR_H = 80; // the difficulty bars' height, as the Vega figure's
const GAP = 4; // between the bars and the cells
const CELL_H = 16;
const AXIS_W = 34; // the bars' axis (0, 0.5, 1) left of the cells
const PAD = 8;
const NAME_MAX = 160; // px of a responder's name beside its row
const CASE_MAX = 120; // px of a case id under its column (Vega's labelLimit)

// host element -> the live drawing's end: each call ends the one before it
const LIVE = new WeakMap();

// ``text`` cut to ``max`` px, with an ellipsis when cut
function fitted(ctx, text, max) {
  if (ctx.measureText(text).width <= max) return text;
  let cut = text;
  while (cut.length > 1 && ctx.measureText(`${cut}…`).width > max) cut = cut.slice(0, -1);
  return `${cut}…`;
}

function tipRows(tip, rows) {
  tip.replaceChildren();
  const table = el("table");
  for (const [key, value] of rows) {
    const tr = el("tr");
    tr.append(el("th", {}, key), el("td", {}, value === null || value === undefined ? "" : String(value)));
    table.append(tr);
  }
  tip.append(table);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  LIVE.get(parentElement)?.();
  const root = el("div", { class: "rs-matrix" });
  const t = data.theme;
  for (const [name, value] of Object.entries(t)) root.style.setProperty(`--rs-${name}`, value);
  const title = el("div", { class: "rs-matrix-title" }, data.title);
  const body = el("div", { class: "rs-matrix-body" });
  const canvas = el("canvas", {
    role: "img",
    "aria-label": data.label,
    class: "rs-matrix-canvas",
  });
  const legend = el("ul", { class: "rs-matrix-legend", "aria-label": "outcome" });
  legend.append(el("li", { class: "rs-matrix-legend-title" }, "outcome"));
  for (const o of data.outcomes) {
    const item = el("li");
    const swatch = el("span", { class: "rs-matrix-swatch", "aria-hidden": "true" });
    swatch.style.background = o.color;
    item.append(swatch, document.createTextNode(o.label));
    legend.append(item);
  }
  body.append(canvas, legend);
  const xTitle = el("div", { class: "rs-matrix-xtitle" }, data.x_title);
  const tip = el("div", { class: "rs-matrix-tip", role: "tooltip", hidden: "" });
  root.append(title, body, xTitle, tip);
  // the element holds Streamlit's style for it too: only the last drawing is replaced
  for (const old of Array.from(parentElement.children)) if (old.classList.contains("rs-matrix")) old.remove();
  parentElement.append(root);

  const nRows = data.responders.length;
  const nCols = data.cases.length;
  const ctx = canvas.getContext("2d");
  ctx.font = FONT;
  const widestName = Math.max(0, ...data.responders.map((r) => ctx.measureText(r.name).width));
  const labelW = Math.ceil(Math.min(widestName, NAME_MAX)) + PAD; // a long name is cut: the tooltip has it whole
  const cellW = data.width / Math.max(nCols, 1);
  const left = labelW + AXIS_W;
  const top = PAD;
  const gridTop = top + BAR_H + GAP;
  const gridH = nRows * CELL_H;
  let caseLabelsH = 0;
  if (data.case_labels) {
    const widest = Math.max(0, ...data.cases.map((c) => Math.min(ctx.measureText(c.id).width, CASE_MAX)));
    caseLabelsH = Math.ceil(widest * Math.sin(Math.PI / 3)) + 12;
  }
  const cssW = Math.ceil(left + data.width + PAD);
  const cssH = Math.ceil(gridTop + gridH + caseLabelsH + PAD);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.width = `${cssW}px`;
  canvas.style.height = `${cssH}px`;
  // where the cells are, for tests that read a cell's colour off the pixels
  Object.assign(canvas.dataset, { left, gridTop, cellW, cellH: CELL_H, rows: nRows, cols: nCols });

  ctx.scale(dpr, dpr);
  ctx.font = FONT;
  // the difficulty bars, on an axis 0 - 0.5 - 1
  ctx.strokeStyle = t.grid;
  ctx.lineWidth = 1;
  ctx.fillStyle = t.muted;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const v of [0, 0.5, 1]) {
    const y = top + BAR_H * (1 - v);
    ctx.beginPath();
    ctx.moveTo(left, Math.round(y) + 0.5);
    ctx.lineTo(left + data.width, Math.round(y) + 0.5);
    ctx.stroke();
    ctx.fillText(String(v), left - 4, y);
  }
  ctx.save();
  ctx.translate(labelW + 6, top + BAR_H / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.fillStyle = t.text;
  ctx.fillText("difficulty", 0, 0);
  ctx.restore();
  ctx.fillStyle = data.bar_color;
  data.cases.forEach((c, i) => {
    if (c.difficulty === null) return;
    const h = BAR_H * c.difficulty;
    ctx.fillRect(left + i * cellW + 1, top + BAR_H - h, Math.max(cellW - 2, 1), h);
  });
  // the responders' names, then the cells with their glyphs
  ctx.textAlign = "right";
  ctx.fillStyle = t.text;
  data.responders.forEach((r, row) => ctx.fillText(fitted(ctx, r.name, NAME_MAX), labelW - 4, gridTop + row * CELL_H + CELL_H / 2));
  const glyphs = cellW >= data.glyph_px;
  ctx.textAlign = "center";
  ctx.font = `bold ${data.glyph_px}px sans-serif`;
  ctx.strokeStyle = data.stroke;
  ctx.lineWidth = 0.5;
  for (let row = 0; row < nRows; row += 1) {
    for (let col = 0; col < nCols; col += 1) {
      const o = data.outcomes[data.cells[row * nCols + col]];
      const x = left + col * cellW;
      const y = gridTop + row * CELL_H;
      ctx.fillStyle = o.color;
      ctx.fillRect(x, y, cellW, CELL_H);
      ctx.strokeRect(x + 0.25, y + 0.25, cellW - 0.5, CELL_H - 0.5);
      if (glyphs && o.glyph) {
        ctx.fillStyle = o.ink;
        ctx.fillText(o.glyph, x + cellW / 2, y + CELL_H / 2 + 1);
      }
    }
  }
  if (data.case_labels) {
    ctx.font = FONT;
    ctx.fillStyle = t.text;
    ctx.textAlign = "right";
    data.cases.forEach((c, i) => {
      ctx.save();
      ctx.translate(left + (i + 0.5) * cellW, gridTop + gridH + 4);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(fitted(ctx, c.id, CASE_MAX), 0, 0);
      ctx.restore();
    });
  }

  // what the pointer is over: a cell, a bar's column, or nothing
  const at = (event) => {
    const box = canvas.getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    const col = Math.floor((x - left) / cellW);
    if (col < 0 || col >= nCols || x < left) return null;
    if (y >= gridTop && y < gridTop + gridH) return { col, row: Math.floor((y - gridTop) / CELL_H) };
    if (y >= top && y < top + BAR_H) return { col, row: null };
    return null;
  };
  const onMove = (event) => {
    const hit = at(event);
    canvas.style.cursor = hit && hit.row !== null ? "pointer" : "default";
    if (!hit) {
      tip.hidden = true;
      return;
    }
    const c = data.cases[hit.col];
    if (hit.row === null) {
      tipRows(tip, [["case_id", c.id], ["pool accuracy", c.pool_accuracy], ["split", c.split]]);
    } else {
      const r = data.responders[hit.row];
      const i = hit.row * nCols + hit.col;
      const o = data.outcomes[data.cells[i]];
      tipRows(tip, [["responder", r.name], ["kind", r.kind], ["case_id", c.id], ["outcome", o.name], ["likert", data.likert[i]]]);
    }
    tip.hidden = false;
    const room = root.getBoundingClientRect();
    const x = Math.min(event.clientX - room.left + 14, room.width - tip.offsetWidth - 4);
    tip.style.left = `${Math.max(x, 0)}px`;
    tip.style.top = `${event.clientY - room.top + 14}px`;
  };
  const onLeave = () => {
    tip.hidden = true;
  };
  const onClick = (event) => {
    const hit = at(event);
    if (hit && hit.row !== null) setTriggerValue("open", data.cases[hit.col].id);
  };
  canvas.addEventListener("mousemove", onMove);
  canvas.addEventListener("mouseleave", onLeave);
  canvas.addEventListener("click", onClick);
  const cleanup = () => {
    canvas.removeEventListener("mousemove", onMove);
    canvas.removeEventListener("mouseleave", onLeave);
    canvas.removeEventListener("click", onClick);
    if (LIVE.get(parentElement) === cleanup) LIVE.delete(parentElement);
  };
  LIVE.set(parentElement, cleanup);
  return cleanup;
}
