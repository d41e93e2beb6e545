"""One ``pytest --seatrial`` session: the suites it loaded, and one stored run per suite.

The suites are loaded when pytest starts, so a bad suite is a usage error before anything is
collected. After collection and ``-k``/``-m`` deselection, the selected cases of each suite
run as one run through :func:`seatrial.execute_suite_async`, the front door ``seatrial run``
uses (same store, gates and report files; tagged ``pytest``); each item then reads its case's
verdict. Seatrial's libraries are imported here only when ``--seatrial`` is given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext, pgettext, render
from seatrial.pytest_plugin._items import CaseFailed, CaseItem

if TYPE_CHECKING:
    from seatrial._execute import NoticeLevel, SuiteRun
    from seatrial.case import Suite
    from seatrial.config import Config
    from seatrial.record import CaseResult

PYTEST_TAG = "pytest"
"""The tag every run started from pytest carries."""


class SeatrialSession:
    """The suites of one pytest session and, once run, their stored runs."""

    def __init__(
        self,
        suites: dict[Path, Suite],
        agent: str | None,
        repeats: int | None,
        db: str | None,
        project: Config,
    ) -> None:
        self.suites = suites
        """Each suite by its file's resolved path."""
        self.agent = agent
        self.repeats = repeats
        self.db = db
        self.project = project
        self.runs: dict[Path, SuiteRun] = {}
        """Each suite's run, once it ran."""

    @classmethod
    def start(
        cls,
        paths: Sequence[str],
        agent: str | None,
        repeats: int | None,
        db: str | None,
        invocation_dir: Path,
        need_agent: bool = True,
    ) -> SeatrialSession:
        """Load the suites and the project; a bad suite, or a missing agent when one is
        needed (not for ``--collect-only``), is a usage error naming the file, the line and
        the fix."""
        from seatrial.case import load_suite
        from seatrial.config import load_config
        from seatrial.errors import InputError

        suites: dict[Path, Suite] = {}
        try:
            project = load_config(invocation_dir)
            for shown in paths:
                path = Path(shown)
                path = path if path.is_absolute() else invocation_dir / path
                suite = load_suite(path)
                if need_agent and agent is None and suite.agent is None:
                    raise pytest.UsageError(
                        _(
                            "--seatrial {suite}: the suite names no agent; pass --seatrial-agent "
                            "SPEC (python:module:function, http://host:port/path, or a name "
                            "from seatrial.yaml `agents:`), or add `agent:` to the suite"
                        ).format(suite=shown)
                    )
                suites[path.resolve()] = suite
        except InputError as exc:
            raise pytest.UsageError(f"--seatrial: {exc}") from None
        return cls(suites, agent, repeats, db, project)

    def suite_at(self, path: Path) -> Suite:
        """The suite loaded from ``path``."""
        return self.suites[path.resolve()]

    def run_selected(self, items: Sequence[pytest.Item], say: Callable[[str], None]) -> None:
        """Run the cases of the selected items, one run per suite, in the order selected.

        Bad input (agent, seatrial.yaml, gates) is a usage error; a Seatrial failure (the
        store, say) ends the session with exit code 3.
        """
        from seatrial.errors import InputError, SeatrialError

        chosen: dict[Path, list[str]] = {}
        for item in items:
            if isinstance(item, CaseItem):
                chosen.setdefault(item.path.resolve(), []).append(item.case.id)
        for path, ids in chosen.items():
            suite = self.suites[path]
            wanted = set(ids)
            selected = suite.model_copy(
                update={"cases": [case for case in suite.cases if case.id in wanted]}
            )
            say(
                ngettext(
                    "seatrial: running {n} case of {suite} ({file})",
                    "seatrial: running {n} cases of {suite} ({file})",
                    len(ids),
                ).format(n=len(ids), suite=suite.name, file=path.name)
            )
            try:
                self.runs[path] = asyncio.run(self._run(selected, say))
            except InputError as exc:
                raise pytest.UsageError(f"--seatrial {path.name}: {exc}") from None
            except SeatrialError as exc:
                pytest.exit(
                    _("seatrial failed running {file}: {error}").format(file=path.name, error=exc),
                    returncode=3,
                )

    async def _run(self, suite: Suite, say: Callable[[str], None]) -> SuiteRun:
        from seatrial._execute import default_options, execute_suite_async

        options = default_options(self.project, repeats=self.repeats, tags=[PYTEST_TAG])

        def notice(level: NoticeLevel, text: str) -> None:
            say(f"seatrial: {text}")

        return await execute_suite_async(
            suite,
            self.agent,
            config=self.project,
            options=options,
            db=self.db,
            with_traces=True,
            on_notice=notice,
        )

    def result_of(self, path: Path, case_id: str) -> tuple[CaseResult, str]:
        """The case's verdict over its repeats and the run's id."""
        run = self.runs.get(path.resolve())
        if run is None:
            raise CaseFailed(f"{case_id}: the suite did not run, so the case has no verdict")
        for case in run.report.cases:
            if case.case_id == case_id:
                return case, run.run_id
        raise CaseFailed(
            f"{case_id}: no attempt was stored (the run was interrupted); finish it with "
            f"`seatrial run --resume {run.run_id}`"
        )

    def summary_lines(self) -> list[str]:
        """Per suite run: the counts, its WARNING cases, unmet gates and the gate verdict."""

        lines: list[str] = []
        for run in self.runs.values():
            info, s = run.report.info, run.report.summary
            counts = pgettext("list separator", ", ").join(
                [
                    ngettext("{n} case", "{n} cases", s.cases).format(n=s.cases),
                    ngettext("{n} attempt", "{n} attempts", s.attempts).format(n=s.attempts),
                ]
            )
            verdicts = _("{passed} passed, {failed} failed, {warnings}, {errors}").format(
                passed=s.passed,
                failed=s.failed,
                warnings=ngettext("{n} warning", "{n} warnings", s.warnings).format(n=s.warnings),
                errors=ngettext("{n} error", "{n} errors", s.errors).format(n=s.errors),
            )
            lines.append(
                _("{suite} against {agent}: run {run_id}, {counts}: {verdicts}").format(
                    suite=info.suite,
                    agent=info.agent,
                    run_id=run.run_id,
                    counts=counts,
                    verdicts=verdicts,
                )
            )
            lines += [
                _("  WARNING (passes) {case}: {reason}").format(
                    case=case.case_id, reason=_first_reason(case)
                )
                for case in run.report.cases
                if case.verdict == "WARNING"
            ]
            gate = run.report.gate
            lines += [f"  {gate.rule}"] if gate.rule else []
            lines += [f"  {o.line()}" for o in gate.outcomes if o.verdict != "met"]
            if gate.passed:
                lines.append(_("  gate met"))
            else:
                unmet = sum(o.verdict == "unmet" for o in gate.outcomes)
                lines.append(
                    ngettext(
                        "  gate not met ({n} unmet): pytest exits 1",
                        "  gate not met ({n} unmet): pytest exits 1",
                        unmet,
                    ).format(n=unmet)
                )
            if run.report_files:
                lines.append(_("  reports: {folder}").format(folder=run.report_files[0].parent))
        return lines

    @property
    def gates_met(self) -> bool:
        """Every suite that ran met its gates."""
        return all(run.report.gate.passed for run in self.runs.values())


def _first_reason(case: CaseResult) -> str:
    shown = next((a for a in case.attempts if a.verdict != "PASS"), case.attempts[0])
    return render(shown.message, shown.reason)
