"""purebpe's benchmarks: run each as ``python -m bench.NAME`` from the repository root.

The scripts share :mod:`bench._harness` (options, timing, child runs, tables) and record
their tables with :mod:`bench._results`; ``python -m bench.plot_results`` turns the
record into ``docs/benchmarks.md``. The ``test_bench_*.py`` files are pytest-benchmark
suites (``tox -e bench``).
"""
