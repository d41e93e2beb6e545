"""The leaderboard: one suite, one row per agent (its newest finished run), ranked by success;
or one benchmark (``seatrial bench``), its runs as linked by the benchmark's id.

Both boards are :func:`seatrial.compare.rank_runs` over the runs chosen here: the same
figures and the same named differences ``seatrial bench`` prints. They read the chosen runs
only: their attempts' verdicts and figures and a count of their ``execute_tool`` spans.
"""

from __future__ import annotations

from pydantic import Field

from seatrial.compare import REPLAY_TAG, BoardRun, Leaderboard, bench_leaderboard, rank_runs
from seatrial.store import Store, newest_run_per_agent


class SuiteBoard(Leaderboard):
    """A leaderboard as the dashboard shows it, with the suites it can switch to."""

    suites: list[str] = Field(default_factory=list)
    """Every suite with a stored run."""


def leaderboard(store: Store, suite: str | None, all_suites: list[str]) -> SuiteBoard:
    """Rank every agent's newest finished run of ``suite`` (replays of flaky cases left out)
    by attempt pass rate; ties go to the higher lower bound of the interval, then the name."""
    if suite is None:
        return SuiteBoard(suite=None, suites=all_suites)
    picked = newest_run_per_agent(store, suite, skip_tag=REPLAY_TAG)
    board = rank_runs(store, [BoardRun(run.agent, run) for run in picked], suite)
    return SuiteBoard(**dict(board), suites=all_suites)


def bench_board(store: Store, bench_id: str, all_suites: list[str]) -> SuiteBoard:
    """The leaderboard of benchmark ``bench_id``; RunNotFound when no run carries its tag."""
    board = bench_leaderboard(store, bench_id)
    return SuiteBoard(**dict(board), suites=all_suites)
