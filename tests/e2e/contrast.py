"""Text contrast as the browser draws it: each text's computed colour against the
first opaque background behind it (WCAG AA, reader_app/charts/contrast.py)."""

from __future__ import annotations

from playwright.sync_api import Locator

from reader_app.charts.contrast import contrast

# [text, colour, background, font px, bold] for every element with its own text
_PAIRS_JS = """
root => {
  const opaque = el => {
    for (let e = el; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      const m = bg.match(/rgba?\\(([^)]+)\\)/);
      if (m) {
        const parts = m[1].split(',').map(Number);
        if (parts.length < 4 || parts[3] >= 0.99) return bg;
      }
    }
    return getComputedStyle(document.body).backgroundColor;
  };
  const out = [];
  for (const el of [root, ...root.querySelectorAll('*')]) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim());
    if (!own.length) continue;
    const s = getComputedStyle(el);
    out.push([own.map(n => n.textContent.trim()).join(' ').slice(0, 40), s.color,
              opaque(el), parseFloat(s.fontSize), parseInt(s.fontWeight) >= 700]);
  }
  return out;
}
"""


def low_contrast_texts(root: Locator) -> list[str]:
    """Texts under ``root`` below AA: 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold)."""
    failures = []
    for text, colour, background, size, bold in root.evaluate(_PAIRS_JS):
        large = size >= 24 or (bold and size >= 18.66)
        ratio = contrast(colour, background)
        if ratio < (3.0 if large else 4.5):
            failures.append(f"{text!r}: {colour} on {background} = {ratio:.2f}:1")
    return failures
