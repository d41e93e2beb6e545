"""Hypothesis settings for the property tests: bounded, and the same examples on every run.

The default profile ``seatrial-ci`` is derandomized and keeps no example database, so CI
sees the same inputs each time and a failure reproduces from the test alone. To hunt for new
bugs with fresh random inputs, run ``SEATRIAL_HYPOTHESIS_PROFILE=explore pytest
tests/properties --timeout 0`` (500 examples a test; a failure prints the blob that
reproduces it; no example database is kept in either profile).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Each example writes a file into the test's tmp_path, overwritten by the next example: a
# function-scoped fixture shared by examples is what these tests mean.
_SHARED = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

settings.register_profile(
    "seatrial-ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SHARED,
)
settings.register_profile(
    "explore",
    max_examples=500,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=_SHARED,
)
settings.load_profile(os.environ.get("SEATRIAL_HYPOTHESIS_PROFILE", "seatrial-ci"))
