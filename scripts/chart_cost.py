"""What Altair would cost the analyst pages, against our Vega-Lite dicts (issue 45).

Run by hand: ``.venv/bin/python scripts/chart_cost.py``. Prints, each the median of five
fresh interpreters, the time and resident memory of importing ``reader_app.charts`` and of
importing ``altair``, both on top of pandas (which every analyst page has already); then
the nine specs of tests/reader_app/analysis/test_chart_specs.py: their JSON size, and the
time of checking them against Vega-Lite's schema, which ``alt.Chart.to_dict()`` does on
every call unless told not to. docs/analysis.md ("Why dicts, not Altair") quotes it.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import re, time
def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
import pandas
r0 = rss(); t = time.perf_counter()
import {module}
print(time.perf_counter() - t, rss() - r0)
"""


def import_cost(module: str, runs: int = 5) -> tuple[float, float]:
    """(seconds, MiB) of importing ``module`` after pandas, medians over fresh processes."""
    seen = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", PROBE.format(module=module)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.split()
        seen.append((float(out[0]), float(out[1])))
    return statistics.median(s for s, _ in seen), statistics.median(m for _, m in seen)


def main() -> None:
    for module in ("reader_app.charts", "altair"):
        seconds, mib = import_cost(module)
        print(f"import {module} after pandas: {seconds * 1000:.0f} ms, RSS +{mib:.1f} MiB")
    sys.path.insert(0, str(ROOT))
    import jsonschema
    from altair.vegalite.v6.schema.core import load_schema

    from reader_app.charts.render import spec
    from tests.reader_app.analysis.chart_frame import chart_frame
    from tests.reader_app.analysis.test_chart_specs import every_figure

    figures = {name: spec(figure) for name, figure in every_figure(chart_frame()).items()}
    sizes = [len(json.dumps(document)) for document in figures.values()]
    validator = jsonschema.Draft7Validator(load_schema())
    checks = []
    for document in figures.values():
        t = time.perf_counter()
        list(validator.iter_errors(document))
        checks.append(time.perf_counter() - t)
    print(f"{len(figures)} specs: {sum(sizes)} bytes of JSON (largest {max(sizes)})")
    print(
        f"schema check as to_dict() does it: {sum(checks) * 1000:.0f} ms for all, "
        f"median {statistics.median(checks) * 1000:.1f} ms a chart"
    )


if __name__ == "__main__":
    main()
