"""``recorded:PATH`` (or ``replay:PATH``): recorded sessions (JSONL) played back as if the
agent ran again.

One JSON object per line::

    {"case_id": "order_booking_001", "attempt": 1,
     "responses": ["...", "..."],              # or "response": "final text"
     "final_state": {...},                     # optional
     "otlp": {"resourceSpans": [...]}          # the trajectory as an OTLP/JSON export
     "tools_called": [...], "usage": {...}}    # ... or as the agent protocol reports it

Nothing is called: the verdicts are computed again on what was recorded, so assertions and
gates can change while the agent does not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seatrial.agent._protocol import AgentOutput, AttemptContext
from seatrial.errors import AgentError, AgentSpecError
from seatrial.i18n import gettext as _
from seatrial.trace import Span, Trace, new_id, trace_from_otlp, trace_from_tools_called
from seatrial.trace import attrs as A

PREFIX = "recorded:"
PREFIXES = (PREFIX, "replay:")
"""``replay:`` is the older spelling, still accepted: the word also names the gateway's
cassette mode, so this adapter is named after what it reads."""


class _Session:
    """One recorded session, checked when the file is read."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        case_id = data.get("case_id")
        if not isinstance(case_id, str) or not case_id:
            raise AgentSpecError(
                _("{where}: needs `case_id` (the id of the case it answers)").format(where=where)
            )
        attempt = data.get("attempt")
        if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int)):
            raise AgentSpecError(
                _("{where}: `attempt` must be a whole number, got {attempt!r}").format(
                    where=where, attempt=attempt
                )
            )
        if "responses" in data:
            responses = data["responses"]
            if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
                raise AgentSpecError(
                    _("{where}: `responses` must be a list of strings").format(where=where)
                )
        elif isinstance(data.get("response"), str):
            responses = [data["response"]]
        else:
            raise AgentSpecError(
                _("{where}: needs `response` (text) or `responses` (a list)").format(where=where)
            )
        final_state = data.get("final_state")
        if final_state is not None and not isinstance(final_state, dict):
            raise AgentSpecError(_("{where}: `final_state` must be an object").format(where=where))
        if "otlp" in data and "tools_called" in data:
            raise AgentSpecError(
                _("{where}: give the trajectory as `otlp` or `tools_called`, not both").format(
                    where=where
                )
            )
        self.case_id = case_id
        self.attempt: int | None = attempt
        self.responses: list[str] = list(responses)
        self.final_state: dict[str, Any] | None = final_state
        self.session_id = str(data.get("session_id") or "")
        self.where = where
        self._otlp: Trace | None = None
        self._tools_called = data.get("tools_called") or []
        self._usage = data.get("usage")
        try:
            if "otlp" in data:
                self._otlp = trace_from_otlp(data["otlp"])
            else:
                # Build once now so a malformed list is reported with its line.
                trace_from_tools_called(self._tools_called, usage=self._usage)
        except ValueError as exc:
            raise AgentSpecError(f"{where}: {exc}") from exc

    def trace(self, ctx: AttemptContext, agent_name: str) -> Trace:
        """The session's trajectory under this attempt's trace id and fresh span ids."""
        if self._otlp is None:
            return trace_from_tools_called(
                self._tools_called,
                usage=self._usage,
                agent_name=agent_name,
                messages=ctx.case.user_turns,
                conversation_id=self.session_id or ctx.session_id,
                trace_id=ctx.recorder.trace_id,
            )
        return _renumbered(_with_agent_root(self._otlp, agent_name), ctx.recorder.trace_id)


def _with_agent_root(trace: Trace, agent_name: str) -> Trace:
    """Give a recorded trace without an ``invoke_agent`` span one spanning all its spans.

    Only the recorded roots (spans without a parent) move under it. A span whose parent is
    missing keeps that parent: its root never arrived (a crash, a lost export), and adopting
    it would hide the cut for ``trace_complete``.
    """
    if trace.agent_span() is not None or not trace.spans:
        return trace
    root_id = new_id()
    start = min(s.start_time_unix_nano for s in trace.spans)
    end = max(s.end_time_unix_nano or s.start_time_unix_nano for s in trace.spans)
    root = Span(
        trace_id=trace.trace_id,
        span_id=root_id,
        name=f"invoke_agent {agent_name}",
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes={A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent_name},
        status="ok",
    )
    children = [
        s if s.parent_span_id is not None else s.model_copy(update={"parent_span_id": root_id})
        for s in trace.spans
    ]
    return Trace(trace_id=trace.trace_id, spans=[root, *children])


def _renumbered(trace: Trace, trace_id: str) -> Trace:
    """Fresh ids, so replaying one session for several attempts stores distinct spans.

    A parent missing from the trace gets a fresh id too, so the span still points at a
    parent that is not there instead of becoming a root.
    """
    ids = {s.span_id: new_id() for s in trace.spans}
    for span in trace.spans:
        if span.parent_span_id is not None and span.parent_span_id not in ids:
            ids[span.parent_span_id] = new_id()
    spans = [
        s.model_copy(
            deep=True,
            update={
                "trace_id": trace_id,
                "span_id": ids[s.span_id],
                "parent_span_id": ids[s.parent_span_id] if s.parent_span_id else None,
            },
        )
        for s in trace.spans
    ]
    return Trace(trace_id=trace_id, spans=spans)


class RecordedAgent:
    """Plays back recorded sessions from a JSONL file."""

    def __init__(self, path: Path, *, spec: str | None = None, name: str | None = None) -> None:
        self.path = Path(path)
        self.spec = spec or f"{PREFIX}{path}"
        self.name = name or self.path.stem
        self._sessions: list[_Session] | None = None

    def _load(self) -> list[_Session]:
        if self._sessions is not None:
            return self._sessions
        try:
            # Only "\n" ends a JSONL line: str.splitlines also cuts at U+2028, which JSON
            # strings may hold unescaped.
            lines = self.path.read_text(encoding="utf-8").split("\n")
        except OSError as exc:
            raise AgentSpecError(
                _("cannot read replay file {path}: {why}; fix the path").format(
                    path=self.path, why=exc.strerror or exc
                )
            ) from exc
        sessions = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{self.path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AgentSpecError(
                    _("{where}: not valid JSON ({why}, column {column})").format(
                        where=where, why=exc.msg, column=exc.colno
                    )
                ) from exc
            except RecursionError:
                raise AgentSpecError(
                    _(
                        "{where}: the line nests lists or objects too deeply to read; a session "
                        "needs only a few levels"
                    ).format(where=where)
                ) from None
            except ValueError:
                raise AgentSpecError(
                    _("{where}: a number has more digits than can be read; shorten it").format(
                        where=where
                    )
                ) from None
            if not isinstance(data, dict):
                raise AgentSpecError(
                    _("{where}: each line must be a JSON object (one session)").format(where=where)
                )
            sessions.append(_Session(data, where))
        if not sessions:
            raise AgentSpecError(
                _("{path}: no recorded sessions; one JSON object per line").format(path=self.path)
            )
        self._sessions = sessions
        return sessions

    def session_for(self, case_id: str, attempt: int) -> _Session:
        """The session recorded for (case, attempt), else the case's sessions in turn."""
        of_case = [s for s in self._load() if s.case_id == case_id]
        for session in of_case:
            if session.attempt == attempt:
                return session
        if not of_case:
            raise AgentError(
                f"no recorded session for case `{case_id}` in {self.path}; record one or run "
                "the case against a live agent"
            )
        return of_case[(attempt - 1) % len(of_case)]

    async def check(self) -> None:
        """Read and parse the file; a bad line is reported as file:line."""
        self._load()

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        """The recorded replies, final state and trajectory of this case."""
        session = self.session_for(ctx.case.id, ctx.attempt)
        return AgentOutput(
            responses=list(session.responses),
            final_state=session.final_state,
            trace=session.trace(ctx, self.name),
        )

    async def aclose(self) -> None:
        """Nothing to release: the file was read once."""
