"""The real-code judge of the clone finder: fetch, run, normalize, score (see real_bench.py)."""
