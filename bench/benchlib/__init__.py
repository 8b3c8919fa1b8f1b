"""Shared library of the benchmarks: corpus paths, timing, measured processes, peer tools."""
