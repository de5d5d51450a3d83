"""axe-core (tests/e2e/vendor/axe.min.js) on a page or a part of it: the WCAG 2.1 A/AA
violations it finds."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"


def violations(page: Page, within: str | None = None) -> list[dict[str, object]]:
    """What axe finds in the page, or in the first element ``within`` selects."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async (within) => {
            const root = within ? document.querySelector(within) : document;
            const r = await axe.run(root, {
                runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
            });
            return r.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary})),
            }));
        }""",
        within,
    )
    return list(result)
