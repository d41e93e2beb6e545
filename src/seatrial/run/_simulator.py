"""Simulated users: a model plays the user of a case with ``user_simulator``.

The runner sets a :class:`SimulatedUser` as the attempt's source of user messages
(``AttemptContext.user``); the conversation loop (``agent/_turns.py``) asks it for each next
message, handing it the agent's reply, whichever adapter answers. Its model is called through
the run's gateway with purpose ``simulator``: the call is a ``chat`` span in the attempt's
trace marked with that purpose (left out of the agent's model calls, tokens and cost) and a
line of its own in the run's spend.

A simulator that breaks its instructions at a turn (leaks a hidden fact, writes nothing, its
call fails) ends the conversation there: its message is not sent, so no agent turn is spent on
a conversation whose verdict can only be the simulator's. After the attempt,
:meth:`SimulatedUser.misconduct` says how it broke them (those, stopping before the agent
spoke, or, with a trusted judge, going off its goal): the runner then stores the attempt as
ERROR with failure type ``simulator``, not as a failure of the agent.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

from seatrial.case import Case, Suite, Turn, UserSimulator
from seatrial.errors import ConfigError, GatewayError
from seatrial.i18n import gettext as _
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

if TYPE_CHECKING:
    from seatrial.gateway import Gateway
    from seatrial.judge import JudgeHandle

STOP_TOKEN = "###STOP###"
"""What the simulator writes to end the conversation; taken out of its message, which is then
not sent (the agent would only answer a goodbye)."""

_OPENING_PROMPT = "(The conversation starts now. Write your first message to the agent.)"

_PROMPT = """You are playing a user who talks to an assistant (an AI agent), to test it. \
Stay in this role for the whole conversation: you are the user, never the assistant.

Who you are: {persona}
What you want: {goal}

Facts you know and may give when the assistant asks for them:
{facts}

Facts you know but must never say, spell out or hint at, even when asked (say you cannot \
share them):
{hidden}

Write only your next message to the assistant: short and natural, one message at a time, in \
the language of your persona and goal. Do not invent facts beyond those above; when asked \
something you do not know, say so.
End the conversation when: {stop_when}. To end it, write {stop} (alone, or after a short \
closing line)."""

_ALNUM = re.compile(r"[0-9a-z]")
_SPACE = re.compile(r"\s+")


def simulator_prompt(spec: UserSimulator) -> str:
    """The simulator's system prompt: persona, goal, facts it may give, facts it must keep,
    when to stop, and the stop token."""

    def listed(facts: dict[str, str]) -> str:
        return "\n".join(f"- {name}: {value}" for name, value in facts.items()) or "(none)"

    return _PROMPT.format(
        persona=spec.persona,
        goal=spec.goal,
        facts=listed(spec.facts),
        hidden=listed(spec.hidden),
        stop_when=spec.stop_when,
        stop=STOP_TOKEN,
    )


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip()


def mentions(text: str, value: str) -> bool:
    """Whether ``value`` appears in ``text`` (case and spacing ignored). A value that begins
    or ends with a Latin letter or digit must not run on into one: ``3`` is not in ``13``."""
    needle = _normal(value)
    if not needle:
        return False
    head = r"(?<![0-9a-z])" if _ALNUM.match(needle[0]) else ""
    tail = r"(?![0-9a-z])" if _ALNUM.match(needle[-1]) else ""
    return re.search(head + re.escape(needle) + tail, _normal(text)) is not None


class SimulatedUser:
    """One attempt's simulated user (a :class:`seatrial.agent.UserTurns`).

    It writes each user message with its model (the case's ``opening``, when written, comes
    first as is), ends the conversation when its model writes :data:`STOP_TOKEN` or after
    ``max_turns`` messages, and keeps what it said for :meth:`misconduct`. A message that
    gives a hidden fact away is not sent: the conversation ends at that turn.
    """

    def __init__(
        self,
        spec: UserSimulator,
        gateway: Gateway | None,
        recorder: TraceRecorder,
        *,
        run_id: str,
        case_id: str,
        attempt: int,
    ) -> None:
        self.spec = spec
        self._gateway = gateway
        self._recorder = recorder
        self._run_id, self._case_id, self._attempt = run_id, case_id, attempt
        self._history: list[tuple[Literal["user", "assistant"], str]] = []
        """The simulator's side of the conversation: (role, text), the agent as ``user``."""
        self.sent: list[tuple[str, bool, int]] = []
        """Each message sent to the agent: its text, whether the model wrote it, and how many
        agent replies came before it."""
        self.replies: list[str] = []
        """The agent's replies, in order."""
        self.stop_reason: str | None = None
        """``stop_token``, ``max_turns``, ``empty``, ``error`` or ``leak``; None while it
        goes on."""
        self.stop_message = ""
        """Its closing words (stop token taken out), what failed, or the message withheld
        because it leaked a hidden fact."""
        self._leak: tuple[str, int] | None = None
        """The hidden fact the model's message gave away, and that message's number."""

    async def next(self, reply: str | None) -> str | None:
        """The next user message after the agent's ``reply``; None ends the conversation."""
        if reply is not None:
            self.replies.append(reply)
            self._history.append(("user", reply))
        if self.stop_reason is not None:
            return None
        if len(self.sent) >= self.spec.max_turns:
            self._stop("max_turns", "")
            return None
        if not self.sent and self.spec.opening is not None:
            self._history.append(("assistant", self.spec.opening))
            self.sent.append((self.spec.opening, False, len(self.replies)))
            return self.spec.opening
        text = await self._write()
        if text is None:
            return None
        if STOP_TOKEN in text:
            self._stop("stop_token", text.replace(STOP_TOKEN, " ").strip())
            return None
        leaked = self._hidden_in(text)
        if leaked is not None:
            # Misconduct ends the conversation here: every later agent turn would be spent
            # (and a write tool called) on an attempt that can only be the simulator's ERROR.
            self._leak = (leaked, len(self.sent) + 1)
            self._stop("leak", text)
            return None
        self._recorder.event(
            A.SIMULATED_TURN,
            {A.SIMULATED_TURN_INDEX: len(self.sent), A.SIMULATED_TURN_MESSAGE: text},
        )
        self._history.append(("assistant", text))
        self.sent.append((text, True, len(self.replies)))
        return text

    async def _write(self) -> str | None:
        """The model's next message, or None (the conversation stops) when it failed."""
        if self._gateway is None:
            self._stop(
                "error",
                "no gateway to call the simulator's model: run the suite with `seatrial run` "
                "(it starts the gateway for simulated users) or pass gateway=True",
            )
            return None
        from seatrial.gateway import ChatRequest, Message

        # The start cue comes first even after a written opening: some providers want the
        # first message after the system prompt to be the user's.
        messages = [
            Message(role="system", content=simulator_prompt(self.spec)),
            Message(role="user", content=_OPENING_PROMPT),
        ]
        messages += [Message(role=role, content=text) for role, text in self._history]
        request = ChatRequest(
            model=self.spec.model,
            messages=messages,
            purpose="simulator",
            run_id=self._run_id,
            case_id=self._case_id,
            attempt=self._attempt,
        )
        try:
            # Activated here, not inherited: the span must land in this attempt's trace
            # whichever task the adapter asks from.
            with self._recorder.activate():
                response = await self._gateway.chat(request)
        except GatewayError as exc:
            self._stop("error", f"its model call failed: {exc}")
            return None
        text = response.message.text.strip()
        if not text:
            self._stop("empty", "")
            return None
        return text

    def _stop(self, reason: str, message: str) -> None:
        self.stop_reason, self.stop_message = reason, message
        self._recorder.event(
            A.SIMULATOR_STOP, {A.SIMULATOR_STOP_REASON: reason, A.SIMULATOR_STOP_MESSAGE: message}
        )

    def played(self, case: Case) -> Case:
        """``case`` as it was played: its turns are the messages sent to the agent, so that
        assertions reading the user's words (``confirm_before``, ids the user supplied, the
        judge's view of the conversation) read what the simulated user said."""
        turns = [Turn(content=text) for text, _, _ in self.sent]
        # Not validated again: a conversation that ended before any message has no turns.
        return case.model_copy(update={"user_simulator": None, "input": None, "turns": turns})

    def _hidden_in(self, text: str) -> str | None:
        """The first hidden fact ``text`` gives away; a value the agent had already said is
        not the simulator's leak."""
        for name, value in self.spec.hidden.items():
            if mentions(text, value) and not any(mentions(r, value) for r in self.replies):
                return name
        return None

    def leaked(self) -> tuple[str, int] | None:
        """The hidden fact a message the model wrote gave away, with the 1-based message
        (which was not sent: the conversation ended there); None when none was."""
        return self._leak

    async def misconduct(self, judge: JudgeHandle | None = None) -> str | None:
        """How the simulator broke its instructions, or None. Rules first; then, with a
        ``judge`` whose FAIL counts (calibrated), whether it kept to its persona and goal."""
        if self.stop_reason == "error":
            return f"the simulated user stopped: {self.stop_message}"
        if self.stop_reason == "empty":
            number = len(self.sent) + 1
            return f"stopped early: the simulated user wrote nothing for message {number}"
        if self.stop_reason == "stop_token" and not self.replies:
            return "stopped early: the simulated user ended the conversation before the agent spoke"
        leak = self.leaked()
        if leak is not None:
            name, number = leak
            return (
                f"leaked the hidden fact `{name}` in message {number} (not sent: the "
                "conversation stopped there)"
            )
        if judge is not None and judge.advisory() is None and self.sent:
            return await self._off_goal(judge)
        return None

    async def _off_goal(self, judge: JudgeHandle) -> str | None:
        from seatrial.judge import JudgeInput

        lines, shown = [], 0
        for number, (text, _sent, seen) in enumerate(self.sent, 1):
            lines += [f"assistant: {reply}" for reply in self.replies[shown:seen]]
            lines.append(f"user {number}: {text}")
            shown = seen
        lines += [f"assistant: {reply}" for reply in self.replies[shown:]]
        item = JudgeInput(
            turns=lines,
            reply="\n".join(text for text, simulated, _ in self.sent if simulated) or "(none)",
            criteria=(
                "Judge the USER's messages, not the assistant's. The user is a simulated "
                f"person: {self.spec.persona}. Their goal: {self.spec.goal}. They end the "
                f"conversation when: {self.spec.stop_when}. PASS when every user message "
                "pursues that goal in that persona; FAIL when the user went off the goal, "
                "asked for something else, or acted as the assistant."
            ),
        )
        try:
            verdict = await judge.judge(item)
        except GatewayError:
            return None  # no judge answer: the rules above stand
        if verdict.verdict == "FAIL":
            return f"went off its goal (judge): {verdict.reason}"
        return None


def simulated_user(
    spec: UserSimulator | None,
    gateway: Gateway | None,
    recorder: TraceRecorder,
    *,
    run_id: str,
    case_id: str,
    attempt: int,
) -> SimulatedUser | None:
    """The attempt's simulated user, or None for a case with written turns."""
    if spec is None:
        return None
    return SimulatedUser(spec, gateway, recorder, run_id=run_id, case_id=case_id, attempt=attempt)


def with_simulator_models(suite: Suite, default: str | None, models: Collection[str]) -> Suite:
    """``suite`` with every simulated user's model named (``default`` where the case names
    none), so the cases stored with the run say which model played the user.

    Raises:
        ConfigError: a simulated user has no model, or names one not under ``models:``.
    """
    known = ", ".join(sorted(models)) or "none"
    cases = []
    for case in suite.cases:
        spec = case.user_simulator
        if spec is None:
            cases.append(case)
            continue
        model = spec.model or default
        where = _("{suite}: case {case_id!r}").format(
            suite=suite.path or suite.name, case_id=case.id
        )
        if model is None:
            raise ConfigError(
                _(
                    "{where} has a user_simulator but no model plays it: set `{setting}` in "
                    "seatrial.yaml (NAME under models:) or `user_simulator.model` in the case"
                ).format(where=where, setting="simulator: {model: NAME}")
            )
        if model not in models:
            raise ConfigError(
                _(
                    "{where}: the simulator's model {model!r} is not under models: in "
                    "seatrial.yaml (known: {known}); add it there or name a configured model"
                ).format(where=where, model=model, known=known)
            )
        if spec.model != model:
            spec = spec.model_copy(update={"model": model})
            case = case.model_copy(update={"user_simulator": spec})
        cases.append(case)
    return suite.model_copy(update={"cases": cases})
