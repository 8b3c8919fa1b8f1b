"""The metric benchmark (``bench/metric_bench.py``), one module per part of a run."""
