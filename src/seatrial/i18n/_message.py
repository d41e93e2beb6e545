"""Text stored as what to say rather than as said: a message id and its parameters.

A check's reason is kept as a :data:`Message`, ``{"id": "{tool} was called {count}", "params":
{...}}``, beside the English it renders to, so a run made in one language reads in another:
each reader renders the stored message in its own (:func:`render`). The id is the English text
marked for the catalogs (:func:`phrased` and :func:`phrased_plural` are extracted like ``_``
and ``ngettext``).

A parameter is a plain value (text, a number, a bool, None), a message (rendered in the same
language), or a list of messages (rendered and joined with the language's separator, "; " or
"；"). Values a user wrote (a tool's argument, a reply) are passed in as text, already cut to
length: a dict among the parameters is always a message. Messages are plain JSON, stored as
they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seatrial.i18n._catalog import catalog, current_language, pgettext, use_language
from seatrial.i18n._language import Language

Message = dict[str, Any]
"""``{"id": TEXT, "params": {...}}``, with ``"plural": TEXT`` when the id is a singular whose
plural form is chosen by the ``n`` parameter."""


def phrased(text: str, /, **params: Any) -> Message:
    """What to say: ``text`` (English, with ``{named}`` placeholders) and its parameters."""
    return {"id": text, "params": params}


def phrased_plural(singular: str, plural: str, n: int, /, **params: Any) -> Message:
    """What to say in the number ``n`` asks for; ``n`` is a parameter too (``{n}``)."""
    return {"id": singular, "plural": plural, "params": {"n": n, **params}}


def render(
    said: Mapping[str, Any] | None, fallback: str = "", language: Language | None = None
) -> str:
    """``said`` in ``language`` (the reader's by default), or ``fallback`` when there is no
    message (records stored before messages were) or it cannot be rendered (a message whose
    placeholders its translation does not match)."""
    if not said:
        return fallback
    try:
        return _render(said, language or current_language())
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return fallback or str(said.get("id", ""))


def english(said: Mapping[str, Any]) -> str:
    """``said`` in English: the text stored beside a message for readers without messages."""
    return _render(said, "en")


def _render(said: Mapping[str, Any], language: Language) -> str:
    text: str = said["id"]
    params: Mapping[str, Any] = said.get("params") or {}
    plural = said.get("plural")
    if language == "en":
        if plural is not None and params["n"] != 1:
            text = plural
    elif plural is not None:
        text = catalog(language).ngettext(text, plural, params["n"])
    else:
        text = catalog(language).gettext(text)
    if not params:
        return text
    return text.format_map({name: _value(value, language) for name, value in params.items()})


def _value(value: Any, language: Language) -> Any:
    if isinstance(value, dict):
        return _render(value, language)
    if isinstance(value, list):
        if language == "en":
            separator = "; "  # what the marked text says, with no catalog to read
        else:
            with use_language(language):
                separator = pgettext("list separator", "; ")
        return separator.join(str(_value(item, language)) for item in value)
    return value
