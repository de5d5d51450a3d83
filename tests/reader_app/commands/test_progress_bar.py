"""The CLI's one progress display (tqdm): a redrawn line on a terminal, whole lines in a log."""

from __future__ import annotations

import io

import pytest

from reader_app.commands import progress_bar
from reader_app.commands.progress_bar import RunProgressBar, StepProgress
from reader_app.ingest.staging import ImportProgress
from reader_app.runs.runner import RunProgress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_a_log_every_import_step_is_a_whole_line() -> None:
    stream = io.StringIO()
    bar = StepProgress(stream)
    bar(ImportProgress(1, 4, "case a"))
    bar(ImportProgress(2, 4, "case b"))
    bar(ImportProgress(4, 4, "done"))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert [line.split("[")[0] for line in lines] == [
        "import:  25%|##        | 1/4 ",  # 10-column bar: 2.5 -> 2 '#'
        "import:  50%|#####     | 2/4 ",
        "import: 100%|##########| 4/4 ",
    ]
    assert lines[0].endswith(", case a]") and lines[-1].endswith(", done]")


def test_on_a_terminal_the_line_redraws_in_place_and_ends_with_a_newline() -> None:
    stream = Tty()
    bar = StepProgress(stream, label="demo")
    bar(ImportProgress(1, 2, "case a"))
    bar(ImportProgress(2, 2, "done"))
    text = stream.getvalue()
    assert text.startswith("\rdemo:  50%|#####     | 1/2")
    assert text.endswith("\n") and text.count("\n") == 1
    assert text.rstrip().rpartition("\r")[2].startswith("demo: 100%|##########| 2/2")


def test_a_run_in_a_log_prints_at_most_every_interval_and_always_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(float(t) for t in range(100))
    monkeypatch.setattr(progress_bar.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    bar = RunProgressBar(stream, every_s=3.0)  # made at t=0
    for done in range(1, 7):  # called at t=1..6: a line at t=1 and t=4, then the last one
        bar(RunProgress(done, 6, {"answered": done, "failure": 0}))
    lines = stream.getvalue().splitlines()
    assert [line.split("|")[0] for line in lines] == ["run:  17%", "run:  67%", "run: 100%"]
    assert lines[-1].endswith("answered=6 failure=0]") and " 6/6 [" in lines[-1]


def test_the_rate_of_a_resumed_run_counts_from_where_it_resumed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(float(t) for t in range(100))
    monkeypatch.setattr(progress_bar.time, "monotonic", lambda: next(clock))
    stream = io.StringIO()
    bar = RunProgressBar(stream, every_s=0.0)  # t=0
    bar(RunProgress(30, 40, {}))  # t=1: 30 answered before this session
    bar(RunProgress(40, 40, {}))  # t=2: 10 more in 2 s
    assert "5.00answer/s" in stream.getvalue().splitlines()[-1]
