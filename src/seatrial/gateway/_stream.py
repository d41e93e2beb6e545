"""Putting a streamed answer back together, for cost, the ledger, the cache and cassettes."""

from __future__ import annotations

from dataclasses import dataclass, field

from seatrial.gateway._types import ChatChunk, ChatToolCall, Message, Usage


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAccumulator:
    """Collects chunks as they pass to the client; :meth:`message` is the whole answer."""

    content: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None

    def add(self, chunk: ChatChunk) -> None:
        """Take one chunk into account."""
        if chunk.content:
            self.content.append(chunk.content)
        if chunk.tool_call_index is not None:
            call = self.calls.setdefault(chunk.tool_call_index, _PartialCall())
            if chunk.tool_call_id:
                call.id = chunk.tool_call_id
            if chunk.tool_name:
                call.name = chunk.tool_name
            if chunk.arguments:
                call.arguments.append(chunk.arguments)
        if chunk.finish_reason is not None:
            self.finish_reason = chunk.finish_reason
        if chunk.usage is not None:
            self.usage = chunk.usage

    def message(self) -> Message:
        """The assistant message the chunks spelled out."""
        calls = [
            ChatToolCall(id=c.id, name=c.name, arguments="".join(c.arguments))
            for _, c in sorted(self.calls.items())
        ]
        text = "".join(self.content)
        return Message(
            role="assistant", content=text if text or not calls else None, tool_calls=calls
        )
