"""Simulated users in a run's report: their failures apart from the agent's, and their rate.

An attempt whose simulated user broke its instructions is stored as ERROR with failure type
``simulator`` (see docs/agents.md, "Simulated users"). Like every ERROR it is not a pass, so
gates stay conservative; this summary says how much of what did not pass was the simulator's
doing, and what the agent scored on the conversations the simulator held properly.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pydantic import BaseModel

from seatrial.compare import wilson_interval
from seatrial.i18n import ngettext
from seatrial.record import SIMULATOR_FAILURE
from seatrial.store import CaseCount


class SimulatorSummary(BaseModel):
    """The simulated users of a run: how often they broke their instructions."""

    attempts: int
    """Attempts of cases with a simulated user."""
    simulator_failures: int
    """Of those, attempts whose simulated user broke its instructions (ERROR ``simulator``)."""
    error_rate: float
    """simulator_failures / attempts: the simulator's error rate."""
    error_interval: tuple[float, float]
    """The error rate's Wilson 95% interval (low, high)."""
    agent_failures: int
    """Of the other attempts, those that did not pass (FAIL, WARNING, other ERRORs)."""
    agent_pass_rate: float | None
    """Passes over the attempts the simulator held properly; None when it held none."""

    def line(self) -> str:
        """One line for the terminal and summary.md, in the reader's language."""
        low, high = self.error_interval
        text = ngettext(
            "simulated users: {n} attempt, simulator failures {failures} (simulator error rate "
            "{rate} [{low}, {high}]), agent failures {agent_failures}",
            "simulated users: {n} attempts, simulator failures {failures} (simulator error "
            "rate {rate} [{low}, {high}]), agent failures {agent_failures}",
            self.attempts,
        ).format(
            n=self.attempts,
            failures=self.simulator_failures,
            rate=f"{self.error_rate:.1%}",
            low=f"{low:.1%}",
            high=f"{high:.1%}",
            agent_failures=self.agent_failures,
        )
        if self.agent_pass_rate is not None:
            held = self.attempts - self.simulator_failures
            text += ngettext(
                "; agent pass rate {rate} over the {n} attempt it held",
                "; agent pass rate {rate} over the {n} attempts it held",
                held,
            ).format(rate=f"{self.agent_pass_rate:.1%}", n=held)
        return text


def simulator_summary(
    counts: Iterable[CaseCount], simulated: Collection[str]
) -> SimulatorSummary | None:
    """The summary over the attempts of the cases in ``simulated`` (ids of cases with a
    ``user_simulator``), from the run's attempts counted by case, verdict and failure type
    (:func:`seatrial.store.case_counts`); None when the run has none."""
    rows = [row for row in counts if row.case_id in simulated]
    attempts = sum(row.attempts for row in rows)
    if not attempts:
        return None
    spoiled = sum(
        row.attempts
        for row in rows
        if row.verdict == "ERROR" and row.failure_type == SIMULATOR_FAILURE
    )
    held = attempts - spoiled
    passed = sum(row.attempts for row in rows if row.verdict == "PASS")
    interval = wilson_interval(spoiled, attempts)
    return SimulatorSummary(
        attempts=attempts,
        simulator_failures=spoiled,
        error_rate=spoiled / attempts,
        error_interval=(interval.low, interval.high),
        agent_failures=held - passed,
        agent_pass_rate=passed / held if held else None,
    )
