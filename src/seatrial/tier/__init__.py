"""CI tiers: `seatrial ci --tier NAME` runs a tier of seatrial.yaml against the target branch's
baseline.

A tier (``tiers: {pr: {suites, repeats, gates}}``) names suites, golden sets, repeats and
gates; :func:`run_tier_async` runs each through :func:`seatrial.execute_suite_async`, compared
with the target branch's latest passing run of the same suite.
"""

from seatrial.tier._choose import DEFAULT_TARGET, target_branch, tier_config
from seatrial.tier._tier import (
    CI_TAG,
    TIER_TAG,
    TierOutcome,
    TierRun,
    run_tier,
    run_tier_async,
)

__all__ = [
    "CI_TAG",
    "DEFAULT_TARGET",
    "TIER_TAG",
    "TierOutcome",
    "TierRun",
    "run_tier",
    "run_tier_async",
    "target_branch",
    "tier_config",
]
