"""Root-span attributes the benchmark importers add; the conversation builder itself is
:func:`seatrial.trace.build_conversation`."""

from __future__ import annotations

IMPORT_REWARD = "seatrial.import.reward"
"""Root-span attribute: the benchmark's reward for the trial."""
IMPORT_REWARD_INFO = "seatrial.import.reward_info"
"""Root-span attribute: the benchmark's reward breakdown, as JSON."""
IMPORT_TERMINATION = "seatrial.import.termination_reason"
"""Root-span attribute: why the benchmark ended the conversation (tau2)."""
