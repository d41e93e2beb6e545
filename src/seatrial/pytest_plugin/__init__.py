"""``pytest --seatrial SUITE``: a suite's cases as pytest items; and cases written in Python.

pytest loads this module in every process of anyone who installs Seatrial (the ``pytest11``
entry point), so it imports nothing of Seatrial's libraries until ``--seatrial`` is given or
a case runs: without ``--seatrial`` it adds its options and the ``seatrial_case`` fixture and
changes nothing else.

With ``--seatrial SUITE``, each case becomes one item (node id ``SUITE::case-id``, repeats
inside it) carrying markers from the case (``P0``, ``category_<name>``, ``tag_<name>``,
``seatrial``); after ``-k``/``-m`` deselection the selected cases run as one stored run
through :func:`seatrial.execute_suite_async`, and each item passes (PASS, WARNING) or fails
(FAIL, ERROR) with its case's verdict, showing the reasons and the failing trajectory.
Without explicit test paths only the suite is collected. See docs/ci.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.pytest_plugin._assert import CaseRunner, assert_case, assert_case_async
from seatrial.pytest_plugin._items import (
    SESSION_KEY,
    VERDICT_PROPERTY,
    CaseFailed,
    CaseItem,
    SuiteFile,
    marker_lines,
)

__all__ = ["CaseFailed", "CaseItem", "CaseRunner", "assert_case", "assert_case_async"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--seatrial`` and the options of its runs (and of the ``seatrial_case`` fixture)."""
    group = parser.getgroup("seatrial", "Seatrial: run a suite's cases as tests (docs/ci.md)")
    group.addoption(
        "--seatrial",
        action="append",
        dest="seatrial_suites",
        metavar="SUITE",
        default=[],
        help="Run the cases of this suite file as test items, one stored run (repeatable).",
    )
    group.addoption(
        "--seatrial-agent",
        dest="seatrial_agent",
        metavar="AGENT",
        help="Agent spec or a name from seatrial.yaml (default: the suite's agent:).",
    )
    group.addoption(
        "--seatrial-repeats",
        dest="seatrial_repeats",
        metavar="N",
        type=int,
        help="Run every case N times (default: seatrial.yaml run.repeats).",
    )
    group.addoption(
        "--seatrial-db",
        dest="seatrial_db",
        metavar="URL",
        help="Store URL (default: SEATRIAL_DB_URL, seatrial.yaml, .seatrial/seatrial.db).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--seatrial``: load the suites (a bad one is a usage error), register their
    markers, and collect only the suites when no test paths were given."""
    paths: list[str] = config.getoption("seatrial_suites")
    if not paths:
        return
    from seatrial.i18n import gettext as _

    if config.getoption("numprocesses", None):
        raise pytest.UsageError(
            _(
                "--seatrial runs a suite as one run and runs its attempts concurrently itself: "
                "drop -n (pytest-xdist), or pass -n 0"
            )
        )
    repeats: int | None = config.getoption("seatrial_repeats")
    if repeats is not None and repeats < 1:
        raise pytest.UsageError(
            _("--seatrial-repeats {repeats}: give 1 or more").format(repeats=repeats)
        )
    from seatrial.pytest_plugin._session import SeatrialSession

    state = SeatrialSession.start(
        paths,
        config.getoption("seatrial_agent"),
        repeats,
        config.getoption("seatrial_db"),
        config.invocation_params.dir,
        need_agent=not config.option.collectonly,
    )
    config.stash[SESSION_KEY] = state
    for line in marker_lines(case for suite in state.suites.values() for case in suite.cases):
        config.addinivalue_line("markers", line)
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # `pytest --seatrial S` means "run S", not "run S and every test under testpaths".
        config.args = [str(path) for path in state.suites]
        return
    here = config.invocation_params.dir
    config.args += [
        str(path)
        for path in state.suites
        if not any(_names(arg, path, here) for arg in config.args)
    ]


def _names(arg: str, suite: Path, invocation_dir: Path) -> bool:
    """Whether a test path argument already collects ``suite``: the file, one of its cases
    (``S::case-id``), or a folder above it."""
    target = Path(arg.split("::")[0])
    target = (target if target.is_absolute() else invocation_dir / target).resolve()
    return target == suite or target in suite.parents


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SuiteFile | None:
    """A suite file named by ``--seatrial`` (and no other file) becomes a :class:`SuiteFile`."""
    state = parent.config.stash.get(SESSION_KEY, None)
    if state is None or file_path.resolve() not in state.suites:
        return None
    return SuiteFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Run the selected cases, one run per suite, before pytest runs the items."""
    state = session.config.stash.get(SESSION_KEY, None)
    if state is None or session.config.option.collectonly:
        return
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return  # pytest stops here on collection errors; nothing is run or stored
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(text: str) -> None:
        if reporter is not None:
            reporter.write_line(text)

    state.run_selected(session.items, say)


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """A case that passed with a WARNING shows ``W`` (``WARNING`` with ``-v``)."""
    if report.when == "call" and (VERDICT_PROPERTY, "WARNING") in report.user_properties:
        return "passed", "W", ("WARNING", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Each suite's run: its id, counts, WARNING cases, unmet gates, where the reports are."""
    state = terminalreporter.config.stash.get(SESSION_KEY, None)
    if state is None or not state.runs:
        return
    terminalreporter.ensure_newline()
    terminalreporter.section("seatrial")
    for line in state.summary_lines():
        terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Every selected case passed but a run missed a gate: pytest exits 1, as
    ``seatrial run`` would."""
    state = session.config.stash.get(SESSION_KEY, None)
    if state is not None and session.exitstatus == pytest.ExitCode.OK and not state.gates_met:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def seatrial_case(request: pytest.FixtureRequest) -> CaseRunner:
    """Run a case written in Python: ``seatrial_case(input=..., assertions=[...], ...)``.

    The case id is the test's name, the suite its file; ``--seatrial-agent``,
    ``--seatrial-repeats`` and ``--seatrial-db`` are the defaults (see
    :func:`assert_case`). Raises :class:`CaseFailed` with the reasons unless it passes.
    """
    config = request.config
    return CaseRunner(
        case_id=request.node.name,
        suite=request.node.nodeid.split("::")[0],
        agent=config.getoption("seatrial_agent"),
        repeats=config.getoption("seatrial_repeats"),
        db=config.getoption("seatrial_db"),
        project_dir=config.invocation_params.dir,
    )
