"""Cases written in Python: :func:`assert_case` and the ``seatrial_case`` fixture's runner.

A case built here is checked like a case in a suite file (the same messages), run through
:func:`seatrial.execute_suite_async` as a one-case suite (stored, tagged ``pytest``; no report
files), and passes or raises :class:`CaseFailed` with the reasons and the trajectory.
Seatrial's libraries are imported when a case runs, never when pytest loads the plugin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seatrial.pytest_plugin._items import CaseFailed

if TYPE_CHECKING:
    from seatrial.agent import AgentAdapter
    from seatrial.case import Case
    from seatrial.record import CaseResult


def build_case(
    case_id: str,
    input: str | None,
    assertions: Sequence[Mapping[str, Any]],
    base_dir: Path,
    fields: Mapping[str, Any],
) -> Case:
    """A :class:`seatrial.case.Case` from keyword arguments, checked as the suite loader checks
    a case; a relative ``fixture`` is read from ``base_dir``.

    Raises:
        InputError: every problem, each with the field and the fix.
    """
    from pydantic import ValidationError

    from seatrial.case import AssertionSpec, Case, check_assertion, explain
    from seatrial.errors import InputError
    from seatrial.i18n import gettext as _

    data: dict[str, Any] = {"id": case_id, **fields, "assertions": [dict(a) for a in assertions]}
    if input is not None:
        data["input"] = input
    fixture = data.get("fixture")
    if isinstance(fixture, str | Path) and not Path(fixture).expanduser().is_absolute():
        data["fixture"] = str((base_dir / fixture).resolve())
    problems: list[str] = []
    case: Case | None = None
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            said = explain(error, Case)
            problems.append(_("{problem} (fix: {fix})").format(problem=said.message, fix=said.fix))
    for index, written in enumerate(data["assertions"]):
        params = {k: v for k, v in written.items() if k not in AssertionSpec.model_fields}
        for _field, message, fix in check_assertion(str(written.get("type")), params).problems:
            problems.append(
                _("assertions[{index}]: {problem} (fix: {fix})").format(
                    index=index, problem=message, fix=fix
                )
            )
    if problems or case is None:
        listed = "\n".join(f"  {p}" for p in problems)
        raise InputError(_("case `{case}`:").format(case=case_id) + f"\n{listed}")
    return case


async def assert_case_async(
    agent: str | AgentAdapter,
    input: str | None = None,
    *,
    assertions: Sequence[Mapping[str, Any]] = (),
    repeats: int = 1,
    case_id: str = "case",
    suite: str = "pytest",
    tags: Sequence[str] = ("pytest",),
    db: str | None = None,
    project_dir: str | Path | None = None,
    **case_fields: Any,
) -> CaseResult:
    """Async twin of :func:`assert_case` (same arguments), for async tests."""
    from seatrial._execute import execute_suite_async
    from seatrial.case import Suite
    from seatrial.config import load_config
    from seatrial.run import RunOptions

    base = Path(project_dir) if project_dir is not None else Path.cwd()
    case = build_case(case_id, input, assertions, base, case_fields)
    config = load_config(base)
    run = await execute_suite_async(
        Suite(name=suite, cases=[case]),
        agent,
        config=config,
        options=RunOptions(
            repeats=repeats,
            concurrency=config.run.concurrency,
            timeout_s=config.run.timeout_s,
            tags=list(tags),
        ),
        db=db,
        agent_dir=base,
        write_report_files=False,
        with_traces=True,
    )
    (result,) = run.report.cases
    if result.verdict in ("FAIL", "ERROR"):
        from seatrial.pytest_plugin._failure import failure_text

        raise CaseFailed(failure_text(result, run.run_id))
    return result


def assert_case(
    agent: str | AgentAdapter,
    input: str | None = None,
    *,
    assertions: Sequence[Mapping[str, Any]] = (),
    repeats: int = 1,
    case_id: str = "case",
    suite: str = "pytest",
    tags: Sequence[str] = ("pytest",),
    db: str | None = None,
    project_dir: str | Path | None = None,
    **case_fields: Any,
) -> CaseResult:
    """Run one case written in Python against ``agent``; raise unless it passes.

    The case is ``input`` (or ``turns=[...]``), ``assertions`` as written in a suite file, and
    any other case field as a keyword (``fixture``, ``allowed_tools``, ``limits``,
    ``permissions``, ``category``, ``priority`` ...). It runs ``repeats`` times as a stored
    run of the suite ``suite`` (tagged ``tags``), like ``seatrial run``.

    Args:
        agent: an agent spec (``python:module:function``, ``http://...``), a name from
            seatrial.yaml ``agents:``, or an adapter.
        input: the user's message; leave it out and pass ``turns`` for a conversation.
        assertions: what must hold, e.g. ``[{"type": "tool_called", "expected": "read_file"}]``.
        repeats: attempts; the verdict is the case's verdict over them (2 of 3 PASS passes).
        case_id: the case's id in the store and the reports.
        suite: the suite name the run is stored under (baselines compare runs of one suite).
        tags: labels stored with the run.
        db: store URL (default: ``SEATRIAL_DB_URL``, seatrial.yaml ``db:``, the project's
            ``.seatrial/seatrial.db``).
        project_dir: where seatrial.yaml is looked for and relative paths (``fixture``, a
            ``python:file.py`` agent) are read; default: the current folder.
        **case_fields: any other field of a case (docs/cases.md).

    Returns:
        The case's result (verdict PASS or WARNING, every attempt with its trace).

    Raises:
        CaseFailed: the verdict is FAIL or ERROR; the message holds the failed assertions with
            their messages and the failing trajectory.
        InputError: the case, the agent or seatrial.yaml is invalid (nothing was run).
    """
    return asyncio.run(
        assert_case_async(
            agent,
            input,
            assertions=assertions,
            repeats=repeats,
            case_id=case_id,
            suite=suite,
            tags=tags,
            db=db,
            project_dir=project_dir,
            **case_fields,
        )
    )


@dataclass(frozen=True)
class CaseRunner:
    """What the ``seatrial_case`` fixture gives a test: :func:`assert_case` with the test's
    name as the case id, its file as the suite, and ``--seatrial-agent``,
    ``--seatrial-repeats`` and ``--seatrial-db`` as defaults."""

    case_id: str
    """The test's name."""
    suite: str
    """The test's file, relative to pytest's rootdir."""
    agent: str | None = None
    """``--seatrial-agent``."""
    repeats: int | None = None
    """``--seatrial-repeats``."""
    db: str | None = None
    """``--seatrial-db``."""
    project_dir: Path | None = None
    """Where pytest was started."""

    def __call__(
        self,
        input: str | None = None,
        *,
        agent: str | AgentAdapter | None = None,
        repeats: int | None = None,
        **case_fields: Any,
    ) -> CaseResult:
        """Run the case (see :func:`assert_case` for the fields); raise unless it passes."""
        chosen = agent or self.agent
        if chosen is None:
            from seatrial.errors import AgentSpecError
            from seatrial.i18n import gettext as _

            raise AgentSpecError(
                _(
                    "{case}: no agent: pass agent=... to seatrial_case(...), or run pytest "
                    "with --seatrial-agent SPEC"
                ).format(case=self.case_id)
            )
        return assert_case(
            chosen,
            input,
            repeats=repeats or self.repeats or 1,
            case_id=self.case_id,
            suite=self.suite,
            db=self.db,
            project_dir=self.project_dir,
            **case_fields,
        )
