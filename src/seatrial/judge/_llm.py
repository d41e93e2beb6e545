"""The LLM judge: a model, called through the gateway, that says PASS, FAIL or WARNING.

Every call is a ``purpose="judge"`` request asking for one JSON object, at most
``judge.max_tokens`` long (a weak model under a JSON grammar may otherwise write until its
timeout). An answer that is not valid JSON gets one repair (the object inside a code fence or
before trailing text) and then a new call, up to ``max_retries`` new calls; after that the
judge raises :class:`JudgeError` (``judge_error``), never a guessed verdict. Each call carries
its own seed (sample and try), so the response cache keeps distinct samples apart and a re-run
gets the same answers.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seatrial.errors import ConfigError, GatewayError
from seatrial.gateway import ChatRequest, Gateway, Message, ModelConfig
from seatrial.i18n import gettext as _
from seatrial.judge._factuality import ClaimList, claim_details, supported_share
from seatrial.judge._prompt import load_prompt
from seatrial.judge._settings import JudgeSettings
from seatrial.judge._types import JudgeError, JudgeInput, JudgeLabel, JudgeSample, JudgeVerdict

_Answer = TypeVar("_Answer", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_DATE_SUFFIX = re.compile(r"[-_@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$")
_SAMPLING_TEMPERATURE = 0.7
"""Temperature when several samples vote: at 0 they would mostly repeat one answer."""


class _VerdictAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdict: JudgeLabel
    confidence: float = Field(ge=0.0, le=1.0)
    failure_type: str | None = None
    reason: str = ""
    dimension_scores: dict[str, float] = Field(default_factory=dict)

    @field_validator("verdict", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class _ChoiceAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    better: int = Field(ge=1, le=2)
    reason: str = ""


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer: the whole text, else one repair (the object in a
    code fence, or the first object followed by trailing text); None when there is none."""
    try:
        value = json.loads(text)
    except ValueError:
        value = _repair(text)
    return value if isinstance(value, dict) else None


def _repair(text: str) -> Any:
    fenced = _FENCE.search(text)
    if fenced:
        with contextlib.suppress(ValueError):
            return json.loads(fenced.group(1))
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _end = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return value


def model_family(model: ModelConfig) -> str:
    """The configured ``family``, else the pinned model id without a date or ``latest``."""
    return model.family or _DATE_SUFFIX.sub("", model.model)


class Judge:
    """An LLM judge: one gateway model, one prompt version, the settings of ``judge:``.

    ``agent_models``: names or model ids the agent under test is known to use; with
    :meth:`refuse_same_model` they keep a model from grading itself.
    """

    def __init__(
        self,
        gateway: Gateway,
        settings: JudgeSettings,
        *,
        agent_models: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Raises:
        ConfigError: no judge model is set, it is not among ``models:``, or the prompt
            version is not shipped.
        """
        if settings.model is None:
            raise ConfigError(
                _(
                    "no judge model is configured; set judge.model in seatrial.yaml to a name "
                    "under models:, or pass --judge MODEL"
                )
            )
        models = gateway.config.models
        if settings.model not in models:
            known = ", ".join(sorted(models)) or _("none")
            raise ConfigError(
                _(
                    "the judge model {model!r} is not among models: (known: {known}); "
                    "add it to seatrial.yaml or name a configured model"
                ).format(model=settings.model, known=known)
            )
        self.gateway = gateway
        self.settings = settings
        self.agent_models = frozenset(agent_models)
        self.model: str = settings.model
        self.model_config: ModelConfig = models[settings.model]
        self.prompt_version: str = settings.prompt_version
        self._judge_prompt = load_prompt("judge", settings.prompt_version)
        self._compare_prompt = load_prompt("compare", settings.prompt_version)
        self._factuality_prompt = load_prompt("factuality", settings.prompt_version)
        self.prompt_hash: str = self._judge_prompt.hash
        """sha256 of the pointwise prompt: calibrations of :meth:`judge` are keyed on it."""
        self.compare_prompt_hash: str = self._compare_prompt.hash
        """sha256 of the pairwise prompt: calibrations of :meth:`compare` are keyed on it."""

    def identity(self) -> dict[str, str]:
        """What a report records about this judge: model, prompt version and hash."""
        return {
            "model": self.model,
            "prompt_version": self.prompt_version,
            "prompt_hash": self.prompt_hash,
        }

    # -- verdicts ---------------------------------------------------------------------------

    async def judge(
        self,
        item: JudgeInput,
        *,
        run_id: str | None = None,
        case_id: str | None = None,
        attempt: int | None = None,
    ) -> JudgeVerdict:
        """The judge's verdict on ``item``; with ``samples`` > 1, the majority of that many
        calls (no majority gives WARNING) with their mean confidence.

        Raises:
            JudgeError: a call failed, or an answer was unusable on every try.
        """
        messages = self._judge_prompt.render(
            criteria=item.criteria,
            rubric=item.rubric or "(none)",
            category=item.category or "(none)",
            reference=item.reference or "(none)",
            turns="\n".join(f"{i}. {turn}" for i, turn in enumerate(item.turns, 1)) or "(none)",
            trace_summary=item.trace_summary or "(no tool calls)",
            reply=item.reply,
        )
        n = self.settings.samples
        answers = [
            await self._ask(
                messages,
                _VerdictAnswer,
                sample=index,
                temperature=0.0 if n == 1 else _SAMPLING_TEMPERATURE,
                run_id=run_id,
                case_id=case_id,
                attempt=attempt,
            )
            for index in range(n)
        ]
        if n == 1:
            only = answers[0]
            return self._verdict(only, only.verdict, only.reason, [])
        return self._majority(answers)

    def _verdict(
        self,
        answer: _VerdictAnswer,
        verdict: JudgeLabel,
        reason: str,
        samples: list[JudgeSample],
    ) -> JudgeVerdict:
        return JudgeVerdict(
            verdict=verdict,
            confidence=answer.confidence,
            failure_type=answer.failure_type if verdict == "FAIL" else None,
            reason=reason,
            dimension_scores=answer.dimension_scores,
            samples=samples,
            prompt_version=self.prompt_version,
            prompt_hash=self.prompt_hash,
            model=self.model,
        )

    def _majority(self, answers: list[_VerdictAnswer]) -> JudgeVerdict:
        samples = [
            JudgeSample(
                verdict=a.verdict,
                confidence=a.confidence,
                failure_type=a.failure_type,
                reason=a.reason,
            )
            for a in answers
        ]
        counts = Counter(a.verdict for a in answers)
        label, votes = counts.most_common(1)[0]
        split = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        if votes * 2 <= len(answers):
            verdict: JudgeLabel = "WARNING"
            reason = f"the {len(answers)} judge samples did not agree ({split})"
            winners = answers
        else:
            verdict = label
            winners = [a for a in answers if a.verdict == label]
            reason = f"{votes} of {len(answers)} samples said {label}: {winners[0].reason}"
        failure_types = Counter(a.failure_type for a in winners if a.failure_type)
        dimensions: dict[str, list[float]] = {}
        for a in answers:
            for name, score in a.dimension_scores.items():
                dimensions.setdefault(name, []).append(score)
        merged = _VerdictAnswer(
            verdict=verdict,
            confidence=sum(a.confidence for a in answers) / len(answers),
            failure_type=failure_types.most_common(1)[0][0] if failure_types else None,
            reason=reason,
            dimension_scores={k: sum(v) / len(v) for k, v in dimensions.items()},
        )
        return self._verdict(merged, verdict, reason, samples)

    async def compare(self, input: str, output_1: str, output_2: str) -> int:
        """Which output answers ``input`` better: 1 or 2 (pairwise calibration).

        Raises:
            JudgeError: the call failed, or the answer was unusable on every try.
        """
        messages = self._compare_prompt.render(input=input, output_1=output_1, output_2=output_2)
        answer = await self._ask(messages, _ChoiceAnswer, sample=0, temperature=0.0)
        return answer.better

    async def factuality(
        self,
        reply: str,
        reference: str,
        *,
        run_id: str | None = None,
        case_id: str | None = None,
        attempt: int | None = None,
    ) -> tuple[float, list[dict[str, str]]]:
        """Share of the reply's factual claims the reference supports (1.0 when it makes
        none), and each claim with its status and evidence.

        Raises:
            JudgeError: the call failed, or the answer was unusable on every try.
        """
        messages = self._factuality_prompt.render(reply=reply, reference=reference)
        answer = await self._ask(
            messages,
            ClaimList,
            sample=0,
            temperature=0.0,
            run_id=run_id,
            case_id=case_id,
            attempt=attempt,
        )
        return supported_share(answer.claims), claim_details(answer.claims)

    def refuse_same_model(self, agent_model: str | None) -> str | None:
        """Why this judge must not grade an agent using ``agent_model`` (or any of
        ``agent_models``): the same configured name, model id or family. None when it may,
        or when ``allow_same_model`` is set."""
        if self.settings.allow_same_model:
            return None
        mine = self.model_config
        my_family = model_family(mine)
        candidates = sorted(self.agent_models | ({agent_model} if agent_model else set()))
        for name in candidates:
            theirs = self.gateway.config.models.get(name)
            ids = {name} | ({theirs.model} if theirs else set())
            families = {model_family(theirs)} if theirs else {_DATE_SUFFIX.sub("", name)}
            if ids & {mine.name, mine.model}:
                what = f"is the agent's own model ({name})"
            elif my_family in families:
                what = f"is of the agent's model family {my_family!r} ({name})"
            else:
                continue
            return (
                f"the judge {self.model} ({mine.model}) {what}: a model grading itself favours "
                "its own answers; pick a judge of another family, or set "
                "judge.allow_same_model: true to accept the bias"
            )
        return None

    # -- calls ------------------------------------------------------------------------------

    async def _ask(
        self,
        messages: list[Message],
        shape: type[_Answer],
        *,
        sample: int,
        temperature: float,
        run_id: str | None = None,
        case_id: str | None = None,
        attempt: int | None = None,
    ) -> _Answer:
        tries = self.settings.max_retries + 1
        problem = ""
        for attempt_no in range(tries):
            request = ChatRequest(
                model=self.model,
                messages=messages,
                temperature=temperature,
                max_tokens=self.settings.max_tokens,
                seed=sample * tries + attempt_no,
                response_format={"type": "json_object"},
                purpose="judge",
                run_id=run_id,
                case_id=case_id,
                attempt=attempt,
            )
            try:
                response = await self.gateway.chat(request)
            except GatewayError as exc:
                raise JudgeError(
                    f"the judge {self.model} could not be called: {exc}; "
                    "fix the model's settings under models: or retry later"
                ) from exc
            text = response.message.text
            data = parse_json_object(text)
            if data is None:
                cut = response.finish_reason == "length"
                problem = (
                    f"cut off at judge.max_tokens ({self.settings.max_tokens}): {_clip(text)!r}"
                    if cut
                    else f"not a JSON object: {_clip(text)!r}"
                )
                continue
            try:
                return shape.model_validate(data)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"]) or "answer"
                problem = f"{where}: {first['msg']} in {_clip(text)!r}"
        raise JudgeError(
            f"the judge {self.model} gave no usable answer in {tries} tries (last: {problem}); "
            "use a model that follows JSON instructions, or raise judge.max_retries"
        )


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
