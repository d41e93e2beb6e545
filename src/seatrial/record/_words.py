"""How a verdict and a failure type read in the reader's language.

The records keep the identifiers (``FAIL``, ``permission_violation``): they are what gates,
filters and report.json name. Text a person reads shows these words instead; in English they
are the identifiers themselves.
"""

from __future__ import annotations

import functools

from seatrial.i18n import Language, current_language, pgettext
from seatrial.i18n import gettext as _


@functools.cache
def _verdicts(language: Language) -> dict[str, str]:
    """Each verdict in ``language`` (the current one: the argument keys the cache)."""
    return {
        "PASS": pgettext("verdict", "PASS"),
        "FAIL": pgettext("verdict", "FAIL"),
        "WARNING": pgettext("verdict", "WARNING"),
        "ERROR": pgettext("verdict", "ERROR"),
    }


@functools.cache
def _failure_types(language: Language) -> dict[str, str]:
    """The built-in failure types (:data:`seatrial.record.FAILURE_TYPES`) in ``language``
    (the current one: the argument keys the cache)."""
    return {
        "tool_not_called": pgettext("failure type", "tool_not_called"),
        "wrong_tool": pgettext("failure type", "wrong_tool"),
        "wrong_params": pgettext("failure type", "wrong_params"),
        "forbidden_action": pgettext("failure type", "forbidden_action"),
        "permission_violation": pgettext("failure type", "permission_violation"),
        "limit_exceeded": pgettext("failure type", "limit_exceeded"),
        "loop": pgettext("failure type", "loop"),
        "recovery": pgettext("failure type", "recovery"),
        "side_effect_missing": pgettext("failure type", "side_effect_missing"),
        "business_rule": pgettext("failure type", "business_rule"),
        "format": pgettext("failure type", "format"),
        "hallucination": pgettext("failure type", "hallucination"),
        "semantic_mismatch": pgettext("failure type", "semantic_mismatch"),
        "safety": pgettext("failure type", "safety"),
        "malformed_tool_call": pgettext("failure type", "malformed_tool_call"),
        "agent_error": pgettext("failure type", "agent_error"),
        "timeout": pgettext("failure type", "timeout"),
        "judge_error": pgettext("failure type", "judge_error"),
        "simulator": pgettext("failure type", "simulator"),
    }


def verdict_word(verdict: str) -> str:
    """``verdict`` (``PASS``, ``FAIL``, ``WARNING``, ``ERROR``) in the reader's language."""
    return _verdicts(current_language()).get(verdict, verdict)


def failure_type_word(failure_type: str) -> str:
    """``failure_type`` as a reader reads it: the identifier in English; in another language
    its name there with the identifier after it (``越权（permission_violation）``), since
    gates and filters name it by the identifier. A plugin's own type is shown as written."""
    language = current_language()
    word = _failure_types(language).get(failure_type)
    if word is None or language == "en":
        return failure_type
    return _("{name} ({failure_type})").format(name=word, failure_type=failure_type)
