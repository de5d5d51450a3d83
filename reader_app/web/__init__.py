"""The web doors in front of Streamlit, one layer above ``ui/`` (pages never import it): the
served app (``asgi.py``, ``st.App`` around ``main.py``), its ASGI middlewares (security
headers, origin check, browser proof, upload gate and spool, TCP_NODELAY), the exam door,
uploads kept on disk, the cookie secret check and the reads of Streamlit's live sessions."""
