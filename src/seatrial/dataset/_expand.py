"""New cases from one case: paraphrases of its user turns and adversarial variants.

A model, called through the gateway with ``purpose="generation"`` (so the ledger prices it as
generation and the response cache keeps its answers), writes variants of the case's user
turns, one style per call: the paraphrase styles say the same thing the ways real users do
("one intent, a hundred ways to say it"), the adversarial ones wrap the same request in an
attack. A multi-turn case is rewritten as a whole: every variant has the same number of turns,
turn N doing the job of turn N, in one voice.

Near-duplicates are dropped by embedding similarity (the judge's embedders), and what is kept
becomes cases that wait as pending until a person approves them (:mod:`seatrial.store`); no
run uses them before that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from seatrial.case import Case
from seatrial.dataset._expand_variants import (
    ADVERSARIAL_KINDS,
    KIND_GROUPS,
    PARAPHRASE_KINDS,
    Candidate,
    variant_case,
    without_near_duplicates,
)
from seatrial.errors import ConfigError, GatewayError, InputError
from seatrial.gateway import ChatRequest, Gateway, Message
from seatrial.i18n import gettext as _
from seatrial.judge import Embedder, PromptTemplate, parse_json_object

EXPAND_PROMPT_VERSION = "v1"
"""The prompt file ``dataset/prompts/expand_v1.txt``; a generated case records it."""

BATCH_SIZE = 10
"""Most variants asked for in one call: long answers are where models stop following JSON."""
TEMPERATURE = 0.9
"""Generation wants spread: at 0 the variants of one call repeat each other."""
MAX_TRIES = 2
"""Calls per batch: an answer that is not JSON gets one new call, then an error."""
OVER_LONG_MIN_CHARS = 1000
"""The longest turn of an ``over_long_input`` variant must reach this. The prompt asks for
2,000 characters; models count loosely, so half of it is still over-long, less is not."""


class GenerationError(GatewayError):
    """The generation model gave no usable answer (not JSON on every try, or the call failed)."""


@dataclass(frozen=True)
class Expansion:
    """What one ``expand_case`` produced: the variants kept, and those dropped with why."""

    parent: str
    """The id of the case the variants come from."""
    model: str
    """The configured model name that wrote them."""
    kept: list[Case]
    """New cases (``source: ai_generated``), in the order the model wrote them."""
    dropped: list[tuple[str, str]]
    """(the variant's text, why it was dropped); a multi-turn text joins turns with `` / ``."""
    prompt_hash: str
    """sha256 of the prompt template used."""


def expand_kinds(names: Iterable[str]) -> tuple[str, ...]:
    """The styles ``names`` stand for: a group (``paraphrase``, ``adversarial``) or one style.

    Raises:
        InputError: a name is neither (the message lists what is known).
    """
    styles: list[str] = []
    for raw in names:
        name = raw.strip().replace("-", "_")
        if not name:
            continue
        if name in KIND_GROUPS:
            styles.extend(KIND_GROUPS[name])
        elif name in PARAPHRASE_KINDS + ADVERSARIAL_KINDS:
            styles.append(name)
        else:
            known = ", ".join([*KIND_GROUPS, *PARAPHRASE_KINDS, *ADVERSARIAL_KINDS])
            raise InputError(
                _("unknown kind of variant {kind!r}: use one of {known}").format(
                    kind=raw, known=known
                )
            )
    if not styles:
        raise InputError(_("no kind of variant asked for: use paraphrase, adversarial or both"))
    return tuple(dict.fromkeys(styles))


def load_expand_prompt(version: str = EXPAND_PROMPT_VERSION) -> PromptTemplate:
    """The shipped generation prompt (system and user parts, ``$name`` placeholders).

    Raises:
        ConfigError: no such version is shipped.
    """
    entry = resources.files("seatrial.dataset").joinpath("prompts", f"expand_{version}.txt")
    if not entry.is_file():
        raise ConfigError(
            _(
                "the generation prompt expand_{version}.txt is not shipped with this Seatrial; "
                "use {shipped}"
            ).format(version=version, shipped=EXPAND_PROMPT_VERSION)
        )
    return PromptTemplate(kind="expand", version=version, text=entry.read_text("utf-8"))


async def expand_case(
    case: Case,
    gateway: Gateway,
    *,
    model: str,
    n: int,
    kinds: Sequence[str] = ("paraphrase", "adversarial"),
    embedder: Embedder | None = None,
    threshold: float | None = None,
    taken: Collection[str] = (),
    existing: Sequence[Case] = (),
) -> Expansion:
    """Ask ``model`` for ``n`` variants of ``case``, spread evenly over the styles of ``kinds``.

    ``embedder``: the model that finds near-duplicates (default: the multilingual one for
    Chinese, Japanese or Korean text, else the static one); ``threshold`` overrides its
    :data:`NEAR_DUPLICATE_THRESHOLDS`. ``taken``: case ids already used (pending or in a
    golden set), skipped when numbering ``{parent}~pN`` (paraphrases) and ``{parent}~aN``
    (adversarial variants). ``existing``: cases made before (pending, decided, in the golden
    set): a variant with the same text as one is dropped, and the calls' seeds start after
    the variants of ``case`` among them, so asking again asks the model anew instead of
    reading the response cache.

    Raises:
        InputError: ``n`` is below 1 or a kind is unknown.
        ConfigError: ``model`` is not among the gateway's ``models:``.
        GenerationError: a call failed, or its answer was not JSON on every try.
    """
    if n < 1:
        raise InputError(_("--n must be at least 1, not {n}").format(n=n))
    styles = expand_kinds(kinds)
    if model not in gateway.config.models:
        known = ", ".join(sorted(gateway.config.models)) or _("none")
        raise ConfigError(
            _(
                "the generation model {model!r} is not among models: (known: {known}); "
                "add it to seatrial.yaml or pass --model with a configured name"
            ).format(model=model, known=known)
        )
    template = load_expand_prompt()
    earlier = sum(1 for other in existing if other.metadata.get("parent") == case.id)
    calls = [
        (style, size, seed)
        for style, count in _quotas(n, styles)
        for seed, size in enumerate(_chunks(count), start=earlier)
    ]
    answers = await asyncio.gather(
        *(_ask(gateway, model, template, case, style, size, seed) for style, size, seed in calls)
    )
    candidates: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    for (style, size, _seed), items in zip(calls, answers, strict=True):
        for item in items[:size]:
            turns, problem = _turns_of(item, len(case.user_turns), style)
            if turns is None:
                dropped.append((_shown(item), problem))
            else:
                candidates.append(Candidate(style, turns))
    kept, similar = without_near_duplicates(
        case, candidates, embedder, threshold, [*taken, *(c.id for c in existing)], existing
    )
    dropped.extend(similar)
    cases = [variant_case(case, c.kind, c.turns, case_id, model, template) for case_id, c in kept]
    return Expansion(
        parent=case.id, model=model, kept=cases, dropped=dropped, prompt_hash=template.hash
    )


def _quotas(n: int, styles: Sequence[str]) -> list[tuple[str, int]]:
    share, extra = divmod(n, len(styles))
    counts = [(style, share + (1 if i < extra else 0)) for i, style in enumerate(styles)]
    return [(style, count) for style, count in counts if count]


def _chunks(count: int) -> list[int]:
    return [min(BATCH_SIZE, count - start) for start in range(0, count, BATCH_SIZE)]


async def _ask(
    gateway: Gateway,
    model: str,
    template: PromptTemplate,
    case: Case,
    style: str,
    count: int,
    seed: int,
) -> list[Any]:
    turns = case.user_turns
    messages: list[Message] = template.render(
        kind=style,
        count=str(count),
        turn_count=str(len(turns)),
        category=case.category or "(none)",
        description=case.description or case.name or "(none)",
        turns="\n".join(f"{i}. {turn}" for i, turn in enumerate(turns, 1)),
    )
    problem = ""
    for attempt in range(MAX_TRIES):
        request = ChatRequest(
            model=model,
            messages=messages,
            temperature=TEMPERATURE,
            seed=seed * MAX_TRIES + attempt,
            response_format={"type": "json_object"},
            purpose="generation",
            case_id=case.id,
        )
        try:
            response = await gateway.chat(request)
        except GatewayError as exc:
            raise GenerationError(
                _(
                    "the generation model {model} could not be called: {error}; "
                    "fix the model's settings under models: or retry later"
                ).format(model=model, error=exc)
            ) from exc
        text = response.message.text
        data = parse_json_object(text)
        variants = data.get("variants") if data is not None else None
        if isinstance(variants, list):
            return variants
        problem = (
            _("a JSON object without a `variants` list: {text!r}").format(text=_clip(text))
            if data is not None
            else _("not JSON: {text!r}").format(text=_clip(text))
        )
    raise GenerationError(
        _(
            "the generation model {model} answered {style} variants of {case_id} with "
            "{problem} on {tries} tries; use a model that follows JSON instructions"
        ).format(model=model, style=style, case_id=case.id, problem=problem, tries=MAX_TRIES)
    )


def _turns_of(item: Any, turn_count: int, style: str) -> tuple[list[str] | None, str]:
    """The turns of one variant as the model wrote it, or None and why it is unusable."""
    value = item
    if isinstance(item, dict):
        value = next((item[k] for k in ("turns", "text", "input") if k in item), None)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(turn, str) for turn in value):
        return None, _("not a list of turns (texts)")
    turns = [turn.strip() for turn in value]
    if len(turns) != turn_count:
        return None, _("{count} turns where the case has {expected}").format(
            count=len(turns), expected=turn_count
        )
    if not all(turns):
        return None, _("an empty turn")
    if style == "over_long_input" and max(map(len, turns)) < OVER_LONG_MIN_CHARS:
        longest = max(map(len, turns))
        return None, _("over_long_input of {longest} characters (at least {minimum})").format(
            longest=longest, minimum=OVER_LONG_MIN_CHARS
        )
    return turns, ""


def _shown(item: Any) -> str:
    return _clip(item if isinstance(item, str) else repr(item))


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
