"""``--dist loadgroup`` again keeps an ``xdist_group`` on one worker (pytest 9.2 and xdist 3.8).

pytest-xdist marks a grouped test by renaming it ``<nodeid>@<group>`` (it sets
``item._nodeid``), and its scheduler sends every test of one group to one worker. pytest
9.2 keeps an item's id in ``item._id`` (a structured ``NodeId``) and no longer reads
``_nodeid``, so the rename is lost: each grouped test is scheduled on its own, a group's
module-scoped server, browser study or RadLE-scale build is made again on the other
worker, and tests meant never to overlap (the memory benchmarks, the throwaway
PostgreSQL server's restarts) run at the same time. This plugin makes the rename where
pytest reads it. tests/test_xdist_groups.py shows a group staying on one worker.
"""

from __future__ import annotations

import pytest


def _grouped_id(nodeid: str, group: str) -> str | None:
    """The id xdist's scheduler reads a group from, or None when ``nodeid`` already has it."""
    suffix = f"@{group}"
    return None if nodeid.endswith(suffix) else nodeid + suffix


@pytest.hookimpl(trylast=True)  # after xdist's own rename, which may work again one day
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False) or not hasattr(config, "workerinput"):
        return  # only an xdist worker under --dist loadgroup renames, as xdist does
    for item in items:
        names = set()
        for mark in item.iter_markers("xdist_group"):
            names.add(str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")))
        if not names:
            continue
        new = _grouped_id(item.nodeid, "_".join(sorted(names)))
        if new is None:
            continue
        current = getattr(item, "_id", None)
        parse = getattr(type(current), "parse", None)
        if parse is not None:  # pytest >= 9.2: the id is a NodeId; its text is what we pass
            item._id = parse(new)
        else:  # older pytest reads _nodeid (where xdist already wrote it)
            item._nodeid = new
        assert item.nodeid == new, f"could not name {item.nodeid!r} for its xdist group"
