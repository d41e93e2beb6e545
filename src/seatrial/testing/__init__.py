"""Test doubles for testing agents and Seatrial itself, like httpx's ``MockTransport``.

:class:`AgentServer` is a real HTTP server speaking the agent protocol on 127.0.0.1;
:class:`FakeOpenAI` and :class:`FakeAnthropic` are real model API servers on 127.0.0.1,
scripted with :class:`FakeReply` answers. :class:`ScriptedModel` plays the same scripts in
the process, as a gateway provider: no socket, for fast tests.
"""

from seatrial.testing._agent_server import AgentRequest, AgentServer, Hang, HttpReply
from seatrial.testing._fake_models import FakeAnthropic, FakeOpenAI, ModelRequest
from seatrial.testing._fake_wire import (
    UNPARSABLE_TOOL_CALL,
    FakeReply,
    FakeToolCall,
    fake_embedding,
)
from seatrial.testing._scripted import ScriptedModel

__all__ = [
    "UNPARSABLE_TOOL_CALL",
    "AgentRequest",
    "AgentServer",
    "FakeAnthropic",
    "FakeOpenAI",
    "FakeReply",
    "FakeToolCall",
    "Hang",
    "HttpReply",
    "ModelRequest",
    "ScriptedModel",
    "fake_embedding",
]
