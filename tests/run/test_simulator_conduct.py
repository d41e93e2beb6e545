"""A simulated user's own conduct: what counts as leaking, stopping early, and failing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest

from seatrial.case import Case, Suite, UserSimulator
from seatrial.errors import ConfigError
from seatrial.gateway import Gateway, GatewayConfig, ModelConfig
from seatrial.judge import JudgeInput, JudgeVerdict
from seatrial.run import SimulatedUser, with_simulator_models
from seatrial.run._simulator import mentions
from seatrial.testing import FakeReply, ScriptedModel
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

SPEC = UserSimulator(
    persona="A traveller",
    goal="Change the flight to Monday",
    hidden={"card": "6222 0212 3456 7890", "pin": "42"},
    max_turns=4,
    model="user",
)


@asynccontextmanager
async def simulator(
    script: str | FakeReply | Sequence[str | FakeReply], spec: UserSimulator = SPEC
) -> AsyncIterator[SimulatedUser]:
    model = ModelConfig(name="user", provider="scripted", model="user-v1")
    gateway = Gateway(
        GatewayConfig(models={"user": model}), providers={"user": ScriptedModel(script)}
    )
    recorder = TraceRecorder()
    try:
        with recorder.activate(), recorder.span("invoke_agent desk"):
            yield SimulatedUser(spec, gateway, recorder, run_id="r", case_id="c", attempt=1)
    finally:
        await gateway.aclose()


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("my card is 6222 0212  3456 7890", "6222 0212 3456 7890", True),
        ("MY PIN IS 42.", "42", True),
        ("I am 142 cm tall", "42", False),  # a number inside another is not the value
        ("room 42b", "42", False),
        ("我的身份证号是110101199003074512", "110101199003074512", True),
        ("密码是张三丰", "张三", True),  # Chinese has no word boundaries: a substring counts
        ("nothing here", "", False),
    ],
)
def test_a_hidden_value_is_found_ignoring_case_and_spacing_but_not_inside_a_number(
    text: str, value: str, found: bool
) -> None:
    assert mentions(text, value) is found


async def test_a_hidden_fact_the_agent_said_first_is_not_the_simulators_leak() -> None:
    async with simulator(["Hi, I need to change a flight.", "Yes, PIN 42 is right."]) as user:
        assert await user.next(None) == "Hi, I need to change a flight."
        assert await user.next("Is your PIN 42?") == "Yes, PIN 42 is right."
        assert user.leaked() is None
        assert await user.misconduct() is None


async def test_a_hidden_fact_said_before_the_agent_asked_is_a_leak_that_ends_the_talk() -> None:
    async with simulator(["Hi, my card is 6222 0212 3456 7890.", "Monday."]) as user:
        # The leaking message is not sent, and nothing more is asked of the model.
        assert await user.next(None) is None
        assert await user.next("Which day?") is None
        assert user.sent == [] and (user.stop_reason, user.leaked()) == ("leak", ("card", 1))
        assert user.stop_message == "Hi, my card is 6222 0212 3456 7890."
        assert await user.misconduct() == (
            "leaked the hidden fact `card` in message 1 (not sent: the conversation stopped there)"
        )


async def test_stopping_before_the_agent_spoke_is_stopping_early() -> None:
    async with simulator("###STOP###") as user:
        assert await user.next(None) is None
        assert user.stop_reason == "stop_token"
        assert await user.misconduct() == (
            "stopped early: the simulated user ended the conversation before the agent spoke"
        )


async def test_stopping_after_the_agent_spoke_is_proper() -> None:
    async with simulator(["Change my flight to Monday.", "Thanks, bye ###STOP###"]) as user:
        await user.next(None)
        assert await user.next("Done: moved to Monday.") is None
        assert (user.stop_reason, user.stop_message) == ("stop_token", "Thanks, bye")
        assert await user.misconduct() is None


async def test_an_empty_message_stops_the_conversation_as_a_simulator_failure() -> None:
    async with simulator(["Change my flight.", "   "]) as user:
        await user.next(None)
        assert await user.next("To which day?") is None
        assert await user.misconduct() == (
            "stopped early: the simulated user wrote nothing for message 2"
        )


async def test_a_failed_simulator_call_is_the_simulators_failure() -> None:
    async with simulator(FakeReply(status=500)) as user:
        assert await user.next(None) is None
        problem = await user.misconduct()
    assert problem is not None and problem.startswith(
        "the simulated user stopped: its model call failed:"
    )


async def test_without_a_gateway_the_simulator_says_how_to_get_one() -> None:
    user = SimulatedUser(SPEC, None, TraceRecorder(), run_id="r", case_id="c", attempt=1)
    assert await user.next(None) is None
    problem = await user.misconduct()
    assert problem is not None and "seatrial run" in problem


async def test_max_turns_counts_the_written_opening_which_is_not_marked_simulated() -> None:
    spec = SPEC.model_copy(update={"opening": "Hello?", "max_turns": 2})
    async with simulator("Still there?", spec) as user:
        assert await user.next(None) == "Hello?"
        assert await user.next("Yes?") == "Still there?"
        assert await user.next("Yes!") is None
        assert user.stop_reason == "max_turns"
        assert await user.misconduct() is None  # the case's limit, not the simulator's fault
        trace = user._recorder.trace()
    events = [(event.name, dict(event.attributes)) for _, event in trace.events()]
    assert events == [
        (A.SIMULATED_TURN, {A.SIMULATED_TURN_INDEX: 1, A.SIMULATED_TURN_MESSAGE: "Still there?"}),
        (A.SIMULATOR_STOP, {A.SIMULATOR_STOP_REASON: "max_turns", A.SIMULATOR_STOP_MESSAGE: ""}),
    ]
    [call] = [s for s in trace.spans if s.operation == A.OP_CHAT]
    assert call.attributes[A.GATEWAY_PURPOSE] == "simulator"
    assert trace.model_calls() == []


class FakeJudge:
    """A judge handle answering one verdict; ``advisory`` says whether its FAIL counts."""

    def __init__(self, verdict: str, advisory: str | None = None) -> None:
        self.verdict, self._advisory = verdict, advisory
        self.items: list[JudgeInput] = []

    def advisory(self) -> str | None:
        return self._advisory

    async def judge(self, item: JudgeInput) -> JudgeVerdict:
        self.items.append(item)
        return JudgeVerdict(
            verdict=self.verdict,  # type: ignore[arg-type]
            confidence=0.9,
            reason="the user asked about hotels instead",
            prompt_version="v1",
            prompt_hash="h",
            model="judge",
        )


@pytest.mark.parametrize(
    ("verdict", "advisory", "expected"),
    [
        ("FAIL", None, "went off its goal (judge): the user asked about hotels instead"),
        ("FAIL", "not calibrated", None),  # an advisory judge cannot mark the simulator
        ("PASS", None, None),
    ],
)
async def test_a_trusted_judge_marks_a_simulator_that_went_off_its_goal(
    verdict: str, advisory: str | None, expected: str | None
) -> None:
    judge = FakeJudge(verdict, advisory)
    async with simulator(["Any hotels nearby?", "Thanks ###STOP###"]) as user:
        await user.next(None)
        await user.next("I can change flights.")
        assert await user.misconduct(judge) == expected  # type: ignore[arg-type]
    if advisory is None:
        [item] = judge.items
        assert item.turns == ["user 1: Any hotels nearby?", "assistant: I can change flights."]
        assert "Change the flight to Monday" in item.criteria and "USER" in item.criteria


async def test_the_rules_come_before_the_judge() -> None:
    judge = FakeJudge("PASS")
    async with simulator("My card is 6222 0212 3456 7890 ###STOP###") as user:
        await user.next(None)
        assert await user.misconduct(judge) == (  # type: ignore[arg-type]
            "stopped early: the simulated user ended the conversation before the agent spoke"
        )
    assert judge.items == []


def _suite(*models: str | None) -> Suite:
    cases = [
        Case(id=f"c{i}", user_simulator=SPEC.model_copy(update={"model": model}))
        for i, model in enumerate(models)
    ]
    return Suite(name="s", path="suite.yaml", cases=[*cases, Case(id="written", input="hi")])


def test_each_simulated_user_gets_its_own_model_or_the_projects() -> None:
    named = with_simulator_models(_suite("other", None), "user", {"user", "other"})
    assert [c.user_simulator.model if c.user_simulator else None for c in named.cases] == [
        "other",
        "user",
        None,
    ]


def test_a_simulated_user_without_a_known_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"suite.yaml: case 'c0' has a user_simulator but no"):
        with_simulator_models(_suite(None), None, {"user"})
    with pytest.raises(ConfigError, match=r"case 'c0': the simulator's model 'nowhere' is not"):
        with_simulator_models(_suite("nowhere"), "user", {"user"})
