"""readerstudy's benchmarks: short drivers over a small shared kit (``benchmarks.kit``).

Run each driver as a module from the repository root, e.g.
``.venv/bin/python -m benchmarks.transition --quick``; ``make bench`` runs
``python -m benchmarks.run_all``, which runs every driver and rewrites
docs/performance.md.
"""
