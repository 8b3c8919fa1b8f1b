"""The clone benchmark (``bench/clone_bench.py``): the tools it runs and its report."""
