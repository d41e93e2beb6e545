"""One attempt: prepare the workspace, drive the agent, record the trace, evaluate."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seatrial.agent import (
    AgentAdapter,
    AgentOutput,
    AttemptContext,
    Sandbox,
    prepare_workspace,
)
from seatrial.assertion import AssertionContext, evaluate, evaluate_async
from seatrial.case import Case
from seatrial.errors import AgentError, ModelFailure
from seatrial.i18n import Message, english, phrased
from seatrial.record import SIMULATOR_FAILURE, AttemptRecord, Metrics
from seatrial.run._gateway_hook import attempt_gateway
from seatrial.run._plan import CasePlan
from seatrial.run._simulator import simulated_user
from seatrial.run._snapshot import attempt_snapshot
from seatrial.trace import TraceRecorder, trusted_model
from seatrial.trace import attrs as A

_IDS = random.Random()
"""Ids (trace, span, session, attempt) come from a generator of their own, seeded by the
operating system (again in every forked worker): an in-process agent or a library that seeds
the ``random`` module would otherwise make them repeat."""
os.register_at_fork(after_in_child=_IDS.seed)

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway
    from seatrial.run._judge_hook import JudgeRuntime


def _failed_with(failure_type: str, error: str) -> Message:
    """An attempt's reason when the agent or the simulator broke: the type, then the error
    as it was raised (its own words, never translated)."""
    return phrased("{failure_type}: {error}", failure_type=failure_type, error=error)


def user_id_for(case: Case) -> str:
    """The user id to send: the case's, with a random suffix unless ``fresh_user`` is false."""
    base = str(case.context.get("user_id") or "seatrial_user")
    if not case.fresh_user:
        return base
    return f"{base}_{_IDS.getrandbits(32):08x}"


@contextlib.contextmanager
def _maybe_workspace(case: Case) -> Iterator[Path | None]:
    with prepare_workspace(case) as workspace:
        yield workspace.path


async def run_attempt(
    adapter: AgentAdapter,
    case: Case | CasePlan,
    attempt: int,
    run_id: str,
    timeout_s: float | None,
    *,
    judge: JudgeRuntime | None = None,
    gateway: RunGateway | None = None,
) -> AttemptRecord:
    """Run one attempt and return its evaluated record. Agent failures become ERROR.

    ``judge`` answers the LLM-judged assertions (without one they are reported as not
    evaluated); ``gateway`` gives the agent its model calls (and, when a proxy serves the run,
    its own base URL there). The runner
    passes the run's, and the case as it planned it once for the run (a :class:`CasePlan`);
    a bare :class:`Case` is planned here, for this attempt alone.
    """
    planned = case if isinstance(case, CasePlan) else CasePlan.of(case)
    case = planned.case
    recorder = TraceRecorder()
    session_id = f"sess_{_IDS.getrandbits(64):016x}"
    user_id = user_id_for(case)
    started = time.time()
    output: AgentOutput | None = None
    error: AgentError | None = None
    # Most attempts need neither a workspace nor a gateway URL: a nullcontext costs less to
    # enter than the generator-based managers that would yield None.
    with (
        _maybe_workspace(case) if planned.needs_workspace else nullcontext() as workspace,
        (
            attempt_gateway(gateway, recorder, run_id, case.id, attempt)
            if gateway is not None
            else nullcontext()
        ) as calls,
    ):
        sandbox = Sandbox(workspace, case, recorder) if workspace is not None else None
        ctx = AttemptContext(
            run_id=run_id,
            case=case,
            attempt=attempt,
            session_id=session_id,
            user_id=user_id,
            recorder=recorder,
            workspace=workspace,
            sandbox=sandbox,
            gateway_url=calls.url if calls is not None else None,
            model=calls.model if calls is not None else None,
        )
        simulator = simulated_user(
            case.user_simulator,
            gateway.gateway if gateway is not None else None,
            recorder,
            run_id=run_id,
            case_id=case.id,
            attempt=attempt,
        )
        ctx.user = simulator
        root_attributes = {
            A.OPERATION: A.OP_INVOKE_AGENT,
            A.AGENT_NAME: adapter.name,
            A.CONVERSATION_ID: session_id,
        }
        with recorder.activate():
            try:
                with recorder.span(f"invoke_agent {adapter.name}", root_attributes):
                    async with asyncio.timeout(timeout_s):
                        output = await adapter.run(ctx)
            except TimeoutError:
                error = AgentError(f"the agent did not finish within {timeout_s:g} s", "timeout")
            except AgentError as exc:
                error = exc
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # an adapter bug is still the attempt's data, not a crash
                error = AgentError(f"{type(exc).__name__}: {exc}")
        if gateway is not None:
            # Before the trace is read: calls a timed-out agent left behind end now, their
            # spans closed, their late answers kept from the cassette.
            await gateway.end_calls(recorder)
        trace = (
            output.trace if output is not None and output.trace is not None else recorder.trace()
        )
        responses = list(output.responses) if output is not None else []
        response = responses[-1] if responses else ""
        final_state = output.final_state if output is not None else None
        # One constructor call per attempt: pydantic attribute assignment is not free, and this
        # runs for every attempt of every run.
        common: dict[str, Any] = {
            "run_id": run_id,
            "case_id": case.id,
            "attempt": attempt,
            "metrics": Metrics.of(trace),
            "response": response,
            "responses": responses,
            "final_state": final_state,
            "user_id": user_id,
            "session_id": session_id,
            "started_at": started,
            "trace": trace,
            "snapshot": attempt_snapshot(
                run_id,
                case,
                attempt,
                trace,
                ctx.agent_metadata,
                planned.case_hash,
                planned.fixture_hash,
            ),
        }
        if error is not None:
            said = _failed_with(error.failure_type, str(error))
            return AttemptRecord(
                **common,
                # The model's broken tool call is what the run measures; ERROR is a crash.
                verdict="FAIL" if isinstance(error, ModelFailure) else "ERROR",
                failure_type=error.failure_type,
                error=str(error),
                reason=english(said),
                message=said,
                finished_at=time.time(),
            )
        # The judge's calls come after the agent's span ended: they are recorded apart and
        # added to the stored trace under its root (never seen by the L1 checks of this run).
        judge_spans = judge.spans_for(trace) if judge is not None else None
        if simulator is not None:
            # Checked before the agent is judged: a conversation the simulator spoiled says
            # nothing about the agent (docs/agents.md, "Simulated users").
            handle = judge.for_attempt(run_id, case.id, attempt, trace) if judge else None
            with judge_spans.recorder.activate() if judge_spans is not None else nullcontext():
                misconduct = await simulator.misconduct(handle)
            if misconduct is not None:
                if judge_spans is not None:
                    common["trace"] = judge_spans.into(trace)
                said = _failed_with(SIMULATOR_FAILURE, misconduct)
                return AttemptRecord(
                    **common,
                    verdict="ERROR",
                    failure_type=SIMULATOR_FAILURE,
                    error=misconduct,
                    reason=english(said),
                    message=said,
                    finished_at=time.time(),
                )
            case = simulator.played(case)
        assertion_context = AssertionContext(
            case=case,
            trace=trace,
            response=response,
            responses=responses,
            final_state=final_state,
            workspace=workspace,
        )
        if judge is None:
            evaluation = evaluate(case, assertion_context, planned.assertions)
        else:
            assertion_context.judge = judge.for_attempt(run_id, case.id, attempt, trace)
            assert judge_spans is not None
            with judge_spans.recorder.activate():
                evaluation = await evaluate_async(case, assertion_context, planned.assertions)
            common["trace"] = judge_spans.into(trace)
            judge.queue(evaluation, run_id, case.id, attempt)
    common.update(
        verdict=evaluation.verdict,
        failure_type=evaluation.failure_type,
        reason=evaluation.reason,
        message=evaluation.message,
        score=evaluation.score,
        assertions=evaluation.results,
        finished_at=time.time(),
    )
    if final_state is None and all(type(r) is str for r in responses):
        # Every other value was made above with its field's type: skip validating it again.
        return trusted_model(AttemptRecord, common)
    return AttemptRecord(**common)
