"""What the fake model servers answer, in OpenAI's and Anthropic's wire formats.

The HTTP side is in :mod:`seatrial.testing._fake_models`; this module only shapes bodies and
stream events from a scripted :class:`FakeReply`, so each API's format is readable in one place.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call the fake model makes."""

    name: str
    arguments: str | Mapping[str, Any] = "{}"
    """A mapping is sent as JSON; a string is sent as is (so it can be malformed)."""
    id: str | None = None
    """None: a deterministic id from the request number and position."""

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class FakeReply:
    """One scripted answer of the fake model."""

    text: str | None = None
    """The answer text (None: no text, e.g. tool calls only)."""
    tool_calls: Sequence[FakeToolCall] = ()
    input_tokens: int | None = None
    """Reported prompt tokens, cached ones included; None: the words in the request."""
    output_tokens: int | None = None
    """Reported completion tokens; None: the words in the answer."""
    cached_input_tokens: int = 0
    """Prompt tokens reported as served from the provider's prompt cache."""
    finish_reason: str | None = None
    """In the API's own words; None: a tool-call or a normal stop."""
    status: int = 200
    """Anything else answers with the API's error body and this status."""
    error: str | None = None
    """The error message of a non-200 answer (None: says it was scripted). E.g. llama.cpp's
    server on a tool call it cannot parse: ``FakeReply(status=500, error=UNPARSABLE_TOOL_CALL)``."""
    delay_s: float = 0.0
    """Wait this long before the first byte (headers included)."""
    chunk_delay_s: float = 0.0
    """When streaming, wait this long before each event after the first."""
    malformed: bool = False
    """Answer 200 with a body that is not the API's JSON (or an unparsable stream event)."""
    model: str | None = None
    """The model id reported; None: the one requested."""


Event = tuple[str | None, Any]

UNPARSABLE_TOOL_CALL = (
    "The model produced output that does not match the expected peg-native format"
)
"""What llama.cpp's server answers (HTTP 500) when it cannot parse the model's tool call."""


def _words(text: object) -> int:
    return len(text.split()) if isinstance(text, str) else 0


def _text_of(content: object) -> str:
    """Text of a message's content: a string, or OpenAI/Anthropic content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _pieces(text: str) -> list[str]:
    """Split text into stream deltas that join back to it exactly."""
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]] if text else []


def fake_embedding(text: str, dims: int = 8) -> list[float]:
    """The unit vector the fake servers return for ``text`` (so tests can compare)."""
    raw = hashlib.sha256(text.encode()).digest() * (dims // 32 + 1)
    values = [b / 255.0 - 0.5 for b in raw[:dims]]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class _Wire(ABC):
    """How one API shapes answers; the server below does the HTTP."""

    name = ""

    @abstractmethod
    def routes(self) -> dict[str, str]:
        """Path -> what it serves (chat, embeddings ...)."""

    def default_text(self, body: Mapping[str, Any]) -> str:
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        return f"echo: {_text_of(users[-1].get('content'))}" if users else "echo:"

    def input_tokens(self, body: Mapping[str, Any], reply: FakeReply) -> int:
        if reply.input_tokens is not None:
            return reply.input_tokens
        texts = [_text_of(m.get("content")) for m in body.get("messages") or []]
        return max(1, sum(_words(t) for t in texts) + _words(_text_of(body.get("system"))))

    def output_tokens(self, reply: FakeReply) -> int:
        if reply.output_tokens is not None:
            return reply.output_tokens
        args = sum(_words(t.arguments_text()) for t in reply.tool_calls)
        return _words(reply.text) + args

    @abstractmethod
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The API's error JSON for an HTTP status."""

    @abstractmethod
    def chat(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> dict[str, Any]:
        """A whole (non-streamed) answer in the API's JSON."""

    @abstractmethod
    def events(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> list[Event]:
        """A streamed answer as the API's server-sent events."""


class _OpenAIWire(_Wire):
    name = "FakeOpenAI"

    def routes(self) -> dict[str, str]:
        return {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings"}

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        if 400 <= status < 429:
            kind = "invalid_request_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}

    def _usage(self, body: Mapping[str, Any], reply: FakeReply) -> dict[str, Any]:
        prompt, completion = self.input_tokens(body, reply), self.output_tokens(reply)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": reply.cached_input_tokens},
        }

    def _finish(self, reply: FakeReply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _head(self, body: Mapping[str, Any], reply: FakeReply, n: int, obj: str) -> dict[str, Any]:
        model = reply.model or body.get("model") or "fake-model"
        return {"id": f"chatcmpl-{n}", "object": obj, "created": int(time.time()), "model": model}

    def chat(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": t.id or f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": t.name, "arguments": t.arguments_text()},
                }
                for i, t in enumerate(reply.tool_calls)
            ]
        choice = {"index": 0, "message": message, "finish_reason": self._finish(reply)}
        head = self._head(body, reply, n, "chat.completion")
        return {**head, "choices": [choice], "usage": self._usage(body, reply)}

    def events(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> list[Event]:
        head = self._head(body, reply, n, "chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return None, {**head, "choices": [choice]}

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"content": piece}) for piece in _pieces(reply.text or "")]
        for i, t in enumerate(reply.tool_calls):
            args = t.arguments_text()
            first = {"name": t.name, "arguments": ""}
            call = {"index": i, "id": t.id or f"call_{n}_{i}", "type": "function"}
            out.append(chunk({"tool_calls": [{**call, "function": first}]}))
            for frag in (args[: len(args) // 2], args[len(args) // 2 :]):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
        out.append(chunk({}, self._finish(reply)))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append((None, {**head, "choices": [], "usage": self._usage(body, reply)}))
        out.append((None, "[DONE]"))
        return out

    def embeddings(self, body: Mapping[str, Any], dims: int) -> dict[str, Any]:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        dims = int(body.get("dimensions") or dims)
        data = []
        for i, text in enumerate(texts):
            vector: Any = fake_embedding(str(text), dims)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode()
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = max(1, sum(_words(str(t)) for t in texts))
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return {"object": "list", "data": data, "model": body.get("model"), "usage": usage}


class _AnthropicWire(_Wire):
    name = "FakeAnthropic"

    def routes(self) -> dict[str, str]:
        return {"/v1/messages": "chat"}

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        if 400 <= status < 429:
            kind = "invalid_request_error"
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _usage(self, body: Mapping[str, Any], reply: FakeReply, output: int) -> dict[str, Any]:
        # Anthropic's input_tokens leaves out the tokens read from its prompt cache.
        uncached = self.input_tokens(body, reply) - reply.cached_input_tokens
        return {
            "input_tokens": max(0, uncached),
            "output_tokens": output,
            "cache_read_input_tokens": reply.cached_input_tokens,
            "cache_creation_input_tokens": 0,
        }

    def _blocks(self, reply: FakeReply, n: int) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for i, t in enumerate(reply.tool_calls):
            tool_id = t.id or f"toolu_{n}_{i}"
            blocks.append({"type": "tool_use", "id": tool_id, "name": t.name, "input": {}})
        return blocks

    def chat(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> dict[str, Any]:
        blocks = self._blocks(reply, n)
        calls = iter(reply.tool_calls)
        for block in blocks:
            if block["type"] == "tool_use":
                block["input"] = json.loads(next(calls).arguments_text())
        return {
            **self._message(body, reply, n),
            "content": blocks,
            "stop_reason": reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn"),
            "usage": self._usage(body, reply, self.output_tokens(reply)),
        }

    def _message(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> dict[str, Any]:
        model = reply.model or body.get("model") or "fake-model"
        return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model}

    def events(self, body: Mapping[str, Any], reply: FakeReply, n: int) -> list[Event]:
        start = {
            **self._message(body, reply, n),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(body, reply, 1),
        }
        out: list[Event] = [("message_start", {"type": "message_start", "message": start})]
        calls = iter(reply.tool_calls)
        for index, block in enumerate(self._blocks(reply, n)):
            begin = {"type": "content_block_start", "index": index, "content_block": block}
            out.append(("content_block_start", begin))
            if block["type"] == "text":
                deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
            else:
                args = next(calls).arguments_text()
                halves = (args[: len(args) // 2], args[len(args) // 2 :])
                deltas = [{"type": "input_json_delta", "partial_json": h} for h in halves]
            for delta in deltas:
                out.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        stop = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
        out.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": self.output_tokens(reply)},
                },
            )
        )
        out.append(("message_stop", {"type": "message_stop"}))
        return out
