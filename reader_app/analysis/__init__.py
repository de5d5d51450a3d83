"""Services behind the coordinator's and the analyst's pages (no Streamlit here).

Like any service it may import ``scoring`` (DESIGN.md section 2). It turns
the tidy frame (reader_app.results) into the leaderboard, chart
data, the per-case matrix, exports and the static report, always through
``scoring.score_responses`` and the other public functions of ``scoring``, so
the numbers on a page are the numbers ``readerstudy score`` prints. Pages
call these functions and cache their results (``st.cache_data`` lives in the
UI layer only).
"""
