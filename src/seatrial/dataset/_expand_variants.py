"""Turning a model's variants of a case into cases: which to drop as near-duplicates, their
ids, and which of the parent's assertions each keeps."""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from seatrial.case import AssertionSpec, Case
from seatrial.i18n import gettext as _
from seatrial.judge import (
    CACHE,
    MULTILINGUAL_MODEL,
    STATIC_MODEL,
    Embedder,
    PromptTemplate,
    UnembeddableText,
    default_model,
    embedder_for,
)
from seatrial.registry import lookup

PARAPHRASE_KINDS = ("colloquial", "regional", "typos", "terse")
"""Styles that say the same thing differently; the case's assertions all still hold."""
ADVERSARIAL_KINDS = (
    "prompt_injection",
    "over_long_input",
    "tool_abuse_bait",
    "system_prompt_extraction",
)
"""Styles that wrap the same request in an attack; only the assertions that forbid still hold."""
KIND_GROUPS = {"paraphrase": PARAPHRASE_KINDS, "adversarial": ADVERSARIAL_KINDS}
"""What ``--kinds paraphrase,adversarial`` stands for; single styles may be named too."""

NEAR_DUPLICATE_THRESHOLDS = {STATIC_MODEL: 0.97, MULTILINGUAL_MODEL: 0.99}
"""Similarity at or above which a variant counts as a copy, per embedding model. Measured on
refund, booking and address requests (docs/datasets.md): with the multilingual model (the
default for Chinese) a Chinese variant that only adds a particle, drops spaces or swaps two
words scores 0.994-0.999 against its original, real paraphrases 0.93-0.97 and even a request
for another thing 0.94; with the static model (the default for other text) a copy that
changes case or punctuation scores 1.0, paraphrases 0.74-0.94."""
OTHER_MODEL_THRESHOLD = 0.95
"""For any other embedder (MiniLM, a gateway model): unmeasured, so pass ``threshold`` when
it drops real paraphrases or keeps copies."""


@dataclass(frozen=True)
class Candidate:
    """One variant as the model wrote it, before it becomes a case."""

    kind: str
    """Its style, e.g. ``colloquial`` or ``prompt_injection``."""
    turns: list[str]
    """The user turns, as many as the parent has."""

    @property
    def text(self) -> str:
        """The turns as one text, one per line: what is embedded and compared."""
        return "\n".join(self.turns)


def near_duplicate_threshold(embedder: Embedder) -> float:
    """The similarity at which ``embedder`` calls two texts copies of each other."""
    return NEAR_DUPLICATE_THRESHOLDS.get(embedder.name, OTHER_MODEL_THRESHOLD)


def without_near_duplicates(
    case: Case,
    candidates: list[Candidate],
    embedder: Embedder | None,
    threshold: float | None,
    taken: Collection[str],
    existing: Sequence[Case] = (),
) -> tuple[list[tuple[str, Candidate]], list[tuple[str, str]]]:
    """The candidates that copy neither the case nor one kept before them, each with its new
    case id; and the others with why they were dropped. A variant with the same text as one
    of the ``existing`` cases is dropped too.

    Paraphrases are compared with the case and with the paraphrases kept; typos only by their
    text (a misspelt word embeds like the word, so similarity cannot tell a typo from a
    copy); adversarial variants with each other, not with the case, whose request they carry.
    """
    if not candidates:
        return [], []
    parent = "\n".join(case.user_turns)
    texts = [parent, *(c.text for c in candidates)]
    model = embedder or embedder_for(default_model(*texts))
    limit = near_duplicate_threshold(model) if threshold is None else threshold
    vectors = CACHE.embed(model, texts)
    for text, vector in zip(texts, vectors, strict=True):
        if text.strip() and not vector.any():
            raise UnembeddableText(
                _(
                    "the embedding model {model!r} knows none of the words in {text!r}; "
                    "use {multilingual!r} for Chinese, Japanese or Korean text"
                ).format(model=model.name, text=text[:40], multilingual=MULTILINGUAL_MODEL)
            )
    numbering = _Numbering(case.id, taken)
    seen = {_normalized("\n".join(c.user_turns)): c.id for c in existing}
    seen[_normalized(parent)] = _("the case {case_id}").format(case_id=case.id)
    kept: list[tuple[str, Candidate]] = []
    rows: dict[str, int] = {}
    dropped: list[tuple[str, str]] = []
    for row, candidate in enumerate(candidates, start=1):
        key = _normalized(candidate.text)
        if key in seen:
            dropped.append(
                (_joined(candidate.turns), _("the same text as {other}").format(other=seen[key]))
            )
            continue
        compared = [(vectors[rows[i]], i) for i, c in kept if _compared(candidate.kind, c.kind)]
        if candidate.kind in PARAPHRASE_KINDS and candidate.kind != "typos":
            compared.insert(0, (vectors[0], _("the case {case_id}").format(case_id=case.id)))
        scores = [(float(vectors[row] @ vector), what) for vector, what in compared]
        score, what = max(scores, default=(0.0, ""))
        if score >= limit:
            reason = _("a near-duplicate of {other} (similarity {score} >= {limit})").format(
                other=what, score=f"{score:.3f}", limit=limit
            )
            dropped.append((_joined(candidate.turns), reason))
            continue
        case_id = numbering.next(candidate.kind)
        seen[key] = case_id
        rows[case_id] = row
        kept.append((case_id, candidate))
    return kept, dropped


def _compared(kind: str, earlier: str) -> bool:
    """Whether a new variant of ``kind`` is checked for similarity with a kept ``earlier``."""
    if kind == "typos" or earlier == "typos":
        return False
    return (kind in ADVERSARIAL_KINDS) == (earlier in ADVERSARIAL_KINDS)


class _Numbering:
    """New case ids ``{parent}~pN`` and ``{parent}~aN``, skipping ids already taken."""

    def __init__(self, parent: str, taken: Collection[str]) -> None:
        self._parent = parent
        self._taken = set(taken)
        self._next = {"p": 1, "a": 1}

    def next(self, kind: str) -> str:
        letter = "a" if kind in ADVERSARIAL_KINDS else "p"
        while True:
            case_id = f"{self._parent}~{letter}{self._next[letter]}"
            self._next[letter] += 1
            if case_id not in self._taken:
                self._taken.add(case_id)
                return case_id


ADVERSARIAL_KEEPS = frozenset(
    {
        "forbidden_events",
        "limits",
        "no_loop",
        "not_contains",
        "not_equals",
        "not_icontains",
        "not_regex",
        "permissions_respected",
        "tool_not_called",
        "trace_complete",
    }
)
"""Assertion types an adversarial variant keeps: each forbids something (an event, a tool, a
loop, going past a limit or a grant, a text in the reply) or asks the trace to end, which
still holds when the input attacks the agent. The others expect the agent to do what was
asked (call a tool, say something, create a file), which an agent that rightly refuses an
attack does not."""


def variant_case(
    parent: Case,
    kind: str,
    turns: list[str],
    case_id: str,
    model: str,
    template: PromptTemplate,
) -> Case:
    data = parent.model_dump(exclude={"input", "turns"})
    metadata: dict[str, Any] = {
        **parent.metadata,
        "parent": parent.id,
        "kind": kind,
        "model": model,
        "prompt": f"{template.kind}_{template.version}",
    }
    if kind in ADVERSARIAL_KINDS:
        kept = [a for a in parent.assertions if _still_holds(a)]
        gone = [a.id or a.type for a in parent.assertions if not _still_holds(a)]
        if gone or parent.expected_files:
            metadata["dropped_assertions"] = gone + (
                ["expected_files"] if parent.expected_files else []
            )
        data["assertions"] = kept
        data["expected_files"] = []
        if not any(_soft(a) for a in kept):
            data["threshold"] = None
    data.update(
        id=case_id,
        name=f"{parent.name or parent.id} ({kind.replace('_', ' ')})",
        tags=list(dict.fromkeys([*parent.tags, kind])),
        source="ai_generated",
        created_at=dt.date.today().isoformat(),
        author=None,
        metadata=metadata,
    )
    if parent.input is not None:
        data["input"] = turns[0]
    else:
        data["turns"] = turns
    return Case.model_validate(data)


def _still_holds(assertion: AssertionSpec) -> bool:
    try:
        name = lookup(assertion.type).name
    except KeyError:  # a plugin's type not installed here: what it checks is unknown
        return False
    return name in ADVERSARIAL_KEEPS


def _soft(assertion: AssertionSpec) -> bool:
    if assertion.must_pass is not None:
        return not assertion.must_pass
    return assertion.level == "L3"


def _normalized(text: str) -> str:
    """``text`` without case, spaces or punctuation: two variants equal here are one."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in folded if unicodedata.category(c)[0] not in "PZC")


def _joined(turns: list[str]) -> str:
    return " / ".join(turns)
