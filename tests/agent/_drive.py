"""Drive an adapter through one attempt the way the runner does."""

from __future__ import annotations

import random
from pathlib import Path

from seatrial.agent import AgentAdapter, AgentOutput, AttemptContext, Sandbox
from seatrial.case import Case
from seatrial.trace import Trace, TraceRecorder
from seatrial.trace import attrs as A


def make_context(
    case: Case,
    *,
    attempt: int = 1,
    user_id: str | None = None,
    workspace: Path | None = None,
    run_id: str = "run_test",
) -> AttemptContext:
    """An AttemptContext with a fresh recorder (and a sandbox when given a workspace)."""
    recorder = TraceRecorder()
    return AttemptContext(
        run_id=run_id,
        case=case,
        attempt=attempt,
        session_id=f"sess_{random.getrandbits(64):016x}",
        user_id=user_id or f"user_{random.getrandbits(32):08x}",
        recorder=recorder,
        workspace=workspace,
        sandbox=Sandbox(workspace, case, recorder) if workspace is not None else None,
    )


async def drive(adapter: AgentAdapter, ctx: AttemptContext) -> tuple[AgentOutput, Trace]:
    """Open the root span, activate the recorder and run the adapter, like the runner."""
    root = {A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: adapter.name}
    with ctx.recorder.activate(), ctx.recorder.span(f"invoke_agent {adapter.name}", root):
        output = await adapter.run(ctx)
    return output, output.trace or ctx.recorder.trace()
