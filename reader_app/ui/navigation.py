"""Which pages each role may open. Pages not listed for a role do not exist for it.

Role checks are also enforced in the service layer; hiding pages is convenience.
A reader who has not yet consented or filled the profile sees only that step's
page (``ONBOARDING_PAGES``), served at the same address, so a reload lands on
the right step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent / "pages"


@dataclass(frozen=True)
class PageSpec:
    file: str
    title: str
    icon: str
    url_path: str


EXAM = PageSpec("exam.py", "Exam", "📝", "exam")
ADJUDICATE = PageSpec("adjudicate.py", "Adjudication", "⚖️", "adjudicate")
# a Material icon like its neighbours in the coordinator's sidebar: the emoji drew as an empty
# box where the browser has no emoji font (Debian's Chromium, issue 42 screenshots)
ANSWER_KEY = PageSpec("answer_key.py", "Answer key", ":material/key:", "answer-key")
CONSENT = PageSpec("consent.py", "Consent", "📄", "consent")
PROFILE = PageSpec("profile.py", "Your profile", "👤", "profile")
PROGRESS = PageSpec("coordinator.py", "Progress", ":material/monitoring:", "progress")
INVITES = PageSpec("coordinator_invites.py", "Invites", ":material/mail:", "invites")
NEW_STUDY = PageSpec("study_setup.py", "New study", ":material/add_box:", "new-study")
CASE_BANK = PageSpec("coordinator_cases.py", "Case bank", ":material/photo_library:", "case-bank")
LEADERBOARD = PageSpec("analyst.py", "Leaderboard", ":material/leaderboard:", "analyst")
CHARTS = PageSpec("analyst_charts.py", "Charts", ":material/bar_chart:", "charts")
CASE_MATRIX = PageSpec("analyst_cases.py", "Per-case matrix", ":material/grid_on:", "per-case")
AID = PageSpec("analyst_aid.py", "AI aid", ":material/psychology:", "ai-aid")
RUNS = PageSpec("analyst_runs.py", "Model runs", ":material/smart_toy:", "model-runs")
EXPORTS = PageSpec("analyst_exports.py", "Exports", ":material/download:", "exports")
REPORT = PageSpec("report.py", "Report", ":material/description:", "report")

ROLE_PAGES: dict[str, tuple[PageSpec, ...]] = {
    "reader": (EXAM,),
    # the answer key stays first (the coordinator's landing page, which its tests rely on)
    "coordinator": (ANSWER_KEY, PROGRESS, INVITES, CASE_BANK, NEW_STUDY, EXPORTS),
    "adjudicator": (ADJUDICATE,),
    "analyst": (LEADERBOARD, CHARTS, CASE_MATRIX, AID, RUNS, EXPORTS, REPORT),
}

# reader steps before the exam (see reader_app.exam.onboarding)
ONBOARDING_PAGES: dict[str, PageSpec] = {"consent": CONSENT, "profile": PROFILE}


def pages_for(role: str, step: str = "exam") -> tuple[PageSpec, ...]:
    if role == "reader" and step in ONBOARDING_PAGES:
        return (ONBOARDING_PAGES[step],)
    return ROLE_PAGES.get(role, ())


ALL_PAGES: tuple[PageSpec, ...] = tuple(
    dict.fromkeys(
        [*(p for pages in ROLE_PAGES.values() for p in pages), *ONBOARDING_PAGES.values()]
    )
)


def other_pages(role: str, step: str = "exam") -> tuple[PageSpec, ...]:
    """Every page of the app this user may not open: their addresses lead to the user's own
    first page (a hidden redirect), not to Streamlit's "Page not found"."""
    mine = {p.url_path for p in pages_for(role, step)}
    return tuple(p for p in ALL_PAGES if p.url_path not in mine)
