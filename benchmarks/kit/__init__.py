"""The pieces every benchmark driver shares, one home each.

- ``measure``: timing (best of N, a stopwatch), the one percentile definition
  (nearest rank), latency summaries, the load average, the machine line;
- ``doc``: rewriting one ``## `` section of docs/performance.md, wrapping a
  paragraph, the command line a section quotes;
- ``images``: synthetic radiograph and CT PNGs with distinct bytes per case;
- ``study``: a benchmark study in a real database (cases, readers, answers);
- ``servers``: the app and the bare-Streamlit floor, served on loopback ports;
- ``chromium``: which Chromium to launch and its flags (the browser tests use them too);
- ``browser``: driving Chromium: click-to-painted timing, idle waits, the answer form.
"""
