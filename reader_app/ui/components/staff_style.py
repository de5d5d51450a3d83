"""Staff pages' own CSS (issue 42): every text at WCAG AA against its real background.

Streamlit draws the active tab's label and a slider's value in ``primaryColor``. Our
primary blue (#1f5fbf) carries white text on primary buttons at 6.1:1, but as text on
the dark ground it is 3.1:1 (tab) and 2.65:1 (the sidebar slider's value): no one blue
can be both. So those two texts take the page's text colour, and the active tab keeps
Streamlit's blue underline as its cue. A faceted chart wider than its column scrolls in its own
frame instead of running past the window's edge.
"""

from __future__ import annotations

import streamlit as st

# on the page ground #0e1117: 15.6:1; on the sidebar ground #1c212b: 13.4:1
ACTIVE_TAB_TEXT = "#e8eaed"
# the value sits over the sidebar (#1c212b: 13.4:1) and, in the DOM, inside the thumb
# (primary #1f5fbf: 5.1:1); a light blue passed the first but not the second
SLIDER_VALUE_TEXT = ACTIVE_TAB_TEXT

STAFF_CSS = f"""
<style>
[data-testid="stTab"][aria-selected="true"],
[data-testid="stTab"][aria-selected="true"] * {{
  color: {ACTIVE_TAB_TEXT} !important;
}}
[data-testid="stSliderThumbValue"],
[data-testid="stSliderThumbValue"] * {{
  color: {SLIDER_VALUE_TEXT} !important;
}}
/* a single view fits its column (ui/components/charts.py); a faceted chart wider than
   the column scrolls in its own frame instead of running past the window's edge */
[data-testid="stVegaLiteChart"] {{
  max-width: 100%;
  overflow-x: auto;
}}
</style>
"""


def staff_style() -> None:
    """Apply the staff pages' CSS (a style-only ``st.html`` takes no room on the page)."""
    st.html(STAFF_CSS)
