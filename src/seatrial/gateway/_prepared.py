"""A chat request in the one canonical form that spans, the cache and cassettes compare.

The pipeline wraps each call's request in a :class:`PreparedRequest` once; its normalised
form and its hash are worked out on first use and then shared, so a call that is traced,
cached and recorded normalises its conversation once instead of three times, and a call
that is none of these (an agent's call through the proxy, untraced) never does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from seatrial.gateway._types import ChatRequest, Message

_PARAMETERS = ("tools", "tool_choice", "temperature", "max_tokens", "seed", "response_format")


def normalised_request(request: ChatRequest, model: str | None = None) -> dict[str, Any]:
    """What the model sees of a request, as plain JSON data, in one canonical form.

    Streaming, who asks (run, case, attempt, purpose) and the cache override are left out;
    defaults and absent values are dropped; tool call ids, which providers make at random,
    are replaced by their order of appearance so two equal conversations compare equal.
    """
    ids: dict[str, str] = {}

    def canonical_id(value: str) -> str:
        return ids.setdefault(value, f"call_{len(ids)}")

    normal: dict[str, Any] = {
        "model": request.model if model is None else model,
        "messages": [_message(message, canonical_id) for message in request.messages],
    }
    for name in _PARAMETERS:
        value = getattr(request, name)
        if value is not None:
            normal[name] = value
    return normal


def _message(message: Message, canonical_id: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role}
    if message.content is not None:
        out["content"] = message.content
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": canonical_id(call.id), "name": call.name, "arguments": call.arguments}
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = canonical_id(message.tool_call_id)
    return out


def canonical_json(data: Any) -> str:
    """JSON text with sorted keys and no spaces: equal data, equal text, equal hash."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class PreparedRequest:
    """One call's request with its normalised form and hash, each made at most once."""

    request: ChatRequest
    """The request as the caller sent it."""

    @cached_property
    def normal(self) -> dict[str, Any]:
        """The normalised form (:func:`normalised_request`), with the model the caller named.

        Shared by whoever reads it: never change it in place.
        """
        return normalised_request(self.request)

    def normal_for(self, model: str | None) -> dict[str, Any]:
        """The normalised form sent to ``model`` (the cache keys on the configured model)."""
        if model == self.request.model:
            return self.normal
        return {**self.normal, "model": model}

    @cached_property
    def hash(self) -> str:
        """sha256 (first 16 hex digits) of the normalised form: the span's request hash."""
        return hashlib.sha256(canonical_json(self.normal).encode("utf-8")).hexdigest()[:16]


def prepared(request: ChatRequest | PreparedRequest) -> PreparedRequest:
    """``request`` prepared (as it is, when it already was)."""
    return request if isinstance(request, PreparedRequest) else PreparedRequest(request)
