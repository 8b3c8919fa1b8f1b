"""Shared test configuration: a deterministic hypothesis profile and paths to the fixtures."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

# Every property test is derandomized (the examples depend only on the test's source), never
# reads or writes an example database and has no deadline, so the suite gives the same result
# on every run and on slow machines. CRYSTAL_HYPOTHESIS_PROFILE=dev gives random exploration.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("CRYSTAL_HYPOTHESIS_PROFILE", "ci"))

TESTS_DIR = pathlib.Path(__file__).resolve().parent
DATA_DIR = TESTS_DIR / "data"
REPO_DIR = TESTS_DIR.parent


@pytest.fixture
def data_dir() -> pathlib.Path:
    return DATA_DIR
